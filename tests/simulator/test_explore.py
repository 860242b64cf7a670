"""The explorer's payload: the trace, the program's lines and the stepper's sentences."""

from __future__ import annotations

import pytest

from simulator.execution import Program, SandboxError, run
from simulator.explore import explorer_payload

CODE = "def f(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n"


@pytest.fixture(scope="module")
def traced():
    program = Program(code=CODE, call="f([1, 2, 3, 4])")
    try:
        result = run(program, trace=True)
    except SandboxError as exc:
        pytest.skip(f"the sandbox is not available: {exc}")
    return program, result.trace


def test_payload_is_the_trace_the_lines_and_the_sentences(traced):
    program, trace = traced
    payload = explorer_payload(trace, program)
    assert payload["trace"]["steps"][0]["event"] == "call"
    assert payload["lines"][0] == "def f(xs):" and payload["shape"] == "call"
    assert payload["sentences"] and all("step" in s for s in payload["sentences"])


def test_call_mode_has_a_global_frame_read_from_the_top_level():
    """Call mode traces only the call; the Global frame (as Python Tutor shows it) is the top level's
    functions, classes, imports and literal constants; a script's module frame is traced instead."""
    from simulator.explore import UNTRACED, global_names

    code = (
        "import math\nfrom os import path\nLIMIT = 10\nNAMES: list = ['a']\nSTART = math.floor(2.5)\n\n"
        "class Box:\n    pass\n\n\ndef fact(n):\n    return 1 if n <= 1 else n * fact(n - 1)\n"
    )
    found = {g["name"]: g for g in global_names(Program(code=code, call="fact(3)"))}
    assert list(found) == ["math", "path", "LIMIT", "NAMES", "START", "Box", "fact"]
    assert found["fact"]["value"] == {"repr": "<function fact at 0x...>", "type": "function"}
    assert found["Box"]["value"] == {"repr": "<class 'Box'>", "type": "type"}
    assert found["LIMIT"]["value"] == {"repr": "10", "type": "int"}
    assert found["NAMES"]["value"] == {"repr": "['a']", "type": "list"}
    assert found["math"]["value"]["type"] == "module"
    assert found["START"] == {"name": "START", "value": {"repr": UNTRACED, "type": ""}, "untraced": True}
    assert found["path"]["untraced"]
    assert global_names(Program(code=code, stdin="")) == []  # a script: its frame is in the trace
    assert global_names(Program(code="def f(:\n", call="f()")) == []
    assert explorer_payload_globals(code) == list(found.values())


def explorer_payload_globals(code: str) -> list[dict[str, object]]:
    from simulator.execution.tracer import trace_in_process

    program = Program(code=code, call="fact(3)")
    return explorer_payload(trace_in_process(code, program.call).trace, program)["globals"]


def test_an_instance_returned_is_told_from_the_heap_not_by_its_address() -> None:
    """The event line and the result box read ``Node(value=1, next=None)``, as the narration says it,
    never ``<__program__.Node object at 0x...>`` (issue 52, Educator)."""
    from simulator.execution.tracer import trace_in_process
    from simulator.explore import result_shown

    code = (
        "class Node:\n    def __init__(self, value):\n        self.value = value\n"
        "        self.next = None\n\ndef make(v):\n    return Node(v)\n"
    )
    trace = trace_in_process(code, "make(1)").trace
    payload = explorer_payload(trace, Program(code=code, call="make(1)"))
    returns = [s for s in payload["trace"]["steps"] if s["event"] == "return" and s["function"] == "make"]
    assert " at 0x" in returns[-1]["value"]["repr"]  # as recorded
    assert returns[-1]["value"]["shown"] == "Node(value=1, next=None)"
    assert result_shown(trace) == "Node(value=1, next=None)"
    assert result_shown(trace_in_process(CODE, "f([1, 2])").trace) is None  # a plain value is as recorded
