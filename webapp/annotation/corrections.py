"""Helpers for the review screen's correction box: a word-level diff of the correction against the
model's text (what Prodigy's ``diff`` view and Argilla users expect), and "use the trace's value": on a
false claim, the claimed value's span replaced by what the real run shows there, in one click."""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass

from simulator.nlex.verify import ClaimCheck, Verification

# Words, whitespace runs and punctuation, each a token; a decimal number is one ("2.0" replacing "3" is
# one change, never "2", "." and "0" matched against the text's full stops).
_TOKENS = re.compile(r"\d+(?:\.\d+)+|\s+|\w+|[^\w\s]")
_WORDS = re.compile(r"\d+(?:\.\d+)+|\w+|[^\w\s]")  # what "N words changed" counts
# Sentences and lines: a segment ends after a newline, or after ".", "!" or "?" and the spaces after it.
_SEGMENTS = re.compile(r"[^\n]*?(?:[.!?][ \t]+|\n|\Z)")


@dataclass(frozen=True)
class Chunk:
    """One run of the diff: ``op`` is "same", "del" (only in the original) or "ins" (only in the
    correction)."""

    op: str
    text: str


MAX_DIFFED = 4_000_000  # tokens of the two changed middles multiplied: about 0.2 s of SequenceMatcher
MAX_SEGMENTS_DIFFED = 250_000  # segments (sentences, lines) of the two changed middles multiplied
MAX_PAIRED = 400  # segments of one replaced block multiplied, paired by likeness (else diffed as one text)
LIKE = 0.5  # how alike (difflib's ratio of their tokens) a removed and an added sentence are to pair


class _Chunks(list[Chunk]):
    def add(self, op: str, text: str) -> None:
        """Append ``text`` as ``op``, merged into the last chunk when that is of the same kind."""
        if not text:
            return
        if self and self[-1].op == op:
            self[-1] = Chunk(op, self[-1].text + text)
        else:
            self.append(Chunk(op, text))


def _shared_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many items ``a`` and ``b`` share at their start, and then at their end."""
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


def _words(chunks: _Chunks, original: str, edited: str) -> None:
    """``original`` against ``edited`` token by token: the shared ends undiffed, a middle too large to
    diff (SequenceMatcher is quadratic) one replacement."""
    a, b = _TOKENS.findall(original), _TOKENS.findall(edited)
    head, tail = _shared_ends(a, b)
    chunks.add("same", "".join(a[:head]))
    middle_a, middle_b = a[head : len(a) - tail], b[head : len(b) - tail]
    if len(middle_a) * len(middle_b) > MAX_DIFFED:
        chunks.add("del", "".join(middle_a))
        chunks.add("ins", "".join(middle_b))
    else:
        matcher = difflib.SequenceMatcher(None, middle_a, middle_b, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                chunks.add("same", "".join(middle_a[i1:i2]))
            else:
                chunks.add("del", "".join(middle_a[i1:i2]))
                chunks.add("ins", "".join(middle_b[j1:j2]))
    chunks.add("same", "".join(a[len(a) - tail :]))


def _likeness(a: str, b: str) -> float:
    matcher = difflib.SequenceMatcher(None, _TOKENS.findall(a), _TOKENS.findall(b), autojunk=False)
    if matcher.real_quick_ratio() < LIKE or matcher.quick_ratio() < LIKE:
        return 0.0
    return matcher.ratio()


def _replaced(chunks: _Chunks, removed: list[str], added: list[str]) -> None:
    """Sentences ``removed`` replaced by sentences ``added``: each removed one paired with the added one
    most like it (in order, as difflib's Differ pairs lines) and diffed word by word; a sentence with
    no like one is removed or added whole. Blocks too large to pair are diffed as one text."""
    if not removed or not added:
        chunks.add("del", "".join(removed))
        chunks.add("ins", "".join(added))
        return
    if len(removed) * len(added) > MAX_PAIRED:
        _words(chunks, "".join(removed), "".join(added))
        return
    best, at = LIKE, None
    for i, a in enumerate(removed):
        for j, b in enumerate(added):
            score = _likeness(a, b)
            if score > best:
                best, at = score, (i, j)
    if at is None:  # nothing alike: the block is rewritten, diffed as one text
        _words(chunks, "".join(removed), "".join(added))
        return
    i, j = at
    _replaced(chunks, removed[:i], added[:j])
    _words(chunks, removed[i], added[j])
    _replaced(chunks, removed[i + 1 :], added[j + 1 :])


def word_diff(original: str, edited: str) -> list[Chunk]:
    """The correction against the original, word by word (whitespace and punctuation are tokens of
    their own, so "7." -> "6." marks only the digit; a decimal number is one token). Sentences and
    lines are matched first, so that a sentence deleted next to an edited one is deleted whole and the
    edit stays on its own line ("y becomes 2.0." and a removed "Line 4: ..." are two changes, not
    "2", "." and "0" spread around the removed line). Adjacent chunks of one kind are merged."""
    chunks = _Chunks()
    a, b = [s for s in _SEGMENTS.findall(original) if s], [s for s in _SEGMENTS.findall(edited) if s]
    # The live check diffs on every keystroke: what both texts share at their ends is "same" without
    # diffing it, and a middle too large to match sentence by sentence is diffed as one text.
    head, tail = _shared_ends(a, b)
    chunks.add("same", "".join(a[:head]))
    middle_a, middle_b = a[head : len(a) - tail], b[head : len(b) - tail]
    if len(middle_a) * len(middle_b) > MAX_SEGMENTS_DIFFED:
        _words(chunks, "".join(middle_a), "".join(middle_b))
    else:
        matcher = difflib.SequenceMatcher(None, middle_a, middle_b, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                chunks.add("same", "".join(middle_a[i1:i2]))
            else:
                _replaced(chunks, middle_a[i1:i2], middle_b[j1:j2])
    chunks.add("same", "".join(a[len(a) - tail :]))
    return list(chunks)


def changed_words(chunks: list[Chunk]) -> int:
    """How many words the correction changed (for "3 words changed"): a replacement (removed words
    followed by added ones) counts its longer side, a pure removal or addition its words."""

    def words(chunk: Chunk) -> int:
        return len(_WORDS.findall(chunk.text))

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
    """Replace ``text[start:end]`` by ``value``: the claimed value of false claim ``index`` by the
    trace's (``kind`` "value", "use the trace's value"), or the sentence holding it by nothing
    (``kind`` "remove", "remove this sentence"). ``claim_start``/``claim_end`` are the claim's own span
    (what the page lights up while the button is hovered); ``label`` names the claim for the button's
    row, ``why`` says what is wrong with it."""

    index: int
    start: int
    end: int
    claimed: str
    value: str
    claim_start: int = 0
    claim_end: int = 0
    label: str = ""
    line: int | None = None
    kind: str = "value"
    why: str = ""


LABEL_CHARS = 60  # how much of a claim (or of the answer's line) a fix's row quotes
_ANSWER_TAGS = re.compile(r"\[/?(?:ANSWER|OUTPUT|THOUGHT)\]|</?output>", re.I)


def _quoted(words: str) -> str:
    words = " ".join(words.split())
    return f"“{words if len(words) <= LABEL_CHARS else words[: LABEL_CHARS - 1] + '…'}”"


def claim_label(text: str, claim: ClaimCheck) -> str:
    """How a fix's row names its claim: its words in quotes (“y becomes 3”); the final answer, whose
    claim is its value alone, by the line it sits on (the answer “assert f(1) == 3”)."""
    if claim.kind == "answer":
        line_start = text.rfind("\n", 0, claim.start) + 1
        line_end = text.find("\n", claim.end)
        line = _ANSWER_TAGS.sub(" ", text[line_start : line_end if line_end >= 0 else len(text)])
        return f"the answer {_quoted(line or claim.text)}"
    return _quoted(claim.text)


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
    line = claim.line if claim.kind != "answer" else None  # the answer's line is the program's last
    return Fix(
        index,
        at,
        at + len(claimed),
        claimed=claimed,
        value=claim.actual,
        claim_start=claim.start,
        claim_end=claim.end,
        label=claim_label(text, claim),
        line=line,
    )


def value_fixes(text: str, check: Verification) -> list[Fix]:
    """Every false claim of ``text`` that "use the trace's value" can fix."""
    fixes = (value_fix(text, i, claim) for i, claim in enumerate(check.claims))
    return [fix for fix in fixes if fix is not None]


# Where a sentence ends: ".", "!" or "?" before whitespace, a tag or the end; a newline; a tag.
_SENTENCE_END = re.compile(r"[.!?](?=\s|\[|<|\Z)|\n|(?=\[/?[A-Z]+\]|</?output>)")
_SENTENCE_START = re.compile(r"[.!?]\s+|\n|\[/?[A-Z]+\]\s*|</?output>\s*")
SENTENCE_CHARS = 2_000  # how far back a sentence's start is looked for


def sentence_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The sentence of ``text`` around ``text[start:end]`` with the whitespace after it (up to and with
    one newline), so that removing it leaves the sentences before and after as they were."""
    begin = text.rfind("\n", 0, start) + 1  # at the latest, where its line starts
    for boundary in _SENTENCE_START.finditer(text, max(begin, start - SENTENCE_CHARS), start):
        begin = boundary.end()
    while begin < start and text[begin] in " \t":
        begin += 1
    after = _SENTENCE_END.search(text, end)
    stop = after.end() if after else len(text)
    if after is not None and after.group() in ".!?":
        while stop < len(text) and text[stop] in " \t":
            stop += 1
        if stop < len(text) and text[stop] == "\n":
            stop += 1
    return begin, stop


def _why(claim: ClaimCheck) -> str:
    if claim.kind == "line" and claim.line is not None:
        return f"line {claim.line} does not run here"
    return claim.reason or "the real run says otherwise"


def sentence_removals(text: str, check: Verification) -> list[Fix]:
    """The "remove this sentence" edits: for each false claim that the trace's value cannot fix (a line
    that does not run there, such as a line the model narrates that never ran; a name the run never
    sets), its sentence; one per sentence, never the final answer's."""
    answers = [(c.start, c.end) for c in check.claims if c.kind in ("answer", "result")]
    fixed = {fix.index for fix in value_fixes(text, check)}
    removals: list[Fix] = []
    for index, claim in enumerate(check.claims):
        if claim.verdict != "false" or claim.kind in ("answer", "result") or index in fixed:
            continue
        start, end = sentence_span(text, claim.start, claim.end)
        holds_answer = any(start < a_end and a_start < end for a_start, a_end in answers)
        if holds_answer or any(r.start == start for r in removals) or not text[start:end].strip():
            continue
        removals.append(
            Fix(
                index,
                start,
                end,
                claimed=text[start:end],
                value="",
                claim_start=claim.start,
                claim_end=claim.end,
                label=_quoted(text[start:end]),
                line=claim.line,
                kind="remove",
                why=_why(claim),
            )
        )
    return removals


def claim_edits(text: str, check: Verification) -> list[Fix]:
    """The one-click edits the review screen offers: the trace's values, then sentences to remove (a
    claim has at most one of them, so a claim's index names its edit)."""
    return value_fixes(text, check) + sentence_removals(text, check)


def apply_fix(text: str, fix: Fix) -> str:
    return text[: fix.start] + fix.value + text[fix.end :]
