"""Helpers for the review screen's correction box: a word-level diff of the correction against the
model's text (what Prodigy's ``diff`` view and Argilla users expect), and "use the trace's value": on a
false claim, the claimed value's span replaced by what the real run shows there, in one click."""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass

from simulator.nlex.verify import ClaimCheck, Verification

_TOKENS = re.compile(r"\s+|\w+|[^\w\s]")


@dataclass(frozen=True)
class Chunk:
    """One run of the diff: ``op`` is "same", "del" (only in the original) or "ins" (only in the
    correction)."""

    op: str
    text: str


MAX_DIFFED = 4_000_000  # tokens of the two changed middles multiplied: about 0.2 s of SequenceMatcher


def word_diff(original: str, edited: str) -> list[Chunk]:
    """The correction against the original, word by word (whitespace and punctuation are tokens of
    their own, so "7." -> "6." marks only the digit). Adjacent chunks of one kind are merged."""
    a, b = _TOKENS.findall(original), _TOKENS.findall(edited)
    chunks: list[Chunk] = []

    def add(op: str, tokens: list[str]) -> None:
        text = "".join(tokens)
        if not text:
            return
        if chunks and chunks[-1].op == op:
            chunks[-1] = Chunk(op, chunks[-1].text + text)
        else:
            chunks.append(Chunk(op, text))

    # The live check diffs on every keystroke: what both texts share at their ends is "same" without
    # diffing it, and a middle too large to diff (SequenceMatcher is quadratic) is one replacement.
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    add("same", a[:head])
    middle_a, middle_b = a[head : len(a) - tail], b[head : len(b) - tail]
    if len(middle_a) * len(middle_b) > MAX_DIFFED:
        add("del", middle_a)
        add("ins", middle_b)
    else:
        matcher = difflib.SequenceMatcher(None, middle_a, middle_b, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                add("same", middle_a[i1:i2])
            else:
                add("del", middle_a[i1:i2])
                add("ins", middle_b[j1:j2])
    add("same", a[len(a) - tail :])
    return chunks


def changed_words(chunks: list[Chunk]) -> int:
    """How many words the correction changed (for "3 words changed"): a replacement (removed words
    followed by added ones) counts its longer side, a pure removal or addition its words."""

    def words(chunk: Chunk) -> int:
        return len(re.findall(r"\w+|[^\w\s]", chunk.text))

    total, i = 0, 0
    while i < len(chunks):
        chunk = chunks[i]
        if chunk.op == "del" and i + 1 < len(chunks) and chunks[i + 1].op == "ins":
            total += max(words(chunk), words(chunks[i + 1]))
            i += 2
            continue
        total += words(chunk) if chunk.op != "same" else 0
        i += 1
    return total


@dataclass(frozen=True)
class Fix:
    """Replace ``text[start:end]`` (the claimed value of claim ``index``) by ``value`` (the trace's)."""

    index: int
    start: int
    end: int
    claimed: str
    value: str


def value_fix(text: str, index: int, claim: ClaimCheck) -> Fix | None:
    """The one-click fix of a false claim: its claimed value (the last occurrence inside the claim's
    span) replaced by the actual value, when that is a Python literal (not "raises ..." or a
    sentence); None when the claim is not false or has no such value."""
    if claim.verdict != "false" or not claim.claimed or claim.actual is None:
        return None
    claimed = claim.claimed.strip()
    try:
        ast.literal_eval(claim.actual)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    at = text.rfind(claimed, claim.start, claim.end) if claimed else -1
    if at < 0 or claimed == claim.actual:
        return None
    return Fix(index, at, at + len(claimed), claimed, claim.actual)


def value_fixes(text: str, check: Verification) -> list[Fix]:
    """Every false claim of ``text`` that "use the trace's value" can fix."""
    fixes = (value_fix(text, i, claim) for i, claim in enumerate(check.claims))
    return [fix for fix in fixes if fix is not None]


def apply_fix(text: str, fix: Fix) -> str:
    return text[: fix.start] + fix.value + text[fix.end :]
