"""Trace -> NLEX: a deterministic natural-language execution explanation with concrete values.

The text follows the formats of the papers (docs/nlex.md): for a call,
``[THOUGHT] ... [/THOUGHT] [ANSWER] assert f(...) == <value> [/ANSWER]``; for a stdin program,
``[THOUGHT] ... [/THOUGHT]`` then ``<output>...</output>`` with what it prints.

Only the outermost frame (the called function, or the script) is narrated, one text line per executed
line: ``Line N: `source` ...; now x = 1, y = [2]`` (the values *after* the line ran). Calls into nested
frames are counted, not narrated. A loop is narrated for its first ``ITERATIONS`` iterations, then
summarised as ``Lines A-B repeat K more times.``, and the next narrated line states every value the
summarised iterations changed. An instance is told by its attributes (``Point(x=1, y=2)``, read from
the trace's heap by ``trace.Objects``), never by a ``<Point object at 0x...>`` repr, and a line that
changes an instance without rebinding a name states the names that show the change. Every sentence
is written so that ``simulator.nlex.check`` can verify it.

``style="compact"`` (``STYLES``) says the same things in fewer tokens, for a small model that must
reach its answer within a completion budget: no backquoted source (``Line 3: total = 6.``), loops
summarised after their first iteration (``COMPACT_ITERATIONS``), and a line that states nothing (no
value, control flow, call, print, return or raise: ``pass``, a bare call whose result is dropped) left
out. Every sentence left is one the full style also writes, less its source, so it checks the same way.

``step_sentences`` is the stepper's form (the trace explorer): every frame, the called functions and
each recursive call included, one sentence per executed line with no loop summary, each placed on the
step where the line's effects show (the next step of its frame), so the sentence on screen matches the
values on screen. It is read by a person stepping through, not checked, and says a few things the
checked text does not (issue 52): every step has a sentence of its own (the first line of a frame, the
line a caught exception goes on at), a line that calls functions says what each call gave back (the
calls themselves were stepped through: "after fact returned 2", not "calling fact 1 time"), a name
bound to an object another name holds says so ("now b = [1, 2] (the same list as a)"), a function that
ends without a ``return`` says it ends (not that its last line "returns None"), and an exception is told
as Python prints it (``IndexError: list index out of range``) with who catches it, or that nothing does.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Collection

from simulator.execution.program import Program
from simulator.execution.trace import ADDRESS_MARK, Objects, Step, Trace, Value, calls_made
from simulator.source import parse_python

ITERATIONS = 2
COMPACT_ITERATIONS = 1
STYLES = ("full", "compact")
_HIDDEN_TYPES = frozenset({"function", "type", "module", "builtin_function_or_method"})
_COMPREHENSIONS = {
    "<listcomp>": "the list comprehension",
    "<setcomp>": "the set comprehension",
    "<dictcomp>": "the dict comprehension",
    "<genexpr>": "the generator expression",
}
_RETURNS = re.compile(r"\breturn\b")  # a line that returns explicitly (the stepper, ``sentence``)
# Why a truncated trace stops (``Trace.truncated_reason``), in the narration's words.
_STOPPED = {
    "max_steps": "the step cap",
    "max_size": "the trace's size limit",
    "timeout": "the program was stopped at its time limit",
    "output_limit": "the program was stopped for its output",
    "killed": "the program died",
}


def narrate(trace: Trace, program: Program, style: str = "full") -> str:
    """The NLEX text for one traced execution of ``program``, in ``style`` (``STYLES``: "full", the
    format of docs/nlex.md, or "compact": no source quoted, one iteration per loop, silent lines left
    out)."""
    if style not in STYLES:
        raise ValueError(f"narration style {style!r}: expected one of {', '.join(STYLES)}")
    return _Narrator(trace, program, style=style).text()


def answer(trace: Trace, program: Program) -> str:
    """The answer a narration ends with, alone (``[ANSWER] ... [/ANSWER]`` or ``<output>...</output>``;
    empty when the run gives none): what a reply that answers at once says after its empty thought."""
    return _Narrator(trace, program).answer()


def step_sentences(trace: Trace, program: Program) -> list[tuple[int, str]]:
    """(step index, sentence) for every executed line of every frame, in step order: a frame's call
    step has "f is called with ..."; the line that ran between two steps of a frame is told on the
    second (where its effects show); a frame an exception leaves says so on its return step; every
    other step of a frame (its first line, the line after an exception) has a sentence of its own, so
    that no sentence stands on two steps."""
    frames: dict[int, list[int]] = {}
    for step in trace.steps:
        frames.setdefault(step.frame, []).append(step.index)
    placed: list[tuple[int, str]] = []
    narrator: _Narrator | None = None
    for own in frames.values():
        narrator = _Narrator(trace, program, own, narrator, stepper=True)
        placed.extend(narrator.each_line())
    placed.sort(key=lambda item: item[0])
    return placed


def error_words(value: Value) -> str:
    """An exception as Python's traceback prints it: ``IndexError: list index out of range`` for the
    repr ``IndexError('list index out of range')``, ``StopIteration`` for ``StopIteration()``; the
    repr as it is when it is not of that form."""
    text, name = value.repr, value.type
    if not (text.startswith(name + "(") and text.endswith(")")):
        return text
    inner = text[len(name) + 1 : -1]
    if not inner:
        return name
    try:
        args = ast.literal_eval(f"({inner},)")
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    if len(args) == 1 and isinstance(args[0], str):
        return f"{name}: {args[0]}"
    return text


class _Narrator:
    def __init__(
        self,
        trace: Trace,
        program: Program,
        own: list[int] | None = None,
        shared: _Narrator | None = None,
        style: str = "full",
        stepper: bool = False,
    ) -> None:
        """Narrates the frame whose steps are ``own`` (default: the first step's frame, the outermost);
        ``shared``: a narrator of the same trace whose parsed program is reused; ``style``: "full" or
        "compact" (``narrate``); ``stepper``: the explorer's words (``step_sentences``)."""
        self.trace = trace
        self.stepper = stepper
        self.compact = style == "compact"
        self.iterations = COMPACT_ITERATIONS if self.compact else ITERATIONS
        self.program = program
        self.steps = trace.steps
        self.source = program.code.split("\n")
        self.loops: dict[int, tuple[int, int]] = {}
        self.branches: dict[int, tuple[int, int]] = {}
        self.handlers: set[int] = set()  # lines of `except` clauses
        self.objects: Objects
        if shared is not None:
            self.loops, self.branches, self.objects = shared.loops, shared.branches, shared.objects
            self.handlers = shared.handlers
        else:
            self.objects = Objects(trace)
            try:
                tree = parse_python(program.code)
            except SyntaxError:
                tree = ast.Module(body=[], type_ignores=[])
            for node in ast.walk(tree):
                if isinstance(node, ast.For | ast.While):
                    self.loops[node.lineno] = (node.lineno, node.end_lineno or node.lineno)
                elif isinstance(node, ast.If) and node.body:
                    body = node.body
                    self.branches[node.lineno] = (body[0].lineno, body[-1].end_lineno or node.lineno)
                elif isinstance(node, ast.ExceptHandler):
                    self.handlers.add(node.lineno)
        if own is None:
            top = self.steps[0].frame if self.steps else 0
            own = [s.index for s in self.steps if s.frame == top]
        self.own = own
        self.frame = self.steps[own[0]].frame if own else 0
        self.position = {index: k for k, index in enumerate(self.own)}
        self.frame_names: dict[int, list[str]] = shared.frame_names if shared is not None else {}
        self.history: dict[str, tuple[list[int], list[Value]]] = {}
        for i in self.own:
            for name, value in self.steps[i].changed.items():
                at, values = self.history.setdefault(name, ([], []))
                at.append(i)
                values.append(value)

    # -- helpers ----------------------------------------------------------------------------------

    def after(self, index: int) -> Step | None:
        k = self.position[index] + 1
        return self.steps[self.own[k]] if k < len(self.own) else None

    def value_at(self, name: str, index: int) -> Value | None:
        """What ``name`` shows at step ``index``: an instance by its attributes (``Objects``)."""
        at, values = self.history.get(name, ([], []))
        pos = bisect_right(at, index)
        return self.objects.local(values[pos - 1], self.frame, name, index) if pos else None

    def mutated(self, index: int, end: int) -> list[str]:
        """Names whose objects the steps after ``index`` up to ``end`` changed though their reprs did
        not (an attribute set, an instance in a list): the heap shows it, ``changed`` cannot."""
        out = []
        for name, (at, values) in self.history.items():
            pos = bisect_right(at, index)
            if pos and ADDRESS_MARK in values[pos - 1].repr:
                before, after = self.value_at(name, index), self.value_at(name, end)
                if before is not None and after is not None and before.repr != after.repr:
                    out.append(name)
        return out

    def code(self, line: int) -> str:
        return self.source[line - 1].strip() if 0 < line <= len(self.source) else ""

    def head(self, line: int) -> str:
        """A sentence's start: ``Line N: `source``` (full) or ``Line N:`` (compact)."""
        return f"Line {line}:" if self.compact else f"Line {line}: `{self.code(line)}`"

    def assignments(self, names: list[str], at: int, bound: Collection[str] = ()) -> str:
        """``x = 1, ys = [2]`` at step ``at``; the stepper adds, for the names just ``bound``, which
        other name holds the same object (``same_as``)."""
        parts = []
        for name in names:
            value = self.value_at(name, at)
            if value is not None and value.type not in _HIDDEN_TYPES:
                same = self.same_as(name, value, at) if self.stepper and name in bound else ""
                parts.append(f"{name} = {value.repr}{same}")
        return ", ".join(parts)

    # -- the stepper's words (step_sentences) ------------------------------------------------------

    def who(self) -> str:
        """The frame as a sentence names it: "the program", "fact", "the list comprehension"."""
        function = self.steps[self.own[0]].function if self.own else "<module>"
        return "the program" if function == "<module>" else _COMPREHENSIONS.get(function, function)

    def bound(self, frame: int, name: str, index: int) -> int | None:
        """The heap object that ``name`` of ``frame`` is bound to at step ``index`` (None: none)."""
        at, numbers = self.objects.bindings.get((frame, name), ([], []))
        pos = bisect_right(at, index)
        return numbers[pos - 1] if pos else None

    def names_of(self, frame: int) -> list[str]:
        if not self.frame_names:
            for held, name in self.objects.bindings:
                self.frame_names.setdefault(held, []).append(name)
        return self.frame_names.get(frame, [])

    def same_as(self, name: str, value: Value, at: int) -> str:
        """ " (the same list as a)" when ``name`` is bound at step ``at`` to an object another name of
        the frame holds (an alias: the explorer draws both arrows to it), or, for an argument, that a
        name of the calling frame holds; "" otherwise."""
        number = self.bound(self.frame, name, at)
        if number is None:
            return ""
        others = [
            n for n in self.names_of(self.frame) if n != name and self.bound(self.frame, n, at) == number
        ]
        where = ""
        first = self.steps[self.own[0]]
        if not others and at == first.index and first.event == "call" and first.index > 0:
            caller = self.steps[first.index - 1]
            if caller.frame != self.frame:
                others = [
                    n
                    for n in self.names_of(caller.frame)
                    if self.bound(caller.frame, n, caller.index) == number
                ]
                where = " in " + ("the program" if caller.function == "<module>" else caller.function)
        return f" (the same {value.type} as {_listed(others)}{where})" if others else ""

    def calls_told(self, index: int, end: int, depth: int) -> list[tuple[str, str]]:
        """(function, what it gave back) for each call the line at step ``index`` made (one level
        down, up to the frame's next step ``end``): "returned 2", "yielded 0", "raised IndexError",
        "ended" (it returned None); comprehensions are left out (the line's value tells them)."""
        told: list[tuple[str, str]] = []
        for step in self.steps[index + 1 : end + 1]:
            if step.depth != depth + 1 or step.event != "return" or step.function in _COMPREHENSIONS:
                continue
            returned = self.objects.returned(step)
            if returned is None:  # an exception leaves the callee
                raised = self.steps[step.index - 1] if step.index else None
                kind = (
                    raised.value.type if raised is not None and raised.value is not None else "an exception"
                )
                told.append((step.function, f"raised {kind}"))
            elif step.yielded:
                told.append((step.function, f"yielded {returned.repr}"))
            elif returned.repr == "None":
                told.append((step.function, "ended"))
            else:
                told.append((step.function, f"returned {returned.repr}"))
        return told

    def calls_words(self, told: list[tuple[str, str]]) -> str:
        """ "after fact returned 2", "after sq returned 1, 4 and 9", "after g returned 1 and h ended",
        "after 5 calls to f" (more than 3 calls to one function are counted)."""
        by_name: dict[str, list[str]] = {}
        for name, what in told:
            by_name.setdefault(name, []).append(what)
        groups = []
        for name, outcomes in by_name.items():
            if len(outcomes) > 3:
                groups.append(f"{len(outcomes)} calls to {name}")
            elif len(outcomes) > 1 and all(w.startswith("returned ") for w in outcomes):
                groups.append(f"{name} returned " + _listed([w.removeprefix("returned ") for w in outcomes]))
            else:
                groups.extend(f"{name} {what}" for what in outcomes)
        return "after " + _listed(groups)

    def between(self, step: Step, before: Step) -> str:
        """The sentence of a step that no line's effects reach: a frame's first line (after its call
        step), the line an exception goes on at."""
        who = self.who()
        capital = who[:1].upper() + who[1:] if who.startswith("the ") else who
        if before.event == "call":
            return f"{capital} {'goes on' if before.resumed else 'begins'} at line {step.line}."
        if before.event == "exception" and step.event == "line":
            kind = before.value.type if before.value is not None else "exception"
            if step.line in self.handlers:
                return f"The {kind} is caught: line {step.line} handles it."
            return f"{capital} goes on at line {step.line}, the {kind} still on its way."
        return f"Line {step.line} is next."

    def uncaught(self, last: Step, before: Step) -> str:
        """The frame's return step when an exception leaves it: nothing in it caught the exception."""
        kind = before.value.type if before.value is not None else "exception"
        words = error_words(before.value) if before.value is not None else "an exception"
        who = self.who()
        if who == "the program":
            return f"Nothing catches the {kind}: the program stops here with the error {words}."
        stops = f"Nothing in {who} catches the {kind}: {who} stops here"
        after = self.steps[last.index + 1] if last.index + 1 < len(self.steps) else None
        if after is not None and after.depth < last.depth:
            caller = "the program" if after.function == "<module>" else after.function
            return f"{stops}, and the error goes back to {caller}, where {who} was called."
        if self.program.call:
            return f"{stops}, and the call {self.program.call} ends with the error {words}."
        return f"{stops}."

    # -- narration --------------------------------------------------------------------------------

    def text(self) -> str:
        lines = ["[THOUGHT]"]
        if not self.steps:
            lines.append("Nothing of the program ran.")
        else:
            lines.extend(self.body())
        lines.append("[/THOUGHT]")
        answer = self.answer()
        if answer:
            lines.append(answer)
        return "\n".join(lines) + "\n"

    def opening(self) -> str:
        """The frame's first sentence: the call with its arguments, or the start of a script."""
        first = self.steps[self.own[0]]
        if first.function == "<module>" or self.program.shape != "call" and first.depth == 0:
            return "The program starts."
        dash = "" if self.compact else " -"
        if first.function in _COMPREHENSIONS:  # a frame of its own (Python 3.11), started by its line
            verb = "resumes" if first.resumed else "starts"
            return f"{self.head(first.line)}{dash} {_COMPREHENSIONS[first.function]} {verb}."
        args = self.assignments(list(first.changed), first.index, () if first.resumed else first.changed)
        verb = "resumes" if first.resumed else "is called"
        called = f"{first.function} {verb}" + (f" with {args}" if args else "")
        return f"{self.head(first.line)}{dash} {called}."

    def note(self, lines: list[int], k: int, counts: Counter[int]) -> str:
        """What the line at ``lines[k]`` does to the control flow (loop or branch), counting a loop's
        iterations in ``counts``."""
        line = self.steps[lines[k]].line
        if k:
            previous: int | None = self.steps[lines[k - 1]].line
        else:  # a generator resumed at its yield was already inside the loops around that line
            first = self.steps[self.own[0]]
            previous = first.line if first.resumed else None
        following = self.steps[lines[k + 1]].line if k + 1 < len(lines) else None
        if line in self.loops:
            low, high = self.loops[line]
            if previous is None or not low <= previous <= high:
                counts[line] = 0
            elif not k:
                counts[line] = max(counts[line], 1)
            if following is not None and low < following <= high:
                counts[line] += 1
                return "starts the loop" if counts[line] == 1 else "starts the next iteration"
            return "ends the loop"
        if line in self.branches:
            low, high = self.branches[line]
            holds = following is not None and low <= following <= high
            return "the condition holds" if holds else "the condition does not hold"
        return ""

    def body(self) -> list[str]:
        out: list[str] = [self.opening()]
        lines = [i for i in self.own if self.steps[i].event == "line"]
        counts: Counter[int] = Counter()
        carry: list[str] = []
        k = 0
        while k < len(lines):
            index = lines[k]
            line = self.steps[index].line
            note = self.note(lines, k, counts)
            if line in self.loops and note != "ends the loop" and counts[line] > self.iterations:
                low, high = self.loops[line]
                skipped, end = self.skip(lines, k, line, low, high)
                times = "time" if skipped == 1 else "times"
                out.append(f"Lines {low}-{high} repeat {skipped} more {times}.")
                stop = lines[end] if end < len(lines) else len(self.steps)
                for i in self.own:
                    if lines[k] <= i < stop:
                        carry += [n for n in self.steps[i].changed if n not in carry]
                k = end if end > k else k + 1
                continue
            said = self.sentence(index, note, carry)
            if said:
                out.append(said)
            carry = []
            k += 1
        if self.trace.truncated:
            why = _STOPPED.get(self.trace.truncated_reason, "the step cap")
            out.append(f"The trace stops after {len(self.steps)} steps ({why}), so the result is unknown.")
        return out

    def each_line(self) -> list[tuple[int, str]]:
        """The stepper's sentences of this frame (``step_sentences``): no loop summaries."""
        out = [(self.own[0], self.opening())]
        lines = [i for i in self.own if self.steps[i].event == "line"]
        counts: Counter[int] = Counter()
        for k, index in enumerate(lines):
            note = self.note(lines, k, counts)
            nxt = self.after(index)
            if nxt is not None:  # else the trace stops while the line runs: its effects never show
                out.append((nxt.index, self.sentence(index, note, [])))
        last = self.steps[self.own[-1]]
        if last.event == "return" and last.value is None and len(self.own) > 1:
            before = self.steps[self.own[-2]]
            if before.event == "exception":
                out.append((last.index, self.uncaught(last, before)))
        told = {index for index, _ in out}
        for k in range(1, len(self.own)):  # a step no line's effects reach has a sentence of its own
            if self.own[k] not in told:
                out.append((self.own[k], self.between(self.steps[self.own[k]], self.steps[self.own[k - 1]])))
        if self.trace.truncated and self.own[-1] == len(self.steps) - 1:
            why = _STOPPED.get(self.trace.truncated_reason, "the step cap")
            out.append((self.own[-1], f"The trace stops here ({why}): what came next is not recorded."))
        out.sort(key=lambda item: item[0])
        return out

    def skip(self, lines: list[int], k: int, header: int, low: int, high: int) -> tuple[int, int]:
        """From the first summarised iteration at ``lines[k]``: (iterations skipped, where to resume)."""
        skipped, j = 0, k
        while j < len(lines):
            step = self.steps[lines[j]]
            if not low <= step.line <= high:
                break
            following = self.steps[lines[j + 1]].line if j + 1 < len(lines) else None
            if step.line == header:
                if following is None or not low < following <= high:
                    break
                skipped += 1
            nxt = self.after(lines[j])
            if nxt is not None and nxt.event != "line":
                break
            j += 1
        return skipped, j

    def sentence(self, index: int, note: str, carry: list[str]) -> str:
        """The line at step ``index``: its control flow ``note``, calls, prints, return or raise, and the
        values after it (``carry``: names a loop summary changed). Compact: "" for a line that states
        none of these (``body`` leaves it out)."""
        step = self.steps[index]
        nxt = self.after(index)
        parts = [self.head(step.line)]
        if note:
            parts.append(note)
        end = nxt.index if nxt is not None else len(self.steps) - 1
        raised = nxt is not None and nxt.event == "exception" and nxt.value is not None
        passed_on = ""  # the stepper: the callee whose exception this line passes on
        if self.stepper:
            told = self.calls_told(index, end, step.depth)
            if raised and told and told[-1][1].startswith("raised "):
                passed_on = told.pop()[0]
            if told:
                parts.append(self.calls_words(told))
        else:
            calls = calls_made(self.steps, index + 1, end + 1, step.depth)
            if calls:
                parts.append(
                    "calling "
                    + ", ".join(f"{name} {n} time{'s' if n > 1 else ''}" for name, n in sorted(calls.items()))
                )
        printed = "".join(s.stdout for s in self.steps[index + 1 : end + 1])
        if printed:
            parts.append(f"prints {printed!r}")
        names = list(carry)
        if nxt is not None:
            names += [n for n in nxt.changed if n not in names]
            names += [n for n in self.mutated(index, end) if n not in names]
        returned = self.objects.returned(nxt) if nxt is not None else None
        ends = ""  # the stepper: a function that ends without a `return` (its last line returns nothing)
        if nxt is not None and nxt.event == "return" and returned is not None and nxt.function != "<module>":
            implicit = (
                returned.repr == "None" and not nxt.yielded and not _RETURNS.search(self.code(step.line))
            )
            if self.stepper and implicit:
                ends = f" Then {nxt.function} ends; without a `return` it returns None."
            else:
                parts.append(f"{'yields' if nxt.yielded else 'returns'} {returned.repr}")
        elif raised and nxt is not None and nxt.value is not None:
            if not self.stepper:
                parts.append(f"raises {nxt.value.repr}")
            elif passed_on:
                parts.append(f"passes on the {nxt.value.type} raised in {passed_on}")
            else:
                parts.append(f"raises {error_words(nxt.value)}")
        hidden = [n for n in names if (v := self.value_at(n, end)) is not None and v.type in _HIDDEN_TYPES]
        if hidden:
            parts.append("defines " + ", ".join(hidden))
        rebound = [n for n in names if self.bound(self.frame, n, index) != self.bound(self.frame, n, end)]
        state = self.assignments(names, end, rebound)
        text = parts[0] + (" " + ", ".join(parts[1:]) if len(parts) > 1 else "")
        if self.compact:
            if len(parts) == 1:
                return f"{text} {state}." if state else ""
            return text + (f"; {state}." if state else ".")
        if len(parts) == 1 and not state and not ends:
            text += " runs"
        return text + (f"; now {state}." if state else ".") + ends

    def answer(self) -> str:
        if not self.steps:
            return ""
        if self.program.shape == "stdin":
            if self.trace.truncated:
                return ""
            return f"<output>\n{self.trace.stdout}</output>"
        if self.program.shape != "call":
            return ""
        final = self.steps[self.own[-1]]
        returned = self.objects.returned(final)
        if final.event == "return" and returned is not None:
            return f"[ANSWER]\nassert {self.program.call} == {returned.repr}\n[/ANSWER]"
        exc = next((s.value for s in reversed(self.steps) if s.event == "exception" and s.value), None)
        if exc is not None and not self.trace.truncated:
            return f"[ANSWER]\n{self.program.call} raises {exc.type}\n[/ANSWER]"
        return ""


def _listed(items: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
