"""Trace -> NLEX: a deterministic natural-language execution explanation with concrete values.

The text follows the formats of the papers (docs/nlex.md): for a call,
``[THOUGHT] ... [/THOUGHT] [ANSWER] assert f(...) == <value> [/ANSWER]``; for a stdin program,
``[THOUGHT] ... [/THOUGHT]`` then ``<output>...</output>`` with what it prints.

Only the outermost frame (the called function, or the script) is narrated, one text line per executed
line: ``Line N: `source` ...; now x = 1, y = [2]`` (the values *after* the line ran). Calls into nested
frames are counted, not narrated. A loop is narrated for its first ``ITERATIONS`` iterations, then
summarised as ``Lines A-B repeat K more times.``, and the next narrated line states every value the
summarised iterations changed. Every sentence is written so that ``simulator.nlex.check`` can verify it.
"""

from __future__ import annotations

import ast
from bisect import bisect_right
from collections import Counter

from simulator.execution.program import Program
from simulator.execution.trace import Step, Trace, Value

ITERATIONS = 2
_HIDDEN_TYPES = frozenset({"function", "type", "module", "builtin_function_or_method"})


def narrate(trace: Trace, program: Program) -> str:
    """The NLEX text for one traced execution of ``program``."""
    return _Narrator(trace, program).text()


class _Narrator:
    def __init__(self, trace: Trace, program: Program) -> None:
        self.trace = trace
        self.program = program
        self.steps = trace.steps
        self.source = program.code.split("\n")
        self.loops: dict[int, tuple[int, int]] = {}
        self.branches: dict[int, tuple[int, int]] = {}
        try:
            tree = ast.parse(program.code)
        except SyntaxError:
            tree = ast.Module(body=[], type_ignores=[])
        for node in ast.walk(tree):
            if isinstance(node, ast.For | ast.While):
                self.loops[node.lineno] = (node.lineno, node.end_lineno or node.lineno)
            elif isinstance(node, ast.If) and node.body:
                self.branches[node.lineno] = (node.body[0].lineno, node.body[-1].end_lineno or node.lineno)
        top = self.steps[0].frame if self.steps else 0
        self.own = [s.index for s in self.steps if s.frame == top]
        self.position = {index: k for k, index in enumerate(self.own)}
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
        at, values = self.history.get(name, ([], []))
        pos = bisect_right(at, index)
        return values[pos - 1] if pos else None

    def code(self, line: int) -> str:
        return self.source[line - 1].strip() if 0 < line <= len(self.source) else ""

    def assignments(self, names: list[str], at: int) -> str:
        parts = []
        for name in names:
            value = self.value_at(name, at)
            if value is not None and value.type not in _HIDDEN_TYPES:
                parts.append(f"{name} = {value.repr}")
        return ", ".join(parts)

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

    def body(self) -> list[str]:
        out: list[str] = []
        first = self.steps[self.own[0]]
        if self.program.shape == "call":
            args = self.assignments(list(first.changed), first.index)
            called = f"{first.function} is called" + (f" with {args}" if args else "")
            out.append(f"Line {first.line}: `{self.code(first.line)}` - {called}.")
        else:
            out.append("The program starts.")
        lines = [i for i in self.own if self.steps[i].event == "line"]
        counts: Counter[int] = Counter()
        carry: list[str] = []
        k = 0
        while k < len(lines):
            index = lines[k]
            line = self.steps[index].line
            previous = self.steps[lines[k - 1]].line if k else None
            following = self.steps[lines[k + 1]].line if k + 1 < len(lines) else None
            note = ""
            if line in self.loops:
                low, high = self.loops[line]
                if previous is None or not low <= previous <= high:
                    counts[line] = 0
                continues = following is not None and low < following <= high
                if continues:
                    counts[line] += 1
                    if counts[line] > ITERATIONS:
                        skipped, end = self.skip(lines, k, line, low, high)
                        times = "time" if skipped == 1 else "times"
                        out.append(f"Lines {low}-{high} repeat {skipped} more {times}.")
                        stop = lines[end] if end < len(lines) else len(self.steps)
                        for i in self.own:
                            if lines[k] <= i < stop:
                                carry += [n for n in self.steps[i].changed if n not in carry]
                        k = end if end > k else k + 1
                        continue
                    note = "starts the loop" if counts[line] == 1 else "starts the next iteration"
                else:
                    note = "ends the loop"
            elif line in self.branches:
                low, high = self.branches[line]
                holds = following is not None and low <= following <= high
                note = "the condition holds" if holds else "the condition does not hold"
            out.append(self.sentence(index, note, carry))
            carry = []
            k += 1
        if self.trace.truncated:
            out.append(
                f"The trace stops after {len(self.steps)} steps (the step cap), so the result is unknown."
            )
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
        step = self.steps[index]
        nxt = self.after(index)
        parts = [f"Line {step.line}: `{self.code(step.line)}`"]
        if note:
            parts.append(note)
        end = nxt.index if nxt is not None else len(self.steps) - 1
        calls = Counter(
            s.function
            for s in self.steps[index + 1 : end + 1]
            if s.event == "call" and s.depth == step.depth + 1
        )
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
        if nxt is not None and nxt.event == "return" and nxt.value is not None and nxt.function != "<module>":
            parts.append(f"returns {nxt.value.repr}")
        elif nxt is not None and nxt.event == "exception" and nxt.value is not None:
            parts.append(f"raises {nxt.value.repr}")
        hidden = [n for n in names if (v := self.value_at(n, end)) is not None and v.type in _HIDDEN_TYPES]
        if hidden:
            parts.append("defines " + ", ".join(hidden))
        state = self.assignments(names, end)
        text = parts[0] + (" " + ", ".join(parts[1:]) if len(parts) > 1 else "")
        if len(parts) == 1 and not state:
            text += " runs"
        return text + (f"; now {state}." if state else ".")

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
        if final.event == "return" and final.value is not None:
            return f"[ANSWER]\nassert {self.program.call} == {final.value.repr}\n[/ANSWER]"
        exc = next((s.value for s in reversed(self.steps) if s.event == "exception" and s.value), None)
        if exc is not None and not self.trace.truncated:
            return f"[ANSWER]\n{self.program.call} raises {exc.type}\n[/ANSWER]"
        return ""
