"""Solve examples: the pipeline's solve prompt on synthesised problems, answered by the program itself.

The prompt is ``simulator.prompts.solve.messages`` on the problem ``training.data.problems.synth_problem``
makes (the signature, the argument types and the first test, as an MBPP problem is shown); the answer is
the synthesised program, a sandbox-checked solution of that problem (``problems.passing``), in the reply
format the request expects: the assistant turn opened by ``solve.PREFILL`` (the opening fence) and ended
by the stop string ``solve.STOP`` (the closing fence), so the model learns to stop when its program does.
``completion`` is that whole assistant turn; the server returns what follows the prefill, up to the
stop string, and ``solve.parse`` reads it back as the program.

These keep the base model's ability to write code while it learns to simulate (issue 12: SFT on
narrations alone taught the solve prompt to narrate).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from simulator.prompts import solve
from training.data.problems import Checked


def solve_completion(code: str) -> str:
    """The assistant turn that answers a solve request with ``code``: prefill, code, stop string."""
    return solve.PREFILL + code.strip("\n") + solve.STOP[0]


def solve_examples(checked: Sequence[Checked]) -> list[dict[str, Any]]:
    """One example per program that passes its tests, deduplicated by prompt."""
    examples, seen = [], set()
    for item in checked:
        messages = solve.messages(item.problem)
        user = messages[-2]["content"]  # the last message is the prefilled assistant turn
        if user in seen:
            continue
        seen.add(user)
        examples.append(
            {
                "kind": "solve",
                "style": item.problem.kind,
                "prompt": user,
                "completion": solve_completion(item.record.code),
                "messages": messages,
                "program_id": item.record.id,
                "level": item.record.level,
                "source": f"synth:{item.record.source} program",
            }
        )
    return examples
