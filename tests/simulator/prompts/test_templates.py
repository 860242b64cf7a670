"""The prompt templates: what each shows the model, and their versions."""

from __future__ import annotations

import re

import pytest

from simulator.problem import Problem
from simulator.prompts import VERSIONS, kind_of, repair, simulate, solve

CALL = Problem.from_dict(
    {
        "title": "Twice",
        "statement": "Return twice x.",
        "kind": "call",
        "entry_point": "twice",
        "tests": [{"input": "2", "output": "4"}, {"input": "9", "output": "18", "public": False}],
    }
)
STDIN = Problem.from_dict(
    {"title": "Echo", "statement": "Print the input line.", "tests": [{"input": "hi\n", "output": "hi\n"}]}
)


def test_solve_shows_the_problem_and_only_public_tests_and_opens_the_code_block() -> None:
    messages = solve.messages(CALL)
    assert [m["role"] for m in messages] == ["system", "user", "assistant"]  # call: no worked example
    assert messages[-1]["content"] == solve.PREFILL == "```python\n"  # the reply starts inside the block
    last = messages[-2]["content"]
    assert last == (
        "Return twice x.\nYour code should pass this test:\nassert twice(2) == 4\n"
        "Write the Python function `twice` in one ```python code block."
    )
    assert "18" not in last  # private tests never reach the model
    stdin = solve.messages(STDIN)
    assert [m["role"] for m in stdin] == ["system", "user", "assistant", "user", "assistant"]
    assert "```python" in stdin[2]["content"]  # stdin keeps its one-shot example
    assert "Example input:\nhi\nExample output:\nhi\n" in stdin[-2]["content"]


def test_simulate_call_is_cruxeval_style() -> None:
    last = simulate.call_messages("def f(x):\n    return x\n", "f(3)")[-1]["content"]
    assert last.endswith("[PYTHON]\ndef f(x):\n    return x\nassert f(3) == ??\n[/PYTHON]")
    assert "[ANSWER]" in last


def test_simulate_stdin_shows_the_input() -> None:
    last = simulate.stdin_messages("print(input())\n", "abc")[-1]["content"]
    assert last.endswith("[PYTHON]\nprint(input())\n[/PYTHON]\n<input>\nabc\n</input>")
    assert "<output>" in last


@pytest.mark.parametrize(
    ("narration", "call", "after"),
    [
        ("[THOUGHT] n = 2. [/THOUGHT]", None, "\n<output>\n"),
        ("[THOUGHT] n = 2. [/THOUGHT]\n", None, "<output>\n"),
        ("[THOUGHT]\nLine 2: returns 3.", "f(1)", "\n[/THOUGHT]\n[ANSWER]\nassert f(1) =="),
        ("[THOUGHT]\nLine 2: returns 3.\n", "f(1)", "[/THOUGHT]\n[ANSWER]\nassert f(1) =="),
    ],
)
def test_a_narration_that_stopped_goes_on_with_its_thought_closed_and_its_answer_begun(
    narration: str, call: str | None, after: str
) -> None:
    assert simulate.answer_after(narration, call) == after
    # a stopped narration is sent on with that ending; a cut one is left out, its answer asked at once
    assert simulate.forced_answer(narration, call, cut=False) == (narration + after, after)
    at_once = simulate.answer_prefill(call)
    assert simulate.forced_answer(narration, call, cut=True) == (at_once, "\n" + at_once)


def test_an_answer_asked_for_at_once_has_an_empty_thought_and_its_answer_begun() -> None:
    assert simulate.answer_prefill("f(3)") == "[THOUGHT]\n[/THOUGHT]\n[ANSWER]\nassert f(3) =="
    assert simulate.answer_prefill(None) == "[THOUGHT]\n[/THOUGHT]\n<output>\n"
    # a cut reply whose answer had begun is left as it is: nothing would be gained by asking again
    assert simulate.answered("[THOUGHT] x [/THOUGHT] [ANSWER] assert f(3) == [1, 2, ", "f(3)")
    assert simulate.answered("[THOUGHT] x [/THOUGHT]\n<output>\n1\n2\n", None)
    assert not simulate.answered("[THOUGHT]\nLine 3: the condition holds.\nLine 3: the cond", "f(3)")
    assert not simulate.answered("[THOUGHT] [ANSWER] is a tag [/THOUGHT]", None)


def test_a_test_input_is_shown_as_the_call_or_the_stdin_text() -> None:
    assert repair.feedback_input(CALL, "2") == "twice(2)"
    assert repair.feedback_input(STDIN, "hi\n") == "hi\n"


def test_the_repair_request_is_the_solve_request_told_what_went_wrong() -> None:
    wrong = [repair.Feedback("twice(2)", "4", "5"), repair.Feedback("twice(0)", "0", None)]
    asked = repair.fix_messages(CALL, wrong)
    solve_asked = solve.messages(CALL)
    assert asked[-1] == solve_asked[-1] == {"role": "assistant", "content": solve.PREFILL}
    assert asked[-2]["content"] == solve_asked[-2]["content"] + (
        "\nA first attempt returned 5 for twice(2), but the test expects 4.\n"
        "A first attempt gave no answer for twice(0), but the test expects 0.\n"
        "Write a different, correct function.\n"
    )
    stdin = repair.fix_messages(STDIN, [repair.Feedback("hi\n", "HI\n", "hi\n")])[-2]["content"]
    assert stdin.endswith(
        "A first attempt printed:\nhi\nfor the input:\nhi\nbut the expected output is:\nHI\n"
        "Write a different, correct program.\n"
    )


def test_kind_of_tells_the_prompts_apart() -> None:
    assert kind_of(solve.messages(CALL)) == "solve"
    assert kind_of(simulate.call_messages("x = 1\n", "f()")) == "simulate_call"
    assert kind_of(simulate.stdin_messages("x = 1\n", "")) == "simulate_stdin"
    assert kind_of(repair.fix_messages(CALL, [repair.Feedback("twice(2)", "4", "5")])) == "repair"
    assert kind_of([{"role": "user", "content": "hello"}]) is None


def test_every_template_has_a_version() -> None:
    assert VERSIONS == {"solve": solve.VERSION, "simulate": simulate.VERSION, "repair": repair.VERSION}
    assert all(re.fullmatch(r"[a-z]+-v[0-9]+", v) for v in VERSIONS.values())
    assert solve.VERSION == "solve-v3"  # issue 12: prefilled fence, stop at the closing one, plain call


def test_a_stdin_prediction_that_is_the_input_or_the_prompts_example_is_called_a_copy() -> None:
    assert simulate.copied("3\n1 2 3\n", "3\n1 2 3\n") == "input"
    assert simulate.copied("3 1 2 3", "3\n1 2 3\n") == "input"  # token for token, as outputs compare
    assert (
        simulate.copied("0\n1\n4\n", "7\n") == "example"
        and simulate.EXAMPLE_OUTPUT in simulate.stdin_messages("print(1)", "")[2]["content"]
    )
    assert simulate.copied("6\n", "3\n1 2 3\n") is None
    assert (
        simulate.copied(None, "3\n") is None
        and simulate.copied("", "") is None
        and simulate.copied("x", "") is None
    )
