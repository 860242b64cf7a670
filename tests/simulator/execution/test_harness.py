"""The harness's classification of what a program did, run in a forked child of this process (trusted
snippets only: the harness itself does not isolate)."""

from __future__ import annotations

import json
import os

import pytest

from simulator.execution import harness


def execute(program: dict, trace: bool = False) -> dict:
    """harness.execute in a forked child (so the snippet cannot disturb the test process)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        import sys

        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        record = harness.execute(program, trace=trace)
        os.write(write, json.dumps(record).encode())
        os._exit(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 1 << 16):
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    return json.loads(b"".join(chunks))


@pytest.mark.parametrize(
    ("program", "status", "line"),
    [
        ({"code": "def f(:\n  pass", "call": "f()"}, "syntax_error", 1),
        ({"code": "x = 1\ny = x +", "stdin": ""}, "syntax_error", 2),
        ({"code": "def f():\n    return [][1]", "call": "f()"}, "runtime_error", 2),
        (
            {"code": "def f():\n    return 1", "tests": ["assert f() == 1", "assert f() == 2"]},
            "wrong_answer",
            1,
        ),
        ({"code": "x = [0] * (10 ** 12)", "stdin": ""}, "memory_limit", 1),
        ({"code": "import sys\nsys.exit(0)", "stdin": ""}, "ok", None),
        ({"code": "import sys\nsys.exit(2)", "stdin": ""}, "runtime_error", 2),
        ({"code": "def f():\n    return 1", "tests": ["assert f( == 1"]}, "syntax_error", 1),
    ],
    ids=["syntax", "syntax-line", "exception", "assert", "memory", "exit-0", "exit-2", "bad-test"],
)
def test_status_and_line(program: dict, status: str, line: int | None) -> None:
    record = execute(program)
    assert record["status"] == status
    if line is not None:
        assert record["exception"]["line"] == line


def test_value_repr_is_capped_and_typed() -> None:
    record = execute({"code": "def f():\n    return 'x' * 50000", "call": "f()"})
    assert record["value_type"] == "str"
    assert len(record["value"]) <= harness.MAX_VALUE_REPR + 1


def test_trace_is_attached_with_printed_text() -> None:
    record = execute({"code": "print('a')\nx = 2\nprint(x)", "stdin": ""}, trace=True)
    steps = record["trace"]["steps"]
    assert [s["line"] for s in steps if s["event"] == "line"] == [1, 2, 3]
    assert "".join(s["stdout"] for s in steps) == "a\n2\n"
