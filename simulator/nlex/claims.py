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
the longest prefix that parses as a Python literal (or an instance as the narrator tells it,
``Point(x=1, y=2)``: ``object_value``), so ``x = 3, y = 4`` yields two claims.

Reading a text takes time linear in its length, whatever it holds (issue 51: trying every prefix was
cubic, 16 s for one page): each value is found by one scan (``_Values``), a value is at most
``MAX_VALUE_CHARS`` long, claims are read from the first ``MAX_TEXT_CHARS`` characters, and a text
may spend ``WORK_PER_CHARACTER`` characters scanned and parsed per character (``extract`` says where
a text was read up to: ``Extraction.unread_from``).
"""

from __future__ import annotations

import ast
import keyword
import re
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

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


# What one text may cost (issue 51): a value is read up to MAX_VALUE_CHARS characters (a longer one is
# not a claim: the tracer keeps 1,000 characters of a value's repr, so a longer claimed value could
# only be checked in part anyway), claims are read from the first MAX_TEXT_CHARS characters of a text
# (the answer from anywhere in it), and reading values may take WORK_PER_CHARACTER characters of
# scanning and parsing per character read (model texts take under 2: a text that needs more is built
# to, such as constructors nested hundreds deep), so the time to read a text is linear in its length
# whatever it holds.
MAX_VALUE_CHARS = 2_000
MAX_TEXT_CHARS = 100_000
WORK_PER_CHARACTER = 10
_WORK_FLOOR = 20_000  # a short text may always spend this much
_TRIES = 4  # candidate ends of one value parsed one by one before halving (one, on model texts)

_POISON = re.compile("[\x00\ud800-\udfff]")  # no source holding a NUL or a lone surrogate parses
_TOKEN = re.compile(
    r"(?P<space>(?:[ \t\f]|\\\r)+)"  # a backslash before a carriage return joins two lines
    r"|(?P<number>(?:\d|\.\d)(?:[eE][+-]|[\w.])*)"  # greedy: the ends inside 1.5. are tried too
    r"|(?P<name>[^\W\d]\w*)"
    r"|(?P<quote>'''|\"\"\"|'|\")"
    r"|(?P<op>\.\.\.|==|:=|[-+()\[\]{},:=#\r])"  # anything else cannot be part of a literal
)
_STRING_BODY = {
    "'": re.compile(r"[^'\\\r]*(?:\\.[^'\\\r]*)*'", re.S),
    '"': re.compile(r'[^"\\\r]*(?:\\.[^"\\\r]*)*"', re.S),
    "'''": re.compile(r"[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''", re.S),
    '"""': re.compile(r'[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""', re.S),
}
_STRING_PREFIXES = frozenset({"r", "u", "b", "br", "rb"})
_FORMAT_PREFIXES = frozenset({"f", "fr", "rf"})  # an f-string is not a literal
_CONSTANTS = frozenset({"True", "False", "None"})
_KEYWORDS = frozenset(keyword.kwlist) - _CONSTANTS
_OPENS = {")": "(", "]": "[", "}": "{"}
_MAX_NESTING = 200  # Python's parser: "too many nested parentheses" past 200
_Ends = list[tuple[int, int]]


class OutOfWork(Exception):
    """A text has spent the work it may spend on reading values (``WORK_PER_CHARACTER``)."""


def literal_prefix(text: str, start: int, limit: int) -> int | None:
    """End offset of the longest ``text[start:end]`` (end <= limit) that parses as a Python literal
    (or a value as the narrator tells an instance: ``object_value``); None when there is none, or when
    it would be longer than ``MAX_VALUE_CHARS``."""
    return _Values(text).prefix(start, limit)


class _Values:
    """Where the values of one text end, each found once. A scan from the value's start finds the only
    places a literal can end (outside strings, at bracket depth 0, after a complete value), stopping at
    the first token no literal can go on with; the parser then judges those ends, longest first. That
    is what trying every end of the line gave, at a cost linear in the value's length instead of cubic
    in the line's. ``budget`` bounds the characters scanned and parsed over the whole text
    (``OutOfWork`` past it); None: unbounded."""

    def __init__(self, text: str, budget: int | None = None) -> None:
        self.text = text
        self.poison = [m.start() for m in _POISON.finditer(text)]
        self.budget = budget
        self.spent = 0
        self.known: dict[tuple[int, int], int | None] = {}

    def prefix(self, start: int, limit: int) -> int | None:
        key = (start, limit)
        if key not in self.known:
            self.known[key] = self._prefix(start, limit)
        return self.known[key]

    def _spend(self, characters: int) -> None:
        self.spent += characters
        if self.budget is not None and self.spent > self.budget:
            raise OutOfWork(f"{self.spent:,} characters scanned and parsed")

    def _prefix(self, start: int, limit: int) -> int | None:
        text = self.text
        while start < limit and text[start] in " \t":
            start += 1
        if start >= limit or text[start] in ",.;:)]}":
            return None
        at = bisect_left(self.poison, start)
        source_end = min(limit, self.poison[at]) if at < len(self.poison) else limit
        high = min(source_end, start + MAX_VALUE_CHARS)
        ends, scanned, complete = _literal_ends(text, start, high, capped=high < source_end)
        self._spend(scanned - start)
        if not complete:
            return None  # the value goes on past MAX_VALUE_CHARS
        candidates = [end for low, top in reversed(ends) if (end := _may_end(text, low, top, limit))]
        # Longest first, one by one: the longest end parses, on model texts. Past _TRIES failures (a
        # long tuple with an element that does not parse), by halving: of a literal's ends after whole
        # elements, the shorter ones parse as long as the elements before them do.
        for end in candidates[:_TRIES]:
            if self._parses(start, end):
                return end
        rest = candidates[_TRIES:]
        low, high = 0, len(rest)
        while low < high:
            middle = (low + high) // 2
            if self._parses(start, rest[middle]):
                high = middle
            else:
                low = middle + 1
        return rest[high] if high < len(rest) else None

    def _parses(self, start: int, end: int) -> bool:
        self._spend(end - start)
        return _parses(self.text[start:end])


def _may_end(text: str, low: int, top: int, limit: int) -> int | None:
    """The last offset in ``low..top`` where a value may end (not after a blank or a comma, not before
    a letter, not at a full stop), None if there is none: all of them parse alike."""
    for end in range(top, low - 1, -1):
        last = text[end - 1]
        if last in " \t,;:":
            continue
        if end < limit and text[end] not in " \t,.;:)]}\n!?":
            continue
        if last == "." and (end == limit or text[end] in " \t\n"):
            continue  # a full stop, not a decimal point
        return end
    return None


def _parses(value: str) -> bool:
    try:
        ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return object_value(value)
    return True


def _literal_ends(text: str, start: int, high: int, *, capped: bool) -> tuple[_Ends, int, bool]:
    """Where a literal starting at ``start`` may end, up to ``high``: runs ``(low, top)`` of candidate
    end offsets in increasing order (a run: the ends inside one comment, which parse alike), how far
    the scan went, and whether it is complete (False: it reached ``high``, which ``capped`` says is not
    the end of the line, so a longer literal may end past it).

    The scan follows Python's tokens and the shape of what ``ast.literal_eval`` and ``object_value``
    accept: constants, signed numbers, ``1+2j``, implicitly joined strings, tuples, lists, sets, dicts
    and ``Name(keyword=value, ...)`` calls. It stops where no longer prefix can parse: a token that no
    literal holds (``.``, ``*``, a keyword, an f-string, an unmatched bracket), two values side by side,
    a name not followed by ``(`` or by a keyword's ``=``. The parser still judges every end it gives;
    what the scan must never do is stop before an end that parses."""
    ends: _Ends = []
    stack: list[str] = []
    expect = True  # a value must come next
    pending = ""  # what came before the expected value: "sign", "plus" (of 1+2j), "open", "comma"
    last = ""  # the value just read: "number", "complex", "string", "constant", "name", "group"
    pos = start
    while pos < high and (text[pos].isspace() or text[pos] == "#"):  # blanks object_value strips,
        pos = text.find("\r", pos, high) if text[pos] == "#" else pos + 1  # lines the parser skips
        pos = high if pos < 0 else pos
    while pos < high:
        complete = not stack and ((not expect and last != "name") or pending == "comma")
        m = _TOKEN.match(text, pos, high)
        if m is None:
            if complete and text[pos].isspace():  # trailing blanks that object_value strips
                return _tail(text, pos, high, ends, capped=capped)
            return ends, pos, True
        kind, token, end = m.lastgroup, m.group(), m.end()
        if kind == "space":
            if complete:  # a form feed is a blank the end rule does not leave out
                ends.extend((i + 1, i + 1) for i in range(pos, end) if text[i] == "\f")
            pos = end
            continue
        quote = pos if kind == "quote" else -1
        if kind == "name" and end < high and text[end] in "'\"":
            if token.lower() in _FORMAT_PREFIXES:
                return ends, pos, True
            if token.lower() in _STRING_PREFIXES:
                quote = end
        if quote >= 0:
            mark = next(q for q in ("'''", '"""', "'", '"') if text.startswith(q, quote, high))
            body = _STRING_BODY[mark].match(text, quote + len(mark), high)
            if body is None:  # not closed before the end of the line (or of what may be scanned)
                return ends, high, not capped
            kind, end = "string", body.end()
        if kind in ("number", "string", "name") or token == "...":
            if kind == "name" and token in _KEYWORDS:
                return ends, pos, True
            read = "constant" if token == "..." or (kind == "name" and token in _CONSTANTS) else str(kind)
            if expect:
                if (pending == "sign" and read == "name") or (pending == "plus" and read != "number"):
                    return ends, pos, True
                last, expect = ("complex" if pending == "plus" else read), False
            elif not (read == "string" and last == "string"):  # only strings may stand side by side
                return ends, pos, True
            if not stack and last != "name":
                if kind == "number":  # 1.5. may end at 1 or at 1.5 (a number holds one point at most)
                    points = [i for i in range(pos + 1, end) if text[i] == "."][:2]
                    ends.extend((i, i) for i in points)
                ends.append((end, end))
            pos = end
            continue
        if token in ("(", "[", "{"):
            if expect:
                if token != "(" and pending in ("sign", "plus"):
                    return ends, pos, True
            elif not (token == "(" and last == "name"):  # only a name is called
                return ends, pos, True
            if len(stack) >= _MAX_NESTING:
                return ends, pos, True
            stack.append(token)
            expect, pending = True, "open"
        elif token in _OPENS:
            if not stack or stack[-1] != _OPENS[token]:
                return ends, pos, True
            if (expect and pending not in ("open", "comma")) or (not expect and last == "name"):
                return ends, pos, True
            stack.pop()
            expect, last = False, "group"
            if not stack:
                ends.append((end, end))
        elif token == ",":
            if expect or last == "name":
                return ends, pos, True
            expect, pending = True, "comma"
        elif token == ":":  # between a dict's key and its value
            if expect or last == "name" or not stack or stack[-1] != "{":
                return ends, pos, True
            expect, pending = True, ""
        elif token == "=":  # a keyword argument of Name(...)
            if expect or last != "name" or not stack or stack[-1] != "(":
                return ends, pos, True
            expect, pending = True, ""
        elif token in ("+", "-"):
            if expect:
                if pending in ("sign", "plus"):
                    return ends, pos, True
                pending = "sign"
            elif last in ("number", "group"):  # 1+2j (the parser says whether it is one)
                expect, pending = True, "plus"
            else:
                return ends, pos, True
        elif token == "\r" and stack:  # a line break inside brackets
            pass
        elif token in ("#", "\r") and complete:
            return _tail(text, pos, high, ends, capped=capped)
        else:
            return ends, pos, True
        pos = end
    return ends, high, not capped


def _tail(text: str, pos: int, high: int, ends: _Ends, *, capped: bool) -> tuple[_Ends, int, bool]:
    """After a complete literal, from a comment, a carriage return (a line break to the parser) or a
    blank that ``object_value`` strips: what follows may only be comments and blanks, each a place
    where the literal may end."""
    while pos < high:
        char = text[pos]
        if char == "#":
            cr = text.find("\r", pos, high)
            stop = high if cr < 0 else cr
            ends.append((pos + 1, stop))
            pos = stop
        elif char.isspace():
            pos += 1
            ends.append((pos, pos))
        else:
            return ends, pos, True
    return ends, high, not capped


_CONSTRUCTOR = re.compile(r"[A-Za-z_]\w*\(")


def object_value(text: str) -> bool:
    """Whether ``text`` is a value as the narrator tells an instance (``trace.Objects``): literals and
    ``Point(x=1, y=2)`` (a class name with its attributes as keywords), nested in lists, tuples, sets
    and dicts, so the attributes are part of the value, not claims about variables named x and y."""
    if not _CONSTRUCTOR.search(text):
        return False
    try:
        tree = parse_python(text.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False

    def told(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            return isinstance(node.operand, ast.Constant)
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            return all(told(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            return all(k is not None and told(k) for k in node.keys) and all(told(v) for v in node.values)
        if isinstance(node, ast.Call):
            return (
                isinstance(node.func, ast.Name)
                and not node.args
                and all(k.arg is not None and told(k.value) for k in node.keywords)
            )
        return False

    return told(tree.body)


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

    The time it takes is linear in the text's length: each value is scanned once (``_Values``), the
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
    values = _Values(work, budget=WORK_PER_CHARACTER * cut + _WORK_FLOOR)
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
