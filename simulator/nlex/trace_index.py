"""Lookups over one trace, built once so that each NLEX claim costs a few of them (``TraceIndex``,
and ``Values``: one name's history in one frame, indexed by value): a false claim used to be compared
with every later value of its variable, each parsed again (issue 51: 62 s for 20 kB of text against
a 6,000-step loop), and now costs what a true one does. ``simulator.nlex.check`` walks the claims."""

from __future__ import annotations

import ast
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from typing import Any

from simulator.compare import NOT_LITERAL, literal
from simulator.execution.trace import TRUNCATION_MARK, Objects, Trace, Value, calls_made
from simulator.nlex.blocks import control_blocks
from simulator.source import parse_python

UNKEYED = object()  # a repr that does not parse, or has no such element


class Wanted:
    """A claimed value, read once for all the comparisons it takes part in."""

    def __init__(self, claimed: str) -> None:
        self.claimed = claimed
        self.value = literal(claimed)
        self.literal = self.value is not NOT_LITERAL
        self.key = value_key(self.value) if self.literal else None
        self.normal = normal_text(claimed)


class Values:
    """The values of one name in one frame (or the values returned), in step order, each as it shows
    there, with what finding the first one equal to a claim needs: an index by value (the key of what
    it parses to), by text (what does not parse), and the reprs the tracer cut short apart. A claim is
    then held against all of them in a few lookups, not one comparison each (issue 51)."""

    def __init__(self, index: TraceIndex, at: list[int], shown: list[Value]) -> None:
        self.index = index
        self.at = at
        self.shown = shown
        self._by_key: dict[Any, list[int]] | None = None
        self._by_text: dict[str, list[int]] = {}  # the values that do not parse
        self._by_any_text: dict[str, list[int]] = {}  # all values (a claim that does not parse)
        self._cut: list[int] = []  # values whose repr the tracer cut short
        self._cut_shortest = 0
        self._access: dict[str, tuple[list[int], dict[Any, list[int]]]] = {}

    def after(self, step: int) -> int:
        """The position of the first value set after ``step``."""
        return bisect_right(self.at, step)

    def _build(self) -> dict[Any, list[int]]:
        if self._by_key is None:
            self._by_key = {}
            for k, value in enumerate(self.shown):
                if value.repr.endswith(TRUNCATION_MARK):
                    self._cut.append(k)
                    continue
                normal = self.index.normal(value.repr)
                self._by_any_text.setdefault(normal, []).append(k)
                key = self.index.key(value.repr)
                if key is UNKEYED:
                    self._by_text.setdefault(normal, []).append(k)
                else:
                    self._by_key.setdefault(key, []).append(k)
            self._cut_shortest = min((len(self.index.kept(self.shown[k].repr)) for k in self._cut), default=0)
        return self._by_key

    def first_match(self, wanted: Wanted, start: int) -> int | None:
        """The first position from ``start`` whose value agrees with the claim (no subscript)."""
        by_key = self._build()
        if wanted.literal:
            lists = [by_key.get(wanted.key), self._by_text.get(wanted.normal)]
        else:
            lists = [self._by_any_text.get(wanted.normal)]
        best: int | None = None
        for positions in lists:
            if positions:
                j = bisect_left(positions, start)
                if j < len(positions) and (best is None or positions[j] < best):
                    best = positions[j]
        if self._cut and len(wanted.normal) >= self._cut_shortest:
            for k in self._cut[bisect_left(self._cut, start) :]:
                if best is not None and k > best:
                    break
                if wanted.normal.startswith(self.index.kept(self.shown[k].repr)):
                    return k
        return best

    def accessed(self, access: str) -> tuple[list[int], dict[Any, list[int]]]:
        """For a claim such as ``dp[1] = 1``: the positions whose value has ``dp[1]`` (comparable ones)
        and those by the key of that element."""
        if access not in self._access:
            comparable: list[int] = []
            by_key: dict[Any, list[int]] = {}
            for k, value in enumerate(self.shown):
                element = self.index.element(value.repr, access)
                if element is not UNKEYED:
                    comparable.append(k)
                    by_key.setdefault(element, []).append(k)
            self._access[access] = (comparable, by_key)
        return self._access[access]


class TraceIndex:
    """Lookups over a trace: steps per frame (and per frame and line), each frame's history of each
    name, whose values are as the narrator tells them (``Objects``: an instance by its attributes), the
    values returned and printed, and what parsing a repr gives, each worked out once."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.objects = Objects(trace)
        self.steps = trace.steps
        self.frames: dict[int, list[int]] = {}
        self.history: dict[tuple[int, str], tuple[list[int], list[Value]]] = {}
        self.names: set[str] = set()
        self.frames_of: dict[str, list[int]] = {}  # a name's frames, in the order of ``history``
        self.lines: dict[tuple[int, int], list[int]] = {}  # (frame, line) -> its "line" steps
        self.entered: dict[int, list[int]] = {}  # line -> its "line" and "call" steps, any frame
        self.returns: list[int] = []  # steps that return a value
        self.printed: list[int] = []  # steps that print
        for step in trace.steps:
            self.frames.setdefault(step.frame, []).append(step.index)
            if step.event == "line":
                self.lines.setdefault((step.frame, step.line), []).append(step.index)
            if step.event in ("line", "call"):
                self.entered.setdefault(step.line, []).append(step.index)
            if step.event == "return" and step.value is not None:
                self.returns.append(step.index)
            if step.stdout:
                self.printed.append(step.index)
            for name, value in step.changed.items():
                if (step.frame, name) not in self.history:
                    self.frames_of.setdefault(name, []).append(step.frame)
                at, values = self.history.setdefault((step.frame, name), ([], []))
                at.append(step.index)
                values.append(value)
                self.names.add(name)
        self.top = trace.steps[0].frame if trace.steps else 0
        self._values: dict[tuple[int, str], Values] = {}
        self._returned: dict[int | None, Values] = {}
        self._keys: dict[str, Any] = {}
        self._normals: dict[str, str] = {}
        self._kept: dict[str, str] = {}
        self._elements: dict[tuple[str, str], Any] = {}
        self._never_set: set[str] | None = None
        self._blocks: tuple[dict[int, tuple[int, int]], dict[int, tuple[int, int]]] | None = None
        self._calls: dict[int, Counter[str]] = {}
        self._starts: dict[tuple[int, int, int], list[int]] = {}
        self._output: tuple[str, list[int]] | None = None
        self._between: dict[tuple[int, int], str] = {}
        self.top_steps = [s for s in trace.steps if s.frame == self.top]

    def never_set(self) -> set[str]:
        """Variables the traced code binds (in the traced frames: a script's top level, or inside
        functions) that the whole run never gave a value; empty when the trace was cut short."""
        if self._never_set is None:
            self._never_set = self._find_never_set()
        return self._never_set

    def _find_never_set(self) -> set[str]:
        if self.trace.truncated or self.trace.error or not self.steps:
            return set()
        try:
            tree = parse_python(self.trace.source)
        except SyntaxError:
            return set()
        script = self.steps[0].function == "<module>"
        scopes = (
            [tree] if script else [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.Lambda)]
        )
        bound = set()
        for scope in scopes:
            for node in ast.walk(scope):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    bound.add(node.id)
                elif isinstance(node, ast.arg):
                    bound.add(node.arg)
        return bound - self.names

    def blocks(self) -> tuple[dict[int, tuple[int, int]], dict[int, tuple[int, int]]]:
        if self._blocks is None:
            self._blocks = control_blocks(self.trace.source)
        return self._blocks

    def calls(self, anchor: int, end: int) -> Counter[str]:
        """The calls the step ``anchor`` makes (``calls_made`` up to ``end``, its frame's next step)."""
        if anchor not in self._calls:
            self._calls[anchor] = calls_made(self.steps, anchor + 1, end, self.steps[anchor].depth)
        return self._calls[anchor]

    def frame_of(self, index: int) -> int:
        return self.steps[index].frame if index >= 0 else self.top

    def next_in_frame(self, index: int) -> int | None:
        own = self.frames.get(self.frame_of(index), [])
        pos = bisect_right(own, index)
        return own[pos] if pos < len(own) else None

    def value_at(self, frame: int, name: str, index: int) -> Value | None:
        at, values = self.history.get((frame, name), ([], []))
        pos = bisect_right(at, index)
        return self.objects.local(values[pos - 1], frame, name, index) if pos else None

    def values(self, frame: int, name: str) -> Values:
        """The history of ``name`` in ``frame``, each value as it shows at the step that set it."""
        if (frame, name) not in self._values:
            at, values = self.history.get((frame, name), ([], []))
            shown = [self.objects.local(v, frame, name, i) for i, v in zip(at, values, strict=True)]
            self._values[(frame, name)] = Values(self, at, shown)
        return self._values[(frame, name)]

    def returned(self, frame: int | None) -> Values:
        """The values returned in ``frame`` (None: in any frame), in step order, as they show."""
        if frame not in self._returned:
            at = [i for i in self.returns if frame is None or self.steps[i].frame == frame]
            shown = [self.objects.returned(self.steps[i]) or Value("", "") for i in at]
            self._returned[frame] = Values(self, at, shown)
        return self._returned[frame]

    def returns_in(self, frame: int) -> list[int]:
        return self.returned(frame).at

    def output(self) -> tuple[str, list[int]]:
        """Everything printed, each step's output after a NUL, and where each step's output starts."""
        if self._output is None:
            offsets, pieces, length = [], [], 0
            for i in self.printed:
                offsets.append(length + 1)
                pieces.append("\0" + self.steps[i].stdout)
                length += 1 + len(self.steps[i].stdout)
            self._output = ("".join(pieces), offsets)
        return self._output

    def printed_between(self, start: int, end: int) -> str:
        """What ``steps[start:end]`` print, once per range."""
        if (start, end) not in self._between:
            self._between[(start, end)] = "".join(s.stdout for s in self.steps[start:end])
        return self._between[(start, end)]

    def starts(self, frame: int, first: int, last: int) -> list[int]:
        """For the visits of line ``first`` in ``frame``: how many of the visits before each do not
        start an iteration of lines ``first``-``last`` (a running count, one more entry than visits)."""
        key = (frame, first, last)
        if key not in self._starts:
            counts = [0]
            for i in self.lines.get((frame, first), []):
                nxt = self.next_in_frame(i)
                starts = (
                    nxt is not None
                    and self.steps[nxt].event == "line"
                    and first < self.steps[nxt].line <= last
                )
                counts.append(counts[-1] + (not starts))
            self._starts[key] = counts
        return self._starts[key]

    # what parsing a repr gives, once per repr

    def key(self, text: str) -> Any:
        """The key of the value ``text`` parses to (``_key``), ``UNKEYED`` when it does not parse."""
        if text not in self._keys:
            value = literal(text)
            self._keys[text] = UNKEYED if value is NOT_LITERAL else value_key(value)
        return self._keys[text]

    def normal(self, text: str) -> str:
        if text not in self._normals:
            self._normals[text] = normal_text(text)
        return self._normals[text]

    def kept(self, text: str) -> str:
        """What a claimed value must start with to agree with a repr the tracer cut short."""
        if text not in self._kept:
            kept = text[: -len(TRUNCATION_MARK)]
            self._kept[text] = normal_text(kept)[: max(len(kept) - 1, 0)]
        return self._kept[text]

    def element(self, text: str, access: str) -> Any:
        """The key of ``value[k]...`` of the value ``text`` parses to; ``UNKEYED`` when there is none."""
        if (text, access) not in self._elements:
            element: Any = UNKEYED
            if not text.endswith(TRUNCATION_MARK):
                value = literal(text)
                if value is not NOT_LITERAL:
                    inner = element_of(value, access)
                    element = UNKEYED if inner is NOT_LITERAL else value_key(inner)
            self._elements[(text, access)] = element
        return self._elements[(text, access)]


def value_key(value: Any) -> Any:
    """A hashable stand-in for a literal value: two keys are equal exactly when ``same_value(a, b,
    strict_bool=True)`` holds (``==``: 1 == 1.0, a list is not a tuple, a set equals a frozenset; a
    bool equals only a bool at the top)."""
    return (isinstance(value, bool), _frozen(value))


def _frozen(value: Any) -> Any:
    if isinstance(value, list):
        return ("list", tuple(_frozen(v) for v in value))
    if isinstance(value, tuple):
        return ("tuple", tuple(_frozen(v) for v in value))
    if isinstance(value, set | frozenset):
        return ("set", frozenset(_frozen(v) for v in value))
    if isinstance(value, dict):
        return ("dict", frozenset((_frozen(k), _frozen(v)) for k, v in value.items()))
    return value


def normal_text(text: str) -> str:
    """``text`` with its whitespace collapsed, as values that do not parse are compared."""
    return re.sub(r"\s+", " ", text.strip())


def element_of(value: Any, access: str) -> Any:
    """``value[k]...`` for a claim such as ``dp[1] = 1``; only literal keys are followed."""
    for key_text in re.findall(r"\[([^\[\]]+)\]", access):
        key = literal(key_text)
        if key is NOT_LITERAL:
            return NOT_LITERAL
        try:
            value = value[key]
        except Exception:
            return NOT_LITERAL
    return value
