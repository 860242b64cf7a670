"""A program stopped from outside keeps the steps its tracer recorded: timeout, output limit, a crash.

The steps reach the worker as they are recorded (a shared buffer it reads after the child is gone), so
a kill loses none of them; the trace comes back flagged ``truncated`` with the reason (docs/trace-schema.md).
"""

from __future__ import annotations

import pytest

from simulator.execution import Pool, Program
from tests.simulator.execution.sandbox_support import VARIANTS, make_pool


@pytest.fixture(scope="module", params=VARIANTS)
def pool(request: pytest.FixtureRequest):
    pool = make_pool(request.param)
    yield pool
    pool.close()


def traced(pool: Pool, code: str, call: str | None = None, **kwargs):
    stdin = None if call is not None else ""
    program = Program(code=code, call=call, stdin=stdin, timeout_s=kwargs.pop("timeout", 1.0))
    return pool.run(program, trace=True, **kwargs)


def test_an_infinite_loop_times_out_with_its_steps_up_to_the_cap(pool: Pool) -> None:
    result = traced(pool, "x = 0\nwhile True:\n    x += 1\n", max_steps=500)
    assert result.status == "timeout"
    trace = result.trace
    assert trace is not None and len(trace.steps) == 500
    assert trace.truncated and trace.truncated_reason == "max_steps"
    assert [s.line for s in trace.steps[:6]] == [0, 1, 2, 3, 2, 3]  # call, x = 0, then the loop
    assert trace.steps[4].changed["x"].repr == "1"
    assert [s.index for s in trace.steps] == list(range(500))


def test_a_program_stopped_before_the_cap_keeps_its_steps_and_says_why(pool: Pool) -> None:
    code = "import time\ndef f(n):\n    t = n * 2\n    time.sleep(60)\n    return t\n"
    result = traced(pool, code, "f(4)")
    assert result.status == "timeout"
    trace = result.trace
    assert trace is not None and trace.truncated and trace.truncated_reason == "timeout"
    # line 4's step (recorded, then the program slept until it was killed) is kept
    assert [(s.event, s.line) for s in trace.steps] == [("call", 2), ("line", 3), ("line", 4)]
    assert trace.steps[2].changed["t"].repr == "8"
    assert trace.source == code
    assert "stopped at its time limit" in trace.render()


def test_printing_without_end_is_an_output_limit_with_its_steps(pool: Pool) -> None:
    result = traced(pool, "i = 0\nwhile True:\n    print('x' * 1000)\n    i += 1\n")
    assert result.status == "output_limit"
    trace = result.trace
    assert trace is not None and trace.truncated and trace.truncated_reason == "output_limit"
    assert len(trace.steps) > 100
    printed = "".join(s.stdout for s in trace.steps)  # what the program wrote, not what the cap let out
    assert printed and set(printed) == {"x", "\n"}
    assert printed.startswith(result.stdout) or result.stdout.startswith(printed)


def test_a_program_that_dies_keeps_its_steps(pool: Pool) -> None:
    result = traced(pool, "import os\ny = 1\nos._exit(3)\n")
    assert result.status == "killed"
    trace = result.trace
    assert trace is not None and trace.truncated and trace.truncated_reason == "killed"
    assert [s.line for s in trace.steps if s.event == "line"][:2] == [1, 2]


def test_a_finished_program_is_not_truncated(pool: Pool) -> None:
    result = traced(pool, "def f(n):\n    return [i for i in range(n)]\n", "f(3)")
    assert result.status == "ok" and result.value == "[0, 1, 2]"
    assert not result.trace.truncated and result.trace.truncated_reason == ""
    assert result.trace.steps[-1].event == "return" and result.trace.steps[-1].value.repr == "[0, 1, 2]"


@pytest.mark.parametrize(
    "steps",
    [b"\xff\xfe garbage", b'{"index": 0},', b'{"index": 0, "event": "line"},' * 3, b"[" * 100_000 + b","],
    ids=["bytes", "missing-fields", "half-steps", "deep"],
)
def test_forged_steps_are_reported_not_raised(pool: Pool, steps: bytes) -> None:
    """The program writes its own steps into the steps buffer (fd 4) and a well-formed record, and exits
    before the harness can: steps that do not parse are reported as ``killed``, not raised."""
    code = (
        "import mmap, os, struct\n"
        "buffer = mmap.mmap(4, 0)\n"
        f"data = {steps!r}\n"
        "buffer[8 : 8 + len(data)] = data\n"
        "struct.pack_into('<Q', buffer, 0, len(data))\n"
        'os.write(3, b\'{"status": "ok", "trace": {"truncated": false}}\')\n'
        "os._exit(0)\n"
    )
    result = traced(pool, code)
    assert result.status == "killed" and "malformed" in result.message
    healthy = traced(pool, "def f(x):\n    return x + 1\n", "f(1)")
    assert healthy.status == "ok" and healthy.value == "2" and len(healthy.trace.steps) == 3
