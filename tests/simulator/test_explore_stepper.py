"""The stepper's narration (``stepper_sentences``) is in step with the values on screen: each line's
sentence sits on the step where its effects show, callees and recursive calls are narrated, and the
checked NLEX text (``narrate``) is unchanged by it."""

from __future__ import annotations

import re

from simulator.execution import Program
from simulator.execution.tracer import trace_in_process
from simulator.explore import explorer_payload, sentence_at, stepper_sentences
from simulator.nlex import narrate

DOUBLE = "def f(xs):\n    out = []\n    for x in xs:\n        out.append(x * 2)\n    return out\n"
FACT = "def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\n"


def _replay(trace, frame: int, upto: int) -> dict[str, str]:
    """The locals of ``frame`` at step ``upto``, replayed from ``changed`` as the viewer does."""
    values: dict[str, str] = {}
    for step in trace.steps[: upto + 1]:
        if step.frame == frame:
            values.update({name: v.repr for name, v in step.changed.items()})
    return values


def test_the_sentence_on_screen_states_the_values_on_screen():
    program = Program(code=DOUBLE, call="f([1, 3])")
    trace = trace_in_process(DOUBLE, program.call).trace
    sentences = stepper_sentences(trace, program)
    for i, step in enumerate(trace.steps):
        sentence = sentence_at(sentences, i)
        assert sentence is not None
        if "now out = " in sentence.text:
            shown = re.search(r"now out = (\[[^\]]*\])", sentence.text).group(1)
            assert shown == _replay(trace, step.frame, i)["out"], (i, sentence.text)
    texts = [s.text for s in sentences]
    assert any("now out = [2]" in t for t in texts) and any("now out = [2, 6]" in t for t in texts)
    first_append = next(s for s in sentences if "now out = [2]" in s.text)
    assert trace.steps[first_append.step].line != 4  # told after line 4 ran, not while it is about to


def test_recursive_calls_and_callees_are_narrated_on_their_own_steps():
    program = Program(code=FACT, call="fact(3)")
    trace = trace_in_process(FACT, program.call).trace
    sentences = stepper_sentences(trace, program)
    calls = [s for s in sentences if "fact is called" in s.text]
    assert [s.text.split("with ")[1] for s in calls] == ["n = 3.", "n = 2.", "n = 1."]
    assert all(trace.steps[s.step].event == "call" for s in calls)
    assert [trace.steps[s.step].depth for s in calls] == [0, 1, 2]
    returns = [s for s in sentences if "returns" in s.text]
    assert [s.text.rsplit("returns ", 1)[1] for s in returns] == ["1.", "2.", "6."]
    assert all(trace.steps[s.step].event == "return" for s in returns)


def test_an_exception_leaving_a_frame_is_told_in_plain_words():
    code = "def g(x):\n    return 1 // x\n\ndef f():\n    return g(0)\n"
    program = Program(code=code, call="f()")
    trace = trace_in_process(code, program.call).trace
    texts = [s.text for s in stepper_sentences(trace, program)]
    assert "Line 2: `return 1 // x` raises ZeroDivisionError: integer division or modulo by zero." in texts
    assert (
        "Nothing in g catches the ZeroDivisionError: g stops here, and the error goes back to f, "
        "where g was called." in texts
    ), texts
    assert "Line 5: `return g(0)` passes on the ZeroDivisionError raised in g." in texts, texts
    assert (
        "Nothing in f catches the ZeroDivisionError: f stops here, and the call f() ends with the error "
        "ZeroDivisionError: integer division or modulo by zero." in texts
    ), texts
    assert not any("goes on to its caller" in t or "ZeroDivisionError(" in t for t in texts), texts


def test_a_script_that_fails_and_an_exception_that_is_caught():
    code = "xs = [1, 2]\nprint(xs[5])\n"
    program = Program(code=code, stdin="")
    trace = trace_in_process(code, stdin="").trace
    texts = [s.text for s in stepper_sentences(trace, program)]
    assert texts[-1] == (
        "Nothing catches the IndexError: the program stops here with the error "
        "IndexError: list index out of range."
    )
    assert not any("<module>" in t for t in texts), texts
    code = "def f(xs):\n    try:\n        return xs[5]\n    except IndexError:\n        return -1\n"
    program = Program(code=code, call="f([1])")
    trace = trace_in_process(code, program.call).trace
    texts = [s.text for s in stepper_sentences(trace, program)]
    assert "The IndexError is caught: line 4 handles it." in texts, texts


def test_every_step_has_a_sentence_of_its_own():
    """The first line of a frame (after its call step) and the line an exception goes on at are told,
    so that the stepper never shows one sentence on two steps in a row (issue 52)."""
    for code, call in ((FACT, "fact(3)"), (DOUBLE, "f([1, 3])"), (POINTS, "f(1)")):
        program = Program(code=code, call=call)
        trace = trace_in_process(code, call).trace
        sentences = stepper_sentences(trace, program)
        shown = [sentence_at(sentences, i) for i in range(len(trace.steps))]
        assert all(s is not None and s.step == i for i, s in enumerate(shown)), [
            (i, s and s.step) for i, s in enumerate(shown)
        ]
        texts = [s.text for s in shown if s is not None]
        assert all(a != b for a, b in zip(texts, texts[1:], strict=False)), texts
    texts = [
        s.text
        for s in stepper_sentences(
            trace_in_process(FACT, "fact(2)").trace, Program(code=FACT, call="fact(2)")
        )
    ]
    assert texts[:2] == ["Line 1: `def fact(n):` - fact is called with n = 2.", "fact begins at line 2."]


def test_a_line_that_calls_says_what_the_calls_gave_back():
    """The calls were stepped through: the caller's line says what each gave back, not "calling fact
    1 time" (the checked NLEX keeps its "calling" claims)."""
    program = Program(code=FACT, call="fact(3)")
    trace = trace_in_process(FACT, program.call).trace
    texts = [s.text for s in stepper_sentences(trace, program)]
    assert "Line 4: `return n * fact(n - 1)` after fact returned 1, returns 2." in texts, texts
    assert "Line 4: `return n * fact(n - 1)` after fact returned 2, returns 6." in texts, texts
    assert not any("calling" in t for t in texts)
    assert "calling fact 1 time" in narrate(trace, program)
    code = "def sq(x):\n    return x * x\n\ndef f(xs):\n    return [sq(x) for x in xs], sum(map(sq, xs))\n"
    program = Program(code=code, call="f([1, 2, 3])")
    texts = [s.text for s in stepper_sentences(trace_in_process(code, program.call).trace, program)]
    assert any(t.endswith(" after sq returned 1, 4 and 9, returns ([1, 4, 9], 14).") for t in texts), texts
    program = Program(code=code, call="f([1, 2, 3, 4])")
    texts = [s.text for s in stepper_sentences(trace_in_process(code, program.call).trace, program)]
    assert any(t.endswith(" after 4 calls to sq, returns ([1, 4, 9, 16], 30).") for t in texts), texts


def test_a_function_without_return_ends_and_its_last_line_returns_nothing():
    texts = list(_point_sentences().values())
    assert not any("`self.y = y` returns None" in t for t in texts), texts
    assert (
        "Line 4: `self.y = y`; now self = Point(x=1, y=2). "
        "Then __init__ ends; without a `return` it returns None." in texts
    ), texts
    assert "Line 10: `p = Point(n, 2)` after __init__ ended; now p = Point(x=1, y=2)." in texts, texts
    code = "def f(x):\n    if x:\n        return None\n"
    program = Program(code=code, call="f(1)")
    texts = [s.text for s in stepper_sentences(trace_in_process(code, program.call).trace, program)]
    assert "Line 3: `return None` returns None." in texts  # a `return` says it returns


def test_a_name_bound_to_the_object_another_name_holds_says_so():
    code = (
        "def g(items):\n    return len(items)\n\n"
        "def f():\n    a = [1, 2, 3]\n    b = a\n    b.append(4)\n    c = list(a)\n    return g(a)\n"
    )
    program = Program(code=code, call="f()")
    trace = trace_in_process(code, program.call).trace
    texts = [s.text for s in stepper_sentences(trace, program)]
    assert "Line 6: `b = a`; now b = [1, 2, 3] (the same list as a)." in texts, texts
    assert "Line 7: `b.append(4)`; now a = [1, 2, 3, 4], b = [1, 2, 3, 4]." in texts, texts  # no new name
    assert "Line 8: `c = list(a)`; now c = [1, 2, 3, 4]." in texts, texts  # a copy
    assert (
        "Line 1: `def g(items):` - g is called with items = [1, 2, 3, 4] (the same list as a and b in f)."
        in texts
    ), texts


def test_the_payload_carries_the_stepper_sentences_and_the_checked_text_is_unchanged():
    program = Program(code=FACT, call="fact(2)")
    trace = trace_in_process(FACT, program.call).trace
    payload = explorer_payload(trace, program)
    assert [s["text"] for s in payload["sentences"]] == [s.text for s in stepper_sentences(trace, program)]
    assert payload["truncation"] == ""
    text = narrate(trace, program)
    assert "fact is called with n = 2" in text and "n = 1" not in text  # NLEX: the outermost frame only


def test_a_partial_trace_says_why_in_the_payload():
    code = "def f():\n    x = 0\n    while x < 10**5:\n        x += 1\n"
    program = Program(code=code, call="f()")
    trace = trace_in_process(code, program.call, max_steps=30).trace
    payload = explorer_payload(trace, program)
    assert payload["truncation"].startswith("truncated at 30 steps")
    assert len(payload["trace"]["steps"]) == 30 and payload["sentences"]
    last = payload["sentences"][-1]
    assert last["step"] == 29 and last["text"].startswith("The trace stops here (the step cap)")
    trace.truncated_reason = "timeout"  # a program stopped from outside: the narration says so
    assert "(the program was stopped at its time limit)" in narrate(trace, program)


def test_a_comprehension_is_told_as_one():
    code = "def f(xs):\n    ys = [x * 2 for x in xs]\n    return ys\n"
    program = Program(code=code, call="f([1, 2])")
    trace = trace_in_process(code, program.call).trace
    texts = [s.text for s in stepper_sentences(trace, program)]
    assert "Line 2: `ys = [x * 2 for x in xs]` - the list comprehension starts." in texts
    assert not any("<listcomp> is called" in t for t in texts)


POINTS = (
    "class Point:\n"
    "    def __init__(self, x, y):\n"
    "        self.x = x\n"
    "        self.y = y\n"
    "\n"
    "class Empty:\n"
    "    pass\n"
    "\n"
    "def f(n):\n"
    "    p = Point(n, 2)\n"
    "    ps = [p, Point(3, 4)]\n"
    "    e = Empty()\n"
    "    p.x = 5\n"
    "    return p\n"
)


def _point_sentences() -> dict[int, str]:
    program = Program(code=POINTS, call="f(1)")
    trace = trace_in_process(POINTS, program.call).trace
    return {trace.steps[s.step].index: s.text for s in stepper_sentences(trace, program)}


def test_an_instance_is_told_by_its_attributes_never_by_its_address():
    texts = list(_point_sentences().values())
    assert not any("object at" in t or "0x" in t for t in texts), texts
    assert any("`p = Point(n, 2)`" in t and "now p = Point(x=1, y=2)." in t for t in texts), texts
    # __init__'s frame: self has no attribute when called, then one per line
    assert any("__init__ is called with self = Point(), x = 1, y = 2." in t for t in texts), texts
    assert any("`self.x = x`; now self = Point(x=1)." in t for t in texts), texts


def test_an_instance_in_a_list_and_one_without_attributes():
    texts = list(_point_sentences().values())
    assert any("now ps = [Point(x=1, y=2), Point(x=3, y=4)]." in t for t in texts), texts
    assert any("`e = Empty()`; now e = Empty()." in t for t in texts), texts


def test_an_attribute_change_is_told_and_the_return_value_shows_it():
    texts = list(_point_sentences().values())
    # the list holds the same object as p, so it shows the change too (aliasing)
    assert any(
        "`p.x = 5`; now p = Point(x=5, y=2), ps = [Point(x=5, y=2), Point(x=3, y=4)]." in t for t in texts
    ), texts
    assert any("`return p` returns Point(x=5, y=2)." in t for t in texts), texts


def test_lists_and_instances_with_their_own_repr_are_told_as_today():
    code = (
        "from dataclasses import dataclass\n"
        "@dataclass\n"
        "class P:\n"
        "    x: int\n"
        "def f():\n"
        "    q = P(1)\n"
        "    xs = [1, [2]]\n"
        "    return xs\n"
    )
    program = Program(code=code, call="f()")
    trace = trace_in_process(code, program.call).trace
    texts = [s.text for s in stepper_sentences(trace, program)]
    assert any("now q = P(x=1)." in t for t in texts) and any("now xs = [1, [2]]." in t for t in texts)
