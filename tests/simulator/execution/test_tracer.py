"""The line tracer: what it records, its cap, and that it never breaks the program it traces."""

from __future__ import annotations

import json
import sys

import pytest

from simulator.execution.trace import TRUNCATION_MARK, StepStream, Trace, decode_steps
from simulator.execution.tracer import REPLACED, Tracer, _TeeStdout, safe_repr, trace_in_process


def test_it_records_call_lines_changes_and_return() -> None:
    code = "def f(x):\n    y = x + 1\n    y *= 2\n    return y\n"
    run = trace_in_process(code, "f(3)")
    steps = run.trace.steps
    assert [(s.event, s.line) for s in steps] == [
        ("call", 1),
        ("line", 2),
        ("line", 3),
        ("line", 4),
        ("return", 4),
    ]
    assert steps[0].changed["x"].repr == "3" and steps[0].changed["x"].type == "int"
    assert steps[2].changed["y"].repr == "4"  # the effect of line 2, seen before line 3 runs
    assert steps[3].changed["y"].repr == "8"
    assert "x" not in steps[3].changed  # only what changed
    assert steps[-1].value is not None and steps[-1].value.repr == "8"
    assert run.value is not None and run.value.repr == "8"
    assert {s.function for s in steps} == {"f"}  # not the "<call>" frame, not the harness


def test_in_place_mutation_is_a_change() -> None:
    run = trace_in_process("def f(a):\n    a.append(1)\n    return a\n", "f([])")
    assert run.trace.steps[2].changed["a"].repr == "[1]"


def test_step_cap_returns_a_truncated_partial_trace_and_the_program_finishes() -> None:
    code = "def f(n):\n    total = 0\n    for i in range(n):\n        total += i\n    return total\n"
    run = trace_in_process(code, "f(10000)", max_steps=50)
    assert run.trace.truncated
    assert len(run.trace.steps) == 50
    assert run.value is not None and run.value.repr == str(sum(range(10000)))
    assert "truncated at 50 steps" in run.trace.render()


def test_exceptions_are_recorded_and_unwinding_returns_have_no_value() -> None:
    code = (
        "def g(x):\n    return 10 // x\n"
        "def f(x):\n    try:\n        g(x)\n    except ZeroDivisionError:\n        x = -1\n    return x\n"
    )
    run = trace_in_process(code, "f(0)")
    events = [(s.event, s.function) for s in run.trace.steps]
    assert ("exception", "g") in events and ("exception", "f") in events
    raised = next(s for s in run.trace.steps if s.event == "exception")
    assert raised.value is not None and raised.value.type == "ZeroDivisionError"
    unwinding = next(s for s in run.trace.steps if s.event == "return" and s.function == "g")
    assert unwinding.value is None
    assert run.value is not None and run.value.repr == "-1"


def _returns(code: str, call: str) -> dict[str, list[str | None]]:
    """The value of each ``return`` step, per function: its repr, or None for a frame that raised."""
    returns: dict[str, list[str | None]] = {}
    for step in trace_in_process(code, call).trace.steps:
        if step.event == "return":
            returns.setdefault(step.function, []).append(step.value.repr if step.value else None)
    return returns


@pytest.mark.parametrize(
    "body",
    [
        "    try:\n        raise ValueError(x)\n    finally:\n        y = x\n",
        "    with Guard():\n        y = x\n        raise ValueError(x)\n",
        "    try:\n        raise ValueError(x)\n    except ValueError:\n        y = x\n        raise\n",
    ],
    ids=["finally", "with", "except-raise"],
)
def test_a_frame_that_reraises_after_cleanup_lines_returns_no_value(body: str) -> None:
    code = (
        "class Guard:\n    def __enter__(self):\n        return self\n"
        "    def __exit__(self, *exc):\n        return None\n"
        f"def g(x):\n{body}"
        "def f(x):\n    try:\n        g(x)\n    except ValueError:\n        return 'caught'\n"
    )
    returns = _returns(code, "f(1)")
    assert returns["g"] == [None]
    assert returns["f"] == ["'caught'"]
    assert returns.get("__exit__", ["None"]) == ["None"]  # a real ``return None`` keeps its value


def test_real_returns_of_none_keep_their_value() -> None:
    code = (
        "def g(x):\n    try:\n        raise ValueError(x)\n    except ValueError:\n        pass\n"
        "def h(x):\n    try:\n        raise ValueError(x)\n    finally:\n        return None\n"
        "def f(x):\n    for _ in range(x):\n        pass\n"
        "def main():\n    return [g(1), h(1), f(2)]\n"
    )
    returns = _returns(code, "main()")
    assert returns["g"] == ["None"] and returns["h"] == ["None"] and returns["f"] == ["None"]


def test_generators_yield_none_but_a_closed_generator_raises() -> None:
    code = (
        "def gen():\n    x = yield\n    yield x\n"
        "def main():\n    g = gen()\n    next(g)\n    g.send(None)\n    g.close()\n    return 1\n"
    )
    returns = _returns(code, "main()")
    assert returns["gen"] == ["None", "None", None]  # two yields of None, then GeneratorExit


def test_a_yield_and_the_resume_after_it_are_marked_a_first_start_is_a_call() -> None:
    code = (
        "def evens(n):\n    for i in range(n):\n        if i % 2 == 0:\n            yield i\n"
        "def inner():\n    yield 1\n    return 2\n"
        "def outer():\n    got = yield from inner()\n    yield got\n"
        "def f(n):\n    return list(evens(n)) + list(evens(n)) + list(outer())\n"
    )
    steps = trace_in_process(code, "f(3)").trace.steps
    kinds = {
        name: [s.kind for s in steps if s.function == name and s.event != "line"]
        for name in ("evens", "outer")
    }
    one = ["call", "yield", "resume", "yield", "resume", "return"]  # two yields, then the end
    assert kinds["evens"] == one + one  # each generator object starts with a call, not a resume
    assert [k for k in kinds["outer"] if k != "exception"] == one  # yields inner's 1, then its own 2
    assert not any(s.resumed or s.yielded for s in steps if s.function == "f")
    again = Trace.from_dict(json.loads(json.dumps(Trace(steps=steps).to_dict()))).steps
    assert [s.kind for s in again] == [s.kind for s in steps]
    assert "resumed" not in steps[0].to_dict() and steps[7].to_dict().get("resumed") is True


def test_uncaught_exception_keeps_the_trace() -> None:
    run = trace_in_process("def f(x):\n    y = 1\n    raise ValueError('no ' + x)\n", "f('way')")
    assert run.exception is not None and run.exception.type == "ValueError"
    assert run.trace.steps[-2].event == "exception"
    assert run.trace.steps[-2].value is not None and "no way" in run.trace.steps[-2].value.repr


def test_recursion_depth_and_frame_numbers() -> None:
    code = "def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\n"
    run = trace_in_process(code, "fact(4)")
    calls = [s for s in run.trace.steps if s.event == "call"]
    assert [s.depth for s in calls] == [0, 1, 2, 3]
    assert len({s.frame for s in calls}) == 4
    assert run.trace.steps[-1].depth == 0 and run.trace.steps[-1].value.repr == "24"  # type: ignore[union-attr]


def test_runaway_recursion_keeps_its_recursion_error_and_a_deep_partial_trace() -> None:
    code = "def f(n):\n    return f(n + 1)\n"
    run = trace_in_process(code, "f(0)", max_steps=100_000)
    assert run.exception is not None and run.exception.type == "RecursionError"
    # At the limit CPython itself may drop the trace function; the trace says so and stays usable.
    assert run.trace.error in ("", REPLACED)
    assert max(s.depth for s in run.trace.steps) > 500


def test_stdout_is_attributed_to_the_step_after_the_printing_line() -> None:
    code = "def f():\n    print('a')\n    x = 1\n    print('b', end='')\n    return x\n"
    run = trace_in_process(code, "f()")
    by_line = {(s.event, s.line): s.stdout for s in run.trace.steps}
    assert by_line[("line", 3)] == "a\n"
    assert by_line[("return", 5)] == ""
    assert by_line[("line", 5)] == "b"
    assert run.trace.stdout == run.stdout == "a\nb"


def test_a_program_that_sets_its_own_trace_function_is_not_broken() -> None:
    code = "import sys\ndef f():\n    sys.settrace(None)\n    x = 2\n    return x * 21\n"
    run = trace_in_process(code, "f()")
    assert run.value is not None and run.value.repr == "42"
    assert run.trace.error == REPLACED
    assert run.trace.steps[0].event == "call"


def test_a_repr_that_raises_does_not_break_the_program() -> None:
    code = (
        "class Bad:\n    def __repr__(self):\n        raise RuntimeError('boom')\n"
        "def f():\n    b = Bad()\n    return 5\n"
    )
    run = trace_in_process(code, "f()")
    assert run.value is not None and run.value.repr == "5"
    assert run.trace.error == ""
    shown = next(s.changed["b"] for s in run.trace.steps if "b" in s.changed)
    assert shown.type == "Bad" and "repr raised RuntimeError" in shown.repr


def test_long_reprs_are_truncated_and_addresses_normalised() -> None:
    run = trace_in_process(
        "def f():\n    s = 'x' * 5000\n    o = object()\n    return 1\n", "f()", max_repr=100
    )
    s = next(st.changed["s"] for st in run.trace.steps if "s" in st.changed)
    assert len(s.repr) == 101 and s.repr.endswith(TRUNCATION_MARK) and s.truncated
    o = next(st.changed["o"] for st in run.trace.steps if "o" in st.changed)
    assert o.repr == "<object object at 0x...>"
    assert safe_repr("at 0x7f3a9c") == "'at 0x...'"


class FailingTracer(Tracer):
    """Test double: its recording breaks after a few steps, as a bug in the tracer would."""

    def _record(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if len(self.steps) >= 3:
            raise KeyError("tracer bug")
        super()._record(*args, **kwargs)


def test_a_fault_in_the_tracer_disables_it_and_the_program_continues() -> None:
    namespace: dict[str, object] = {}
    exec(
        compile(
            "def f(n):\n    t = 0\n    for i in range(n):\n        t += i\n    return t\n",
            "<program>",
            "exec",
        ),
        namespace,
    )
    previous = sys.gettrace()
    tracer = FailingTracer()
    tracer.start()
    try:
        result = eval(compile("f(100)", "<call>", "eval"), namespace)
    finally:
        trace = tracer.stop()
    assert result == 4950
    assert len(trace.steps) == 3
    assert trace.error.startswith("tracer error: KeyError")
    assert sys.gettrace() is previous


def test_stop_restores_the_previous_trace_function() -> None:
    calls: list[str] = []

    def outer(frame, event, arg):  # type: ignore[no-untyped-def]
        calls.append(event)

    previous = sys.gettrace()
    sys.settrace(outer)
    try:
        tracer = Tracer()
        tracer.start()
        trace = tracer.stop()
        assert sys.gettrace() is outer
    finally:
        sys.settrace(previous)
    assert trace.steps == []


def test_traces_round_trip_through_json() -> None:
    run = trace_in_process("def f(a):\n    print(a)\n    return {'k': (a, None)}\n", "f(1.5)")
    data = json.loads(json.dumps(run.trace.to_dict()))
    assert data["schema_version"] == 1 and data["steps"][0]["frame"] == 1
    assert Trace.from_dict(data) == run.trace


def test_a_whole_script_is_traced_at_depth_zero_with_stdin() -> None:
    run = trace_in_process("n = int(input())\nfor i in range(n):\n    print(i)\n", stdin="2\n")
    assert run.stdout == "0\n1\n"
    assert {s.depth for s in run.trace.steps} == {0}
    assert run.trace.steps[2].changed == {"n": run.trace.steps[2].changed["n"]}
    assert run.trace.steps[2].changed["n"].repr == "2"


def _streamed(code: str, call: str, size: int, max_steps: int = 10_000) -> tuple[Trace, list]:
    """Trace ``call`` with a StepStream over a ``size``-byte buffer: the trace, and the streamed steps."""
    buffer = bytearray(size)
    tracer = Tracer(max_steps=max_steps, source=code, stream=StepStream(buffer))
    namespace: dict = {}
    exec(compile(code, "<program>", "exec"), namespace)
    saved, sys.stdout = sys.stdout, _TeeStdout(tracer)
    tracer.start()
    try:
        eval(compile(call, "<call>", "eval"), namespace)
    finally:
        trace = tracer.stop()
        sys.stdout = saved
    (length,) = StepStream.LENGTH.unpack_from(buffer)
    return trace, decode_steps(bytes(buffer[8 : 8 + length]))


LOOPING = "def f(n):\n    t = 0\n    for i in range(n):\n        t += i\n    return t\n"


def test_every_step_is_streamed_as_recorded() -> None:
    trace, streamed = _streamed(LOOPING, "f(5)", 1 << 20)
    assert streamed == trace.steps and not trace.truncated
    printing = "def f(n):\n    print(n)\n"  # the last step gets the text printed after it, streamed too
    trace, streamed = _streamed(printing, "f(7)", 1 << 20)
    assert streamed == trace.steps and streamed[-1].stdout == "7\n"
    capped, streamed = _streamed(LOOPING, "f(500)", 1 << 20, max_steps=30)
    assert streamed == capped.steps and len(streamed) == 30 and capped.truncated_reason == "max_steps"


def test_a_full_stream_truncates_the_trace_and_the_program_runs_on() -> None:
    trace, streamed = _streamed(LOOPING, "f(500)", 4096)
    assert trace.truncated and trace.truncated_reason == "max_size"
    assert streamed == trace.steps and 10 < len(streamed) < 100
    assert "filled their buffer" in trace.render()
