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

    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            add("same", a[i1:i2])
        else:
            add("del", a[i1:i2])
            add("ins", b[j1:j2])
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
