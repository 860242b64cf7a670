"""Check NLEX claims against a real trace: a verdict per claim, the first false one, an accuracy.

Matching walks the trace forward with a cursor, so claims are read in order:

- ``line N`` matches the next step at line N after the cursor, preferring the cursor's own frame (so
  narrating a caller skips its recursive callees); the cursor and the *anchor* move there.
- A value, return or print claim on the same text line as a line claim is *anchored*: it describes
  the state right after that line ran, i.e. at the next step of the anchor's frame. This is strict
  (our narrator writes this way, and a changed value there is always caught).
- An unanchored value claim (model prose: "count is now 2") is true when the variable holds that
  value at the cursor or takes it at a later step (same frame first); the cursor moves to that step.
  Unanchored returns and prints match the next return / output after the cursor.
- ``Lines A-B repeat N more times`` moves the cursor N visits of line A further.
- The answer (and a prose statement of the result) is compared with the top-level call's return
  value or the exception it raised, or with a script's whole stdout (token by token, as judging does).

Values compare as Python values when both sides parse (``ast.literal_eval``), else as text with
whitespace collapsed; a trace repr cut by the tracer's cap only has to agree on its kept prefix.
A claim about a name the trace never shows is ``unverifiable``, not false.

Each claim takes a few lookups in indexes built once per trace (``_Index``, ``_Values``): a false
claim used to be compared with every later value of its variable, each parsed again (issue 51: 62 s
for 20 kB of text against a 6,000-step loop), and now costs what a true one does.
"""

from __future__ import annotations

import ast
import builtins
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from simulator.compare import NOT_LITERAL, literal, outputs_match, same_value
from simulator.execution.trace import TRUNCATION_MARK, Objects, Trace, Value, calls_made
from simulator.nlex.blocks import control_blocks
from simulator.nlex.claims import Claim, extract_claims, object_value
from simulator.source import parse_python

Verdict = Literal["true", "false", "unverifiable"]
_MISSING = NOT_LITERAL


@dataclass
class ClaimVerdict:
    claim: Claim
    verdict: Verdict
    step: int | None = None  # the trace step the claim was held against
    actual: str | None = None  # what the trace shows there
    reason: str = ""


@dataclass
class CheckResult:
    """The checker's raw verdicts, one per claim in text order. What they add up to (verified, the
    first divergence, an accuracy) is ``simulator.nlex.verify``'s to say, nowhere else."""

    verdicts: list[ClaimVerdict] = field(default_factory=list)

    def count(self, verdict: Verdict) -> int:
        return sum(1 for v in self.verdicts if v.verdict == verdict)


class _Wanted:
    """A claimed value, read once for all the comparisons it takes part in."""

    def __init__(self, claimed: str) -> None:
        self.claimed = claimed
        self.value = literal(claimed)
        self.literal = self.value is not _MISSING
        self.key = _key(self.value) if self.literal else None
        self.normal = _normal(claimed)


class _Values:
    """The values of one name in one frame (or the values returned), in step order, each as it shows
    there, with what finding the first one equal to a claim needs: an index by value (the key of what
    it parses to), by text (what does not parse), and the reprs the tracer cut short apart. A claim is
    then held against all of them in a few lookups, not one comparison each (issue 51)."""

    def __init__(self, index: _Index, at: list[int], shown: list[Value]) -> None:
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
                if key is _UNKEYED:
                    self._by_text.setdefault(normal, []).append(k)
                else:
                    self._by_key.setdefault(key, []).append(k)
            self._cut_shortest = min((len(self.index.kept(self.shown[k].repr)) for k in self._cut), default=0)
        return self._by_key

    def first_match(self, wanted: _Wanted, start: int) -> int | None:
        """The first position from ``start`` whose value ``_matches`` the claim (no subscript)."""
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
                if element is not _UNKEYED:
                    comparable.append(k)
                    by_key.setdefault(element, []).append(k)
            self._access[access] = (comparable, by_key)
        return self._access[access]


class _Index:
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
        self._values: dict[tuple[int, str], _Values] = {}
        self._returned: dict[int | None, _Values] = {}
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

    def values(self, frame: int, name: str) -> _Values:
        """The history of ``name`` in ``frame``, each value as it shows at the step that set it."""
        if (frame, name) not in self._values:
            at, values = self.history.get((frame, name), ([], []))
            shown = [self.objects.local(v, frame, name, i) for i, v in zip(at, values, strict=True)]
            self._values[(frame, name)] = _Values(self, at, shown)
        return self._values[(frame, name)]

    def returned(self, frame: int | None) -> _Values:
        """The values returned in ``frame`` (None: in any frame), in step order, as they show."""
        if frame not in self._returned:
            at = [i for i in self.returns if frame is None or self.steps[i].frame == frame]
            shown = [self.objects.returned(self.steps[i]) or Value("", "") for i in at]
            self._returned[frame] = _Values(self, at, shown)
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
        """The key of the value ``text`` parses to (``_key``), ``_UNKEYED`` when it does not parse."""
        if text not in self._keys:
            value = literal(text)
            self._keys[text] = _UNKEYED if value is _MISSING else _key(value)
        return self._keys[text]

    def normal(self, text: str) -> str:
        if text not in self._normals:
            self._normals[text] = _normal(text)
        return self._normals[text]

    def kept(self, text: str) -> str:
        """What a claimed value must start with to agree with a repr the tracer cut short."""
        if text not in self._kept:
            kept = text[: -len(TRUNCATION_MARK)]
            self._kept[text] = _normal(kept)[: max(len(kept) - 1, 0)]
        return self._kept[text]

    def element(self, text: str, access: str) -> Any:
        """The key of ``value[k]...`` of the value ``text`` parses to; ``_UNKEYED`` when there is none."""
        if (text, access) not in self._elements:
            element: Any = _UNKEYED
            if not text.endswith(TRUNCATION_MARK):
                value = literal(text)
                if value is not _MISSING:
                    inner = _access(value, access)
                    element = _UNKEYED if inner is _MISSING else _key(inner)
            self._elements[(text, access)] = element
        return self._elements[(text, access)]


_UNKEYED = object()


def _key(value: Any) -> Any:
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


def check_text(text: str, trace: Trace, names: Iterable[str] | None = None) -> CheckResult:
    """Extract the claims of ``text`` and check them against ``trace``."""
    return check_claims(extract_claims(text, names), trace)


def check_claims(claims: list[Claim], trace: Trace) -> CheckResult:
    """Verdicts for ``claims`` (in text order) against ``trace``."""
    index = _Index(trace)
    result = CheckResult()
    cursor = -1
    anchor: int | None = None
    previous: Claim | None = None
    for claim in claims:
        if claim.kind == "line":
            repeated = previous is not None and previous.kind == "line" and previous.line == claim.line
            if repeated and anchor is not None:  # "... we go to line 5. Line 5: ..." is one step
                previous = claim
                result.verdicts.append(ClaimVerdict(claim, "true", step=anchor))
                continue
            previous = claim
            found = _find_line(index, cursor, claim.line or 0)
            if found is None:
                anchor = None
                result.verdicts.append(ClaimVerdict(claim, "false", reason="the line does not run next"))
            else:
                cursor = anchor = found
                result.verdicts.append(ClaimVerdict(claim, "true", step=found))
            continue
        previous = claim
        if claim.kind == "repeat":
            verdict, cursor = _check_repeat(index, cursor, claim)
            anchor = None
            result.verdicts.append(verdict)
            continue
        if claim.kind in ("answer", "result"):
            result.verdicts.append(_check_answer(trace, index, claim))
            continue
        use_anchor = anchor if claim.anchored else None
        if claim.kind in ("condition", "calls"):
            check = _check_condition if claim.kind == "condition" else _check_calls
            result.verdicts.append(check(index, use_anchor, claim, trace))
            continue
        if claim.kind == "value":
            verdict, cursor = _check_value(index, cursor, use_anchor, claim)
        elif claim.kind == "return":
            verdict, cursor = _check_return(index, cursor, use_anchor, claim)
        else:
            verdict, cursor = _check_print(index, cursor, use_anchor, claim)
        if use_anchor is not None:
            cursor = max(cursor, use_anchor)
        result.verdicts.append(verdict)
    return result


def _find_line(index: _Index, cursor: int, line: int) -> int | None:
    """The next step at ``line`` after ``cursor``: in the cursor's frame first (a "line" step), else in
    any frame (a "line" or "call" step)."""
    own = _first_after(index.lines.get((index.frame_of(cursor), line)), cursor)
    return own if own is not None else _first_after(index.entered.get(line), cursor)


def _first_after(steps: list[int] | None, cursor: int) -> int | None:
    """The first of the sorted ``steps`` after ``cursor``."""
    if not steps:
        return None
    pos = bisect_right(steps, cursor)
    return steps[pos] if pos < len(steps) else None


def _first_from(positions: list[int] | None, start: int) -> int | None:
    """The first of the sorted ``positions`` at ``start`` or later."""
    if not positions:
        return None
    pos = bisect_left(positions, start)
    return positions[pos] if pos < len(positions) else None


def _check_value(index: _Index, cursor: int, anchor: int | None, claim: Claim) -> tuple[ClaimVerdict, int]:
    name = claim.name or ""
    base, _, access = name.partition("[")
    access = "[" + access if access else ""
    if base not in index.names:
        if base in index.never_set():
            return ClaimVerdict(claim, "false", reason=f"{base} never gets a value in the real run"), cursor
        return ClaimVerdict(claim, "unverifiable", reason=f"{base} is not a traced variable"), cursor
    if anchor is not None:
        after = index.next_in_frame(anchor)
        at = anchor if after is None else after
        actual = index.value_at(index.frame_of(anchor), base, at)
        if actual is None:
            return ClaimVerdict(claim, "unverifiable", step=at, reason=f"{base} is not set here"), cursor
        match = _matches(claim.value or "", actual, access)
        if match is None:
            return ClaimVerdict(claim, "unverifiable", step=at, actual=actual.repr), cursor
        return ClaimVerdict(
            claim, "true" if match else "false", step=at, actual=_shown(actual, access)
        ), cursor
    # The value at the cursor, then each later one in the cursor's frame, then in the name's other
    # frames: the first that agrees makes the claim true (found by lookups: ``_Values``).
    wanted = _Wanted(claim.value or "")
    frame = index.frame_of(cursor)
    now = max(cursor, 0)
    current = index.value_at(frame, base, now)
    if current is not None and _matches(wanted.claimed, current, access):
        return ClaimVerdict(claim, "true", step=now, actual=_shown(current, access)), now
    histories = [index.values(frame, base)]
    histories += [index.values(other, base) for other in index.frames_of.get(base, []) if other != frame]
    for values in histories:
        first = values.after(cursor)
        if not access:
            hit = values.first_match(wanted, first)
        else:  # only a claimed literal compares with an element
            hit = _first_from(values.accessed(access)[1].get(wanted.key), first) if wanted.literal else None
        if hit is not None:
            at, value = values.at[hit], values.shown[hit]
            return ClaimVerdict(claim, "true", step=at, actual=_shown(value, access)), max(cursor, at)
    # False: against the value the text most plausibly meant, the next one after the current, if any,
    # of the first two that compare with the claim.
    comparable: list[tuple[int, Value]] = []
    if current is not None and (
        not access or (wanted.literal and index.element(current.repr, access) is not _UNKEYED)
    ):
        comparable.append((now, current))
    for values in histories:
        first = values.after(cursor)
        if not access:
            positions: list[int] | range = range(first, len(values.at))
        else:
            positions = values.accessed(access)[0] if wanted.literal else []
            positions = positions[bisect_left(positions, first) :]
        comparable += [(values.at[k], values.shown[k]) for k in positions[: 2 - len(comparable)]]
        if len(comparable) >= 2:
            break
    if not comparable:
        return ClaimVerdict(claim, "unverifiable", reason=f"{name} cannot be compared"), cursor
    at, value = comparable[1] if len(comparable) > 1 and comparable[0][0] <= now else comparable[0]
    return ClaimVerdict(claim, "false", step=at, actual=_shown(value, access)), cursor


def _check_condition(index: _Index, anchor: int | None, claim: Claim, trace: Trace) -> ClaimVerdict:
    """ "Line N: ... the condition holds": the step after line N in its frame is inside the body of
    the loop or branch that line N heads (does not hold: it is not)."""
    if anchor is None:
        return ClaimVerdict(claim, "unverifiable", reason="no line says which condition")
    loops, branches = index.blocks()
    line = index.steps[anchor].line
    block = loops.get(line) or branches.get(line)
    if block is None:
        return ClaimVerdict(claim, "unverifiable", step=anchor, reason=f"line {line} tests no condition")
    after = index.next_in_frame(anchor)
    following = index.steps[after].line if after is not None and index.steps[after].event == "line" else None
    low, high = block
    holds = following is not None and (low < following <= high if line in loops else low <= following <= high)
    actual = "holds" if holds else "fails"
    return ClaimVerdict(claim, "true" if claim.value == actual else "false", step=anchor,
                        actual=f"the condition {'holds' if holds else 'does not hold'}")  # fmt: skip


def _check_calls(index: _Index, anchor: int | None, claim: Claim, trace: Trace) -> ClaimVerdict:
    """ "Line N: ... calling g 2 times": the calls the line makes (frames entered one level down
    before the frame's next step), by function name."""
    if anchor is None:
        return ClaimVerdict(claim, "unverifiable", reason="no line says which calls")
    after = index.next_in_frame(anchor)
    made = index.calls(anchor, after if after is not None else len(index.steps))
    said = {name: int(n) for name, n in re.findall(r"(\S+) (\d+)", claim.value or "")}
    actual = ", ".join(f"{name} {n} time{'s' if n > 1 else ''}" for name, n in sorted(made.items()))
    ok = bool(said) and all(made.get(name) == n for name, n in said.items())
    return ClaimVerdict(claim, "true" if ok else "false", step=anchor, actual=actual or "no call")


def _check_return(index: _Index, cursor: int, anchor: int | None, claim: Claim) -> tuple[ClaimVerdict, int]:
    steps = index.steps
    if anchor is not None:
        at = index.next_in_frame(anchor)
        if at is None or steps[at].event != "return" or steps[at].value is None:
            return ClaimVerdict(claim, "false", step=at, reason="the line does not return"), cursor
        value = index.objects.returned(steps[at])
        assert value is not None
        if _matches(claim.value or "", value, ""):
            return ClaimVerdict(claim, "true", step=at, actual=value.repr), at
        return ClaimVerdict(claim, "false", step=at, actual=value.repr), cursor
    # The next return of the cursor's frame that agrees, else of any other frame.
    wanted = _Wanted(claim.value or "")
    own, anywhere = index.returned(index.frame_of(cursor)), index.returned(None)
    for values in (own, anywhere):  # the first agreeing return after the cursor is another frame's
        hit = values.first_match(wanted, values.after(cursor))
        if hit is not None:
            at = values.at[hit]
            return ClaimVerdict(claim, "true", step=at, actual=values.shown[hit].repr), at
    for values in (own, anywhere):
        first = values.after(cursor)
        if first < len(values.at):
            at = values.at[first]
            return ClaimVerdict(claim, "false", step=at, actual=values.shown[first].repr), cursor
    return ClaimVerdict(claim, "false", reason="nothing returns after this point"), cursor


def _check_print(index: _Index, cursor: int, anchor: int | None, claim: Claim) -> tuple[ClaimVerdict, int]:
    steps = index.steps
    claimed = _printed(claim.value or "")
    if anchor is not None:
        after = index.next_in_frame(anchor)
        end = len(steps) - 1 if after is None else after
        out = index.printed_between(anchor + 1, end + 1)
        ok = bool(claimed) and claimed in out.strip()
        return ClaimVerdict(claim, "true" if ok else "false", step=end, actual=out), cursor
    printed = index.printed
    first = bisect_right(printed, cursor)
    if claimed and "\0" not in claimed:  # one search through all that is printed after the cursor
        output, offsets = index.output()
        found = output.find(claimed, offsets[first] if first < len(offsets) else len(output))
        if found >= 0:
            at = printed[bisect_right(offsets, found) - 1]
            return ClaimVerdict(claim, "true", step=at, actual=steps[at].stdout), at
    elif claimed:
        for at in printed[first:]:
            if claimed in steps[at].stdout:
                return ClaimVerdict(claim, "true", step=at, actual=steps[at].stdout), at
    if first == len(printed):
        return ClaimVerdict(claim, "false", reason="nothing is printed after this point"), cursor
    at = printed[first]
    return ClaimVerdict(claim, "false", step=at, actual=steps[at].stdout), cursor


def _check_repeat(index: _Index, cursor: int, claim: Claim) -> tuple[ClaimVerdict, int]:
    """``Lines A-B repeat N more times``: line A starts exactly N more iterations (its next step is
    inside A+1..B), and the visit after the N-th one, if the loop goes on, does not start another."""
    frame = index.frame_of(cursor)
    own = index.frames.get(frame, [])
    steps = index.steps
    first, last, count = claim.line or 0, claim.last_line or 0, claim.count or 0

    def starts(i: int) -> bool:
        nxt = index.next_in_frame(i)
        return nxt is not None and steps[nxt].event == "line" and first < steps[nxt].line <= last

    visits = index.lines.get((frame, first), [])
    at = bisect_right(visits, cursor)  # visits[at:]: the visits of line A after the cursor
    not_starting = index.starts(frame, first, last)
    if len(visits) - at < count or not_starting[at + count] != not_starting[at]:
        return ClaimVerdict(
            claim, "false", reason=f"lines {first}-{last} do not repeat {count} more times"
        ), cursor
    end = visits[at + count - 1] if count else cursor
    for j in range(bisect_right(own, end), len(own)):  # the frame's steps after the N-th visit
        i = own[j]
        if steps[i].event != "line" or not first <= steps[i].line <= last:
            break
        if steps[i].line == first:
            if starts(i):
                return ClaimVerdict(claim, "false", step=i, reason="the loop repeats more often"), cursor
            break
    return ClaimVerdict(claim, "true", step=max(end, 0)), end


def _check_answer(trace: Trace, index: _Index, claim: Claim) -> ClaimVerdict:
    """The answer, or a prose statement of the result, against how the program really ended: the
    top-level call's return value (or the exception it raised), or a script's whole stdout. Which
    one follows the trace (a script's top frame is ``<module>``), not the tags the text used."""
    if trace.steps and trace.steps[0].function == "<module>":
        actual = trace.stdout
        if not trace.truncated and outputs_match(actual, claim.value or ""):
            return ClaimVerdict(claim, "true", actual=actual)
        if trace.truncated or trace.error:
            return ClaimVerdict(claim, "unverifiable", actual=actual, reason="the trace was cut short")
        return ClaimVerdict(claim, "false", step=len(trace.steps) - 1, actual=actual)
    top = index.top_steps
    final = top[-1] if top else None
    returned = index.objects.returned(final) if final is not None else None
    if final is not None and final.event == "return" and returned is not None:
        match = _matches(claim.value or "", returned, "")
        if not match and literal(claim.value or "") is _MISSING and not object_value(claim.value or ""):
            undefined = _undefined_names(claim.value or "", trace.source)
            if undefined:  # e.g. ``== ''.join(ls)``: evaluated after the call, it raises NameError
                why = f"the answer uses {', '.join(undefined)}, not defined after the call"
                return ClaimVerdict(claim, "false", step=final.index, actual=returned.repr, reason=why)
            match = None  # an expression or prose, not a value: nothing to compare here
        if match is None:
            return ClaimVerdict(claim, "unverifiable", step=final.index, actual=returned.repr,
                                reason="the stated result is not a literal value")  # fmt: skip
        return ClaimVerdict(claim, "true" if match else "false", step=final.index, actual=returned.repr)
    if trace.truncated or trace.error or final is None:
        return ClaimVerdict(claim, "unverifiable", reason="the trace was cut short before the call ended")
    raised = next((s for s in reversed(top) if s.event == "exception" and s.value is not None), None)
    if raised is None or raised.value is None:
        return ClaimVerdict(claim, "unverifiable", reason="the call did not return")
    actual = f"raises {raised.value.type}"
    said = re.search(r"\braises?\s+(\w+)", claim.value or "")
    ok = said is not None and said.group(1) == raised.value.type
    return ClaimVerdict(claim, "true" if ok else "false", step=final.index, actual=actual)


def _undefined_names(expression: str, source: str) -> list[str]:
    """Names an answer expression reads that neither the program's top level nor Python defines."""
    try:
        tree = parse_python(expression.strip(), mode="eval")
        program = parse_python(source)
    except SyntaxError:
        return []
    defined = set(dir(builtins))
    for node in program.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            defined.update((a.asname or a.name).split(".")[0] for a in node.names)
        else:
            defined.update(
                n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            )
    bound = {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}  # lambda and comprehension targets
    bound |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    used = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    return sorted({name for name in used if name not in defined and name not in bound})


# -- value comparison ------------------------------------------------------------------------------


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip())


def _access(value: Any, access: str) -> Any:
    """``value[k]...`` for a claim such as ``dp[1] = 1``; only literal keys are followed."""
    for key_text in re.findall(r"\[([^\[\]]+)\]", access):
        key = literal(key_text)
        if key is _MISSING:
            return _MISSING
        try:
            value = value[key]
        except Exception:
            return _MISSING
    return value


def _matches(claimed: str, actual: Value, access: str) -> bool | None:
    """Whether a claimed value agrees with a traced one; None when they cannot be compared."""
    if actual.repr.endswith(TRUNCATION_MARK):
        kept = actual.repr[: -len(TRUNCATION_MARK)]
        return _normal(claimed).startswith(_normal(kept)[: max(len(kept) - 1, 0)]) if not access else None
    left, right = literal(claimed), literal(actual.repr)
    if access:
        if right is _MISSING:
            return None
        right = _access(right, access)
        if right is _MISSING:
            return None
    if left is not _MISSING and right is not _MISSING:
        return same_value(left, right, strict_bool=True)
    if access:
        return None
    return _normal(claimed) == _normal(actual.repr)


def _shown(value: Value, access: str) -> str:
    if not access:
        return value.repr
    inner = _access(literal(value.repr), access)
    return value.repr if inner is _MISSING else repr(inner)


def _printed(claimed: str) -> str:
    value = literal(claimed)
    text = claimed if value is _MISSING else (value if isinstance(value, str) else repr(value))
    return text.strip()
