"""The harness end to end with a scripted model server (a test double behind the real ChatClient), and
against the real vLLM server."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from simulator.benchmarks import from_mbpp
from simulator.evaluation import cruxeval, mbpp
from simulator.evaluation.cache import RequestCache, request_key
from simulator.evaluation.harness import EvalSettings, final_line, run
from simulator.evaluation.scoring import answer_found, extract_answer
from simulator.llm.testing import FakeModelServer
from simulator.pipeline.settings import RunSettings
from simulator.pipeline.static import cannot_pass
from simulator.prompts import simulate
from tests.simulator.evaluation.eval_doubles import fake_client, table_responder, write_jsonl

REPO = Path(__file__).resolve().parents[3]
BENCHMARKS = REPO.parent / "shared" / "benchmarks"

CRUX = [
    {"id": "a", "code": "def f(x):\n    return x * 2", "input": "3", "output": "6"},
    {"id": "b", "code": "def f(s):\n    return s[::-1]", "input": "'ab'", "output": "'ba'"},
    {"id": "c", "code": "def f(xs):\n    return sorted(xs)", "input": "[2, 1]", "output": "[1, 2]"},
]


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("[ANSWER]\nassert f(1) == [1, 2]\n[/ANSWER]", "[1, 2]"),
        ("[THOUGHT]x[/THOUGHT]\n[ANSWER]assert f('a') == 'b'", "'b'"),  # cut by the stop string
        ("[ANSWER]\nassert f(1) == 3\nassert f(2) == 4", "3"),  # the first line only
        ("blah\nassert f(1) == 'x'", "'x'"),  # no tags: the last assert line
        ("", ""),
    ],
)
def test_extract_answer(text: str, answer: str) -> None:
    assert extract_answer(text) == answer


def test_cache_key_changes_with_every_part_and_survives_a_torn_line(tmp_path: Path) -> None:
    base = request_key("m", [{"role": "user", "content": "q"}], {"n": 1}, "item")
    assert base != request_key("m2", [{"role": "user", "content": "q"}], {"n": 1}, "item")
    assert base != request_key("m", [{"role": "user", "content": "q2"}], {"n": 1}, "item")
    assert base != request_key("m", [{"role": "user", "content": "q"}], {"n": 2}, "item")
    assert base != request_key("m", [{"role": "user", "content": "q"}], {"n": 1}, "item2")
    cache = RequestCache(tmp_path / "c.jsonl")
    cache.put(base, {"texts": ["x"]})
    cache.close()
    with (tmp_path / "c.jsonl").open("a") as f:
        f.write('{"key": "torn", "tex')
    again = RequestCache(tmp_path / "c.jsonl")
    assert again.get(base)["texts"] == ["x"] and again.get("torn") is None


@pytest.mark.asyncio
async def test_provenance_names_the_weights_the_server_serves_not_the_default_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A candidate served under the default model's name (to reuse a run's request cache) is recorded
    with its own weights, so the promotion gate can tell the two apart."""
    monkeypatch.setenv("EXECSIM_DATA_DIR", str(tmp_path / "data"))
    default = tmp_path / "data" / "models" / "fake-model"
    candidate = tmp_path / "candidate"
    for folder, digest in ((default, "default111"), (candidate, "candidate222")):
        folder.mkdir(parents=True)
        (folder / "weights.sha256").write_text(f"{digest}  model.safetensors\n")
    data = write_jsonl(tmp_path / "crux.jsonl", CRUX[:1])
    for root, expected in ((str(candidate), "candidate222"), (None, "default111")):
        server = FakeModelServer(table_responder({}, "[ANSWER]\nassert f(3) == 6"), root=root)
        settings = EvalSettings(task="cruxeval-o", data=data, out=tmp_path / f"out-{expected}")
        record = await run(settings, (cruxeval.load, cruxeval.evaluate), fake_client(server))
        assert record["provenance"]["weights_sha256"] == expected


@pytest.mark.asyncio
async def test_cruxeval_scores_by_value_counts_pass_at_k_and_resumes_without_resending(
    tmp_path: Path,
) -> None:
    data = write_jsonl(tmp_path / "crux.jsonl", CRUX)
    server = FakeModelServer(
        table_responder(
            {
                "f(3)": ["[ANSWER]\nassert f(3) == 6\n[/ANSWER]", "[ANSWER]\nassert f(3) == 7\n[/ANSWER]"],
                "f('ab')": [
                    "[ANSWER]\nassert f('ab') == \"ba\"\n[/ANSWER]",
                    "[ANSWER]\nassert f('ab') == 'ba'",
                ],
                # cheating never counts; the second sample states no answer at all (a parse failure)
                "f([2, 1])": ["[ANSWER]\nassert f([2, 1]) == f([2, 1])\n[/ANSWER]", "I think it sorts."],
            },
            "[ANSWER]\nassert f() == None",
        )
    )
    settings = EvalSettings(task="cruxeval-o", data=data, out=tmp_path / "out", n=2, k=2)

    record = await run(settings, (cruxeval.load, cruxeval.evaluate), fake_client(server))

    assert [item["correct"] for item in record["items"]] == [1, 2, 0]
    assert record["metrics"]["pass@1"]["value"] == pytest.approx(0.5)
    assert record["metrics"]["pass@2"]["value"] == pytest.approx(2 / 3)
    assert record["requests"]["sent"] == 3 and record["requests"]["cached"] == 0
    assert record["requests"]["completion_tokens_sent"] > 0
    assert record["parse_failures"]["simulate"]["failed"] == 1
    assert record["parse_failures"]["simulate"]["total"] == 6
    line = final_line(record)
    assert line.startswith("cruxeval-o n=3 pass@1=0.500[") and " pass@2=0.667[" in line
    assert " parse-fail-simulate=0.167[" in line
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["provenance"]["data"]["sha256"] and saved["provenance"]["model"] == "fake-model"
    assert saved["provenance"]["model_url"] == "http://fake-model/v1"
    assert {"results.json", "report.md", "metrics.png", "requests.jsonl"} <= {
        p.name for p in (tmp_path / "out").iterdir()
    }
    assert "| simulate | 1 / 6 |" in (tmp_path / "out" / "report.md").read_text()

    again = await run(settings, (cruxeval.load, cruxeval.evaluate), fake_client(server))

    assert len(server.requests) == 3  # nothing sent twice
    assert again["requests"]["sent"] == 0 and again["requests"]["cached"] == 3
    assert again["metrics"] == record["metrics"]


MBPP_ITEMS = [
    {  # "x + 2" passes the public test double(2) == 4 but not the private one: selection cannot tell
        "task_id": 1,
        "prompt": "Write a function to double a number.",
        "test_imports": [],
        "test_list": ["assert double(2) == 4", "assert double(5) == 10"],
    },
    {  # "return x" fails the public test: an honest simulation tells the candidates apart
        "task_id": 2,
        "prompt": "Write a function to triple a number.",
        "test_imports": [],
        "test_list": ["assert triple(1) == 3", "assert triple(4) == 12"],
    },
]
# Solve replies exactly as vLLM returns them to the prefilled request: no opening fence, and the
# fake server cuts the closing fence (the stop string) and the narration after it.
MBPP_SOLVES = {
    "double": [
        "def double(x):\n    return x + 2\n```\nLine 1: x = 2",
        "def double(x):\n    return x * 2\n```",
    ],
    "triple": ["def triple(x):\n    return x\n```\nLines 1-2 repeat", "def triple(x):\n    return x * 3"],
}


@pytest.mark.asyncio
async def test_cruxeval_nlex_reports_how_often_the_narration_holds_up(tmp_path: Path) -> None:
    """With the NLEX prompt each narration gets the one verifier's label against the real run."""
    data = write_jsonl(tmp_path / "crux.jsonl", CRUX[:1])  # f(x) = x * 2 on 3
    server = FakeModelServer(
        table_responder(
            {
                "f(3)": [
                    "[THOUGHT] x = 3. [/THOUGHT]\n[ANSWER]\nassert f(3) == 6\n",  # as vLLM returns it
                    "[THOUGHT] x = 3. [/THOUGHT]\n[ANSWER]\nassert f(3) == 7\n",
                    "[THOUGHT] It doubles x. [/THOUGHT]",
                ]
            },
            "",
        )
    )
    settings = EvalSettings(task="cruxeval-o", data=data, out=tmp_path / "out", n=3, k=1, prompt="nlex")

    record = await run(settings, (cruxeval.load, cruxeval.evaluate), fake_client(server))

    labels = [s["verification"] for s in record["items"][0]["samples"]]
    assert labels == ["agrees", "diverges", "unverified"]
    for label in ("agrees", "diverges", "unverified"):
        assert record["metrics"][f"narration {label}"]["value"] == pytest.approx(1 / 3)


@pytest.mark.asyncio
async def test_cruxeval_simulate_sends_the_apps_simulate_request_with_its_budget(tmp_path: Path) -> None:
    """``--prompt simulate`` measures what the app asks: its simulate messages, its token budget, its
    stop string; the answer is scored and the narration verified as with ``nlex``."""
    data = write_jsonl(tmp_path / "crux.jsonl", CRUX[:1])
    bodies: list[dict[str, Any]] = []

    def respond(body: dict[str, Any]) -> list[str]:
        bodies.append(body)
        return ["[THOUGHT] x = 3, so f returns 6. [/THOUGHT] [ANSWER] assert f(3) == 6 "] * body["n"]

    settings = EvalSettings(task="cruxeval-o", data=data, out=tmp_path / "out", prompt="simulate")
    record = await run(settings, (cruxeval.load, cruxeval.evaluate), fake_client(FakeModelServer(respond)))

    (body,) = bodies
    assert body["messages"] == simulate.call_messages(CRUX[0]["code"], "f(3)")
    assert body["max_tokens"] == RunSettings().max_tokens and body["stop"] == list(simulate.CALL_STOP)
    assert record["items"][0]["correct"] == 1
    assert record["items"][0]["samples"][0]["verification"] == "agrees"


LOOPING = "[THOUGHT]\n" + "Line 2: the condition holds.\n" * 200  # past the 512-token budget
STOPPED = "[THOUGHT]\nLine 1: x is 3.\n[/THOUGHT]\n"  # the model ends it without an [ANSWER]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("narration", "cut", "asked"),
    [
        (LOOPING, 1.0, simulate.answer_prefill("f(3)")),  # at once, the looping narration left out
        (STOPPED, 0.0, STOPPED + "[ANSWER]\nassert f(3) =="),  # the reply goes on from the narration
    ],
)
async def test_cruxeval_simulate_asks_for_the_answer_a_narration_never_gave(
    tmp_path: Path, narration: str, cut: float, asked: str
) -> None:
    """As the app does: a narration that runs out of its budget, or stops, before its answer gets the
    answer asked for in a second request, at once without the narration when it was cut, after it
    when it stopped; the figures count both the cut and the forced replies."""
    data = write_jsonl(tmp_path / "crux.jsonl", CRUX[:1])
    bodies: list[dict[str, Any]] = []

    def respond(body: dict[str, Any]) -> str:
        bodies.append(body)
        return " 6\n[/ANSWER]" if body["messages"][-1]["role"] == "assistant" else narration

    settings = EvalSettings(task="cruxeval-o", data=data, out=tmp_path / "out", prompt="simulate")
    record = await run(settings, (cruxeval.load, cruxeval.evaluate), fake_client(FakeModelServer(respond)))

    first, forced = bodies
    assert forced["messages"] == [
        *first["messages"],
        {"role": "assistant", "content": asked},
    ]
    assert forced["continue_final_message"] is True and forced["max_tokens"] == simulate.ANSWER_TOKENS
    (sample,) = record["items"][0]["samples"]
    assert sample["cut"] == bool(cut) and sample["forced"] and sample["passed"] and sample["answer"] == "6"
    assert sample["text"].startswith(narration[:30]) and sample["text"].endswith("assert f(3) == 6\n")
    assert record["metrics"]["cut by the token budget"]["value"] == cut
    assert record["metrics"]["answer forced"]["value"] == 1.0
    assert record["metrics"]["pass@1"]["value"] == 1.0


@pytest.mark.asyncio
async def test_cruxeval_simulate_answer_sends_the_request_answered_at_once(tmp_path: Path) -> None:
    """``simulate-answer``, what the app sends by default: the simulate request with an empty thought
    and the answer begun, a short budget; the reply is read after its prefill."""
    data = write_jsonl(tmp_path / "crux.jsonl", CRUX[:2])
    bodies: list[dict[str, Any]] = []

    def respond(body: dict[str, Any]) -> str:
        bodies.append(body)
        return " 6\n[/ANSWER]"  # right for the first item, wrong for the second

    settings = EvalSettings(task="cruxeval-o", data=data, out=tmp_path / "out", prompt="simulate-answer")
    record = await run(settings, (cruxeval.load, cruxeval.evaluate), fake_client(FakeModelServer(respond)))

    assert bodies[0]["messages"][-1] == {"role": "assistant", "content": simulate.answer_prefill("f(3)")}
    assert bodies[0]["max_tokens"] == simulate.ANSWER_TOKENS and bodies[0]["stop"] == list(simulate.CALL_STOP)
    assert [item["correct"] for item in record["items"]] == [1, 0]
    assert record["items"][0]["samples"][0]["answer"] == "6"
    assert "verification" not in record["items"][0]["samples"][0]  # no narration to check


def _sim_question(body: dict[str, Any]) -> tuple[str, str]:
    question = body["messages"][-1]["content"]
    code, rest = question.split("[PYTHON]\n", 1)[1].rsplit("\nassert ", 1)
    return code, rest.split(" == ??", 1)[0]


def _honest(code: str, call: str) -> str:
    namespace: dict[str, Any] = {}
    exec(code, namespace)  # the test's own scripted programs, not model output
    return repr(eval(call, namespace))


def _mbpp_responder(votes: dict[str, list[str]] | None = None):
    def respond(body: dict[str, Any]) -> list[str]:
        if body["messages"][0]["role"] == "system":  # the app's solve request
            name = "double" if "`double`" in body["messages"][-2]["content"] else "triple"
            return MBPP_SOLVES[name][: body["n"]]
        code, call = _sim_question(body)
        scripted = (votes or {}).get(code.rstrip("\n"))  # the question's code ends with a newline
        if scripted is not None:
            return [f"[ANSWER]\nassert {call} == {v}" for v in scripted]
        return [f"[ANSWER]\nassert {call} == {_honest(code, call)}\n[/ANSWER]"] * body["n"]

    return respond


@pytest.mark.asyncio
async def test_mbpp_sends_the_apps_solve_request_and_selects_on_public_tests_only(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "mbpp.jsonl", MBPP_ITEMS)
    server = FakeModelServer(_mbpp_responder())
    settings = EvalSettings(task="mbpp", data=data, out=tmp_path / "out", n=2, k=2)

    record = await run(settings, (mbpp.load, mbpp.evaluate), fake_client(server))

    solve_bodies = [b for b in server.requests if b["messages"][0]["role"] == "system"]
    assert len(solve_bodies) == 2
    for body in solve_bodies:  # the pipeline's request: prefilled fence, stop at the closing one
        assert body["messages"][-1] == {"role": "assistant", "content": "```python\n"}
        assert body["continue_final_message"] is True and body["add_generation_prompt"] is False
        assert body["stop"] == ["\n```"] and body["max_tokens"] == 512
    sims = [b for b in server.requests if b not in solve_bodies]
    assert len(sims) == 2 * 2  # 2 candidates x 1 public test per problem; private asserts unseen
    assert not any("double(5)" in b["messages"][-1]["content"] for b in sims)

    double, triple = record["items"]
    assert [c["code"] for c in double["candidates"]] == [
        "def double(x):\n    return x + 2\n",
        "def double(x):\n    return x * 2\n",
    ]
    assert [c["passed"] for c in double["candidates"]] == [False, True]
    assert [c["sim_matches"] for c in double["candidates"]] == [1, 1]  # a tie on the public test
    assert double["expected"] == {
        "sim": 0.5,
        "sim-unchecked": 0.5,
        "sim-known": 0.5,
        "agree": 0.5,  # two different programs: each agrees with itself only
        "sim-agree": 0.5,
        "likely": 0.5,  # the test double's scorer has no preference: every candidate ties
        "sim-likely": 0.5,
        "sim-likely-agree": 0.5,
        "oracle": 0.5,
        "random": 0.5,
    }
    assert [c["sim_matches"] for c in triple["candidates"]] == [0, 1]
    assert triple["chosen"]["sim"] == 1
    assert triple["expected"] == {
        "sim": 1.0,
        "sim-unchecked": 1.0,
        "sim-known": 1.0,
        "agree": 0.5,
        "sim-agree": 1.0,
        "likely": 0.5,
        "sim-likely": 1.0,
        "sim-likely-agree": 1.0,
        "oracle": 1.0,
        "random": 0.5,
    }

    metrics = record["metrics"]
    assert metrics["pass@1"]["value"] == pytest.approx(0.5)
    assert metrics["best@2-sim-expected"]["value"] == pytest.approx(0.75)
    assert metrics["best@2-random"]["value"] == pytest.approx(0.5)  # expected, not one draw
    gain = record["extra"]["paired"]["best@2-sim-minus-random"]
    assert gain["value"] == pytest.approx(0.25) and gain["better"] == 1 and gain["worse"] == 0
    assert gain["low"] <= gain["value"] <= gain["high"]
    assert "best@2-sim-minus-random=+0.250[" in final_line(record)
    assert record["extra"]["solve"]["replies"] == 4 and record["extra"]["solve"]["cut_by_limit"] == 0
    # "x + 2" passes double's public test (2 + 2 == 4) and "return x" fails triple's: honest simulations
    assert record["extra"]["sim_matched_by_public_outcome"] == {"pass": [3, 3], "fail": [0, 1]}
    assert record["parse_failures"]["solve"] == {"failed": 0, "total": 4, **_interval(0, 4)}
    assert record["parse_failures"]["simulate"] == {"failed": 0, "total": 4, **_interval(0, 4)}
    assert "Selection against the expected random pick" in (tmp_path / "out" / "report.md").read_text()


@pytest.mark.asyncio
async def test_mbpp_counts_the_matching_attempts_where_the_vote_sees_a_miss(tmp_path: Path) -> None:
    """``sim-count``: the right program matched once in 3 attempts, the wrong one never; the vote
    calls both a miss and draws, the count picks the right one."""
    data = write_jsonl(tmp_path / "mbpp.jsonl", MBPP_ITEMS[1:])
    wrong, right = "def triple(x):\n    return x", "def triple(x):\n    return x * 3"
    server = FakeModelServer(_mbpp_responder(votes={wrong: ["1", "1", "2"], right: ["3", "2", "2"]}))
    settings = EvalSettings(task="mbpp", data=data, out=tmp_path / "out", n=2, k=2, sims=3)

    record = await run(settings, (mbpp.load, mbpp.evaluate), fake_client(server))

    only = record["items"][0]
    assert [c["sim_matches"] for c in only["candidates"]] == [0, 0]
    assert [c["sim_count"] for c in only["candidates"]] == [0, 1]
    assert only["expected"]["sim"] == 0.5 and only["expected"]["sim-count"] == 1.0
    gain = record["extra"]["paired"]["best@2-sim-count-minus-sim"]
    assert gain["value"] == pytest.approx(0.5) and gain["better"] == 1 and gain["worse"] == 0


@pytest.mark.asyncio
async def test_mbpp_majority_vote_over_sims_and_replies_cut_by_the_limit(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "mbpp.jsonl", MBPP_ITEMS[1:])
    wrong = "def triple(x):\n    return x"
    # The wrong candidate's first sample claims the right value; the majority does not.
    server = FakeModelServer(_mbpp_responder(votes={wrong: ["3", "1", "1"]}))
    settings = EvalSettings(task="mbpp", data=data, out=tmp_path / "out", n=2, k=2, sims=3)

    record = await run(settings, (mbpp.load, mbpp.evaluate), fake_client(server))

    sims = [b for b in server.requests if b["messages"][0]["role"] != "system"]
    assert {b["n"] for b in sims} == {3} and {b["temperature"] for b in sims} == {0.8}
    only = record["items"][0]
    assert [c["sim_matches"] for c in only["candidates"]] == [0, 1]
    assert record["extra"]["sims"] == 3

    # A candidate that loops is stopped there (the solve request sends solve.LOOP_STOP); one that
    # runs past the 512-token budget without looping is cut (a "token" is 4 characters here).
    looping = wrong + "\n" + "# and so on\n" * 400
    long = "def triple(x):\n    return x * 3\n" + "".join(f"# step {i}\n" for i in range(400))
    solves = {**MBPP_SOLVES, "triple": [looping, long]}
    server = FakeModelServer(_mbpp_responder())
    server.responder = lambda body: (
        solves["triple"] if body["messages"][0]["role"] == "system" else _mbpp_responder()(body)
    )
    cut = await run(
        EvalSettings(task="mbpp", data=data, out=tmp_path / "cut", n=2, k=2),
        (mbpp.load, mbpp.evaluate),
        fake_client(server),
    )
    solve_cost = cut["extra"]["solve"]
    assert solve_cost["cut_by_limit"] == 1 and solve_cost["cut_rate"] == 0.5
    assert solve_cost["stopped_looping"] == 1 and cut["items"][0]["solve_looped"] == 1
    assert 512 / 2 < solve_cost["tokens_per_candidate"] < (512 + 96) / 2  # the loop stopped early
    assert cut["items"][0]["candidates"][1]["passed"]  # the cut reply's code still parses and runs


@pytest.mark.asyncio
async def test_mbpp_judges_an_earlier_runs_candidates_so_two_judges_compare_on_the_same_programs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--candidates``: no solve request, the earlier run's programs and solve figures; a judge that
    simulates the wrong candidate honestly is compared with one that always answers the expected
    value, paired by problem on the way ``sim`` (``eval-diff --measure sim``)."""
    data = write_jsonl(tmp_path / "mbpp.jsonl", MBPP_ITEMS)
    first = await run(
        EvalSettings(task="mbpp", data=data, out=tmp_path / "first", n=2, k=2),
        (mbpp.load, mbpp.evaluate),
        fake_client(FakeModelServer(_mbpp_responder())),
    )
    yes_man = FakeModelServer(lambda body: f"[ANSWER]\nassert {_sim_question(body)[1]} == 3\n[/ANSWER]")
    given = EvalSettings(
        task="mbpp",
        data=data,
        out=tmp_path / "again",
        n=2,
        k=2,
        candidates=tmp_path / "first" / "results.json",
    )
    again = await run(given, (mbpp.load, mbpp.evaluate), fake_client(yes_man))

    assert all(b["messages"][0]["role"] != "system" for b in yes_man.requests)  # no solve request
    for before, now in zip(first["items"], again["items"], strict=True):
        assert [c["code"] for c in now["candidates"]] == [c["code"] for c in before["candidates"]]
        assert now["expected"]["random"] == before["expected"]["random"]
    assert again["extra"]["solve"] == first["extra"]["solve"]
    assert again["provenance"]["settings"]["candidates"].endswith("results.json")
    # triple(1) == 3: the yes-man matches both of triple's candidates, the honest judge only the right one
    assert [i["expected"]["sim"] for i in again["items"]] == [0.5, 0.5]
    from simulator.cli import main

    a, b = str(tmp_path / "first" / "results.json"), str(tmp_path / "again" / "results.json")
    assert main(["eval-diff", a, b, "--measure", "sim"]) == 0
    assert capsys.readouterr().out.startswith("sim n=2 a=0.750 b=0.500 diff=-0.250")
    assert main(["eval-diff", a, b, "--measure", "nonsense"]) == 2
    assert "no way 'nonsense'" in capsys.readouterr().err
    # the CLI refuses a file that is no mbpp run, or one without n candidates for an item
    assert main(["eval", "mbpp", "--data", str(data), "--n", "4", "--k", "2", "--candidates", a]) == 2
    assert "needs 4 candidates (--n), the file has 2" in capsys.readouterr().err
    assert main(["eval", "cruxeval-o", "--data", str(data), "--candidates", a]) == 2


def _interval(failed: int, total: int) -> dict[str, float]:
    from simulator.evaluation.metrics import wilson

    est = wilson(failed, total)
    return {"rate": est.value, "low": est.low, "high": est.high}


def test_answer_found_tells_a_stated_answer_from_free_text() -> None:
    assert answer_found("[ANSWER]\nassert f(1) == 2")
    assert answer_found("so\nassert f(1) == [1]")
    assert not answer_found("The function sorts the list.")
    assert not answer_found("[ANSWER]\n[/ANSWER]")
    assert not answer_found("[ANSWER]\nassert f(1) == ??\n")  # the question's placeholder
    assert not answer_found("assert f(1) == ????")
    assert not answer_found("")


def test_cli_rejects_bad_arguments(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", CRUX)
    from simulator.cli import main

    assert main(["eval", "whitebox", "--data", str(data), "--turns", "-1"]) == 2
    assert main(["eval", "mbpp", "--data", str(data), "--sims", "17"]) == 2  # RunSettings' bounds
    assert main(["eval", "self-rlef", "--data", str(data), "--n", "2", "--k", "1"]) == 2
    assert main(["eval", "cruxeval-o", "--data", str(data), "--n", "1", "--k", "2"]) == 2
    assert main(["eval", "cruxeval-o", "--data", str(tmp_path / "missing.jsonl")]) == 2


def test_cli_says_what_to_do_when_the_server_is_down(tmp_path: Path, monkeypatch, capsys) -> None:
    import socket

    from simulator.cli import EXIT_FAILED, main
    from simulator.llm.errors import LLMUnavailable

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens there once the socket is closed
    monkeypatch.setenv("EXECSIM_MODEL_URL", f"http://127.0.0.1:{port}/v1")
    data = write_jsonl(tmp_path / "d.jsonl", CRUX)
    assert main(["eval", "cruxeval-o", "--data", str(data), "--out", str(tmp_path / "out")]) == EXIT_FAILED
    said = " ".join(capsys.readouterr().err.split())
    assert "not reachable" in said and " ".join(LLMUnavailable.HINT.split()) in said
    assert "rerun the same command to resume" in said
    assert said.index("cruxeval-o") < said.index("eval failed")  # the bar closed first, the message last


def _eval_cli(server: Any, out: Path, limit: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "EXECSIM_MODEL_URL": server.url, "EXECSIM_MODEL_NAME": server.model_name}
    data = BENCHMARKS / "cruxeval" / "dev.jsonl"
    cmd = [sys.executable, "-c", "import sys; from simulator.cli import main; sys.exit(main(sys.argv[1:]))"]
    args = ["eval", "cruxeval-o", "--data", str(data), "--limit", str(limit), "--out", str(out)]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, timeout=600, cwd=REPO)


def test_real_server_evaluates_five_cruxeval_samples_and_resumes(vllm_server: Any, tmp_path: Path) -> None:
    if not (BENCHMARKS / "cruxeval" / "dev.jsonl").is_file():
        pytest.skip(f"benchmarks not found at {BENCHMARKS} (shared/ next to the repository)")
    out = tmp_path / "out"

    first = _eval_cli(vllm_server, out, 5)

    assert first.returncode == 0, first.stderr
    last = first.stdout.strip().splitlines()[-1]
    assert last.startswith("cruxeval-o n=5 pass@1=")
    record = json.loads((out / "results.json").read_text())
    assert record["task"] == "cruxeval-o" and record["n_items"] == 5
    assert record["requests"]["sent"] == 5
    assert record["provenance"]["model"] == vllm_server.model_name
    assert 0.0 <= record["metrics"]["pass@1"]["low"] <= record["metrics"]["pass@1"]["value"]
    assert all(len(item["samples"]) == 1 and item["samples"][0]["text"] for item in record["items"])

    second = _eval_cli(vllm_server, out, 5)

    assert second.returncode == 0, second.stderr
    assert second.stdout.strip().splitlines()[-1] == last
    assert json.loads((out / "results.json").read_text())["requests"] == {
        "sent": 0,
        "cached": 5,
        "completion_tokens_sent": 0,
    }


@pytest.mark.asyncio
async def test_codejam_scores_public_and_private_tests_separately(tmp_path: Path) -> None:
    record = {
        "id": "cj/1",
        "name": "Double",
        "year": 2008,
        "round": "qual",
        "statement_text": "Print twice each number.",
        "public_tests": [{"input": "2\n1\n2\n", "output": "Case #1: 2\nCase #2: 4\n"}],
        "private_tests": [{"subtask": 1, "input": "1\n50\n", "output": "Case #1: 100\n"}],
        "output_validator_flags": "float_tolerance 1e-6",
    }
    data = write_jsonl(tmp_path / "cj.jsonl", [record])
    # Replies as vLLM returns them to the prefilled solve request: no opening fence (prefilled), the
    # closing one cut by the stop string (the fake server applies it); one opens its own fence.
    right = (
        "t = int(input())\nfor i in range(t):\n    print(f'Case #{i+1}: {2*int(input())}')\n```\nNarration"
    )
    hardcoded = "```python\nprint('Case #1: 2')\nprint('Case #2: 4')\n```"
    server = FakeModelServer(table_responder({"Print twice": [right, hardcoded, "no code here"]}, ""))
    settings = EvalSettings(task="codejam", data=data, out=tmp_path / "out", n=3, k=3)

    from simulator.evaluation import codejam

    result = await run(settings, (codejam.load, codejam.evaluate), fake_client(server))

    only = result["items"][0]
    assert [(c["public"], c["private"]) for c in only["candidates"]] == [
        (True, True),
        (True, False),
        (False, False),
    ]
    assert result["metrics"]["public-pass@1"]["value"] == pytest.approx(2 / 3)
    assert result["metrics"]["private-pass@1"]["value"] == pytest.approx(1 / 3)
    assert result["metrics"]["private-pass@3"]["value"] == 1.0
    assert (
        result["parse_failures"]["solve"]["failed"] == 1 and result["parse_failures"]["solve"]["total"] == 3
    )
    sent = server.requests[0]
    assert sent["stop"] == ["\n```"] and sent["continue_final_message"] is True
    assert sent["messages"][-1] == {"role": "assistant", "content": "```python\n"}


@pytest.mark.asyncio
async def test_mbpp_with_n_a_multiple_of_k_averages_best_at_k_over_disjoint_groups(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "mbpp.jsonl", MBPP_ITEMS[1:])
    wrong, right = MBPP_SOLVES["triple"]
    server = FakeModelServer(_mbpp_responder())
    server.responder = lambda body: (
        [wrong, right, right, right] if body["messages"][0]["role"] == "system" else _mbpp_responder()(body)
    )
    settings = EvalSettings(task="mbpp", data=data, out=tmp_path / "out", n=4, k=2)

    record = await run(settings, (mbpp.load, mbpp.evaluate), fake_client(server))

    only = record["items"][0]
    assert only["groups"] == 2 and [c["sim_matches"] for c in only["candidates"]] == [0, 1, 1, 1]
    # group 1 (wrong, right): sim 1.0, random 0.5; group 2 (right, right): both 1.0
    assert only["expected"] == {
        "sim": 1.0,
        "sim-unchecked": 1.0,
        "sim-known": 1.0,
        "agree": 0.75,  # group 1: 0.5 (no agreement); group 2: 1.0 (the same right program twice)
        "sim-agree": 1.0,
        "likely": 0.75,
        "sim-likely": 1.0,
        "sim-likely-agree": 1.0,
        "oracle": 1.0,
        "random": 0.75,
    }
    assert record["extra"]["paired"]["best@2-sim-minus-random"]["value"] == pytest.approx(0.25)


@pytest.mark.asyncio
async def test_mbpp_ranks_candidates_by_how_likely_the_model_finds_the_expected_output(
    tmp_path: Path,
) -> None:
    """Both candidates are simulated as returning 1 (neither matches triple(1) == 3), but the model
    finds the expected output likelier after the right program: selection by likelihood picks it,
    and so does selection by simulation with that likelihood breaking the tie."""
    data = write_jsonl(tmp_path / "mbpp.jsonl", MBPP_ITEMS[1:])
    wrong, right = MBPP_SOLVES["triple"]

    def respond(body: dict[str, Any]) -> list[str]:
        if body["messages"][0]["role"] == "system":
            return [wrong, right][: body["n"]]
        return ["[ANSWER]\nassert triple(1) == 1\n[/ANSWER]"] * body["n"]

    def scorer(body: dict[str, Any]) -> float:  # the likelihood of "3": higher after the right program
        return -0.5 if "x * 3" in body["messages"][-2]["content"] else -4.0

    server = FakeModelServer(respond, scorer=scorer)
    settings = EvalSettings(task="mbpp", data=data, out=tmp_path / "out", n=2, k=2)
    record = await run(settings, (mbpp.load, mbpp.evaluate), fake_client(server))

    only = record["items"][0]
    assert [c["sim_matches"] for c in only["candidates"]] == [0, 0]
    assert [c["likelihood"] for c in only["candidates"]] == [-4.0, -0.5]
    assert only["expected"]["sim"] == 0.5 and only["expected"]["random"] == 0.5
    assert only["expected"]["likely"] == 1.0 and only["expected"]["sim-likely"] == 1.0
    assert only["expected"]["sim-likely-agree"] == 1.0  # one program each: the likelihood decides
    assert record["extra"]["paired"]["best@2-sim-likely-minus-sim"]["value"] == pytest.approx(0.5)
    endings = [body["messages"][-1]["content"] for body in server.scored]
    assert endings == [simulate.answer_prefill("triple(1)") + " 3\n[/ANSWER]"] * 2  # the public test


@pytest.mark.asyncio
async def test_mbpp_without_the_likelihood_or_with_one_candidate_scores_nothing(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "mbpp.jsonl", MBPP_ITEMS[1:])
    for out, options in (("off", {"n": 2, "k": 2, "likelihood": False}), ("k1", {"n": 1, "k": 1})):
        server = FakeModelServer(_mbpp_responder(), scorer=lambda body: -1.0)
        settings = EvalSettings(task="mbpp", data=data, out=tmp_path / out, **options)
        record = await run(settings, (mbpp.load, mbpp.evaluate), fake_client(server))
        assert server.scored == []
        only = record["items"][0]
        assert "likely" not in only["expected"] and {c["likelihood"] for c in only["candidates"]} == {None}
        assert not any("likely" in name for name in record["extra"]["paired"])


@pytest.mark.asyncio
async def test_mbpp_weighs_the_likelihood_by_how_often_the_model_wrote_the_program(tmp_path: Path) -> None:
    """The right program, written twice, makes the expected output a little less likely than a
    wrong one written once: the likelihood alone picks the wrong one, weighed by agreement the right
    one (-1.2 + log 2 > -0.9)."""
    data = write_jsonl(tmp_path / "mbpp.jsonl", MBPP_ITEMS[1:])
    wrong, right = MBPP_SOLVES["triple"]

    def respond(body: dict[str, Any]) -> list[str]:
        if body["messages"][0]["role"] == "system":
            return [right, wrong, right][: body["n"]]
        return ["[ANSWER]\nassert triple(1) == 0\n[/ANSWER]"] * body["n"]  # nothing matches

    def scorer(body: dict[str, Any]) -> float:
        return -1.2 if "x * 3" in body["messages"][-2]["content"] else -0.9

    settings = EvalSettings(task="mbpp", data=data, out=tmp_path / "out", n=3, k=3)
    record = await run(
        settings, (mbpp.load, mbpp.evaluate), fake_client(FakeModelServer(respond, scorer=scorer))
    )

    only = record["items"][0]
    assert [c["agreement"] for c in only["candidates"]] == [2, 1, 2]
    assert only["expected"]["sim-likely"] == 0.0 and only["expected"]["sim-likely-agree"] == 1.0
    assert mbpp.weigh_by_agreement(-1.2, 2) == pytest.approx(-1.2 + math.log(2))
    assert mbpp.weigh_by_agreement(-1.2, 0) == -math.inf  # no program


@pytest.mark.asyncio
async def test_mbpp_reports_selection_by_what_the_candidates_agree_on(tmp_path: Path) -> None:
    """Four candidates all pass the public test double(2) == 4 and all simulate right, but the last
    returns 4 whatever its argument (hard-coded: it scores nothing): a tie of three that the paper
    breaks at random (2/3); two are the same program (the second adds an assert), which ``agree`` and
    ``sim-agree`` pick (1.0)."""
    data = write_jsonl(tmp_path / "mbpp.jsonl", MBPP_ITEMS[:1])
    right = "def double(x):\n    return x * 2\n"
    solves = [
        right,
        right + "\nassert double(2) == 4\n",
        "def double(x):\n    return x + 2\n",
        "def double(x):\n    return 4\n",
    ]
    honest = _mbpp_responder()

    def respond(body: dict[str, Any]) -> list[str]:
        return solves[: body["n"]] if body["messages"][0]["role"] == "system" else honest(body)

    settings = EvalSettings(task="mbpp", data=data, out=tmp_path / "out", n=4, k=4)
    record = await run(settings, (mbpp.load, mbpp.evaluate), fake_client(FakeModelServer(respond)))

    only = record["items"][0]
    assert [c["sim_matches"] for c in only["candidates"]] == [1, 1, 1, 1]
    assert [c["agreement"] for c in only["candidates"]] == [2, 2, 1, 1]
    assert only["candidates"][3]["cannot_pass"].startswith("double returns 4 whatever its arguments")
    assert only["expected"]["sim"] == pytest.approx(2 / 3) and only["expected"]["random"] == 0.5
    assert only["expected"]["agree"] == 1.0 and only["expected"]["sim-agree"] == 1.0
    paired = record["extra"]["paired"]
    assert paired["best@4-sim-agree-minus-sim"]["value"] == pytest.approx(1 / 3)
    assert paired["best@4-agree-minus-random"]["better"] == 1


@pytest.mark.asyncio
async def test_mbpp_a_candidate_that_cannot_pass_scores_nothing_whatever_its_simulation(
    tmp_path: Path,
) -> None:
    """A program that never defines the function the test calls, simulated as right: selection knows
    without simulating that it cannot pass (``pipeline.static``), and the same run reports the
    selection without that check."""
    data = write_jsonl(tmp_path / "mbpp.jsonl", MBPP_ITEMS[1:])
    _, right = MBPP_SOLVES["triple"]
    misnamed = "def thrice(x):\n    return x * 3"  # the reply after the prefilled fence; no triple
    solves = [misnamed, right]

    def respond(body: dict[str, Any]) -> list[str]:
        if body["messages"][0]["role"] == "system":
            return solves[: body["n"]]
        code, call = _sim_question(body)
        claimed = "3" if "def triple" not in code else _honest(code, call)  # believes the misnamed one
        return [f"[ANSWER]\nassert {call} == {claimed}\n[/ANSWER]"] * body["n"]

    settings = EvalSettings(task="mbpp", data=data, out=tmp_path / "out", n=2, k=2)
    record = await run(settings, (mbpp.load, mbpp.evaluate), fake_client(FakeModelServer(respond)))

    only = record["items"][0]
    assert [c["sim_matches"] for c in only["candidates"]] == [1, 1]  # the simulation believes both
    assert only["candidates"][0]["cannot_pass"] == "the program does not define triple, which the tests call"
    assert only["candidates"][1]["cannot_pass"] is None
    assert only["chosen"]["sim"] == 1
    assert only["expected"] == {
        "sim": 1.0,
        "sim-unchecked": 0.5,
        "sim-known": 1.0,
        "agree": 0.5,
        "sim-agree": 1.0,
        "likely": 1.0,  # a program that cannot pass is never the likeliest
        "sim-likely": 1.0,
        "sim-likely-agree": 1.0,
        "oracle": 1.0,
        "random": 0.5,
    }
    assert only["candidates"][0]["likelihood"] is None
    assert record["extra"]["paired"]["best@2-sim-minus-sim-unchecked"]["value"] == pytest.approx(0.5)
    assert record["extra"]["cannot_pass"] == {"candidates": 1, "really_passed": 0}


@pytest.mark.asyncio
async def test_mbpp_a_tie_of_unmatched_programs_never_goes_to_one_that_cannot_pass(tmp_path: Path) -> None:
    """Neither program's simulation matches, so the paper's rule draws between them (``sim``); the app
    knows the misnamed one cannot pass and picks the other (``sim-known``, and ``sim-agree``, its
    default)."""
    data = write_jsonl(tmp_path / "mbpp.jsonl", MBPP_ITEMS[1:])
    _, right = MBPP_SOLVES["triple"]
    solves = ["def thrice(x):\n    return x * 3", right]

    def respond(body: dict[str, Any]) -> list[str]:
        if body["messages"][0]["role"] == "system":
            return solves[: body["n"]]
        return ["[ANSWER]\nassert triple(1) == 0\n[/ANSWER]"] * body["n"]  # nothing matches

    settings = EvalSettings(task="mbpp", data=data, out=tmp_path / "out", n=2, k=2, likelihood=False)
    record = await run(settings, (mbpp.load, mbpp.evaluate), fake_client(FakeModelServer(respond)))

    only = record["items"][0]
    assert [c["sim_matches"] for c in only["candidates"]] == [0, 0]
    assert only["expected"]["sim"] == 0.5 and only["expected"]["random"] == 0.5
    assert only["expected"]["sim-known"] == 1.0 and only["expected"]["sim-agree"] == 1.0
    paired = record["extra"]["paired"]
    assert paired["best@2-sim-known-minus-sim"]["value"] == pytest.approx(0.5)
    assert paired["best@2-sim-known-minus-random"]["better"] == 1


@pytest.mark.asyncio
async def test_mbpp_selection_by_simulation_never_runs_the_candidate(tmp_path: Path) -> None:
    """A candidate that crashes when run, simulated as right, matches by simulation: only its real
    runs (ground truth, the oracle) may know it crashes."""
    data = write_jsonl(tmp_path / "mbpp.jsonl", MBPP_ITEMS[1:])
    crashing = "def triple(x):\n    return x * 3\nundefined_name()"

    def respond(body: dict[str, Any]) -> list[str]:
        if body["messages"][0]["role"] == "system":
            return [crashing][: body["n"]]
        _, call = _sim_question(body)
        return [f"[ANSWER]\nassert {call} == 3\n[/ANSWER]"] * body["n"]

    settings = EvalSettings(task="mbpp", data=data, out=tmp_path / "out", n=1, k=1)
    record = await run(settings, (mbpp.load, mbpp.evaluate), fake_client(FakeModelServer(respond)))

    (candidate,) = record["items"][0]["candidates"]
    assert candidate["sim_matches"] == 1 and candidate["passed"] is False
    assert record["items"][0]["expected"]["oracle"] == 0.0


@pytest.mark.asyncio
async def test_mbpp_judges_a_prediction_by_the_apps_rule_a_literal_not_an_expression(tmp_path: Path) -> None:
    """``pipeline.matching.problem_matches``, as the pipeline's selection: ``(3)`` is the literal 3;
    ``int('3')`` would equal it in Python but is an expression, compared as text."""
    data = write_jsonl(tmp_path / "mbpp.jsonl", MBPP_ITEMS[1:])
    right, also_right = "def triple(x):\n    return x * 3", "def triple(y):\n    return 3 * y"

    def respond(body: dict[str, Any]) -> list[str]:
        if body["messages"][0]["role"] == "system":
            return [right, also_right][: body["n"]]
        code, call = _sim_question(body)
        answer = "(3)" if "x * 3" in code else "int('3')"
        return [f"[ANSWER]\nassert {call} == {answer}\n[/ANSWER]"] * body["n"]

    settings = EvalSettings(task="mbpp", data=data, out=tmp_path / "out", n=2, k=2)
    record = await run(settings, (mbpp.load, mbpp.evaluate), fake_client(FakeModelServer(respond)))

    assert [c["sim_matches"] for c in record["items"][0]["candidates"]] == [1, 0]


@pytest.mark.asyncio
async def test_mbpp_checks_a_candidate_with_the_tests_imports_as_its_real_runs_have_them(
    tmp_path: Path,
) -> None:
    """``math`` undefined in the candidate but imported by the test: it may pass (and does); without
    the import the same program is known to fail (NameError on every call)."""
    item = {**MBPP_ITEMS[1], "test_imports": ["import math"]}
    data = write_jsonl(tmp_path / "mbpp.jsonl", [item])
    uses_math = "def triple(x):\n    return math.prod([x, 3])"
    server = FakeModelServer(
        lambda body: [uses_math] * body["n"] if body["messages"][0]["role"] == "system" else ["[ANSWER] 3"]
    )

    record = await run(
        EvalSettings(task="mbpp", data=data, out=tmp_path / "out", n=1, k=1),
        (mbpp.load, mbpp.evaluate),
        fake_client(server),
    )

    (candidate,) = record["items"][0]["candidates"]
    assert candidate["passed"] is True and candidate["cannot_pass"] is None
    alone = cannot_pass(from_mbpp(MBPP_ITEMS[1]), uses_math)
    assert alone == "math is never defined (line 2): triple raises NameError on every call"


def test_read_outputs_reads_each_folders_results_and_names_what_is_wrong(tmp_path: Path) -> None:
    from simulator.evaluation.harness import read_outputs

    for name, task in (("a", "mbpp"), ("b", "mbpp"), ("other", "self-rlef")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps({"task": task, "items": [name]}))
    assert [r["items"] for r in read_outputs([tmp_path / "a", tmp_path / "b"], "mbpp")] == [["a"], ["b"]]
    with pytest.raises(
        ValueError, match=r"no results.json in .*missing \(run execsim eval mbpp --out there\)"
    ):
        read_outputs([tmp_path / "a", tmp_path / "missing"], "mbpp")
    with pytest.raises(ValueError, match=r"other: not an eval mbpp output \(task 'self-rlef'\)"):
        read_outputs([tmp_path / "a", tmp_path / "other"], "mbpp")
