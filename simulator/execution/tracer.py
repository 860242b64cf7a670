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

Objects: a local bound to a list, tuple, dict, set or an instance of a class defined in Python (its
``__slots__`` and ``__dict__`` are its attributes) gets a number (``Step.refs``) and its structured view
(``Step.heap``) whenever the view is new or changed, so a viewer can draw frames and heap objects with
arrows and show aliasing. Views are capped (``HEAP_ITEMS`` items, ``HEAP_DEPTH`` levels below a local,
``HEAP_OBJECTS`` numbered objects a trace); they are read through the builtin types' own methods (a
subclass's ``__iter__`` or ``__getattr__`` never runs), and a numbered object is kept alive until the
trace ends so that its number is never reused. A view is rebuilt only when the local's repr changed, its
binding changed, or it holds an instance (whose repr does not show its attributes).

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
from itertools import islice
from opcode import opmap
from types import BuiltinFunctionType, CodeType, FrameType, FunctionType, MemberDescriptorType, ModuleType
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
# Heap objects (see the module docstring): the builtin containers by their kind in a view, instances.
_CONTAINERS: dict[type, str] = {list: "list", tuple: "tuple", dict: "dict", set: "set", frozenset: "set"}
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class created by a class statement (or type()), not C
HEAP_ITEMS = 50  # items of one object in its view; the rest are counted ("more")
HEAP_DEPTH = 3  # levels below a local that get views; deeper objects are references without one
HEAP_OBJECTS = 2000  # objects numbered in one trace; later ones are shown as plain values
_CELL_REPR = 120  # repr cap of a value inside a view
_PLAIN = frozenset({int, float, str, bool, type(None)})  # builtin reprs without an address
# The instructions a frame leaves by with a value: returning (RETURN_CONST from 3.12 on) or yielding.
# CPython reports an exception leaving a frame as a ``return`` event with arg None too; there the last
# instruction is a RAISE_VARARGS, a RERAISE (end of a ``finally`` or ``with``), or the instruction that
# raised (a RERAISE that restores it).
_RETURNS = frozenset(opmap[name] for name in ("RETURN_VALUE", "RETURN_CONST") if name in opmap)
_YIELD = opmap["YIELD_VALUE"]
# A frame's ``call`` event is at its RESUME instruction, whose argument says why it runs: 0 it starts,
# else it goes on after a yield, a ``yield from`` or an ``await`` (the low two bits from 3.13 on).
_RESUME = opmap["RESUME"]
_SUSPENDS = 0x20 | 0x80 | 0x200  # CO_GENERATOR, CO_COROUTINE, CO_ASYNC_GENERATOR (inspect's; stable)
REPLACED = "the trace function was replaced (by the program, or by Python at the recursion limit)"


def _resumes(code: bytes, offset: int) -> bool:
    """Whether the instruction at ``offset`` (a call event's) resumes a suspended frame."""
    return 0 <= offset < len(code) - 1 and code[offset] == _RESUME and code[offset + 1] & 3 != 0


def safe_repr(obj: Any, limit: int = DEFAULT_MAX_REPR) -> str:
    """``repr(obj)`` that never raises, capped at ``limit`` characters, with addresses normalised."""
    try:
        if type(obj) in (list, tuple, dict, set, frozenset, str, bytes) and len(obj) > _BIG:
            text = f"<{type(obj).__name__} of length {len(obj)}>"
        else:
            text = repr(obj)  # always a str: repr() raises TypeError for a __repr__ that returns another type
    except Exception as exc:  # a user __repr__ that raises must not break the traced program
        text = f"<{type(obj).__name__} object; repr raised {type(exc).__name__}>"
    if "at 0x" in text:
        text = _ADDRESS.sub("at 0x...", text)
    if len(text) > limit:
        text = text[:limit] + TRUNCATION_MARK
    return text


def _value(obj: Any, limit: int) -> Value:
    return Value(safe_repr(obj, limit), type(obj).__name__)


_TYPE_DICT = type.__dict__["__dict__"].__get__  # a class's own namespace, read without its metaclass
_TYPE_MRO = type.__dict__["__mro__"].__get__
_SLOTS: dict[int, tuple[type, tuple[tuple[str, MemberDescriptorType], ...]]] = {}  # id(cls) -> its slots


def _slots(cls: type) -> tuple[tuple[str, MemberDescriptorType], ...]:
    """The ``__slots__`` members of ``cls`` and its bases (the C descriptors a class statement makes for
    them), cached per class by id, so no hash or ``__eq__`` of a class runs."""
    cached = _SLOTS.get(id(cls))
    if cached is None or cached[0] is not cls:
        members = {}
        for klass in reversed(_TYPE_MRO(cls)):
            for name, member in _TYPE_DICT(klass).items():
                if type(member) is MemberDescriptorType:
                    members[name] = member
        cached = _SLOTS[id(cls)] = (cls, tuple(members.items()))
    return cached[1]


def _own_dict(obj: Any) -> dict[str, Any] | None:
    try:
        own = object.__getattribute__(obj, "__dict__")
    except Exception:  # __slots__ only
        return None
    return own if type(own) is dict else None


def instance_attributes(obj: Any) -> tuple[list[tuple[str, Any]], int]:
    """The first ``HEAP_ITEMS`` attributes of an instance (its ``__slots__`` that are set, then its
    ``__dict__``) and how many it has, read with the builtin descriptors (no ``__getattr__`` or
    property runs)."""
    cls = type(obj)
    attributes = []
    for name, member in _slots(cls):
        try:
            attributes.append((name, member.__get__(obj, cls)))
        except AttributeError:  # a slot never assigned
            continue
    own = _own_dict(obj) or {}
    size = len(attributes) + dict.__len__(own)
    attributes += islice(dict.items(own), max(HEAP_ITEMS - len(attributes), 0))
    return attributes[:HEAP_ITEMS], size


def heap_kind(obj: Any) -> str | None:
    """The view kind of ``obj`` (``OBJECT_KINDS``) if it is drawn as a heap object, else None. Only the
    real type is asked (``issubclass``), never the object, so no program code runs."""
    cls = type(obj)
    kind = _CONTAINERS.get(cls)
    if kind is not None or cls in _ATOMIC:
        return kind
    for base, name in _CONTAINERS.items():  # namedtuple, defaultdict, Counter, a list subclass
        if issubclass(cls, base):
            return name
    if cls.__flags__ & _HEAPTYPE:
        return "object" if _own_dict(obj) is not None or _slots(cls) else None
    return None


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
        # id(code) -> (code, its co_code): CPython rebuilds co_code on every read (3.11+), and hashes a code
        # object by its contents; holding the code keeps its id from being reused
        self._code: dict[int, tuple[CodeType, bytes]] = {}
        self._trace_fn = self._global  # one bound method, so "is it still installed?" can be asked
        # Heap objects: id(obj) -> (number, obj), the object kept so that its id is never reused; the
        # last view recorded per number; whether the walk in progress met an instance.
        self._objects: dict[int, tuple[int, Any]] = {}
        self._views: dict[int, dict[str, Any]] = {}
        self._met_instance = False

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
        self._code.clear()
        self._objects.clear()
        self._views.clear()
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
            resumed = frame.f_code.co_flags & _SUSPENDS and _resumes(self._bytecode(frame), frame.f_lasti)
            self._record(frame, "call", state, None, mark="resumed" if resumed else "")
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
                if arg is None and self._raised(frame, state):
                    self._record(frame, "return", state, None)
                else:
                    suspends = frame.f_code.co_flags & _SUSPENDS
                    mark = "yielded" if suspends and self._bytecode(frame)[frame.f_lasti] == _YIELD else ""
                    self._record(frame, "return", state, _value(arg, self.max_repr), arg, mark=mark)
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

    def _bytecode(self, frame: FrameType) -> bytes:
        """The frame's code as bytes (instruction, argument), read once per code object."""
        code = frame.f_code
        found = self._code.get(id(code))
        if found is None:
            found = self._code[id(code)] = (code, code.co_code)
        return found[1]

    def _raised(self, frame: FrameType, state: list[Any]) -> bool:
        """Whether a ``return`` event with arg None is an exception leaving ``frame``, not ``return None``.

        The last instruction tells: a return instruction returned None; a yield yielded None unless an
        exception was thrown into the generator there (``close``, ``throw``: an exception event and no
        line since, ``state[3]``); anything else raised, even after cleanup lines (``finally``, ``with``)
        ran and cleared ``state[3]``."""
        op = self._bytecode(frame)[frame.f_lasti]
        if op in _RETURNS:
            return False
        return op != _YIELD or state[3]

    def _record(
        self,
        frame: FrameType,
        event: str,
        state: list[Any],
        value: Value | None,
        returned: Any = None,
        mark: str = "",
    ) -> None:
        """Append the step of ``event``; ``mark``: "resumed" (a call that goes on after a yield) or
        "yielded" (a return that yields)."""
        if len(self.steps) >= self.max_steps:
            self._truncate("max_steps")
            return
        # name -> (object, its Value, whether its view must be rebuilt on every step: it holds an instance)
        known: dict[str, tuple[Any, Value, bool]] = state[2]
        changed: dict[str, Value] = {}
        refs: dict[str, int] = {}
        heap: list[dict[str, Any]] = []
        seen: set[int] = set()
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
            elif old[0] is obj and not old[2]:
                known[name] = (obj, new, False)
                continue  # the same object, the same repr, no instance inside: its view is as it was
            if type(obj) in _ATOMIC:
                known[name] = (obj, new, False)
                continue  # not a heap object (the common case: an int or a str that changed)
            number, instance = self._refer(obj, heap, seen)
            if number is not None and (name in changed or old is None or old[0] is not obj):
                refs[name] = number
            known[name] = (obj, new, instance)
        if value is not None and event == "return":
            number = self._refer(returned, heap, seen)[0]
            if number is not None:
                refs["return"] = number
        stdout = ""
        if self._pending_stdout:
            stdout = "".join(self._pending_stdout)
            self._pending_stdout = []
        step = Step(
            index=len(self.steps),
            event=event,  # type: ignore[arg-type]  # sys.settrace's str: one of the four here
            function=frame.f_code.co_name,
            line=frame.f_lineno,
            depth=state[1],
            changed=changed,
            stdout=stdout,
            value=value,
            frame=state[0],
            refs=refs,
            heap=heap,
        )
        if mark:
            setattr(step, mark, True)
        if self._stream is not None and not self._stream.write(step):
            self._truncate("max_size")  # the step did not fit: it is not part of the trace
            return
        self.steps.append(step)

    # -- heap objects (see the module docstring) ---------------------------------------------------

    def _refer(self, obj: Any, heap: list[Any], seen: set[int]) -> tuple[int | None, bool]:
        """(``obj``'s number, whether it holds an instance) if it is a heap object, adding its view (and
        those below it) to ``heap`` where new or changed; (None, False) if it is not one, or its view
        cannot be read. A view holding an instance is rebuilt on every step (its repr cannot tell)."""
        kind = heap_kind(obj)
        if kind is None:
            return None, False
        self._met_instance = False
        try:
            number = self._number(obj, kind, 0, heap, seen)
        except Exception:  # a view that cannot be read (a container changing size meanwhile, ...)
            return None, False
        return number, self._met_instance

    def _number(self, obj: Any, kind: str, depth: int, heap: list[Any], seen: set[int]) -> int | None:
        """``obj``'s number (None past ``HEAP_OBJECTS``); its view is rebuilt above ``HEAP_DEPTH``."""
        entry = self._objects.get(id(obj))
        if entry is None:
            if len(self._objects) >= HEAP_OBJECTS:
                return None
            entry = self._objects[id(obj)] = (len(self._objects) + 1, obj)
        number: int = entry[0]
        if kind == "object":
            self._met_instance = True
        if depth < HEAP_DEPTH and number not in seen:
            seen.add(number)
            view = self._view(obj, kind, number, depth, heap, seen)
            if self._views.get(number) != view:
                self._views[number] = view
                heap.append(view)
        return number

    def _view(
        self, obj: Any, kind: str, number: int, depth: int, heap: list[Any], seen: set[int]
    ) -> dict[str, Any]:
        """The view of one object, read with the builtin types' methods (no program code runs)."""
        cell = self._cell
        items: list[Any]
        if kind == "dict":
            size = dict.__len__(obj)
            items = [
                [{"repr": safe_repr(k, _CELL_REPR), "type": type(k).__name__}, cell(v, depth, heap, seen)]
                for k, v in islice(dict.items(obj), HEAP_ITEMS)
            ]
        elif kind == "object":
            attributes, size = instance_attributes(obj)
            items = [[str(k), cell(v, depth, heap, seen)] for k, v in attributes]
        elif kind == "list":
            size = list.__len__(obj)
            items = [cell(v, depth, heap, seen) for v in list.__getitem__(obj, slice(0, HEAP_ITEMS))]
        elif kind == "tuple":
            size = tuple.__len__(obj)
            items = [cell(v, depth, heap, seen) for v in tuple.__getitem__(obj, slice(0, HEAP_ITEMS))]
        else:
            base = set if issubclass(type(obj), set) else frozenset
            size = base.__len__(obj)
            items = [cell(v, depth, heap, seen) for v in islice(base.__iter__(obj), HEAP_ITEMS)]
        view = {"id": number, "kind": kind, "type": type(obj).__name__, "items": items}
        if size > HEAP_ITEMS:
            view["more"] = size - HEAP_ITEMS
        return view

    def _cell(self, obj: Any, depth: int, heap: list[Any], seen: set[int]) -> dict[str, Any]:
        cls = type(obj)
        if cls in _PLAIN:  # the common item: its repr shows no address (an int's may raise: too long)
            try:
                text = repr(obj)
            except ValueError:
                text = safe_repr(obj, _CELL_REPR)
            if len(text) > _CELL_REPR:
                text = text[:_CELL_REPR] + TRUNCATION_MARK
            return {"repr": text, "type": cls.__name__}
        kind = heap_kind(obj)
        if kind is not None:
            number = self._number(obj, kind, depth + 1, heap, seen)
            if number is not None:
                return {"ref": number}
        return {"repr": safe_repr(obj, _CELL_REPR), "type": type(obj).__name__}

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
