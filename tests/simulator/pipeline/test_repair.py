"""Repair (``pipeline.repair``): the verdicts decide whether to ask, the request is the solve request
told what the attempt got wrong (not shown its code), the reply is prefilled to be a program, and a
fix is kept only when it matches more public tests."""

from __future__ import annotations

from typing import Any

import pytest

from simulator.llm.testing import FakeModelServer, PipelineScript
from simulator.pipeline import Event
from simulator.pipeline.repair import FIX_REPLIES
from simulator.problem import Problem
from simulator.prompts import kind_of, repair, solve
from simulator.prompts.parsing import REPEATED
from tests.simulator.pipeline.pipeline_doubles import (
    DOUBLE_PROBLEM,
    RIGHT,
    WRONG,
    ExecutorDouble,
    fence,
    of_type,
    perfect_simulator,
    run_script,
)

WRONG_CODE = "n = int(input())\nprint(n + 2)\n"  # matches public test 2 -> 4 only: 1 of 2
RIGHT_CODE = "n = int(input())\nprint(2 * n)\n"  # 2 of 2


def guided(script: PipelineScript, **settings: Any) -> tuple[list[Event], FakeModelServer]:
    """A run with repair turns (narrated simulations unless told) and the fake server it talked to."""
    server = FakeModelServer(script)
    return run_script(script, server=server, **{"k": 1, "turns": 3, "seed": 0, **settings}), server


def repair_requests(server: FakeModelServer) -> list[dict[str, Any]]:
    return [body for body in server.requests if kind_of(body["messages"]) == "repair"]


def test_a_program_matching_every_public_test_is_submitted_without_asking() -> None:
    script = PipelineScript(solve=RIGHT, simulate=perfect_simulator, repair=[fence("print(0)\n")])
    events, server = guided(script)
    assert repair_requests(server) == [] and "repair" not in script.calls
    assert of_type(events, "repair_delta") == []
    (turn,) = [e.payload for e in of_type(events, "repair_turn")]
    assert turn == {
        "turn": 1,
        "submitted": True,
        "code": None,
        "text": "",
        "feedback": [
            {"input": "2\n", "expected": "4\n", "output": "4\n"},
            {"input": "5\n", "expected": "10\n", "output": "10\n"},
        ],
        "parse_error": None,
        "decided_by": "simulation",
    }
    finished = events[-1].payload
    assert finished["submitted"] is True and finished["turns_used"] == 0  # no repair prompt asked
    assert finished["code"] == RIGHT_CODE and finished["totals"]["requests"] == 1 + 2


def test_in_oracle_mode_real_execution_decides() -> None:
    def lying_simulator(code: str, stdin: str) -> str:
        return "<output>\n0\n"

    script = PipelineScript(solve=RIGHT, simulate=lying_simulator)
    events, server = guided(script, oracle=True, executor=ExecutorDouble())
    assert repair_requests(server) == []
    assert of_type(events, "repair_turn")[0].payload["decided_by"] == "real execution"


def test_a_failing_program_is_asked_for_a_program_told_what_it_got_wrong_without_its_code() -> None:
    script = PipelineScript(solve=WRONG, simulate=perfect_simulator, repair=[RIGHT])
    events, server = guided(script)
    (body,) = repair_requests(server)  # turn 2: the fix matches every test, so nothing is asked
    problem = Problem.from_dict(DOUBLE_PROBLEM)
    wrong = [repair.Feedback("5\n", "10\n", "7\n")]  # test 1 (2 -> 4) matched: not mentioned
    assert body["messages"] == repair.fix_messages(problem, wrong)
    assert body["messages"][:-1] == [*solve.messages(problem)[:-2], body["messages"][-2]]
    assert body["messages"][-1] == {"role": "assistant", "content": solve.PREFILL}
    question = body["messages"][-2]["content"]
    assert question.startswith(solve.messages(problem)[-2]["content"])
    assert "printed:\n7\nfor the input:\n5\nbut the expected output is:\n10" in question
    assert "print(n + 2)" not in question  # a model shown its attempt copies it
    assert body["stop"] == list(solve.STOP) and body["continue_final_message"] is True
    turns = [e.payload for e in of_type(events, "repair_turn")]
    assert [(t["turn"], t["decided_by"], t["submitted"]) for t in turns] == [
        (1, "model", False),
        (2, "simulation", True),
    ]
    # the server returned the program after the prefill, without the closing fence (the stop string)
    assert turns[0]["code"] == RIGHT_CODE and turns[0]["parse_error"] is None
    assert turns[0]["text"] == solve.PREFILL + RIGHT_CODE.rstrip("\n")
    # the stream shows the prefilled fence once, at its start: the deltas add up to the text
    deltas = [e.payload["text"] for e in of_type(events, "repair_delta")]
    assert deltas[0].startswith(solve.PREFILL) and "".join(deltas) == turns[0]["text"]
    assert "".join(deltas).count("```") == 1


def test_a_fix_matching_more_public_tests_replaces_the_attempt() -> None:
    script = PipelineScript(solve=WRONG, simulate=perfect_simulator, repair=[RIGHT])
    events, _ = guided(script, real=True)
    assert [v.payload["match"] for v in of_type(events, "verdict") if v.payload["turn"] == 1] == [True, True]
    assert of_type(events, "repair_rejected") == []
    finished = events[-1].payload
    assert finished["code"] == RIGHT_CODE and finished["passed_public_simulated"] == 2
    assert finished["turns_used"] == 1 and finished["submitted"] is True
    assert {e.payload["turn"] for e in of_type(events, "execution")} == {1}  # the fix runs for real
    assert finished["real"]["passed_private"] == 1


@pytest.mark.parametrize(
    ("fix", "matched"),
    [
        ("n = int(input())\nprint(n * n)\n", 1),  # 2 -> 4 right, 5 -> 25 wrong: as many as the attempt
        ("n = int(input())\nprint(n)\n", 0),  # fewer
    ],
)
def test_a_fix_matching_no_more_public_tests_is_not_kept(fix: str, matched: int) -> None:
    script = PipelineScript(solve=WRONG, simulate=perfect_simulator, repair=[fence(fix)])
    events, server = guided(script, real=True, turns=1)
    assert len(repair_requests(server)) == 1
    assert of_type(events, "repair_turn")[0].payload["code"] == fix  # the fix was read and simulated
    assert len([v for v in of_type(events, "verdict") if v.payload["turn"] == 1]) == 2
    (rejected,) = [e.payload for e in of_type(events, "repair_rejected")]
    assert rejected == {
        "turn": 1,
        "matched": matched,
        "attempt_matched": 1,
        "public_tests": 2,
        "judged_by": "simulation",
        "reason": f"not kept: its simulation matched {matched} of 2 public tests, the attempt's 1",
    }
    types = [e.type for e in events]
    last_verdict = max(i for i, e in enumerate(events) if e.type == "verdict" and e.payload["turn"] == 1)
    assert last_verdict < types.index("repair_rejected") < types.index("run_finished")
    finished = events[-1].payload
    assert finished["code"] == WRONG_CODE and finished["passed_public_simulated"] == 1  # the attempt's
    assert finished["submitted"] is False and finished["turns_used"] == 1
    assert {e.payload["turn"] for e in of_type(events, "execution")} == {0}  # the attempt runs for real


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (WRONG, REPEATED),  # the attempt again
        ("I would keep it as it is.", "does not parse"),  # prose inside the prefilled block
        ("```#SUBMIT```", "no fenced ```python code block"),  # the paper's answer is no program here
    ],
)
def test_a_reply_without_a_new_program_keeps_the_attempt(reply: str, error: str) -> None:
    script = PipelineScript(solve=WRONG, simulate=perfect_simulator, repair=[reply])
    events, server = guided(script, turns=1)
    assert len(repair_requests(server)) == 1
    (turn,) = [e.payload for e in of_type(events, "repair_turn")]
    assert turn["code"] is None and turn["submitted"] is False and turn["fix"] is None
    assert turn["parse_error"] == "none of the 4 replies is a new program"
    assert [r["fix"] for r in turn["replies"]] == [0, 1, 2, 3]
    assert all(r["code"] is None and error in r["error"] for r in turn["replies"])
    assert [v for v in of_type(events, "verdict") if v.payload["turn"] == 1] == []
    assert events[-1].payload["code"] == WRONG_CODE and events[-1].payload["submitted"] is False


def test_sampled_a_turn_without_a_fix_kept_is_asked_again_at_the_next_turn() -> None:
    not_kept = fence("n = int(input())\nprint(n)\n")  # matches no public test: fewer than the attempt
    script = PipelineScript(solve=WRONG, simulate=perfect_simulator, repair=[WRONG, not_kept, RIGHT])
    events, server = guided(script, turns=3)
    assert len(repair_requests(server)) == 3  # the same request each turn, new samples
    assert len({str(body["messages"]) for body in repair_requests(server)}) == 1
    turns = [e.payload for e in of_type(events, "repair_turn")]
    none_new = "none of the 4 replies is a new program"
    assert [(t["turn"], t["parse_error"]) for t in turns] == [(1, none_new), (2, None), (3, None)]
    assert [e.payload["turn"] for e in of_type(events, "repair_rejected")] == [2]
    finished = events[-1].payload
    assert finished["code"] == RIGHT_CODE and finished["turns_used"] == 3


def test_greedy_a_turn_without_a_fix_kept_ends_the_repair() -> None:
    script = PipelineScript(solve=WRONG, simulate=perfect_simulator, repair=[WRONG, RIGHT])
    events, server = guided(script, turns=3, temperature=0.0)
    assert len(repair_requests(server)) == 1  # asked again, the same replies would come back
    assert events[-1].payload["code"] == WRONG_CODE and events[-1].payload["turns_used"] == 1


def test_a_turn_takes_the_first_reply_that_is_a_new_program_not_known_to_fail() -> None:
    not_compiling = "def f(a, a):\n    return a\n"  # parses, but Python refuses to compile it
    replies = [WRONG, "I would keep it as it is.", fence(not_compiling), RIGHT]
    script = PipelineScript(solve=WRONG, simulate=perfect_simulator, repair=[replies])
    events, server = guided(script, turns=1)
    (body,) = repair_requests(server)
    assert body["n"] == 4  # one request, several samples
    (turn,) = [e.payload for e in of_type(events, "repair_turn")]
    assert turn["fix"] == 3 and turn["code"] == RIGHT_CODE and turn["parse_error"] is None
    assert turn["text"] == solve.PREFILL + RIGHT_CODE.rstrip("\n")
    errors = [r["error"] or "" for r in turn["replies"]]
    assert errors[0] == REPEATED and "does not parse" in errors[1]
    assert errors[2].startswith("known to fail: the program does not compile") and errors[3] == ""
    assert [r["code"] for r in turn["replies"]] == [None, None, not_compiling, RIGHT_CODE]
    assert turn["replies"][3]["why"] == "the only new program not known to fail"
    # only the reply taken is simulated; only the first reply streams
    assert len([v for v in of_type(events, "verdict") if v.payload["turn"] == 1]) == 2
    assert (
        "".join(e.payload["text"] for e in of_type(events, "repair_delta"))
        == solve.PREFILL + WRONG_CODE.rstrip()
    )
    assert events[-1].payload["code"] == RIGHT_CODE


def test_several_usable_replies_are_judged_and_the_one_matching_most_is_taken() -> None:
    none_right = "n = int(input())\nprint(n)\n"  # matches no public test
    replies = [fence(none_right), fence(WRONG_CODE.replace("+ 2", "* 1 + 2")), RIGHT, fence(none_right + "#")]
    script = PipelineScript(solve=WRONG, simulate=perfect_simulator, repair=[replies])
    events, _ = guided(script, turns=1)
    (turn,) = [e.payload for e in of_type(events, "repair_turn")]
    assert turn["fix"] == 2 and turn["code"] == RIGHT_CODE
    # every usable reply judged, at once; the one matching the most taken
    assert [r["matched"] for r in turn["replies"]] == [0, 1, 2, 0]
    assert [r["why"] for r in turn["replies"]] == [
        "its verdicts matched 0 of 2 public tests",
        "its verdicts matched 1 of 2 public tests",
        "its verdicts matched 2 of 2 public tests, the most of the replies",
        "its verdicts matched 0 of 2 public tests",
    ]
    # only the fix taken sends its events: its simulations and verdicts, after repair_turn
    verdicts = [e for e in of_type(events, "verdict") if e.payload["turn"] == 1]
    assert [(v.payload["candidate"], v.payload["match"]) for v in verdicts] == [(0, True), (0, True)]
    sims = [e for e in of_type(events, "simulation_done") if e.payload["turn"] == 1]
    assert len(sims) == 2  # the other judged replies' simulations are not sent
    assert events.index(of_type(events, "repair_turn")[0]) < events.index(verdicts[0])
    assert [e.seq for e in events] == list(range(len(events)))  # the held events numbered when sent
    assert events[-1].payload["code"] == RIGHT_CODE


def test_of_usable_replies_tied_the_first_is_taken_and_a_fix_no_better_is_not_kept() -> None:
    none_right = "n = int(input())\nprint(n)\n"
    replies = [fence(none_right), fence(none_right + "# again\nx = 1\n"), WRONG, WRONG]
    script = PipelineScript(solve=WRONG, simulate=perfect_simulator, repair=[replies])
    events, _ = guided(script, turns=1)
    (turn,) = [e.payload for e in of_type(events, "repair_turn")]
    assert turn["fix"] == 0 and [r["matched"] for r in turn["replies"]] == [0, 0, None, None]
    assert turn["replies"][1]["why"].endswith("as many as the reply taken, which came first")
    assert len(of_type(events, "repair_rejected")) == 1 and events[-1].payload["code"] == WRONG_CODE


def test_when_every_new_program_is_known_to_fail_the_first_is_taken_and_judged() -> None:
    first, second = "print(int(input()) +\n", "def f(a, a):\n    return a\n"
    replies = [fence(first), fence(second), WRONG, WRONG]
    script = PipelineScript(solve=WRONG, simulate=perfect_simulator, repair=[replies])
    events, _ = guided(script, turns=1)
    (turn,) = [e.payload for e in of_type(events, "repair_turn")]
    assert turn["fix"] == 1 and turn["code"] == second  # the first reply does not parse: no program
    why = turn["replies"][1]["why"]
    assert why.startswith("known to fail: the program does not compile") and why.endswith("new program)")
    verdicts = [v.payload for v in of_type(events, "verdict") if v.payload["turn"] == 1]
    assert [v["source"] for v in verdicts] == ["checked", "checked"]  # judged without a simulation
    assert len(of_type(events, "repair_rejected")) == 1 and events[-1].payload["code"] == WRONG_CODE


def test_sampling_a_turn_asks_for_four_replies_and_greedy_for_one() -> None:
    script = PipelineScript(solve=WRONG, simulate=perfect_simulator, repair=[WRONG])
    _, server = guided(script, turns=1)
    assert [body["n"] for body in repair_requests(server)] == [FIX_REPLIES] == [4]
    script = PipelineScript(solve=WRONG, simulate=perfect_simulator, repair=[WRONG])
    events, server = guided(script, turns=1, temperature=0.0)
    (body,) = repair_requests(server)
    assert body.get("n", 1) == 1  # greedy samples would all be the same reply
    (turn,) = [e.payload for e in of_type(events, "repair_turn")]
    assert turn["parse_error"] == REPEATED and len(turn["replies"]) == 1


def test_an_empty_reply_still_streams_the_prefilled_fence() -> None:
    script = PipelineScript(solve=WRONG, simulate=perfect_simulator, repair=[solve.PREFILL])
    events, _ = guided(script, turns=1)
    assert [e.payload["text"] for e in of_type(events, "repair_delta")] == [solve.PREFILL]
    assert of_type(events, "repair_turn")[0].payload["text"] == solve.PREFILL


TRIPLE = {
    "title": "Triple",
    "statement": "Return 3 * x.",
    "kind": "call",
    "entry_point": "triple",
    "tests": [{"input": "1", "output": "3"}, {"input": "2", "output": "6", "public": False}],
}
TRIPLE_WRONG = "def triple(x):\n    return x\n"


def copying_simulator(code: str, call: str) -> str:
    """A test double of the default model's simulation: where the code asserts a value for the call it
    copies that value (MBPP 777), else it answers as the code would."""
    for line in code.splitlines():
        if line.startswith(f"assert {call} == "):
            return " " + line.split(" == ", 1)[1] + "\n[/ANSWER]"
    namespace: dict[str, Any] = {}
    exec(compile(code, "<double>", "exec"), namespace)
    return f" {eval(call, namespace)!r}\n[/ANSWER]"


@pytest.mark.parametrize(
    "fix",
    [
        TRIPLE_WRONG + "\nassert triple(1) == 3\n",  # the default model's own repair replies (MBPP 616, 777)
        TRIPLE_WRONG + "\ntriple(1)\nexpected = 3\nassert triple(1) == expected\n",
        "# returns three times x\n" + TRIPLE_WRONG,
    ],
)
def test_a_fix_that_adds_only_test_code_is_the_attempt_again_and_not_simulated(fix: str) -> None:
    script = PipelineScript(solve=fence(TRIPLE_WRONG), simulate=copying_simulator, repair=[fence(fix)])
    events, _ = guided(script, problem=TRIPLE, turns=1, temperature=0.0, executor=ExecutorDouble())
    (turn,) = [e.payload for e in of_type(events, "repair_turn")]
    assert turn["code"] is None and turn["parse_error"] == REPEATED
    assert [v for v in of_type(events, "verdict") if v.payload["turn"] == 1] == []  # nothing to copy from
    assert events[-1].payload["code"] == TRIPLE_WRONG and events[-1].payload["passed_public_simulated"] == 0


def test_a_fix_that_changes_the_function_is_simulated_and_kept() -> None:
    fix = "def triple(x):\n    return 3 * x\n\nassert triple(1) == 3\n"
    script = PipelineScript(solve=fence(TRIPLE_WRONG), simulate=copying_simulator, repair=[fence(fix)])
    events, _ = guided(script, problem=TRIPLE, turns=1, executor=ExecutorDouble())
    assert [v.payload["match"] for v in of_type(events, "verdict") if v.payload["turn"] == 1] == [True]
    assert events[-1].payload["code"] == fix
