"""``execsim train evaluate``: rows for the manifest, the paired difference with a baseline, resuming.

The model here is ``FakeModelServer`` (a test double answering over real HTTP); scoring runs in the
real sandbox. The chain test (test_training_chain.py) serves a real exported folder with vLLM.
"""

from __future__ import annotations

import json

import pytest

from simulator.evaluation import cruxeval
from simulator.llm.testing import FakeModelServer
from training.evaluate import EvalRunConfig, evaluate_model
from training.paths import benchmarks_dir

pytestmark = pytest.mark.skipif(benchmarks_dir() is None, reason="no benchmark folder (../shared/benchmarks)")


def gold_by_code() -> dict[str, tuple[str, str]]:
    items = [json.loads(line) for line in (benchmarks_dir() / "cruxeval/dev.jsonl").open()]
    return {item["code"].strip(): (item["input"], item["output"]) for item in items}


def responder(right: set[int]):
    """Answers the first items' questions: right for the indices in ``right``, else a wrong literal."""
    golds = gold_by_code()
    order = list(golds)

    def reply(body: dict) -> str:
        question = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
        code = question.split("[PYTHON]\n", 1)[1].rsplit("\nassert ", 1)[0].strip()
        args, gold = golds[code]
        answer = gold if order.index(code) in right else "'not it'"
        return f"[THOUGHT]\nsteps\n[/THOUGHT]\n[ANSWER]\nassert f({args}) == {answer}\n[/ANSWER]"

    return reply


def run(
    tmp_path, name: str, right: set[int], baseline=None, **settings
) -> tuple[list[dict], FakeModelServer]:
    fake = FakeModelServer(responder(right), model=name)
    with fake.serve() as url:
        rows = evaluate_model(
            EvalRunConfig(
                model="",
                url=url,
                name=name,
                out=str(tmp_path / name),
                variant=name,
                tasks=("cruxeval-o",),
                limit=6,
                baseline=baseline,
                **settings,
            )
        )
    return rows, fake


def test_rows_carry_n_and_intervals_and_the_paired_difference(tmp_path) -> None:
    base_rows, _ = run(tmp_path, "base", right={0})
    assert base_rows == [
        {
            "benchmark": "cruxeval-o",
            "metric": f"pass@1 ({cruxeval.APP_PROMPT}, greedy)",
            "model": "base",
            "value": pytest.approx(1 / 6),
            "n": 6,
            "low": pytest.approx(base_rows[0]["low"]),
            "high": pytest.approx(base_rows[0]["high"]),
            "method": "wilson",
        }
    ]
    rows, fake = run(tmp_path, "sft", right={0, 1, 2, 3, 4}, baseline=str(tmp_path / "base"))
    assert len(fake.requests) == 6
    assert [r["model"] for r in rows] == ["base", "sft", "sft - base"]
    diff = rows[2]
    assert diff["value"] == pytest.approx(4 / 6) and diff["n"] == 6
    assert (diff["better"], diff["worse"]) == (4, 0) and diff["low"] > 0 and diff["excludes_zero"]
    assert json.loads((tmp_path / "sft" / "eval-results.json").read_text()) == rows


def test_the_baseline_can_be_named_current(tmp_path) -> None:
    run(tmp_path, "committed", right={0})
    rows, _ = run(
        tmp_path, "sft", right={0, 1}, baseline=str(tmp_path / "committed"), baseline_variant="current"
    )
    assert [r["model"] for r in rows] == ["current", "sft", "sft - current"]


def test_a_rerun_is_answered_from_the_cache(tmp_path) -> None:
    run(tmp_path, "sft", right={1})
    rows, fake = run(tmp_path, "sft", right=set())  # a server that now answers wrong is never asked
    assert fake.requests == []
    assert rows[0]["value"] == pytest.approx(1 / 6)


def test_a_missing_baseline_task_is_a_clear_error(tmp_path) -> None:
    from training.evaluate import EvaluateError

    (tmp_path / "empty").mkdir()
    with pytest.raises(EvaluateError, match="has no cruxeval-o/results.json"):
        run(tmp_path, "sft", right=set(), baseline=str(tmp_path / "empty"))
