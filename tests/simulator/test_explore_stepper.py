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


def test_an_exception_leaving_a_frame_is_told():
    code = "def g(x):\n    return 1 // x\n\ndef f():\n    return g(0)\n"
    program = Program(code=code, call="f()")
    trace = trace_in_process(code, program.call).trace
    texts = [s.text for s in stepper_sentences(trace, program)]
    assert any("raises ZeroDivisionError" in t for t in texts)
    assert any(t == "g stops: the exception goes on to its caller." for t in texts)


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
