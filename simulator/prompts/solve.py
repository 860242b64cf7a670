"""The solve prompt: problem -> one complete program in a fenced block.

For stdin problems a one-shot example (a user/assistant pair before the real problem) shows even a
135M model the expected shape of the answer; call problems are asked plainly (solve-v3, below).
Bump ``VERSION`` whenever the wording changes: it is recorded in every run's provenance.

The request ends when the program does: the messages end with the assistant turn already
opened by ``PREFILL`` (the opening fence; ``ChatClient`` asks the server to continue that message)
and the request stops at ``STOP`` (the closing fence). vLLM leaves both out of the reply, which is
then just the program's text; ``parse`` reads it (``parsing.extract_code`` with the prefill). Before,
the fine-tuned model went on narrating after its code block until the token limit
(docs/results.md#solve-replies).
Every sender of the solve request (the pipeline, ``execsim eval mbpp`` and ``codejam``, the NLEX
collection) uses ``messages``, ``STOP`` and ``parse`` together.
"""

from __future__ import annotations

from typing import Any

from simulator.problem import Problem
from simulator.prompts.parsing import CodeParse, extract_code

VERSION = "solve-v3"
SYSTEM = (
    "You are a careful Python programmer. "
    "Answer with one complete Python 3 solution in a ```python code block."
)

_STDIN_EXAMPLE = (
    "Read two integers on one line and print their sum.",
    "3 4\n",
    "7\n",
    "a, b = map(int, input().split())\nprint(a + b)\n",
)
PREFILL = "```python\n"  # the assistant turn starts inside the code block
STOP = ("\n```",)  # ... and the request ends at the block's closing fence
# ... or where the code loops: vLLM's repetition detection (``SamplingParams.repetition_detection``,
# finish_reason "repetition") ends a reply whose last 6 to 40 tokens came 8 times in a row, instead
# of at the token budget (patterns shorter than 6 would stop a list literal such as [1, 1, 1, ...]);
# on the default model's replies it stops only looping ones (docs/results.md#solve-replies)
LOOP_STOP = {"min_pattern_size": 6, "max_pattern_size": 40, "min_count": 8}


def request_ends() -> dict[str, Any]:
    """``STOP`` and ``LOOP_STOP`` as a chat request's fields, for requests built as raw parameters
    (the evaluations' solve requests)."""
    return {"stop": list(STOP), "repetition_detection": dict(LOOP_STOP)}


def messages(problem: Problem, example: tuple[str, str] | None = None) -> list[dict[str, str]]:
    """Chat messages asking for a solution; the public tests are shown. The last message is the
    prefilled assistant turn (``PREFILL``); send with ``stop=STOP``.

    Call problems (solve-v3): one user message, the statement, the public tests as asserts and the
    function to write, with no worked example: on 50 MBPP dev problems this wording kept pass@1
    where solve-v1's one-shot ``add`` example lost it (docs/results.md#solve-replies). Stdin problems
    keep the one-shot example: without it the base model wrote fewer programs that read and print
    (docs/results.md#stdin-problems). ``example``
    replaces that example with another (its request as ``stdin_request`` writes it, and its program):
    training data varies it so that a model learns the answer's shape, not the example's sum."""
    if problem.kind == "call":
        tests = [f"assert {problem.entry_point}({t.input}) == {t.output}" for t in problem.public_tests]
        these = "this test" if len(tests) == 1 else "these tests"
        user = (
            f"{problem.statement.strip()}\nYour code should pass {these}:\n" + "\n".join(tests) + "\n"
            f"Write the Python function `{problem.entry_point}` in one ```python code block."
        )
        return [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": user},
            {"role": "assistant", "content": PREFILL},
        ]
    statement, given, printed, code = _STDIN_EXAMPLE
    shown_user, shown_code = example or (_stdin_text(statement, [(given, printed)]), code)
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": shown_user},
        {"role": "assistant", "content": PREFILL + shown_code.strip("\n") + STOP[0]},
        {"role": "user", "content": stdin_request(problem)},
        {"role": "assistant", "content": PREFILL},
    ]


def stdin_request(problem: Problem) -> str:
    """The user turn asking for a program that solves the stdin ``problem``."""
    return _stdin_text(problem.statement, [(t.input, t.output) for t in problem.public_tests])


def _stdin_text(statement: str, shown: list[tuple[str, str]]) -> str:
    examples = "\n".join(f"Example input:\n{_nl(i)}Example output:\n{_nl(o)}" for i, o in shown)
    return (
        "Solve this problem in Python 3. The program reads standard input and prints the answer.\n\n"
        f"Problem: {statement.strip()}\n\n{examples}"
    )


def parse(reply: str) -> CodeParse:
    """The program in a solve reply as the server returns it (no opening fence: it was prefilled;
    no closing fence: it was the stop string). A reply that opens its own fence (a server that
    started a new turn instead of continuing the prefilled one) is read as it is."""
    return extract_code(reply, prefill=PREFILL)


def _nl(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"
