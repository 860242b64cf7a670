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
"""

from __future__ import annotations

import ast
import builtins
import re
from bisect import bisect_right
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


class _Index:
    """Lookups over a trace: steps per frame, and each frame's history of each name, whose values are
    as the narrator tells them (``Objects``: an instance by its attributes)."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.objects = Objects(trace)
        self.steps = trace.steps
        self.frames: dict[int, list[int]] = {}
        self.history: dict[tuple[int, str], tuple[list[int], list[Value]]] = {}
        self.names: set[str] = set()
        for step in trace.steps:
            self.frames.setdefault(step.frame, []).append(step.index)
            for name, value in step.changed.items():
                at, values = self.history.setdefault((step.frame, name), ([], []))
                at.append(step.index)
                values.append(value)
                self.names.add(name)
        self.top = trace.steps[0].frame if trace.steps else 0

    def never_set(self) -> set[str]:
        """Variables the traced code binds (in the traced frames: a script's top level, or inside
        functions) that the whole run never gave a value; empty when the trace was cut short."""
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

    def later_values(self, frame: int, name: str, index: int) -> list[tuple[int, Value]]:
        at, values = self.history.get((frame, name), ([], []))
        pos = bisect_right(at, index)
        shown = self.objects.local
        return [(i, shown(v, frame, name, i)) for i, v in zip(at[pos:], values[pos:], strict=True)]


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
    steps = index.steps
    own = index.frames.get(index.frame_of(cursor), [])
    for i in own[bisect_right(own, cursor) :]:
        if steps[i].line == line and steps[i].event == "line":
            return i
    for i in range(cursor + 1, len(steps)):
        if steps[i].line == line and steps[i].event in ("line", "call"):
            return i
    return None


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
    frame = index.frame_of(cursor)
    current = index.value_at(frame, base, max(cursor, 0))
    candidates: list[tuple[int, Value]] = []
    if current is not None:
        candidates.append((max(cursor, 0), current))
    candidates += index.later_values(frame, base, cursor)
    for other, _ in index.history.items():
        if other[1] == base and other[0] != frame:
            candidates += [(i, v) for i, v in index.later_values(other[0], base, cursor)]
    comparable = []
    for at, value in candidates:
        match = _matches(claim.value or "", value, access)
        if match:
            return ClaimVerdict(claim, "true", step=at, actual=_shown(value, access)), max(cursor, at)
        if match is not None:
            comparable.append((at, value))
    if not comparable:
        return ClaimVerdict(claim, "unverifiable", reason=f"{name} cannot be compared"), cursor
    # Report the value the text most plausibly meant: the next one after the current, if any.
    at, value = comparable[1] if len(comparable) > 1 and comparable[0][0] <= max(cursor, 0) else comparable[0]
    return ClaimVerdict(claim, "false", step=at, actual=_shown(value, access)), cursor


def _check_condition(index: _Index, anchor: int | None, claim: Claim, trace: Trace) -> ClaimVerdict:
    """ "Line N: ... the condition holds": the step after line N in its frame is inside the body of
    the loop or branch that line N heads (does not hold: it is not)."""
    if anchor is None:
        return ClaimVerdict(claim, "unverifiable", reason="no line says which condition")
    loops, branches = control_blocks(trace.source)
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
    end = after if after is not None else len(index.steps)
    depth = index.steps[anchor].depth
    made = calls_made(index.steps, anchor + 1, end, depth)
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
        returns = [at]
    else:
        frame = index.frame_of(cursor)
        returns = [
            i
            for i in range(cursor + 1, len(steps))
            if steps[i].event == "return" and steps[i].value is not None
        ]
        returns.sort(key=lambda i: steps[i].frame != frame)
        if not returns:
            return ClaimVerdict(claim, "false", reason="nothing returns after this point"), cursor
    for at in returns:
        value = index.objects.returned(steps[at])
        assert value is not None
        if _matches(claim.value or "", value, ""):
            return ClaimVerdict(claim, "true", step=at, actual=value.repr), at
    first = returns[0]
    shown = index.objects.returned(steps[first])
    return ClaimVerdict(claim, "false", step=first, actual=shown.repr if shown else None), cursor


def _check_print(index: _Index, cursor: int, anchor: int | None, claim: Claim) -> tuple[ClaimVerdict, int]:
    steps = index.steps
    claimed = _printed(claim.value or "")
    if anchor is not None:
        after = index.next_in_frame(anchor)
        end = len(steps) - 1 if after is None else after
        out = "".join(s.stdout for s in steps[anchor + 1 : end + 1])
        ok = bool(claimed) and claimed in out.strip()
        return ClaimVerdict(claim, "true" if ok else "false", step=end, actual=out), cursor
    outputs = [i for i in range(cursor + 1, len(steps)) if steps[i].stdout]
    for at in outputs:
        if claimed and claimed in steps[at].stdout:
            return ClaimVerdict(claim, "true", step=at, actual=steps[at].stdout), at
    if not outputs:
        return ClaimVerdict(claim, "false", reason="nothing is printed after this point"), cursor
    return ClaimVerdict(claim, "false", step=outputs[0], actual=steps[outputs[0]].stdout), cursor


def _check_repeat(index: _Index, cursor: int, claim: Claim) -> tuple[ClaimVerdict, int]:
    """``Lines A-B repeat N more times``: line A starts exactly N more iterations (its next step is
    inside A+1..B), and the visit after the N-th one, if the loop goes on, does not start another."""
    own = index.frames.get(index.frame_of(cursor), [])
    steps = index.steps
    first, last, count = claim.line or 0, claim.last_line or 0, claim.count or 0
    later = own[bisect_right(own, cursor) :]

    def starts(i: int) -> bool:
        nxt = index.next_in_frame(i)
        return nxt is not None and steps[nxt].event == "line" and first < steps[nxt].line <= last

    visits = [i for i in later if steps[i].line == first and steps[i].event == "line"]
    if len(visits) < count or not all(starts(i) for i in visits[:count]):
        return ClaimVerdict(
            claim, "false", reason=f"lines {first}-{last} do not repeat {count} more times"
        ), cursor
    end = visits[count - 1] if count else cursor
    for i in later[later.index(end) + 1 :] if count else later:
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
    top = [s for s in trace.steps if s.frame == index.top]
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
