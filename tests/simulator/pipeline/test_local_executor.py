"""The executor seam wired to the real sandbox (simulator.execution.run) and claim checker
(simulator.nlex): a run with real=True records real outputs and the first divergence."""

from __future__ import annotations

import asyncio

import pytest

from simulator.execution.program import Program
from simulator.llm.testing import FakeModelServer, PipelineScript
from simulator.pipeline import RunSettings, run
from simulator.pipeline.executor import LocalExecutor
from simulator.problem import Problem
from tests.simulator.pipeline.pipeline_doubles import DOUBLE_PROBLEM, RIGHT, collect, make_client, of_type


@pytest.fixture(scope="module")
def executor() -> LocalExecutor:
    executor = LocalExecutor()
    result = asyncio.run(executor.execute(Program(code="print(1)\n", stdin=""), trace=False))
    if result.status != "ok":
        pytest.skip(f"the sandbox cannot run here: {result.status} {result.message}")
    return executor


def test_a_real_run_records_outputs_and_where_the_nlex_went_wrong(executor, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("EXECSIM_DATA_DIR", str(tmp_path))

    def wrong_simulation(code: str, stdin: str) -> str:
        return "[THOUGHT] Line 1: `n = int(input())`; now n = 99.\n[/THOUGHT]\n<output>\n198\n"

    script = PipelineScript(solve=RIGHT, simulate=wrong_simulation)

    async def main():
        async with make_client(FakeModelServer(script)) as client:
            problem = Problem.from_dict(DOUBLE_PROBLEM)
            settings = RunSettings(k=1, turns=0, real=True, seed=0, narrate=True)
            return await collect(run(problem, settings, client, executor=executor))

    events = asyncio.run(main())
    assert events[-1].type == "run_finished"
    verdict = next(e.payload for e in of_type(events, "verdict") if e.payload["test"] == 0)
    assert verdict["match"] is False and verdict["real"]["status"] == "ok"
    assert verdict["real"]["output"] == "4\n" and verdict["real"]["passed"] is True
    assert verdict["real"]["traced"] is True  # its simulation is checked against the trace
    assert 0 < verdict["real"]["seconds"] < 30 and verdict["real"]["memory_kb"] > 1000  # a process's RSS
    private = next(e.payload for e in of_type(events, "execution") if not e.payload["public"])
    assert private["traced"] is False and private["seconds"] > 0 and private["memory_kb"] > 1000
    divergence = verdict["real"]["verification"]["first_divergence"]
    assert divergence["claimed"] == "99" and divergence["actual"] == "2"
    assert events[-1].payload["real"] == {
        "passed_public": 2,
        "public_tests": 2,
        "passed_private": 1,
        "private_tests": 1,
    }


def test_a_failing_program_reports_its_status_as_output(executor) -> None:
    result = asyncio.run(executor.execute(Program(code="1/0\n", stdin=""), trace=True))
    assert result.status == "runtime_error"
    checked = executor.verify("[THOUGHT] Line 1 runs. [/THOUGHT]", result, Program(code="1/0\n", stdin=""))
    assert checked.status == "checked" and checked.answer.verdict == "missing" and not checked.verified
