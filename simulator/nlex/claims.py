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
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from simulator.prompts.parsing import assert_answer, find_answer
from simulator.source import parse_python

ClaimKind = Literal["line", "value", "return", "print", "repeat", "condition", "calls", "result", "answer"]

_ANSWER_BLOCKS = re.compile(r"\[ANSWER\].*?\[/ANSWER\]|\[OUTPUT\].*?\[/OUTPUT\]|<output>.*?</output>", re.S)
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


def literal_prefix(text: str, start: int, limit: int) -> int | None:
    """End offset of the longest ``text[start:end]`` (end <= limit) that parses as a Python literal."""
    while start < limit and text[start] in " \t":
        start += 1
    if start >= limit or text[start] in ",.;:)]}":
        return None
    for end in range(limit, start, -1):
        last = text[end - 1]
        if last in " \t,;:":
            continue
        if end < limit and text[end] not in " \t,.;:)]}\n!?":
            continue
        if last == "." and (end == limit or text[end] in " \t\n"):
            continue  # a full stop, not a decimal point
        try:
            ast.literal_eval(text[start:end])
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            if not object_value(text[start:end]):
                continue
        return end
    return None


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


def _mask(text: str, spans: Iterable[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in spans:
        for i in range(a, b):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


def extract_claims(text: str, names: Iterable[str] | None = None) -> list[Claim]:
    """All claims in ``text`` in reading order. ``names`` (the program's variables, when known) lets
    verbal claims such as "count is 3" through only for real variables; ``x = 3`` always counts."""
    known = set(names) if names is not None else None
    claims: list[Claim] = []
    masked_spans: list[tuple[int, int]] = []

    span = find_answer(text) or assert_answer(text)
    if span is not None:
        # the claim is the stated value (what is right or wrong), not the tags around it
        claims.append(Claim("answer", span.value_start, span.value_end, span.value,
                            value=span.value, value_start=span.value_start,
                            value_end=span.value_end, form=span.form))  # fmt: skip
        masked_spans.append((span.start, span.end))
        # earlier answer blocks (a draft the text then revised) are not claims either
        masked_spans.extend((m.start(), m.end()) for m in _ANSWER_BLOCKS.finditer(text, 0, span.start))
    masked_spans.extend((m.start(), m.end()) for m in _CODE_SPAN.finditer(text))
    work = _mask(text, masked_spans)

    found: list[Claim] = []
    taken: list[tuple[int, int]] = []
    for m in _REPEAT.finditer(work):
        found.append(Claim("repeat", m.start(), m.end(), m.group(0), line=int(m.group(1)),
                           last_line=int(m.group(2)), count=int(m.group(3)), value=m.group(3),
                           value_start=m.start(3), value_end=m.end(3)))  # fmt: skip
        taken.append((m.start(), m.end()))
    for m in _LINE_RANGE.finditer(work):
        taken.append((m.start(), m.end()))
    for m in _LINE.finditer(work):
        if not _inside(m.start(), taken):
            found.append(Claim("line", m.start(), m.end(), m.group(0), line=int(m.group(1))))

    def add_value(kind: ClaimKind, m: re.Match[str], name: str | None, value_from: int) -> None:
        limit = work.find("\n", value_from)
        limit = len(work) if limit < 0 else limit
        end = literal_prefix(work, value_from, limit)
        if end is None:
            return
        value_start = value_from + (len(work[value_from:end]) - len(work[value_from:end].lstrip()))
        span = (m.start(), end)
        if any(a <= span[0] < b for a, b in taken):
            return
        taken.append(span)
        found.append(Claim(kind, m.start(), end, text[m.start():end], name=name, value=text[value_start:end],
                           value_start=value_start, value_end=end))  # fmt: skip

    for m in _RETURN.finditer(work):
        named = _RETURN_NAMED.match(work, m.end())
        if literal_prefix(work, m.end(), _line_end(work, m.end())) is None and named:
            add_value("return", m, None, named.end())
        else:
            add_value("return", m, None, m.end())
    for m in _CONDITION.finditer(work):
        holds = m.group(1) in ("holds", "is true", "is met")
        found.append(Claim("condition", m.start(), m.end(), m.group(0), value="holds" if holds else "fails"))
        taken.append((m.start(), m.end()))
    for m in _CALLS.finditer(work):
        counts = ", ".join(f"{name} {n}" for name, n in _CALL_COUNT.findall(m.group(1)))
        found.append(Claim("calls", m.start(), m.end(), m.group(0).rstrip(", "), value=counts))
        taken.append((m.start(), m.end()))
    for m in _RESULT.finditer(work):
        add_value("result", m, None, m.end())
    for m in _PRINT.finditer(work):
        add_value("print", m, None, m.end())
    for m in _VALUE_OF.finditer(work):
        add_value("value", m, m.group(1), m.end())
    for m in _ASSIGN.finditer(work):
        add_value("value", m, m.group(1), m.end())
    for m in _VERBAL.finditer(work):
        name = m.group(1)
        base = name.split("[")[0]
        if base not in known if known is not None else base.lower() in _STOPWORDS:
            continue
        add_value("value", m, name, m.end())

    found.sort(key=lambda c: c.start)
    last_line_at: int | None = None
    for claim in found:
        if claim.kind == "line":
            last_line_at = claim.start
        elif last_line_at is not None and "\n" not in text[last_line_at : claim.start]:
            claim.anchored = True
    return found + claims


def _inside(pos: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= pos < b for a, b in spans)


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


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
