"""The repair (Self-RLEF) request: what a program got wrong on the public tests, by its own simulation
(or by real runs in oracle mode), and a request for a different program.

It is the solve request (``solve.messages``, prefilled fence, stopped at the closing one) with one
sentence per public test the attempt got wrong, without the attempt's code: shown its code, the
default model copies it, where told only what went wrong it writes fixes that pass
(docs/results.md#repair). That is ExecSim's way of asking for the fix of Self-RLEF; the paper's
free-form feedback prompt was retired (docs/results.md#settled).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from simulator.compare import NOT_LITERAL, literal, same_value
from simulator.problem import Problem
from simulator.prompts import solve

VERSION = "repair-v3"  # v2: the request is ``fix_messages``; v3: hard-coded answers said so


@dataclass(frozen=True)
class Feedback:
    """One public test as the repair prompt shows it; ``output`` None when nothing was predicted."""

    input: str
    expected: str
    output: str | None


def feedback_input(problem: Problem, test_input: str) -> str:
    """How a test's input is shown: stdin text, or the call for call problems."""
    return f"{problem.entry_point}({test_input})" if problem.kind == "call" else test_input


FIX_OPENING = "A first attempt"  # how the request's added sentences begin (``prompts.kind_of``)


def fix_messages(problem: Problem, wrong: Sequence[Feedback]) -> list[dict[str, str]]:
    """The repair request: ``solve.messages`` (prefilled fence; send with ``solve.STOP``) with
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
