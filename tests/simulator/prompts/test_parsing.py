"""Parsing model replies: failures are recorded data, never exceptions."""

from __future__ import annotations

import pytest

from simulator.prompts.parsing import CodeParse, extract_code, parse_call_answer, parse_stdin_answer


@pytest.mark.parametrize(
    "reply",
    [
        "Here:\n```python\nprint(1)\n```\nDone.",
        "```\nprint(1)\n```",
        "```py\nprint(1)\n```",
        "```python\nprint(1)",  # unterminated (token budget) but parses
    ],
)
def test_it_extracts_the_first_python_block(reply: str) -> None:
    assert extract_code(reply).code == "print(1)\n"
    assert extract_code(reply).error is None


def test_it_skips_other_languages_and_remark_fences() -> None:
    reply = "```text\nhello\n```\n```#SUBMIT```\n```python\n# nothing yet\n```\n```python\nx = 2\n```"
    assert extract_code(reply).code == "x = 2\n"


@pytest.mark.parametrize("reply", ["```#SUBMIT```", "#SUBMIT"])
def test_a_remark_inside_a_prefilled_block_is_no_program(reply: str) -> None:
    """Repair prefills the opening fence: a remark written after it (a model trained on the paper's
    scaffold answers ``#SUBMIT``) is no program to simulate."""
    parsed = extract_code(reply, prefill="```python\n")
    assert parsed.code is None and "no fenced" in (parsed.error or "")


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ("print(1)", "no fenced ```python code block"),
        ("", "empty reply"),
        ("```python\ndef f(:\n", "unterminated"),
        ("\x00\x01 garbage ``` ", "no fenced"),
    ],
)
def test_a_reply_without_usable_code_is_a_recorded_failure(reply: str, error: str) -> None:
    parsed = extract_code(reply)
    assert parsed.code is None
    assert error in (parsed.error or "")


@pytest.mark.parametrize(
    ("reply", "predicted"),
    [
        ("[THOUGHT] x [/THOUGHT] [ANSWER] assert f(1) == [1, 2] [/ANSWER]", "[1, 2]"),
        ("[THOUGHT] x [/THOUGHT] [ANSWER] assert f(1) == 'a==b'", "'a==b'"),  # stop string removed the tag
        ("[ANSWER] 3 [/ANSWER]", "3"),
        ("I think\nassert f(1) == 7\n", "7"),
        ("[ANSWER] x [/THOUGHT] [ANSWER] assert f(1) == 'b'\n[/THOUGHT]", "'b'"),  # the last block counts
    ],
)
def test_call_answers_are_the_text_after_the_first_equals(reply: str, predicted: str) -> None:
    assert parse_call_answer(reply, "f(1)").predicted == predicted


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ("it returns 3", "no [ANSWER]"),
        ("[ANSWER] assert f(1) == [/ANSWER]", "no value"),
        ("[ANSWER] assert f(1) == f( 1 ) [/ANSWER]", "repeats the call"),
        ("[ANSWER] assert f(1) == ?? [/ANSWER]", "leaves the value as ??"),
        ("[ANSWER] The function reverses the string. [/ANSWER]", "not a Python value"),
        ("[ANSWER] [/THOUGHT] [ANSWER] ", "no value"),
    ],
)
def test_unusable_call_answers_are_recorded_failures(reply: str, error: str) -> None:
    parsed = parse_call_answer(reply, "f(1)")
    assert parsed.predicted is None
    assert error in (parsed.error or "")


def test_stdin_answers_come_from_the_output_tags() -> None:
    assert parse_stdin_answer("[THOUGHT] t [/THOUGHT]\n<output>\n1\n2\n</output>").predicted == "1\n2\n"
    assert parse_stdin_answer("<output>\n5").predicted == "5\n"  # closing tag is the stop string
    assert parse_stdin_answer("<output></output>").predicted == ""
    # shaped like the default model's reply to max-of-list in session 14: the value, then the tags again
    went_on = "[THOUGHT]\n[/THOUGHT]\n<output>\n-1\n[/THOUGHT]\n<input>\n3\n1 5 2\n</input>\n"
    assert parse_stdin_answer(went_on).predicted == "-1\n"
    assert parse_stdin_answer("<output>\n[x]\n<b>\n[/x]\n").predicted == "[x]\n<b>\n[/x]\n"  # not tags
    missing = parse_stdin_answer("it prints 5")
    assert missing.predicted is None and "no <output>" in (missing.error or "")


# Solve replies exactly as vLLM returns them to the prefilled request (issue 12): the opening fence
# was prefilled and the closing fence was the stop string, so neither is in the reply.
PREFILL = "```python\n"


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        ("def f(x):\n    return x + 1", "def f(x):\n    return x + 1\n"),  # stopped at "\n```"
        ("\ndef f(x):\n    return x\n", "\ndef f(x):\n    return x\n"),
        ("def f(x):\n    return x\n```\nLine 1: x = 3", "def f(x):\n    return x\n"),  # no stop applied
        ("```python\ndef f(x):\n    return x\n```\nmore", "def f(x):\n    return x\n"),  # own fence
        ("def f(x):\n    return [x,\n# cut by the", None),  # hit the token limit mid-statement
        ("I cannot solve this.", None),
        ("", None),
    ],
)
def test_a_prefilled_reply_is_read_as_the_inside_of_the_code_block(reply: str, code: str | None) -> None:
    assert extract_code(reply, prefill=PREFILL).code == code


def test_without_the_prefill_a_bare_program_is_not_a_code_block() -> None:
    assert extract_code("def f(x):\n    return x").code is None  # the old contract is unchanged
    assert extract_code("```python\ndef f(x):\n    return x").code == "def f(x):\n    return x\n"


def test_a_prefilled_reply_that_is_not_code_says_so() -> None:
    error = extract_code("I cannot solve this.", prefill=PREFILL).error
    assert error == "the reply (the inside of the prefilled code block) does not parse"


def test_the_solve_prompt_parses_what_it_prefilled() -> None:
    from simulator.prompts import solve

    assert solve.PREFILL == PREFILL and solve.STOP == ("\n```",)
    assert solve.parse("print(input())").code == "print(input())\n"
    assert solve.parse("print(input())\n```\nNarration").code == "print(input())\n"


@pytest.mark.parametrize(
    ("reply", "prefill"),
    [
        ("```python\x00\nx = 1\n```", ""),  # NUL on the fence line: still the fence
        ("\x00```python\nx = 1\n```", ""),
        ("```python\nx = 1\n```\x00", ""),
        ("```python\nx = 1\n```\x00\n", "```python\n"),
    ],
)
def test_nul_beside_a_fence_does_not_hide_the_code_block(reply: str, prefill: str) -> None:
    """Issue 51, item 14: a reply holding NUL was reported as having no code block."""
    assert extract_code(reply, prefill=prefill) == CodeParse("x = 1\n")


@pytest.mark.parametrize(
    ("reply", "prefill", "line"),
    [
        ("```python\nx = 1\ny = 2\x00\n```", "", 2),  # closed: the code is still not Python
        ("```python\nx = 1\x00", "", 1),  # unterminated
        ("x = 1\n\x00y = 2\n", "```python\n", 2),  # continuing the prefilled fence
    ],
)
def test_nul_in_the_code_is_reported_as_such(reply: str, prefill: str, line: int) -> None:
    parsed = extract_code(reply, prefill=prefill)
    assert parsed.code is None
    assert parsed.error == (
        f"the code holds a NUL character (\\x00) on line {line}, which Python source cannot hold"
    )
