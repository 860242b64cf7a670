"""Solve examples: the pipeline's solve prompt on synthesised problems, answered by a program that
passes every test of the problem in the sandbox.

The prompt is ``simulator.prompts.solve.messages`` on the problem ``training.data.problems.synth_problem``
makes (the signature, the argument types and the first test, as an MBPP problem is shown). The answer
is in the reply format the request expects: the assistant turn opened by ``solve.PREFILL`` (the opening
fence) and ended by the stop string ``solve.STOP`` (the closing fence), so the model learns to stop
when its program does. ``completion`` is that whole assistant turn; the server returns what follows the
prefill, up to the stop string, and ``solve.parse`` reads it back as the program.

Two sources of answers:

- ``solve_examples``: the synthesised program itself (``problems.passing``);
- ``own_solve_examples``: a served model's own solutions (rejection sampling: the model is asked the
  same request the pipeline sends, and the first of its replies that passes every test is kept).
  Trained on, these keep the model's own way of writing code rather than the synthesiser's (the
  synthesised answers went with a loss on MBPP). The default 135M base model solves almost none of
  these problems, so they need a stronger model (docs/results.md#training).

Both keep the base model's ability to write code while it learns to simulate (SFT on narrations alone
taught the solve prompt to narrate).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from simulator.execution import RunPrograms
from simulator.problem import Problem
from simulator.prompts import solve
from training.data.problems import Checked, TestRun, run_tests
from training.execution import run_programs

if TYPE_CHECKING:
    from training.synth.sampler import ServedModel

OWN_SOURCE = "own solution"


def solve_completion(code: str) -> str:
    """The assistant turn that answers a solve request with ``code``: prefill, code, stop string."""
    return solve.PREFILL + code.strip("\n") + solve.STOP[0]


def solve_examples(checked: Sequence[Checked]) -> list[dict[str, Any]]:
    """One example per program that passes its tests, deduplicated by prompt."""
    return [
        solve_example(item, messages, item.record.code, f"synth:{item.record.source} program")
        for item, messages in _unique(checked)
    ]


def own_replies(
    requests: Sequence[tuple[Problem, list[dict[str, str]]]],
    model: ServedModel,
    *,
    samples: int = 4,
    temperature: float = 0.8,
    max_tokens: int = 384,
    batch: int = 64,
    executor: RunPrograms = run_programs,
    progress: Callable[[str, int, int], None] | None = None,
    label: str = "own replies",
) -> Iterator[tuple[list[str], list[tuple[str, str, list[TestRun]]]]]:
    """For each (problem, messages) request in order, ``model``'s ``samples`` replies, sent as the
    pipeline sends a solve-format request (prefilled fence, stop at the closing one, loop stop), and
    the programs among them as (reply, program, every test of the problem run in the sandbox)."""
    for start in range(0, len(requests), batch):
        if progress:
            progress(label, start, len(requests))
        part = requests[start : start + batch]
        replies = model.chat(
            [messages for _, messages in part],
            n=samples,
            temperature=temperature,
            max_tokens=max_tokens,
            stop=solve.STOP,
            repetition=solve.LOOP_STOP,
        )
        found = [[(t, c) for t in texts if (c := solve.parse(t).code)] for texts in replies]
        jobs = [(problem, [c for _, c in pairs]) for (problem, _), pairs in zip(part, found, strict=True)]
        runs = run_tests(jobs, executor=executor)
        for texts, pairs, per_code in zip(replies, found, runs, strict=True):
            yield texts, [(text, code, tests) for (text, code), tests in zip(pairs, per_code, strict=True)]
    if progress:
        progress(label, len(requests), len(requests))


def own_solve_examples(
    checked: Sequence[Checked],
    model: ServedModel,
    *,
    samples: int = 4,
    executor: RunPrograms = run_programs,
    progress: Callable[[str, int, int], None] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One example per problem for which one of ``model``'s ``samples`` replies to the solve request
    passes every test in the sandbox (the first that does), and the counts: problems asked, replies,
    replies with a program, programs that pass, problems answered."""
    attempts, counts = _own_attempts(checked, model, samples, executor, progress, "own solutions")
    counts.update(passing=0, answered=0)
    examples = []
    for item, messages, programs in attempts:
        passed = [code for _, code, tests in programs if all(t.passed for t in tests)]
        counts["passing"] += len(passed)
        if passed:
            counts["answered"] += 1
            examples.append(solve_example(item, messages, passed[0], f"{OWN_SOURCE}: {model.name}"))
    return examples, counts


def _own_attempts(
    checked: Sequence[Checked],
    model: ServedModel,
    samples: int,
    executor: RunPrograms,
    progress: Callable[[str, int, int], None] | None,
    label: str,
) -> tuple[list[tuple[Checked, list[dict[str, str]], list[tuple[str, str, list[TestRun]]]]], dict[str, Any]]:
    """Each distinct problem with its solve messages and ``model``'s programs for it, each run on every
    test (``own_replies``), and the counts: model, problems asked, samples, replies, replies with a
    program."""
    asked = _unique(checked)
    counts: dict[str, Any] = {"model": model.name, "problems": len(asked), "samples": samples}
    counts.update(replies=0, with_code=0)
    requests = [(item.problem, messages) for item, messages in asked]
    replies = own_replies(requests, model, samples=samples, executor=executor, progress=progress, label=label)
    attempts = []
    for (item, messages), (texts, programs) in zip(asked, replies, strict=True):
        counts["replies"] += len(texts)
        counts["with_code"] += len(programs)
        attempts.append((item, messages, programs))
    return attempts, counts


def _unique(checked: Sequence[Checked]) -> list[tuple[Checked, list[dict[str, str]]]]:
    """Each problem with its solve messages, the first of those that share a prompt."""
    out, seen = [], set()
    for item in checked:
        messages = solve.messages(item.problem)
        user = messages[-2]["content"]  # the last message is the prefilled assistant turn
        if user not in seen:
            seen.add(user)
            out.append((item, messages))
    return out


def solve_example(item: Checked, messages: list[dict[str, str]], code: str, source: str) -> dict[str, Any]:
    """The solve example answering ``messages`` (the solve request of ``item.problem``, whose kind is
    the example's style) with ``code``."""
    return {
        "kind": "solve",
        "style": item.problem.kind,
        "prompt": messages[-2]["content"],
        "completion": solve_completion(code),
        "messages": messages,
        "program_id": item.record.id,
        "level": item.record.level,
        "source": source,
    }
