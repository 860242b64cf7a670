"""Claim extraction and checking on small, explicit cases."""

from __future__ import annotations

from simulator.execution.tracer import trace_in_process
from simulator.nlex.check import check_text
from simulator.nlex.claims import extract_claims

CODE = "def f(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n"


def verdicts(text: str, code: str = CODE, call: str = "f([1, 2, 3])") -> list[tuple[str, str]]:
    trace = trace_in_process(code, call).trace
    return [(v.claim.text, v.verdict) for v in check_text(text, trace).verdicts]


def test_values_are_python_values_and_code_spans_are_not_claims() -> None:
    claims = extract_claims("Line 4: `total = total + x` so total = 3, and x = 'a, b'. dp[1] = [1,\t2].")
    assert [(c.kind, c.name, c.value) for c in claims] == [
        ("line", None, None),
        ("value", "total", "3"),
        ("value", "x", "'a, b'"),
        ("value", "dp[1]", "[1,\t2]"),
    ]
    assert claims[1].anchored and claims[2].anchored


def test_offsets_point_at_the_claim_text() -> None:
    text = "First total = 0.\n[ANSWER] assert f([1, 2]) == 3 [/ANSWER]"
    for claim in extract_claims(text):
        assert text[claim.start : claim.end] == claim.text
        assert text[claim.value_start : claim.value_end] == claim.value  # type: ignore[misc]
    answer = extract_claims(text)[-1]
    assert answer.kind == "answer" and answer.value == "3"


def test_order_matters_a_claim_refers_to_the_next_occurrence() -> None:
    text = "Line 3: x = 1.\nLine 4: total = 1.\nLine 3: x = 2.\nLine 4: total = 3.\nLine 3: x = 2."
    assert [v for _, v in verdicts(text)][-1] == "false"  # the third iteration has x = 3
    assert [v for _, v in verdicts(text)][:-1] == ["true"] * 9


def test_an_anchored_wrong_value_is_false_at_that_step() -> None:
    trace = trace_in_process(CODE, "f([1, 2, 3])").trace
    result = check_text("Line 2: total = 0.\nLine 3: x = 1.\nLine 4: total = 2.", trace)
    first = next(v for v in result.verdicts if v.verdict == "false")
    assert first.claim.text == "total = 2" and first.actual == "1"
    assert trace.steps[first.step].line == 3  # type: ignore[index]
    assert (result.count("true"), result.count("false")) == (5, 1)


def test_unknown_names_are_unverifiable_not_false() -> None:
    assert ("missing = 4", "unverifiable") in verdicts("Then missing = 4.")


def test_answers_in_each_format() -> None:
    assert verdicts("[ANSWER] assert f([1, 2, 3]) == 6 [/ANSWER]")[-1][1] == "true"
    assert verdicts("[ANSWER] 6.0 [/ANSWER]")[-1][1] == "true"
    assert verdicts("[OUTPUT] 7 [/OUTPUT]")[-1][1] == "false"
    stdin_code = "print(int(input()) * 2)\n"
    trace = trace_in_process(stdin_code, stdin="21\n").trace
    assert check_text("<output>\n42\n</output>", trace).verdicts[-1].verdict == "true"
    assert check_text("<output>\n41\n</output>", trace).verdicts[-1].verdict == "false"


def test_summarised_loops_in_prose_still_check() -> None:
    text = "total starts at 0. The loop adds every element. After the loop, total = 6. It returns 6."
    assert [v for _, v in verdicts(text)] == ["true", "true", "true"]


POINT = (
    "class Point:\n"
    "    def __init__(self, x, y):\n"
    "        self.x = x\n"
    "        self.y = y\n"
    "def f(x):\n"
    "    p = Point(x, 2)\n"
    "    p.y = 7\n"
    "    return p\n"
)


def test_an_instance_told_by_its_attributes_is_one_claim_checked_against_the_heap() -> None:
    claims = extract_claims("Line 6: `p = Point(x, 2)`; now p = Point(x=1, y=2), ps = [Point(x=1), 3].")
    assert [(c.kind, c.name, c.value) for c in claims] == [
        ("line", None, None),
        ("value", "p", "Point(x=1, y=2)"),  # x=1 inside the value is not a claim about the local x
        ("value", "ps", "[Point(x=1), 3]"),
    ]
    text = (
        "Line 6: `p = Point(x, 2)`; now p = Point(x=1, y=2).\n"
        "Line 7: `p.y = 7`; now p = Point(x=1, y=2).\n"  # wrong: the attribute changed
        "Line 8: `return p` returns Point(x=1, y=7).\n"
        "[ANSWER] assert f(1) == Point(x=9, y=7) [/ANSWER]"
    )
    assert verdicts(text, POINT, "f(1)") == [
        ("Line 6", "true"),
        ("p = Point(x=1, y=2)", "true"),
        ("Line 7", "true"),
        ("p = Point(x=1, y=2)", "false"),
        ("Line 8", "true"),
        ("returns Point(x=1, y=7)", "true"),
        ("Point(x=9, y=7)", "false"),  # a wrong object is false, not "not a literal"
    ]
