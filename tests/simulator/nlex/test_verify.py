"""The one verifier: replies exactly as vLLM returns them (the stop string cut), answers with and
without their closing tag, prose results, raised calls, runs cut short, and the JSON contract."""

from __future__ import annotations

import json

import pytest

from simulator.execution.program import Program
from simulator.execution.tracer import trace_in_process
from simulator.nlex.verify import Verification, verify, verify_program

SUM_EVENS = (
    "def sum_evens(xs):\n    total = 0\n    for x in xs:\n        if x % 2 == 0:\n"
    "            total += x\n    return total\n"
)
CALL = "sum_evens([1, 2, 3, 4])"
SCRIPT = "n = int(input())\ntotal = 0\nfor i in range(n):\n    total += i\nprint(total)\n"


def check(text: str, code: str = SUM_EVENS, call: str | None = CALL, stdin: str = "") -> Verification:
    run = trace_in_process(code, call=call, stdin=stdin)
    program = Program(code=code, call=call) if call is not None else Program(code=code, stdin=stdin)
    return verify(text, run.trace, program, status="runtime_error" if run.exception else "ok")


def test_a_wrong_answer_without_its_closing_tag_is_a_divergence() -> None:
    # the browser case of the issue: vLLM cut "[/ANSWER]"; the real result is 6
    text = (
        "[THOUGHT] total starts at 0 and the evens are added. [/THOUGHT] "
        "[ANSWER] assert sum_evens([1, 2, 3, 4]) == 1"
    )
    v = check(text)
    assert v.answer.verdict == "false"
    assert (v.answer.claimed, v.answer.actual) == ("1", "6")
    assert not v.verified and v.label == "diverges"
    first = v.first_divergence
    assert first is not None and first.kind == "answer"
    assert text[first.start : first.end] == "1" and text[: first.start].endswith("== ")
    assert "answer is 1" in first.sentence and "returns 6" in first.sentence


def test_a_right_answer_without_its_closing_tag_is_verified() -> None:
    v = check(
        "[THOUGHT] total = 0. Then total = 2. Then total = 6. [/THOUGHT] "
        "[ANSWER] assert sum_evens([1, 2, 3, 4]) == 6"
    )
    assert v.answer.verdict == "true" and v.verified and v.label == "agrees"
    assert v.count("true") >= 3


def test_a_false_claim_with_a_right_answer_is_not_verified() -> None:
    v = check("[THOUGHT] total = 0. Then total = 3. [/THOUGHT] [ANSWER] assert sum_evens([1, 2, 3, 4]) == 6")
    assert v.answer.verdict == "true"
    assert not v.verified and v.first_divergence is not None
    assert v.first_divergence.claimed == "3" and "total is 3" in v.first_divergence.sentence


def test_the_sentence_counts_steps_from_1_and_the_record_keeps_the_index() -> None:
    """A person reads "(step N)" as the explorer shows it, from 1; ``step`` stays the trace's index."""
    v = check("[THOUGHT] total = 0. Then total = 3. [/THOUGHT] [ANSWER] assert sum_evens([1, 2, 3, 4]) == 6")
    first = v.first_divergence
    assert first is not None and first.step is not None
    assert first.sentence.endswith(f"(step {first.step + 1})"), first.sentence
    assert v.to_dict()["first_divergence"]["step"] == first.step


def test_a_wrong_condition_is_said_as_a_condition() -> None:
    """Seen on a pasted script: "the condition does not hold" where it holds read "the simulation
    says the program prints 'fails'"."""
    text = (
        "[THOUGHT]\nLine 3: `for x in xs:` starts the loop; now x = 1.\n"
        "Line 4: `if x % 2 == 0:` the condition holds.\n[/THOUGHT]\n"
    )
    first = check(text).first_divergence
    assert first is not None and first.kind == "condition"
    assert first.sentence.startswith("line 4: the simulation says the condition holds; in the real run the ")
    assert "condition does not hold" in first.sentence and "prints" not in first.sentence


def test_a_wrong_count_of_calls_is_said_as_calls() -> None:
    code = "def g(x):\n    return x + 1\n\ndef f(x):\n    return g(g(x))\n"
    text = "[THOUGHT]\nLine 5: `return g(g(x))` calling g 3 times; returns 3.\n[/THOUGHT]\n"
    first = check(text, code=code, call="f(1)").first_divergence
    assert first is not None and first.kind == "calls"
    assert "the simulation says calling g 3 times; the real run makes g 2 times" in first.sentence


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("[THOUGHT] It adds the even numbers, so the result is 6. [/THOUGHT]", "true"),
        ("Adding 2 and 4, the output of the function is 5.", "false"),
        ("The function sum_evens returns 6.", "true"),
    ],
)
def test_prose_about_the_result_stands_for_a_missing_answer(text: str, verdict: str) -> None:
    assert check(text).answer.verdict == verdict


@pytest.mark.parametrize(
    "text",
    [
        "[THOUGHT] The function loops over the list and adds the even numbers. [/THOUGHT]",
        "[THOUGHT] x [/THOUGHT] [ANSWER] assert sum_evens([1, 2, 3, 4]) == ??",
        "[ANSWER] assert sum_evens([1, 2, 3, 4]) == sum_evens([1, 2, 3, 4])",
        "",
    ],
)
def test_a_text_that_states_no_usable_result_is_unverified_never_verified(text: str) -> None:
    v = check(text)
    assert v.answer.verdict == "missing"
    assert not v.verified and v.label == "unverified"
    assert v.summary.startswith("unverified")


def test_stdin_answers_without_their_closing_tag_are_checked() -> None:
    right = check("[THOUGHT] n is 4. [/THOUGHT]\n<output>\n6\n", code=SCRIPT, call=None, stdin="4\n")
    wrong = check("[THOUGHT] n is 4. [/THOUGHT]\n<output>\n10", code=SCRIPT, call=None, stdin="4\n")
    assert right.answer.verdict == "true" and right.verified
    assert wrong.answer.verdict == "false" and wrong.first_divergence is not None
    assert "prints '10'" in wrong.first_divergence.sentence


def test_a_call_that_raises_makes_a_stated_value_false() -> None:
    code = "def f(xs):\n    return xs[5]\n"
    wrong = check("[ANSWER] assert f([1]) == 1", code=code, call="f([1])")
    right = check("[ANSWER] f([1]) raises IndexError", code=code, call="f([1])")
    assert (wrong.answer.verdict, wrong.answer.actual) == ("false", "raises IndexError")
    assert right.answer.verdict == "true"


def test_a_run_cut_short_leaves_the_answer_unverifiable() -> None:
    run = trace_in_process(SUM_EVENS, call=CALL)
    v = verify(
        "[ANSWER] assert sum_evens([1, 2, 3, 4]) == 7",
        run.trace,
        Program(code=SUM_EVENS, call=CALL),
        status="timeout",
    )
    assert v.answer.verdict == "unverifiable" and not v.verified and v.first_divergence is None


def test_no_trace_is_unverified_with_the_reason() -> None:
    v = verify(
        "[ANSWER] assert f() == 1", None, Program(code="def f(): return 1", call="f()"), status="timeout"
    )
    assert v.status == "no_trace" and v.label == "unverified" and "timeout" in v.message


def test_the_json_contract_round_trips() -> None:
    v = check("[THOUGHT] total = 0. [/THOUGHT] [ANSWER] assert sum_evens([1, 2, 3, 4]) == 1")
    data = json.loads(json.dumps(v.to_dict()))
    assert {
        "schema_version",
        "status",
        "verified",
        "accuracy",
        "answer",
        "claims",
        "first_divergence",
    } <= set(data)
    assert set(data["answer"]) >= {"verdict", "claimed", "actual"}
    assert set(data["claims"][0]) >= {"kind", "text", "start", "end", "verdict", "step", "actual"}
    assert set(data["first_divergence"]) >= {
        "start",
        "end",
        "kind",
        "text",
        "step",
        "claimed",
        "actual",
        "sentence",
    }
    again = Verification.from_dict(data)
    assert again == v and again.to_dict() == data


def test_verify_program_runs_the_program_in_the_sandbox() -> None:
    v, result = verify_program(
        "[ANSWER] assert sum_evens([1, 2, 3, 4]) == 6", Program(code=SUM_EVENS, call=CALL)
    )
    assert result.status == "ok" and result.value == "6"
    assert v.verified


def test_a_wrong_value_is_placed_on_the_line_that_set_it() -> None:
    """Seen on "Simulate my code": "Line 2: `out = []`; now out = [0, 0, 0, 0]" was reported as
    "line 3: the simulation says out is [0, 0, 0, 0]": the line about to run when the real run shows
    out, not the line the narration (and the explorer's "line just run") names."""
    code = "def f(xs):\n    out = []\n    for x in xs:\n        out.append(x * 3)\n    return out\n"
    text = (
        "[THOUGHT]\nLine 1: `def f(xs):` - f is called with xs = [1, 2].\n"
        "Line 2: `out = []`; now out = [0, 0].\n"
    )
    first = check(text, code=code, call="f([1, 2])").first_divergence
    assert first is not None and first.kind == "value" and first.line == 2
    assert first.sentence.startswith("line 2: the simulation says out is [0, 0]; the real run has []")
    # a value set inside a loop, seen after a call in between: still the line that set it
    code = "def g(x):\n    return x + 1\n\ndef f(n):\n    y = g(n)\n    z = y * 2\n    return z\n"
    text = "[THOUGHT]\nLine 5: `y = g(n)`; now y = 2.\nLine 6: `z = y * 2`; now z = 5.\n"
    first = check(text, code=code, call="f(1)").first_divergence
    assert first is not None and first.kind == "value" and first.line == 6, first
