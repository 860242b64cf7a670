"""A line tracer over ``sys.settrace`` that records a ``Trace`` of one program's own frames.

The sandboxed harness runs it inside the child process::

    tracer = Tracer(filename="<program>", max_steps=DEFAULT_MAX_STEPS, source=code)
    tracer.start()
    try:
        exec(compiled_program, namespace)        # or eval of the call, compiled as "<call>"
    finally:
        trace = tracer.stop()

and calls ``tracer.note_stdout(text)`` whenever the program writes to stdout. Given a ``StepStream``
(trace.py), the tracer also writes each step there as it records it, so a program killed from
outside keeps every step recorded before.

Cost matters (a do-nothing settrace is ~4.5x, repr of every local on every line ~80x), so the hot path:
frames of other files are refused at their ``call`` event (no line events there at all); on each line only
locals whose object changed are repr'd (an identical immutable object is skipped without a repr); reprs
are capped. The tracer never breaks the program: if its own code raises it records why and uninstalls
itself, and user ``__repr__`` failures become a placeholder string.

``trace_in_process`` runs trusted code in this process (no sandbox!) for tests and examples.
"""

from __future__ import annotations

import io
import re
import sys
from dataclasses import dataclass
from opcode import opmap
from types import BuiltinFunctionType, FrameType, FunctionType, ModuleType
from typing import Any

from simulator.execution.trace import DEFAULT_MAX_STEPS, TRUNCATION_MARK, Step, StepStream, Trace, Value

DEFAULT_MAX_REPR = 1000
_ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]+")
# Objects of these types never change in place: the same object means the same repr.
_ATOMIC = frozenset(
    {
        int,
        float,
        str,
        bool,
        type(None),
        bytes,
        complex,
        range,
        type,
        FunctionType,
        ModuleType,
        BuiltinFunctionType,
    }
)
_BIG = 100_000  # containers longer than this are not repr'd in full
# The instructions a frame leaves by with a value: returning (RETURN_CONST from 3.12 on) or yielding.
# CPython reports an exception leaving a frame as a ``return`` event with arg None too; there the last
# instruction is a RAISE_VARARGS, a RERAISE (end of a ``finally`` or ``with``), or the instruction that
# raised (a RERAISE that restores it).
_RETURNS = frozenset(opmap[name] for name in ("RETURN_VALUE", "RETURN_CONST") if name in opmap)
_YIELD = opmap["YIELD_VALUE"]
REPLACED = "the trace function was replaced (by the program, or by Python at the recursion limit)"


def safe_repr(obj: Any, limit: int = DEFAULT_MAX_REPR) -> str:
    """``repr(obj)`` that never raises, capped at ``limit`` characters, with addresses normalised."""
    try:
        if type(obj) in (list, tuple, dict, set, frozenset, str, bytes) and len(obj) > _BIG:
            text = f"<{type(obj).__name__} of length {len(obj)}>"
        else:
            text = repr(obj)
        if not isinstance(text, str):
            text = f"<{type(obj).__name__} object>"
    except Exception as exc:  # a user __repr__ that raises must not break the traced program
        text = f"<{type(obj).__name__} object; repr raised {type(exc).__name__}>"
    if "at 0x" in text:
        text = _ADDRESS.sub("at 0x...", text)
    if len(text) > limit:
        text = text[:limit] + TRUNCATION_MARK
    return text


def _value(obj: Any, limit: int) -> Value:
    return Value(safe_repr(obj, limit), type(obj).__name__)


class Tracer:
    """Records call/line/return/exception steps of frames whose code comes from ``filename``."""

    def __init__(
        self,
        filename: str = "<program>",
        max_steps: int = DEFAULT_MAX_STEPS,
        source: str = "",
        max_repr: int = DEFAULT_MAX_REPR,
        stream: StepStream | None = None,
    ) -> None:
        self.filename = filename
        self.max_steps = max_steps
        self.source = source
        self.max_repr = max_repr
        self.steps: list[Step] = []
        self.truncated = False
        self.truncated_reason = ""
        self.error = ""
        self._stream = stream
        self._active = False
        self._previous: Any = None
        self._pending_stdout: list[str] = []
        # Per live frame: [frame number, depth, {name: (object, Value)}, exception event and no line since?]
        self._frames: dict[FrameType, list[Any]] = {}
        self._frame_count = 0
        self._trace_fn = self._global  # one bound method, so "is it still installed?" can be asked

    # -- public API -------------------------------------------------------------------------------

    def start(self) -> None:
        """Install the tracer (``sys.settrace``), remembering the previous trace function."""
        self._previous = sys.gettrace()
        self._active = True
        sys.settrace(self._trace_fn)

    def stop(self) -> Trace:
        """Uninstall (restoring the previous trace function) and return what was recorded."""
        if self._active and sys.gettrace() != self._trace_fn and not self.error:
            self.error = REPLACED
        self._disable()
        self._frames.clear()
        return Trace(
            steps=self.steps,
            truncated=self.truncated,
            max_steps=self.max_steps,
            source=self.source,
            error=self.error,
            truncated_reason=self.truncated_reason,
        )

    def note_stdout(self, text: str) -> None:
        """Attribute printed text to the step being executed (it lands on the next recorded step)."""
        if self._active and text:
            self._pending_stdout.append(text)

    # -- trace functions (the hot path) -----------------------------------------------------------

    def _global(self, frame: FrameType, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename != self.filename or not self._active:
            return None
        try:
            parent = frame.f_back
            depth = 0
            while parent is not None:
                info = self._frames.get(parent)
                if info is not None:
                    depth = info[1] + 1
                    break
                parent = parent.f_back
            self._frame_count += 1
            state: list[Any] = [self._frame_count, depth, {}, False]
            self._frames[frame] = state
            self._record(frame, "call", state, None)
        except RecursionError:
            return self._local
        except Exception as exc:
            self._fail(exc)
            return None
        return self._local

    def _local(self, frame: FrameType, event: str, arg: Any) -> Any:
        if not self._active:
            return None
        try:
            state = self._frames.get(frame)
            if state is None:
                return None
            if event == "line":
                state[3] = False
                self._record(frame, "line", state, None)
            elif event == "return":
                value = None if arg is None and self._raised(frame, state) else _value(arg, self.max_repr)
                self._record(frame, "return", state, value)
                del self._frames[frame]
            elif event == "exception":
                state[3] = True
                exc = arg[1]
                if exc is None:
                    exc = arg[0]()
                self._record(frame, "exception", state, Value(safe_repr(exc, self.max_repr), arg[0].__name__))
        except RecursionError:  # the program is at the recursion limit: skip this event, keep going
            return self._local
        except Exception as exc:
            self._fail(exc)
            return None
        return self._local

    @staticmethod
    def _raised(frame: FrameType, state: list[Any]) -> bool:
        """Whether a ``return`` event with arg None is an exception leaving ``frame``, not ``return None``.

        The last instruction tells: a return instruction returned None; a yield yielded None unless an
        exception was thrown into the generator there (``close``, ``throw``: an exception event and no
        line since, ``state[3]``); anything else raised, even after cleanup lines (``finally``, ``with``)
        ran and cleared ``state[3]``."""
        op = frame.f_code.co_code[frame.f_lasti]
        if op in _RETURNS:
            return False
        return op != _YIELD or state[3]

    def _record(self, frame: FrameType, event: str, state: list[Any], value: Value | None) -> None:
        if len(self.steps) >= self.max_steps:
            self._truncate("max_steps")
            return
        known: dict[str, tuple[Any, Value]] = state[2]
        changed: dict[str, Value] = {}
        limit = self.max_repr
        for name, obj in frame.f_locals.items():
            old = known.get(name)
            if old is not None and old[0] is obj and type(obj) in _ATOMIC:
                continue
            if (name[:2] == "__" and name[-2:] == "__") or name[:1] == ".":
                continue  # dunders of a module, the hidden ".0" iterator of a comprehension
            new = Value(safe_repr(obj, limit), type(obj).__name__)
            if old is None or old[1] != new:
                changed[name] = new
            known[name] = (obj, new)
        stdout = ""
        if self._pending_stdout:
            stdout = "".join(self._pending_stdout)
            self._pending_stdout = []
        step = Step(
            index=len(self.steps),
            event=event,  # type: ignore[arg-type]
            function=frame.f_code.co_name,
            line=frame.f_lineno,
            depth=state[1],
            changed=changed,
            stdout=stdout,
            value=value,
            frame=state[0],
        )
        if self._stream is not None and not self._stream.write(step):
            self._truncate("max_size")  # the step did not fit: it is not part of the trace
            return
        self.steps.append(step)

    def _truncate(self, reason: str) -> None:
        self.truncated = True
        self.truncated_reason = reason
        self._disable()

    def _disable(self) -> None:
        """Stop recording for good: uninstall, and give the last step the text printed since (in the
        stream too, where it is written again; if it no longer fits, the stream keeps it as it was)."""
        self._active = False
        sys.settrace(self._previous)
        if self._pending_stdout and self.steps:
            self.steps[-1].stdout += "".join(self._pending_stdout)
            if self._stream is not None:
                self._stream.replace_last(self.steps[-1])
        self._pending_stdout = []

    def _fail(self, exc: BaseException) -> None:
        self.error = f"tracer error: {type(exc).__name__}: {exc}"
        self._disable()


# -- in-process tracing for tests and trusted examples --------------------------------------------


@dataclass
class InProcessRun:
    """What ``trace_in_process`` saw: the call's value or the uncaught exception, stdout, the trace."""

    trace: Trace
    value: Value | None = None
    exception: Value | None = None
    stdout: str = ""


class _TeeStdout(io.StringIO):
    def __init__(self, tracer: Tracer) -> None:
        super().__init__()
        self._tracer = tracer

    def write(self, text: str) -> int:
        self._tracer.note_stdout(text)
        return super().write(text)


def trace_in_process(
    code: str,
    call: str | None = None,
    stdin: str = "",
    max_steps: int = DEFAULT_MAX_STEPS,
    max_repr: int = DEFAULT_MAX_REPR,
) -> InProcessRun:
    """Run ``code`` here, unsandboxed (trusted code only: tests, docs), and trace it.

    With ``call`` (CRUXEval style) the definitions run untraced and only the call, compiled as
    ``"<call>"``, is traced; without it the whole script is traced, reading ``stdin``.
    """
    tracer = Tracer(filename="<program>", max_steps=max_steps, source=code, max_repr=max_repr)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    out = _TeeStdout(tracer)
    saved = sys.stdout, sys.stdin
    run = InProcessRun(trace=Trace(source=code, max_steps=max_steps))
    sys.stdout, sys.stdin = out, io.StringIO(stdin)
    try:
        program = compile(code, "<program>", "exec")
        if call is None:
            tracer.start()
            try:
                exec(program, namespace)
            finally:
                run.trace = tracer.stop()
        else:
            exec(program, namespace)
            expression = compile(call, "<call>", "eval")
            tracer.start()
            try:
                result = eval(expression, namespace)
            finally:
                run.trace = tracer.stop()
            run.value = _value(result, max_repr)
    except Exception as exc:
        run.exception = Value(safe_repr(exc, max_repr), type(exc).__name__)
    finally:
        sys.stdout, sys.stdin = saved
    run.stdout = out.getvalue()
    return run
