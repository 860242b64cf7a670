"""The solve prompt: problem -> one complete program in a fenced block.

For stdin problems a one-shot example (a user/assistant pair before the real problem) shows even a
135M model the expected shape of the answer; call problems are asked plainly (solve-v3, below).
Bump ``VERSION`` whenever the wording changes: it is recorded in every run's provenance.

The request ends when the program does (issue 12): the messages end with the assistant turn already
opened by ``PREFILL`` (the opening fence; ``ChatClient`` asks the server to continue that message)
and the request stops at ``STOP`` (the closing fence). vLLM leaves both out of the reply, which is
then just the program's text; ``parse`` reads it (``parsing.extract_code`` with the prefill). Before,
the fine-tuned model went on narrating after its code block until the token limit (docs/results.md).
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
    "Solve this problem in Python 3. The program reads standard input and prints the answer.\n\n"
    "Problem: Read two integers on one line and print their sum.\n\n"
    "Example input:\n3 4\nExample output:\n7\n"
)
_STDIN_ANSWER = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
PREFILL = "```python\n"  # the assistant turn starts inside the code block
STOP = ("\n```",)  # ... and the request ends at the block's closing fence
# ... or where the code loops: vLLM's repetition detection (``SamplingParams.repetition_detection``,
# finish_reason "repetition") ends a reply whose last 6 to 40 tokens came 8 times in a row, instead
# of at the token budget (patterns shorter than 6 would stop a list literal such as [1, 1, 1, ...]);
# on the default model's replies it stops only looping ones (docs/results.md, section 18)
LOOP_STOP = {"min_pattern_size": 6, "max_pattern_size": 40, "min_count": 8}


def request_ends() -> dict[str, Any]:
    """``STOP`` and ``LOOP_STOP`` as a chat request's fields, for requests built as raw parameters
    (the evaluations' solve requests)."""
    return {"stop": list(STOP), "repetition_detection": dict(LOOP_STOP)}


def messages(problem: Problem) -> list[dict[str, str]]:
    """Chat messages asking for a solution; the public tests are shown. The last message is the
    prefilled assistant turn (``PREFILL``); send with ``stop=STOP``.

    Call problems (solve-v3): one user message, the statement, the public tests as asserts and the
    function to write, with no worked example: on 50 MBPP dev problems this wording kept pass@1
    where solve-v1's one-shot ``add`` example lost it (``bench/solve_variants.py``, docs/results.md).
    Stdin problems keep the one-shot example (not re-measured)."""
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
    shown = "\n".join(
        f"Example input:\n{_nl(t.input)}Example output:\n{_nl(t.output)}" for t in problem.public_tests
    )
    user = (
        "Solve this problem in Python 3. The program reads standard input and prints the answer.\n\n"
        f"Problem: {problem.statement.strip()}\n\n{shown}"
    )
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": _STDIN_EXAMPLE},
        {"role": "assistant", "content": _STDIN_ANSWER},
        {"role": "user", "content": user},
        {"role": "assistant", "content": PREFILL},
    ]


def parse(reply: str) -> CodeParse:
    """The program in a solve reply as the server returns it (no opening fence: it was prefilled;
    no closing fence: it was the stop string). A reply that opens its own fence (a server that
    started a new turn instead of continuing the prefilled one) is read as it is."""
    return extract_code(reply, prefill=PREFILL)


def _nl(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"
