"""The repair (Self-RLEF) prompt: the paper's feedback prompt, verbatim, followed by the problem, the
attempted solution and, per public test, ``----- Test i -----`` with its input, expected output and
the output for the attempt (simulated by the model itself, or real in oracle mode).

The model answers ``#SUBMIT`` (keep the program) or a corrected program; ``parsing.parse_repair``
reads the answer. A short one-shot example (a fix) shows the expected shape. That is the paper's
scaffold (``RunSettings.repair = "model"``).

Guided repair (the default) asks ``fix_messages`` instead: the solve request with what the attempt got
wrong added to its question, and the attempt's code not shown. Shown its code, the default model
copies it: on all 162 MBPP dev problems (greedy), none of the 44 fixes it wrote to the feedback prompt
passed the public test, and 6 of the 73 it wrote to this request did (docs/results.md, Issue 12
section 16).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from simulator.compare import NOT_LITERAL, literal, same_value
from simulator.problem import Problem
from simulator.prompts import solve

VERSION = "repair-v3"  # v2: guided repair's request is ``fix_messages``; v3: hard-coded answers
SYSTEM = "You are a careful Python programmer reviewing your own solution."
INSTRUCTION = (
    "Review the provided code solution given the execution feedback and judge if it is correct or buggy. "
    "If the code is correct, end your response with a markdown comment EXACTLY ```#SUBMIT```. "
    "DO NOT repeat the given code. If the code is incorrect, provide a correct solution."
)
NO_OUTPUT = "(no output: the simulation gave no answer)"


@dataclass(frozen=True)
class Feedback:
    """One public test as the repair prompt shows it; ``output`` None when nothing was predicted."""

    input: str
    expected: str
    output: str | None


def render(statement: str, code: str, feedback: Sequence[Feedback]) -> str:
    """The user message: instruction, problem, attempted solution, per-test feedback."""
    parts = [
        INSTRUCTION,
        "",
        "# Problem",
        statement.strip(),
        "",
        "# Attempted Solution",
        "```python",
        code.rstrip(),
        "```",
        "",
    ]
    parts.append("# Execution Feedback")
    for i, item in enumerate(feedback, start=1):
        parts += [
            f"----- Test {i} -----",
            "## Input",
            item.input.rstrip("\n"),
            "## Expected Output",
            item.expected.rstrip("\n"),
            "## Output for the attempt",
            NO_OUTPUT if item.output is None else item.output.rstrip("\n"),
        ]
    return "\n".join(parts) + "\n"


_EXAMPLE = render(
    "Read two integers on one line and print their sum.",
    "a, b = map(int, input().split())\nprint(a - b)\n",
    [Feedback("3 4", "7", "-1")],
)
_EXAMPLE_ANSWER = (
    "The attempt subtracts instead of adding, so it prints -1 instead of 7. Corrected solution:\n"
    "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
)


def feedback_input(problem: Problem, test_input: str) -> str:
    """How a test's input is shown: stdin text, or the call for call problems."""
    return f"{problem.entry_point}({test_input})" if problem.kind == "call" else test_input


def messages(problem: Problem, code: str, feedback: Sequence[Feedback]) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": _EXAMPLE},
        {"role": "assistant", "content": _EXAMPLE_ANSWER},
        {"role": "user", "content": render(problem.statement, code, feedback)},
    ]


FIX_OPENING = "A first attempt"  # how a fix request's added sentences begin (``prompts.kind_of``)


def fix_messages(problem: Problem, wrong: Sequence[Feedback]) -> list[dict[str, str]]:
    """Guided repair's request: ``solve.messages`` (prefilled fence; send with ``solve.STOP``) with
    one sentence per public test the attempt got ``wrong`` and a request for a different program."""
    messages = [dict(m) for m in solve.messages(problem)]
    question = next(m for m in reversed(messages) if m["role"] == "user")
    said = [_wrong_sentence(problem, item) for item in wrong]
    what = "function" if problem.kind == "call" else "program"
    question["content"] += "\n" + "\n".join([*said, f"Write a different, correct {what}."]) + "\n"
    return messages


def _wrong_sentence(problem: Problem, item: Feedback) -> str:
    expected = item.expected.rstrip("\n")
    output = None if item.output is None else item.output.rstrip("\n")
    if problem.kind == "call":
        if output is not None and _same_literal(output, expected):  # right, but written in (static)
            return (
                f"{FIX_OPENING} returned {output} for {item.input}, as the test expects, but it returns"
                f" {output} whatever its arguments."
            )
        got = "gave no answer" if output is None else f"returned {output}"
        return f"{FIX_OPENING} {got} for {item.input}, but the test expects {expected}."
    got = "gave no answer " if output is None else f"printed:\n{output}\n"
    given = item.input.rstrip("\n")
    return f"{FIX_OPENING} {got}for the input:\n{given}\nbut the expected output is:\n{expected}"


def _same_literal(output: str, expected: str) -> bool:
    value = literal(output)
    return value is not NOT_LITERAL and same_value(value, literal(expected))
