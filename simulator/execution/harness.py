"""What runs inside the sandboxed child: execute one program in one of its three shapes, return a record.

The record is the ``ExecutionResult`` fields the child itself can know (status, value, exception, trace,
duration); the worker adds stdout/stderr (it drains them from pipes), peak memory, and the statuses that
only an outsider can give (timeout, output_limit, killed). Given a ``StepStream`` (the sandbox's), the
tracer writes the steps there as it goes and the record's ``trace`` holds only ``Trace.header()``: the
steps then survive a kill, and are encoded once.

Shapes: ``call`` execs the code untraced, then evaluates the call (compiled as ``"<call>"``), traced when
asked; ``stdin`` execs the code as ``__main__`` with ``sys.stdin`` reading the given text, traced when asked;
``tests`` execs the code, then each test statement (compiled as ``"<test>"``), traced when asked; a failing
assert is a ``wrong_answer``.
"""

from __future__ import annotations

import builtins
import errno
import io
import sys
import time
import traceback
from typing import Any, TextIO

from simulator.execution.trace import DEFAULT_MAX_STEPS, StepStream
from simulator.execution.tracer import Tracer, safe_repr

PROGRAM_FILE = "<program>"
MAX_VALUE_REPR = 10_000
MAX_MESSAGE = 2_000


class _TracedStdout(io.TextIOBase):
    """A stdout that forwards writes and tells the tracer what was printed at the current step."""

    def __init__(self, target: TextIO, tracer: Tracer) -> None:
        self._target = target
        self._tracer = tracer

    def write(self, text: str) -> int:
        self._tracer.note_stdout(text)
        return self._target.write(text)

    def flush(self) -> None:
        self._target.flush()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]  # the target's, read-only
        return self._target.encoding


def _exception_info(exc: BaseException) -> dict[str, Any]:
    """Type, message and the line of the program (or call/test) where it was raised."""
    line = None
    fallback = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        filename = frame.f_code.co_filename
        if filename == PROGRAM_FILE:
            line = lineno
        elif filename in ("<call>", "<test>"):
            fallback = lineno
    if isinstance(exc, SyntaxError):
        line = exc.lineno
    try:
        message = exc.msg if isinstance(exc, SyntaxError) else str(exc)
    except Exception:
        message = f"<unprintable {type(exc).__name__}>"
    return {"type": type(exc).__name__, "message": message[:MAX_MESSAGE], "line": line or fallback}


def _status_of(exc: BaseException, in_tests: bool) -> str:
    if isinstance(exc, MemoryError):
        return "memory_limit"
    if isinstance(exc, OSError) and exc.errno in (errno.EFBIG, errno.ENOSPC, errno.EDQUOT):
        return "output_limit"
    if isinstance(exc, AssertionError) and in_tests:
        return "wrong_answer"
    if isinstance(exc, SyntaxError):
        return "syntax_error"
    return "runtime_error"


def execute(
    program: dict[str, Any],
    trace: bool = False,
    max_steps: int = DEFAULT_MAX_STEPS,
    stream: StepStream | None = None,
) -> dict[str, Any]:
    """Run ``program`` (a Program as a dict) in this process and return its partial result record.

    With ``stream`` the traced steps go there and ``record["trace"]`` is the trace's header; without, it
    is the whole trace (``Trace.to_dict``). Only ever call this in a throwaway process: the program can
    do anything this process can.
    """
    code: str = program["code"]
    record: dict[str, Any] = {"status": "ok", "value": None, "value_type": None, "exception": None}
    tracer = None
    if trace:
        tracer = Tracer(filename=PROGRAM_FILE, max_steps=max_steps, source=code, stream=stream)
    if tracer is not None:
        sys.stdout = _TracedStdout(sys.stdout, tracer)
    shape = (
        "call"
        if program.get("call") is not None
        else "tests"
        if program.get("tests") is not None
        else "stdin"
    )
    namespace: dict[str, Any] = {"__name__": "__main__" if shape == "stdin" else "__program__"}
    namespace["__builtins__"] = builtins
    started = time.perf_counter()
    in_tests = False
    try:
        try:
            compiled = compile(code, PROGRAM_FILE, "exec")
            extra = []
            if shape == "call":
                extra = [compile(program["call"], "<call>", "eval")]
            elif shape == "tests":
                extra = [compile(test, "<test>", "exec") for test in program["tests"]]
        except (SyntaxError, ValueError) as exc:  # ValueError: null bytes in the source
            record["status"] = "syntax_error"
            record["exception"] = _exception_info(exc)
            return record
        if tracer is not None and shape == "stdin":
            tracer.start()
        try:
            exec(compiled, namespace)
            if tracer is not None and shape != "stdin":
                tracer.start()
            if shape == "call":
                value = eval(extra[0], namespace)
                record["value"] = safe_repr(value, MAX_VALUE_REPR)
                record["value_type"] = type(value).__name__
            elif shape == "tests":
                in_tests = True
                for test in extra:
                    exec(test, namespace)
        finally:
            if tracer is not None:
                stopped = tracer.stop()
                record["trace"] = stopped.to_dict() if stream is None else stopped.header()
    except SystemExit as exc:
        if shape != "stdin" or exc.code not in (None, 0):
            record["status"] = "runtime_error"
            record["exception"] = _exception_info(exc)
    except BaseException as exc:  # the program's failure is data
        record["status"] = _status_of(exc, in_tests)
        record["exception"] = _exception_info(exc)
    finally:
        record["duration_s"] = time.perf_counter() - started
        for std in (sys.stdout, sys.stderr):
            try:  # noqa: SIM105  (contextlib.suppress costs a class instance and two calls, in every child)
                std.flush()
            except Exception:  # the program closed or replaced it
                pass
    return record
