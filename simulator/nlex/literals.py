"""Where a Python value written in prose ends: the longest prefix of the rest of a line that parses
as a literal (or as the narrator tells an instance, ``Point(x=1, y=2)``: ``object_value``), so that
``x = 3, y = 4`` reads two values. ``simulator.nlex.claims`` reads each claim's value with it.

Reading a text's values takes time linear in its length, whatever it holds (issue 51: trying every
prefix was cubic, 16 s for one page): each value is found by one scan (``ValueEnds``), a value is at
most ``MAX_VALUE_CHARS`` long, and a text may spend a budget of characters scanned and parsed
(``OutOfWork`` past it).
"""

from __future__ import annotations

import ast
import keyword
import re
from bisect import bisect_left

from simulator.source import parse_python

# What one text may cost (issue 51): a value is read up to MAX_VALUE_CHARS characters (a longer one is
# not a claim: the tracer keeps 1,000 characters of a value's repr, so a longer claimed value could
# only be checked in part anyway), and reading values may take WORK_PER_CHARACTER characters of
# scanning and parsing per character read (model texts take under 2: a text that needs more is built
# to, such as constructors nested hundreds deep).
MAX_VALUE_CHARS = 2_000
WORK_PER_CHARACTER = 10
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
    return ValueEnds(text).prefix(start, limit)


class ValueEnds:
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
