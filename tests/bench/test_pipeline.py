"""bench/pipeline.py against a scripted OpenAI-compatible server instead of vLLM: both modes run the
real pipeline and the script prints its table and speed-up (numbers of a double, not checked)."""

from __future__ import annotations

from typing import Any

from simulator.llm.testing import FakeModelServer, PipelineScript

CANDIDATE = "def sum_squares(xs):\n    return sum(x * x for x in xs)\n"


def _simulate(code: str, call: str) -> str:
    namespace: dict[str, Any] = {}
    exec(compile(code, "<candidate>", "exec"), namespace)  # the test's own program
    value = eval(call, namespace)
    thought = "[THOUGHT] sum_squares adds the squares of the numbers. [/THOUGHT]"
    return f"{thought}\n[ANSWER] assert {call} == {value!r} [/ANSWER]"


def test_pipeline_bench_runs_both_modes_against_a_scripted_server(run_bench) -> None:
    script = PipelineScript(solve=CANDIDATE, simulate=_simulate)
    with FakeModelServer(script, model="bench-double").serve() as url:
        out = run_bench("pipeline", "--url", url, "--model", "bench-double", "--repeats", "1").stdout
    assert out.count("sequential ") >= 1 and out.count("concurrent ") >= 1, out
    assert "| one request at a time |" in out and "| all concurrent |" in out
    assert "pipeline k=4 tests=3 " in out and "wall_speedup=" in out and "throughput_speedup=" in out
    assert script.calls.get("solve", 0) == 3  # the warm-up run and one run of each mode
    assert sum(n for kind, n in script.calls.items() if kind.startswith("simulate")) == 3 * 12
