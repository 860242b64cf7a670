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

Each claim takes a few lookups in indexes built once per trace (``simulator.nlex.trace_index``).
"""

from __future__ import annotations

import ast
import builtins
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from simulator.compare import NOT_LITERAL, literal, outputs_match, same_value
from simulator.execution.trace import TRUNCATION_MARK, Trace, Value
from simulator.nlex.claims import Claim, extract_claims
from simulator.nlex.literals import object_value
from simulator.nlex.trace_index import UNKEYED, TraceIndex, Wanted, element_of, normal_text
from simulator.source import parse_python

Verdict = Literal["true", "false", "unverifiable"]


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


def check_text(text: str, trace: Trace, names: Iterable[str] | None = None) -> CheckResult:
    """Extract the claims of ``text`` and check them against ``trace``."""
    return check_claims(extract_claims(text, names), trace)


def check_claims(claims: list[Claim], trace: Trace) -> CheckResult:
    """Verdicts for ``claims`` (in text order) against ``trace``."""
    index = TraceIndex(trace)
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


def _find_line(index: TraceIndex, cursor: int, line: int) -> int | None:
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


def _check_value(
    index: TraceIndex, cursor: int, anchor: int | None, claim: Claim
) -> tuple[ClaimVerdict, int]:
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
    # frames: the first that agrees makes the claim true (found by lookups: ``Values``).
    wanted = Wanted(claim.value or "")
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
        not access or (wanted.literal and index.element(current.repr, access) is not UNKEYED)
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


def _check_condition(index: TraceIndex, anchor: int | None, claim: Claim, trace: Trace) -> ClaimVerdict:
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


def _check_calls(index: TraceIndex, anchor: int | None, claim: Claim, trace: Trace) -> ClaimVerdict:
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


def _check_return(
    index: TraceIndex, cursor: int, anchor: int | None, claim: Claim
) -> tuple[ClaimVerdict, int]:
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
    wanted = Wanted(claim.value or "")
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


def _check_print(
    index: TraceIndex, cursor: int, anchor: int | None, claim: Claim
) -> tuple[ClaimVerdict, int]:
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


def _check_repeat(index: TraceIndex, cursor: int, claim: Claim) -> tuple[ClaimVerdict, int]:
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


def _check_answer(trace: Trace, index: TraceIndex, claim: Claim) -> ClaimVerdict:
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
        if not match and literal(claim.value or "") is NOT_LITERAL and not object_value(claim.value or ""):
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


def _matches(claimed: str, actual: Value, access: str) -> bool | None:
    """Whether a claimed value agrees with a traced one; None when they cannot be compared."""
    if actual.repr.endswith(TRUNCATION_MARK):
        kept = actual.repr[: -len(TRUNCATION_MARK)]
        return (
            normal_text(claimed).startswith(normal_text(kept)[: max(len(kept) - 1, 0)])
            if not access
            else None
        )
    left, right = literal(claimed), literal(actual.repr)
    if access:
        if right is NOT_LITERAL:
            return None
        right = element_of(right, access)
        if right is NOT_LITERAL:
            return None
    if left is not NOT_LITERAL and right is not NOT_LITERAL:
        return same_value(left, right, strict_bool=True)
    if access:
        return None
    return normal_text(claimed) == normal_text(actual.repr)


def _shown(value: Value, access: str) -> str:
    if not access:
        return value.repr
    inner = element_of(literal(value.repr), access)
    return value.repr if inner is NOT_LITERAL else repr(inner)


def _printed(claimed: str) -> str:
    value = literal(claimed)
    text = claimed if value is NOT_LITERAL else (value if isinstance(value, str) else repr(value))
    return text.strip()
