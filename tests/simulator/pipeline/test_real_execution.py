"""``simulator.pipeline.real_execution.execute_programs``: "Run for real" on a run's programs after the
fact, as events appended to the run's log (numbered from ``start_seq``), with the real sandbox when it can run
here and an executor double otherwise."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from simulator.execution.program import Program
from simulator.pipeline.events import Event
from simulator.pipeline.executor import ExecutorUnavailable, LocalExecutor
from simulator.pipeline.real_execution import RealProgram, execute_programs
from simulator.problem import Problem
from tests.simulator.pipeline.pipeline_doubles import DOUBLE_PROBLEM, ExecutorDouble, collect, of_type

RIGHT = "n = int(input())\nprint(2 * n)\n"
WRONG = "n = int(input())\nprint(n + 2)\n"
NLEX = "[THOUGHT] Line 1: `n = int(input())`; now n = 99.\n[/THOUGHT]\n<output>\n198\n"


def _events(programs: list[RealProgram], executor: Any, **kwargs: Any) -> list[Event]:
    problem = Problem.from_dict(DOUBLE_PROBLEM)
    return asyncio.run(collect(execute_programs(problem, programs, run_id="r1", executor=executor, **kwargs)))


def _programs() -> list[RealProgram]:
    return [
        RealProgram(candidate=0, code=WRONG, nlex={0: "nlex of 0 on test 0", 1: "nlex of 0 on test 1"}),
        RealProgram(candidate=1, code=RIGHT, nlex={0: "nlex of 1 on test 0"}),
        RealProgram(candidate=0, code=RIGHT, turn=2, final=True, nlex={1: "nlex of the final on test 1"}),
    ]


def test_it_appends_execution_events_from_start_seq_between_two_stage_events() -> None:
    events = _events(_programs(), ExecutorDouble(), start_seq=40)

    assert [e.seq for e in events] == list(range(40, 40 + len(events)))
    assert {e.run_id for e in events} == {"r1"}
    first, last = events[0], events[-1]
    assert first.type == last.type == "stage"
    assert first.payload["state"] == "started" and first.payload["rerun"] is True
    assert first.payload["programs"] == [
        {"candidate": 0, "turn": 0, "final": False},
        {"candidate": 1, "turn": 0, "final": False},
        {"candidate": 0, "turn": 2, "final": True},
    ]
    assert last.payload["state"] == "finished" and "error" not in last.payload
    assert not any(e.is_final for e in events)  # the run already ended with its final event
    assert len(of_type(events, "execution")) == 3 * 3  # every program on every test, private too


def test_each_execution_says_what_ran_and_whether_it_passed() -> None:
    events = _events(_programs(), ExecutorDouble())
    by_key = {(e.payload["candidate"], e.payload["turn"], e.payload["test"]): e.payload for e in events[1:-1]}

    wrong_on_private = by_key[(0, 0, 2)]
    assert wrong_on_private["public"] is False and wrong_on_private["status"] == "ok"
    assert wrong_on_private["output"] == "9\n" and wrong_on_private["expected"] == "14\n"
    assert wrong_on_private["passed"] is False
    assert by_key[(1, 0, 2)]["passed"] is True
    assert by_key[(0, 2, 0)]["final"] is True and by_key[(0, 2, 0)]["passed"] is True


def test_only_the_stored_nlex_of_public_tests_is_checked_against_the_trace() -> None:
    executor = ExecutorDouble(divergence={"claimed": "99", "actual": "2"})
    events = _events(_programs(), executor)
    by_key = {(e.payload["candidate"], e.payload["turn"], e.payload["test"]): e.payload for e in events[1:-1]}

    assert sorted(executor.checked) == sorted(
        ["nlex of 0 on test 0", "nlex of 0 on test 1", "nlex of 1 on test 0", "nlex of the final on test 1"]
    )
    first = by_key[(0, 0, 0)]["verification"]["first_divergence"]
    assert first["claimed"] == "99" and len(by_key[(0, 0, 0)]["verification"]["claims"]) == 1
    assert by_key[(1, 0, 1)]["verification"] is None  # no NLEX stored for that test: nothing to check
    assert by_key[(0, 0, 2)]["verification"] is None  # private: never simulated

    results = {(r["candidate"], r["turn"]): r for r in events[-1].payload["results"]}
    assert results[(0, 0)] == {
        "candidate": 0,
        "turn": 0,
        "final": False,
        "passed_public": 1,  # n + 2 == 2 * n when n is 2
        "public_tests": 2,
        "passed_private": 0,
        "private_tests": 1,
        "first_divergence": 0,
    }
    assert results[(1, 0)]["passed_public"] == 2 and results[(1, 0)]["passed_private"] == 1
    assert results[(0, 2)]["first_divergence"] == 1


def test_a_cancel_drops_the_remaining_executions() -> None:
    cancel = asyncio.Event()
    cancel.set()
    events = _events(_programs(), ExecutorDouble(), cancel=cancel)
    assert not of_type(events, "execution")
    assert events[-1].payload["cancelled"] is True and events[-1].payload["state"] == "finished"


class UnavailableExecutor(ExecutorDouble):
    """An executor double whose sandbox is not installed."""

    async def execute(self, program: Program, *, trace: bool) -> Any:
        raise ExecutorUnavailable("real execution is not available here: no bwrap")


def test_an_executor_that_cannot_run_ends_the_stage_with_the_reason() -> None:
    events = _events(_programs(), UnavailableExecutor())
    assert [e.type for e in events] == ["stage", "stage"]
    assert events[-1].payload["error"] == "real execution is not available here: no bwrap"


@pytest.fixture(scope="module")
def sandbox() -> LocalExecutor:
    executor = LocalExecutor()
    result = asyncio.run(executor.execute(Program(code="print(1)\n", stdin=""), trace=False))
    if result.status != "ok":
        pytest.skip(f"the sandbox cannot run here: {result.status} {result.message}")
    return executor


def test_with_the_real_sandbox_it_finds_where_the_simulation_diverged(sandbox: LocalExecutor) -> None:
    crash = "n = int(input())\nprint(1 // (n - n))\n"
    programs = [
        RealProgram(candidate=0, code=RIGHT, nlex={0: NLEX}),
        RealProgram(candidate=1, code=crash),
    ]
    events = _events(programs, sandbox)
    by_key = {(e.payload["candidate"], e.payload["test"]): e.payload for e in of_type(events, "execution")}

    right = by_key[(0, 0)]
    assert right["status"] == "ok" and right["output"] == "4\n" and right["passed"] is True
    first = right["verification"]["first_divergence"]
    assert (first["claimed"], first["actual"]) == ("99", "2") and "n is 99" in first["sentence"]
    assert right["verification"]["status"] == "checked" and not right["verification"]["verified"]
    assert by_key[(0, 2)]["passed"] is True and by_key[(0, 2)]["public"] is False
    crashed = by_key[(1, 1)]
    assert crashed["status"] == "runtime_error" and crashed["passed"] is False
    assert "ZeroDivisionError" in crashed["output"]


class _FirstIsSlowest(ExecutorDouble):
    """Finishes the earliest programs last (a test double): completion order is the reverse."""

    async def execute(self, program: Program, *, trace: bool) -> Any:
        await asyncio.sleep(0.05 if program.stdin == "2\n" else 0.0)  # test 0 of every program
        return await super().execute(program, trace=trace)


def test_executions_arrive_in_the_pages_order_whatever_finishes_first() -> None:
    events = _events(_programs(), _FirstIsSlowest())
    keys = [(e.payload["candidate"], e.payload["turn"], e.payload["public"], e.payload["test"])
            for e in of_type(events, "execution")]  # fmt: skip
    programs = [(0, 0), (1, 0), (0, 2)]
    assert keys == [
        (*p, public, test) for p in programs for public, test in ((True, 0), (True, 1), (False, 2))
    ]
