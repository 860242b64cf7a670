"""The repair (Self-RLEF) prompt: the paper's feedback prompt, verbatim, followed by the problem, the
attempted solution and, per public test, ``----- Test i -----`` with its input, expected output and
the output for the attempt (simulated by the model itself, or real in oracle mode).

The model answers ``#SUBMIT`` (keep the program) or a corrected program; ``parsing.parse_repair``
reads the answer. A short one-shot example (a fix) shows the expected shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from simulator.problem import Problem

VERSION = "repair-v1"
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
