"""Checkable claims extracted from any NLEX text (our narrator's or a model's).

An NLEX text says things a trace can confirm or refute: that a line runs ("Line 4", "on line 4"), that a
variable holds a value ("i = 2", "count is now 3", "dp[1] = 1"), that a function returns a value, that a
line prints something, that a loop repeats ("Lines 3-5 repeat 4 more times"), that a branch or loop
test holds ("the condition holds") or that a line calls functions ("calling <listcomp> 1 time"), the
narrator's own phrases, which the model copies; what the result is in
prose ("the result is 6", "the output of the function is 'ab'"), and the final answer
(``[ANSWER] assert f(...) == X``, ``[ANSWER] X``, ``[OUTPUT] X`` or an ``<output>`` block, closing tag
optional; without tags the last ``assert ... == X`` line: ``simulator.prompts.parsing`` reads it).
``extract_claims`` finds them with their character offsets so a UI can
highlight them; ``simulator.nlex.check`` gives each a verdict against a real trace.

Text inside backticks is code, not a claim (``\\`x = x + 1\\``` says nothing about x's value). Values are
the longest prefix that parses as a Python literal (or an instance as the narrator tells it), read by
``simulator.nlex.literals``, so ``x = 3, y = 4`` yields two claims.

Reading a text takes time linear in its length, whatever it holds: each value is found by one scan
(``literals.ValueEnds``), claims are read from the first ``MAX_TEXT_CHARS`` characters, and a text may
spend ``WORK_PER_CHARACTER`` characters scanned and parsed per character (``extract`` says where a
text was read up to: ``Extraction.unread_from``).
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from simulator.nlex.literals import MAX_VALUE_CHARS, WORK_PER_CHARACTER, OutOfWork, ValueEnds
from simulator.prompts.parsing import assert_answer, find_answer
from simulator.source import parse_python

ClaimKind = Literal["line", "value", "return", "print", "repeat", "condition", "calls", "result", "answer"]

_CODE_SPAN = re.compile(r"```.*?```|`[^`\n]*`", re.S)
_REPEAT = re.compile(
    r"\b[Ll]ines? (\d+)\s*(?:-|–|to|through)\s*(\d+) (?:repeat|run|are repeated|execute)s? (\d+) more times?"
)
_LINE_RANGE = re.compile(r"\b[Ll]ines (\d+)\s*(?:-|–|to|through|and)\s*(\d+)")
_LINE = re.compile(r"\b[Ll]ine (\d+)\b")
_TARGET = r"(?<![\w.'\"\]])([A-Za-z_]\w*(?:\[[^\[\]=\n]{1,40}\])?)"
_ASSIGN = re.compile(_TARGET + r"\s*(?:(?<![=!<>+\-*/%])=(?!=)|:=)\s*")
_VERBAL = re.compile(
    _TARGET + r"\s+(?:is now|is still|is set to|is updated to|is assigned|becomes|became|changes to"
    r"|now holds|holds|equals|starts at|starts as|begins at|is initiali[sz]ed to|is)\s+"
    r"(?:the (?:value|list|string|tuple|dict|number|integer) )?"
)
_VALUE_OF = re.compile(r"\bvalue of `?([A-Za-z_]\w*)`? (?:is|becomes|is now)\s+")
_RETURN = re.compile(r"\b[Rr]eturn(?:s| value is| value:|ing)\s+(?:the value\s+)?")
_RETURN_NAMED = re.compile(r"\s*`?[A-Za-z_][\w\[\]]*`?,?\s+(?:which is|which equals|=)\s+")
_RESULT = re.compile(
    r"\b(?:[Tt]he |[Ii]ts |[Ss]o the )(?:final )?(?:result|output|answer|return value)"
    r"(?: of (?:the )?(?:function|call|program|`?\w+\([^()\n]*\)`?))?"
    r" (?:is|will be|would be|should be|=|equals)\s+(?!now\b|still\b)(?:the (?:value|list|string|number) )?"
)
_CONDITION = re.compile(r"\b[Tt]he condition (holds|is true|is met|does not hold|is false|is not met)\b")
_CALLS = re.compile(r"\bcalling (?:the )?((?:<?[A-Za-z_][\w.]*>? \d+ times?(?:, |\b))+)")
_CALL_COUNT = re.compile(r"(<?[A-Za-z_][\w.]*>?) (\d+) times?")
_PRINT = re.compile(r"\bprint(?:s|ing|ed)?\s+(?:out\s+)?")
_STOPWORDS = frozenset(
    {"it", "this", "that", "which", "what", "there", "here", "then", "the", "a", "an", "and", "or"}
    | {"value", "result", "output", "answer", "loop", "condition"}
)


@dataclass
class Claim:
    """One checkable statement and where it sits in the NLEX text (``start``/``end`` offsets)."""

    kind: ClaimKind
    start: int
    end: int
    text: str
    line: int | None = None
    name: str | None = None
    value: str | None = None  # source text of the claimed value, as written
    value_start: int | None = None
    value_end: int | None = None
    count: int | None = None  # repeat claims: how many more iterations
    last_line: int | None = None  # repeat claims: the loop's last line
    anchored: bool = False  # a line claim came earlier on the same text line
    form: Literal["call", "stdout"] | None = None  # answer claims: a call's value or a program's stdout


MAX_TEXT_CHARS = 100_000  # claims are read from this many characters of a text (the answer from anywhere)
_WORK_FLOOR = 20_000  # a short text may always spend this much


def _answer_blocks(text: str, end: int) -> list[tuple[int, int]]:
    """The answer blocks that end before ``end``, as ``re.finditer(r"\\[ANSWER\\].*?\\[/ANSWER\\]|...")``
    finds them (each opener with the first closer of its kind after it), in one pass: the regular
    expression looks for a closer from every opener, quadratic in a text of unclosed tags."""
    pairs = (("[ANSWER]", "[/ANSWER]"), ("[OUTPUT]", "[/OUTPUT]"), ("<output>", "</output>"))
    opener_at = [text.find(opener, 0, end) for opener, _ in pairs]
    closer_at: list[tuple[int, int] | None] = [None] * len(pairs)  # (searched from, found at or -1)
    blocks: list[tuple[int, int]] = []
    pos = 0
    while True:
        for kind, (opener, _) in enumerate(pairs):
            if 0 <= opener_at[kind] < pos:
                opener_at[kind] = text.find(opener, pos, end)
        starts = [(at, kind) for kind, at in enumerate(opener_at) if at >= 0]
        if not starts:
            return blocks
        at, kind = min(starts)
        opener, closer = pairs[kind]
        body = at + len(opener)
        known = closer_at[kind]
        if known is not None and known[0] <= body and (known[1] < 0 or known[1] >= body):
            found = known[1]  # the first closer from where it was looked for is still the first
        else:
            found = text.find(closer, body, end)
            closer_at[kind] = (body, found)
        if found < 0:
            pos = at + 1
        else:
            blocks.append((at, found + len(closer)))
            pos = found + len(closer)


def _mask(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with the characters of ``spans`` blanked (line breaks kept, so offsets and lines hold)."""
    out: list[str] = []
    pos = 0
    for a, b in sorted((max(a, 0), min(b, len(text))) for a, b in spans):
        if b <= pos:
            continue
        a = max(a, pos)
        out += [text[pos:a], _NOT_NEWLINE.sub(" ", text[a:b])]
        pos = b
    out.append(text[pos:])
    return "".join(out)


_NOT_NEWLINE = re.compile(r"[^\n]")
_MARGIN = MAX_VALUE_CHARS + 1_000  # read past MAX_TEXT_CHARS, for the values of the last claims


@dataclass
class Extraction:
    """The claims of a text (``extract``), and whether all of it was read: ``unread_from`` is the
    offset from which no claim was read (past ``MAX_TEXT_CHARS``, or where the text spent the work it
    may spend), None when the whole text was. The answer is read wherever it is."""

    claims: list[Claim]
    unread_from: int | None = None


def extract_claims(text: str, names: Iterable[str] | None = None) -> list[Claim]:
    """All claims in ``text`` in reading order (``extract``'s, without saying how much was read)."""
    return extract(text, names).claims


def extract(text: str, names: Iterable[str] | None = None) -> Extraction:
    """All claims in ``text`` in reading order. ``names`` (the program's variables, when known) lets
    verbal claims such as "count is 3" through only for real variables; ``x = 3`` always counts.

    The time it takes is linear in the text's length: each value is scanned once (``literals.ValueEnds``), the
    claims are read from the first ``MAX_TEXT_CHARS`` characters, and a text that would need more than
    ``WORK_PER_CHARACTER`` characters scanned and parsed per character is read up to where it ran out
    (``Extraction.unread_from`` says where)."""
    known = set(names) if names is not None else None
    claims: list[Claim] = []
    masked_spans: list[tuple[int, int]] = []
    cut = min(len(text), MAX_TEXT_CHARS)  # no claim starts here or later
    head = text[: cut + _MARGIN]

    span = find_answer(text) or assert_answer(text)
    if span is not None:
        # the claim is the stated value (what is right or wrong), not the tags around it
        claims.append(Claim("answer", span.value_start, span.value_end, span.value,
                            value=span.value, value_start=span.value_start,
                            value_end=span.value_end, form=span.form))  # fmt: skip
        masked_spans.append((span.start, span.end))
        # earlier answer blocks (a draft the text then revised) are not claims either
        masked_spans.extend(_answer_blocks(text, span.start))
    masked_spans.extend((m.start(), m.end()) for m in _CODE_SPAN.finditer(text))
    work = _mask(head, masked_spans)
    newlines = [m.start() for m in re.finditer("\n", work)]

    def line_end(pos: int) -> int:
        at = bisect_left(newlines, pos)
        return newlines[at] if at < len(newlines) else len(work)

    def read(pattern: re.Pattern[str]) -> list[re.Match[str]]:
        return [m for m in pattern.finditer(work) if m.start() < cut]

    returns = [(m, _RETURN_NAMED.match(work, m.end())) for m in read(_RETURN)]
    results, prints, values_of, assigns = read(_RESULT), read(_PRINT), read(_VALUE_OF), read(_ASSIGN)
    verbals = []
    for m in read(_VERBAL):
        base = m.group(1).split("[")[0]
        if not (base not in known if known is not None else base.lower() in _STOPWORDS):
            verbals.append(m)

    # Each value once, in reading order, so that a text out of work is read up to a place.
    values = ValueEnds(work, budget=WORK_PER_CHARACTER * cut + _WORK_FLOOR)
    wanted = [(m.end(), m.start()) for m, _ in returns]
    wanted += [(named.end(), m.start()) for m, named in returns if named]
    wanted += [(m.end(), m.start()) for ms in (results, prints, values_of, assigns, verbals) for m in ms]
    wanted.sort()
    for index, (value_from, _) in enumerate(wanted):
        try:
            values.prefix(value_from, line_end(value_from))
        except OutOfWork:
            cut = min(start for _, start in wanted[index:])
            break

    def value_end(value_from: int) -> int | None:
        return values.prefix(value_from, line_end(value_from))

    found: list[Claim] = []
    covered = bytearray(len(work))  # the characters of the claims found so far (and of line ranges)

    def cover(a: int, b: int) -> None:
        covered[a:b] = b"\x01" * (b - a)

    for m in read(_REPEAT):
        found.append(Claim("repeat", m.start(), m.end(), m.group(0), line=int(m.group(1)),
                           last_line=int(m.group(2)), count=int(m.group(3)), value=m.group(3),
                           value_start=m.start(3), value_end=m.end(3)))  # fmt: skip
        cover(m.start(), m.end())
    for m in read(_LINE_RANGE):
        cover(m.start(), m.end())
    for m in read(_LINE):
        if not covered[m.start()]:
            found.append(Claim("line", m.start(), m.end(), m.group(0), line=int(m.group(1))))

    def add_value(kind: ClaimKind, m: re.Match[str], name: str | None, value_from: int) -> None:
        if m.start() >= cut:
            return
        end = value_end(value_from)
        if end is None:
            return
        value_start = value_from + (len(work[value_from:end]) - len(work[value_from:end].lstrip()))
        if covered[m.start()]:
            return
        cover(m.start(), end)
        found.append(Claim(kind, m.start(), end, text[m.start():end], name=name, value=text[value_start:end],
                           value_start=value_start, value_end=end))  # fmt: skip

    for m, named in returns:
        if m.start() >= cut:
            continue
        if value_end(m.end()) is None and named:
            add_value("return", m, None, named.end())
        else:
            add_value("return", m, None, m.end())
    for m in read(_CONDITION):
        holds = m.group(1) in ("holds", "is true", "is met")
        found.append(Claim("condition", m.start(), m.end(), m.group(0), value="holds" if holds else "fails"))
        cover(m.start(), m.end())
    for m in read(_CALLS):
        counts = ", ".join(f"{name} {n}" for name, n in _CALL_COUNT.findall(m.group(1)))
        found.append(Claim("calls", m.start(), m.end(), m.group(0).rstrip(", "), value=counts))
        cover(m.start(), m.end())
    for m in results:
        add_value("result", m, None, m.end())
    for m in prints:
        add_value("print", m, None, m.end())
    for m in values_of:
        add_value("value", m, m.group(1), m.end())
    for m in assigns:
        add_value("value", m, m.group(1), m.end())
    for m in verbals:
        add_value("value", m, m.group(1), m.end())

    found = sorted((c for c in found if c.start < cut), key=lambda c: c.start)
    last_line: int | None = None  # the text line (count of line breaks before) of the last line claim
    for claim in found:
        if claim.kind == "line":
            last_line = bisect_left(newlines, claim.start)
        elif last_line is not None and bisect_left(newlines, claim.start) == last_line:
            claim.anchored = True
    return Extraction(found + claims, unread_from=cut if cut < len(text) else None)


def program_names(code: str) -> set[str]:
    """Names a program binds (parameters, assignment and loop targets): the variables claims may name."""
    try:
        tree = parse_python(code)
    except SyntaxError:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names
