"""``execsim eval mbpp`` end to end with a scripted model server (a test double behind the real
ChatClient): the app's solve request, one greedy simulation per public test, and the picks compared
with the expected random one, all through ``selection.best_of``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simulator.benchmarks import from_mbpp
from simulator.evaluation import mbpp
from simulator.evaluation.harness import EvalSettings, final_line, run
from simulator.llm.testing import FakeModelServer
from simulator.pipeline.static import cannot_pass
from tests.simulator.evaluation.eval_doubles import fake_client, write_jsonl

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
    assert double["expected"] == {"sim": 0.5, "paper": 0.5, "oracle": 0.5, "random": 0.5}
    assert [c["sim_matches"] for c in triple["candidates"]] == [0, 1]
    assert triple["chosen"]["sim"] == 1
    assert triple["expected"] == {"sim": 1.0, "paper": 1.0, "oracle": 1.0, "random": 0.5}

    metrics = record["metrics"]
    assert metrics["pass@1"]["value"] == pytest.approx(0.5)
    assert metrics["best@2-sim-expected"]["value"] == pytest.approx(0.75)
    assert metrics["best@2-random"]["value"] == pytest.approx(0.5)  # expected, not one draw
    gain = record["extra"]["paired"]["best@2-sim-minus-random"]
    assert gain["value"] == pytest.approx(0.25) and gain["better"] == 1 and gain["worse"] == 0
    assert gain["low"] <= gain["value"] <= gain["high"]
    assert set(record["extra"]["paired"]) == {f"best@2-{w}-minus-random" for w in ("sim", "paper", "oracle")}
    assert "best@2-sim-minus-random=+0.250[" in final_line(record)
    assert record["extra"]["solve"]["replies"] == 4 and record["extra"]["solve"]["cut_by_limit"] == 0
    # "x + 2" passes double's public test (2 + 2 == 4) and "return x" fails triple's: honest simulations
    assert record["extra"]["sim_matched_by_public_outcome"] == {"pass": [3, 3], "fail": [0, 1]}
    assert record["parse_failures"]["solve"] == {"failed": 0, "total": 4, **_interval(0, 4)}
    assert record["parse_failures"]["simulate"] == {"failed": 0, "total": 4, **_interval(0, 4)}
    assert "Selection against the expected random pick" in (tmp_path / "out" / "report.md").read_text()


@pytest.mark.asyncio
async def test_mbpp_simulates_once_greedily_and_counts_replies_cut_by_the_limit(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "mbpp.jsonl", MBPP_ITEMS[1:])
    wrong = "def triple(x):\n    return x"
    server = FakeModelServer(_mbpp_responder())
    settings = EvalSettings(task="mbpp", data=data, out=tmp_path / "out", n=2, k=2)

    record = await run(settings, (mbpp.load, mbpp.evaluate), fake_client(server))

    sims = [b for b in server.requests if b["messages"][0]["role"] != "system"]
    assert {(b.get("n", 1), b["temperature"]) for b in sims} == {(1, 0.0)}  # one greedy simulation
    only = record["items"][0]
    assert [c["sim_matches"] for c in only["candidates"]] == [0, 1]

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
    assert [i["expected"]["paper"] for i in again["items"]] == [0.5, 0.5]
    from simulator.cli import main

    a, b = str(tmp_path / "first" / "results.json"), str(tmp_path / "again" / "results.json")
    assert main(["eval-diff", a, b, "--measure", "paper"]) == 0
    assert capsys.readouterr().out.startswith("paper n=2 a=0.750 b=0.500 diff=-0.250")
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
    assert only["expected"] == {"sim": 1.0, "paper": 1.0, "oracle": 1.0, "random": 0.75}
    assert record["extra"]["paired"]["best@2-sim-minus-random"]["value"] == pytest.approx(0.25)


@pytest.mark.asyncio
async def test_mbpp_reports_selection_by_what_the_candidates_agree_on(tmp_path: Path) -> None:
    """Four candidates all pass the public test double(2) == 4 and all simulate right, but the last
    returns 4 whatever its argument (hard-coded: known to fail): the paper draws among all four, two of
    them right (0.5); the app leaves the hard-coded one out and picks the program written twice (the
    second adds an assert): 1.0."""
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
    assert only["expected"] == {"sim": 1.0, "paper": 0.5, "oracle": 0.5, "random": 0.5}
    paired = record["extra"]["paired"]
    assert paired["best@4-sim-minus-random"]["value"] == pytest.approx(0.5)
    assert paired["best@4-paper-minus-random"]["value"] == 0.0


@pytest.mark.asyncio
async def test_mbpp_a_candidate_that_cannot_pass_scores_nothing_whatever_its_simulation(
    tmp_path: Path,
) -> None:
    """A program that never defines the function the test calls, simulated as right: the app knows
    without simulating that it cannot pass (``pipeline.static``); the paper's rule does not."""
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
    assert only["expected"] == {"sim": 1.0, "paper": 0.5, "oracle": 1.0, "random": 0.5}
    assert record["extra"]["cannot_pass"] == {"candidates": 1, "really_passed": 0}


@pytest.mark.asyncio
async def test_mbpp_a_tie_of_unmatched_programs_never_goes_to_one_that_cannot_pass(tmp_path: Path) -> None:
    """Neither program's simulation matches, so the paper's rule draws between them; the app knows the
    misnamed one cannot pass and picks the other."""
    data = write_jsonl(tmp_path / "mbpp.jsonl", MBPP_ITEMS[1:])
    _, right = MBPP_SOLVES["triple"]
    solves = ["def thrice(x):\n    return x * 3", right]

    def respond(body: dict[str, Any]) -> list[str]:
        if body["messages"][0]["role"] == "system":
            return solves[: body["n"]]
        return ["[ANSWER]\nassert triple(1) == 0\n[/ANSWER]"] * body["n"]  # nothing matches

    settings = EvalSettings(task="mbpp", data=data, out=tmp_path / "out", n=2, k=2)
    record = await run(settings, (mbpp.load, mbpp.evaluate), fake_client(FakeModelServer(respond)))

    only = record["items"][0]
    assert [c["sim_matches"] for c in only["candidates"]] == [0, 0]
    assert only["expected"] == {"sim": 1.0, "paper": 0.5, "oracle": 1.0, "random": 0.5}
    assert record["extra"]["paired"]["best@2-sim-minus-random"]["better"] == 1


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
