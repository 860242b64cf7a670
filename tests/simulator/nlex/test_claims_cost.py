"""What claim extraction costs on long texts (issue 51, item 8): the work grows linearly with the text,
whatever its shape, and a 20 kB model text is checked in well under a second.

``literal_prefix`` used to hand every prefix of the rest of a line to ``ast.literal_eval``: cubic in
the line's length, 16 s of CPU for one explorer page with 3,750 characters of model text. Here the
characters handed to Python's parser are counted (deterministic, unlike a clock on a shared machine)
and must stay within a fixed multiple of the text's length; the count gives up as soon as it is over,
so the old code fails in a second, not in an hour."""

from __future__ import annotations

import ast
import json
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import simulator.nlex.literals as literals_module
from simulator.execution.program import Program
from simulator.execution.trace import Trace
from simulator.execution.tracer import trace_in_process
from simulator.nlex.claims import MAX_TEXT_CHARS, extract, extract_claims
from simulator.nlex.literals import literal_prefix, object_value
from simulator.nlex.verify import verify

SIZE = 20_000
PARSED_PER_CHARACTER = 30  # characters parsed per character of text, at most, whatever the shape
REAL = Path(__file__).parent / "real" / "texts.jsonl"


def _fill(unit: str, size: int = SIZE) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _real_record() -> dict[str, Any]:
    records = [json.loads(line) for line in REAL.read_text().splitlines()]
    return max((r for r in records if r.get("call")), key=lambda r: len(r["text"]))


# The shapes that made the old extraction slow, each about SIZE characters on one or many lines.
SHAPES: dict[str, Callable[[], str]] = {
    # narrator-style prose without a line break: every value scanned to the end of the one line
    "one long line": lambda: _fill("Line 3: `x = x + 1` so x = 4, and the result is [1, 2, 3]. "),
    # a list that never closes, with claims inside it
    "open bracket": lambda: "x = [" + _fill("1, y = 2, "),
    "open nested brackets": lambda: "x = " + _fill("[1, (2, {3: "),
    # a quote that never closes, with claims inside it
    "open quote": lambda: "s = '" + _fill("a = 1, b is 2, "),
    "quotes and claims": lambda: _fill("x = 'y = ' \"z = \" 'it''s' "),
    # constructors nested deeper than the parser allows
    "deep constructors": lambda: "p = " + "P(a=" * (SIZE // 4) + "1" + ")" * (SIZE // 4),
    # values that parse only in part: adjacent numbers, sums that are not complex numbers
    "adjacent values": lambda: "x = " + _fill("1 2 3 4 5 6 7 8 9 "),
    "sums": lambda: "x = " + _fill("1 + 1, 2 - 2, "),
    "unhashable keys": lambda: "x = " + _fill("{[1]: 2}, "),
    "comments": lambda: "x = 1 # " + _fill("y = 2, z = [3, "),
    "many short lines": lambda: _fill("Line 4: total = [1, 2, 'a b']. The result is 6.\n"),
    "real text repeated": lambda: _fill(_real_record()["text"] + "\n"),
}


class _TooMuch(AssertionError):
    pass


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[int], list[int]]]:
    """Count the characters reading claims hands to Python's parser (``ast.literal_eval`` and
    ``parse_python``); over ``budget`` characters it stops the extraction with ``_TooMuch``."""
    seen = [0]
    limit = [0]
    literal_eval, parse_python = ast.literal_eval, literals_module.parse_python

    def count(text: Any) -> None:
        seen[0] += len(text) if isinstance(text, str) else 0
        if seen[0] > limit[0]:
            raise _TooMuch(f"over {limit[0]:,} characters parsed")

    def counted_literal_eval(text: Any) -> Any:
        count(text)
        return literal_eval(text)

    def counted_parse(text: str, **kwargs: Any) -> Any:
        count(text)
        return parse_python(text, **kwargs)

    monkeypatch.setattr(literals_module.ast, "literal_eval", counted_literal_eval)
    monkeypatch.setattr(literals_module, "parse_python", counted_parse)

    def start(budget: int) -> list[int]:
        seen[0], limit[0] = 0, budget
        return seen

    yield start


@pytest.mark.timeout(120)
@pytest.mark.parametrize("shape", SHAPES)
def test_the_characters_parsed_grow_linearly_with_the_text(shape: str, parsed: Any) -> None:
    text = SHAPES[shape]()
    budget = PARSED_PER_CHARACTER * len(text)
    seen = parsed(budget)
    try:
        extract_claims(text)
    except _TooMuch as exc:
        pytest.fail(f"{shape}: {exc} for {len(text):,} characters of text")
    assert seen[0] <= budget


@pytest.mark.timeout(120)
def test_a_20_kB_model_text_is_checked_in_well_under_a_second() -> None:
    record = _real_record()
    text = _fill(record["text"] + "\n" + SHAPES["one long line"]()[:2000] + "\n")
    program = Program(code=record["code"], call=record["call"])
    trace = Trace.from_dict(record["real"]["trace"])
    verify(text[:1000], trace, program)  # imports and caches warm
    began = time.perf_counter()
    v = verify(text, trace, program)
    elapsed = time.perf_counter() - began
    assert v.status == "checked" and len(v.claims) > 500
    assert elapsed < 2.0, f"{elapsed:.1f} s for {len(text):,} characters"


def test_a_text_longer_than_the_cap_is_read_up_to_it_and_never_verified() -> None:
    record = _real_record()
    program = Program(code=record["code"], call=record["call"])
    trace = Trace.from_dict(record["real"]["trace"])
    right = f"[ANSWER]\nassert {record['call']} == {record['real']['value']}\n"
    short = verify("The function starts.\n" + right, trace, program)
    assert short.verified and short.unread_from is None and "unread_from" not in short.to_dict()
    filler = _fill("The function starts.\n", MAX_TEXT_CHARS + 5_000)
    v = verify(filler + right, trace, program)
    assert v.answer.verdict == "true"  # the answer is read wherever it is
    assert v.unread_from == MAX_TEXT_CHARS and not v.verified and v.label == "unverified"
    assert f"after character {MAX_TEXT_CHARS:,}" in v.summary
    assert v.to_dict()["unread_from"] == MAX_TEXT_CHARS
    assert type(v).from_dict(v.to_dict()) == v
    assert all(c.start < MAX_TEXT_CHARS for c in v.claims if c.kind != "answer")


def test_a_text_built_to_be_slow_is_read_up_to_where_its_work_ran_out() -> None:
    text = "Line 2: y = 1.\n" + SHAPES["deep constructors"]()
    extraction = extract(text)
    assert extraction.unread_from is not None and 0 < extraction.unread_from < len(text)
    assert [c.text for c in extraction.claims] == ["Line 2", "y = 1"]


def _every_end(text: str, start: int, limit: int) -> int | None:
    """The old ``literal_prefix``: every end of the line tried, longest first (cubic; the reference)."""
    while start < limit and text[start] in " \t":
        start += 1
    if start >= limit or text[start] in ",.;:)]}":
        return None
    for end in range(limit, start, -1):
        last = text[end - 1]
        if last in " \t,;:" or (end < limit and text[end] not in " \t,.;:)]}\n!?"):
            continue
        if last == "." and (end == limit or text[end] in " \t\n"):
            continue
        try:
            ast.literal_eval(text[start:end])
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            if not object_value(text[start:end]):
                continue
        return end
    return None


PIECES = [
    "1", "10", "1.5", ".5", "1.", ".", "...", " ", "\t", ",", ", ", ";", ":", "(", ")", "[", "]", "{", "}",
    "'", '"', "'''", "a", "P", "P(", "=", "==", "+", "-", "2j", "1e-5", "True", "None", "b", "f", "#", "\r",
    "\\", "\x00", "\ud800", "set()", "is", "and", "\f", "\x0b", "!", "?", "0x1F", "é", "'a'", "b'x'", "*",
    "lambda", ":=", "u'x'", "F'x'", "'a, b'", "Point(x=1, y=2)", "[1, 2]", "(1,)", "{1: 2}", "{1, 2}", "-1",
    "1 + 2j", "x=", "\xa0", "'it''s'", "{[1]: 2}", "P(1)", "'a' 'b'", "-'a'",
]  # fmt: skip


@pytest.mark.filterwarnings("ignore::SyntaxWarning", "ignore::DeprecationWarning")  # odd literals
def test_the_values_read_are_those_that_trying_every_end_reads() -> None:
    rng = random.Random(51)
    texts = ["x = 1.5.", "3, y = 4", "[1, 2] and", "Point(x=1, y=2)!", "1 + 2j + 3j", "'a' b'x'", "1 # a, b"]
    texts += ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 10))) for _ in range(3000)]
    for text in texts:
        for start in {0, len(text) // 3}:
            assert literal_prefix(text, start, len(text)) == _every_end(text, start, len(text)), repr(text)


# Checking: every claim against the trace. A false claim used to be compared with every later value of
# its variable, each parsed again: 62 s for 20 kB of "total = -1" against a 6,000-step loop.
LOOP = "def f(n):\n    total = 0\n    for i in range(n):\n        total += i\n    return total\n"
WRONG = {
    "false values": "Then total = -1 and i = -5, so dp[0] = 3.\n",
    "false lines": "Line 9: nothing. Line 2 again.\n",
    "false returns and prints": "It returns -1. It prints 7. The result is -1.\n",
    "repeats and conditions": "Line 3: the condition holds. Lines 3-4 repeat 2000 more times.\n"
    "Line 5 calling g 1 time.\n",
    "one long line": "Line 7 so total = -1, i = -2, it returns 5, the result is 3. ",
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("shape", WRONG)
def test_checking_wrong_claims_against_a_long_trace_takes_well_under_a_second(shape: str) -> None:
    trace = trace_in_process(LOOP, "f(3000)", max_steps=10_000).trace
    assert len(trace.steps) > 6000
    program = Program(code=LOOP, call="f(3000)")
    text = _fill(WRONG[shape])
    verify(text[:500], trace, program)  # warm
    began = time.perf_counter()
    v = verify(text, trace, program)
    elapsed = time.perf_counter() - began
    assert len(v.claims) > 500 and v.count("false") > 100
    assert elapsed < 2.0, f"{shape}: {elapsed:.1f} s for {len(v.claims)} claims"
