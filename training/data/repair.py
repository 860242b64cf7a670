"""Repair examples: the request guided repair sends, on synthesised programs, answered right.

A buggy attempt is a mutant of a correct synthesised program (``training.data.mutations``) that fails
its public test in the sandbox. The request is the pipeline's guided repair request
(``simulator.prompts.repair.fix_messages``): the solve request told which public tests the attempt got
wrong and what it gave there, the real execution's output (as the Self-Execution Simulation paper
trains: real feedback in training, simulated at inference), without the attempt's code. The answer is
the original program in the reply format the solve request expects
(``training.data.solve.solve_completion``), checked to parse back as that program.

``own_fix_examples`` answers those requests with a served model's own replies instead (the programs
among them that run without an error on every test, passing ones first): the model's own style of
code, where the original program is the synthesiser's (docs/results.md#training).

Mutants that pass the public test (the feedback would show no failure), pass every test (not a bug),
time out, or match a benchmark program are dropped and counted.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from simulator.execution import RunPrograms
from simulator.problem import Problem
from simulator.prompts import repair, solve
from training.data.mutations import Mutant, sample
from training.data.problems import Checked, TestRun, run_tests
from training.data.solve import own_replies, solve_completion
from training.execution import run_programs
from training.synth.normalize import fingerprint

if TYPE_CHECKING:
    from training.synth.sampler import ServedModel

OWN_SOURCE = "own reply"


def feedback(problem: Problem, runs: Sequence[TestRun]) -> list[repair.Feedback]:
    """The public tests' feedback as the pipeline shows it (``runs`` is one run per test of the
    problem, in order; only the public ones are shown)."""
    return [
        repair.Feedback(repair.feedback_input(problem, test.input), test.output, run.output)
        for test, run in zip(problem.tests, runs, strict=True)
        if test.public
    ]


def repair_examples(
    checked: Sequence[Checked],
    *,
    seed: int = 0,
    mutants_per_program: int = 1,
    attempts: int = 6,
    executor: RunPrograms = run_programs,
    benchmark_index: dict[str, str] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Guided fix examples from programs that pass their tests (``problems.passing``), in a seeded
    order, deduplicated by prompt; returns (examples, counts). Up to ``attempts`` mutants are tried
    per program (kinds drawn uniformly); of the real bugs, ``mutants_per_program`` are kept, the kinds
    kept least so far first."""
    rng = random.Random(seed)
    tried = [(item, sample(item.record.code, rng, attempts)) for item in checked]
    runs = run_tests([(item.problem, [m.code for m in ms]) for item, ms in tried], executor=executor)
    counts: Counter = Counter()
    fixes = []
    for (item, candidates), per_mutant in zip(tried, runs, strict=True):
        counts["programs"] += 1
        bugs = []
        for mutant, mutant_runs in zip(candidates, per_mutant, strict=True):
            counts["mutants_tried"] += 1
            reason = _rejection(item.problem, mutant, mutant_runs, benchmark_index)
            if reason:
                counts[f"rejected_{reason}"] += 1
                continue
            example = _fix_example(item, mutant, mutant_runs)
            if example is None:
                counts["rejected_answer_unparsed"] += 1
                continue
            bugs.append((mutant.kind, example))
        # the kinds kept least so far first: variable swaps fail tests more often than the rest
        bugs.sort(key=lambda bug: counts[f"mutation_{bug[0]}"])
        for kind, example in bugs[:mutants_per_program]:
            fixes.append(example)
            counts[f"mutation_{kind}"] += 1
        if not candidates:
            counts["no_mutation_site"] += 1
    fixes = _dedup(fixes)
    rng.shuffle(fixes)
    rng.shuffle(fixes)  # twice, as when other examples were shuffled in: a seed still gives the same data
    counts["fix"] = len(fixes)
    return fixes, dict(sorted(counts.items()))


def own_fix_examples(
    examples: Sequence[dict[str, Any]],
    checked: Sequence[Checked],
    model: ServedModel,
    *,
    samples: int = 4,
    per_request: int = 2,
    passing_only: bool = False,
    max_prompt_chars: int = 1200,
    executor: RunPrograms = run_programs,
    progress: Callable[[str, int, int], None] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The fix ``examples`` (``repair_examples``, prompts of at most
    ``max_prompt_chars``) answered by ``model``'s own replies, sent as the pipeline sends the request:
    of ``samples`` replies, up to ``per_request`` distinct programs that run without an error on
    every test of the problem in the sandbox, those that pass every test first; and the counts.
    Most such programs are wrong: what they teach is the reply's form in the model's own words. Left
    out: a program that gives one answer to tests expecting several (``return 0``), and one that gives
    again the wrong answers the request names (``attempt_again``: the request asks for a different
    program); a model trained on either wrote more of them (docs/results.md#training).
    ``passing_only`` keeps nothing but programs that pass every test (rejection sampling proper: on a
    stated task, ``training.synth.tasks``, such a program computed its answers)."""
    by_id = {item.record.id: item for item in checked}
    asked = [e for e in examples if e["style"] == "fix" and len(e["prompt"]) <= max_prompt_chars]
    counts: dict[str, Any] = {"model": model.name, "requests": len(asked), "samples": samples}
    counts.update(passing_only=passing_only, replies=0, with_code=0, runs=0, constant=0)
    counts.update(attempt_again=0, passing=0, kept=0)
    problems = [by_id[e["program_id"]].problem for e in asked]
    attempts = run_tests(
        [(p, [e["attempt"]]) for p, e in zip(problems, asked, strict=True)], executor=executor
    )
    replies = own_replies(
        [(problem, e["messages"]) for problem, e in zip(problems, asked, strict=True)],
        model,
        samples=samples,
        executor=executor,
        progress=progress,
        label="own fixes",
    )
    out = []
    for example, problem, [attempt], (texts, programs) in zip(
        asked, problems, attempts, replies, strict=True
    ):
        counts["replies"] += len(texts)
        counts["with_code"] += len(programs)
        varied = len({test.output for test in problem.tests}) > 1
        named = [  # the public tests the request says the attempt got wrong, and what it gave
            (i, run.output) for i, (test, run) in enumerate(zip(problem.tests, attempt, strict=True))
            if test.public and not run.passed
        ]  # fmt: skip
        usable = []  # (fails a test, reply, program)
        for text, code, tests in programs:
            if not all(t.status == "ok" for t in tests):
                continue
            counts["runs"] += 1
            if varied and len({t.output for t in tests}) == 1:  # `return 0`: a degenerate program
                counts["constant"] += 1
                continue
            if named and all(tests[i].output == output for i, output in named):
                counts["attempt_again"] += 1
                continue
            failing = not all(t.passed for t in tests)
            if not (failing and passing_only):
                usable.append((failing, text, code))
        counts["passing"] += sum(not failing for failing, _, _ in usable)
        kept: dict[str, tuple[bool, str]] = {}
        for failing, text, code in sorted(usable, key=lambda r: r[0]):  # passing first, else in order
            if code not in kept and len(kept) < per_request:
                kept[code] = (failing, text)
        for code, (failing, text) in kept.items():
            source = f"{OWN_SOURCE}: {model.name}" + ("" if failing else ", passes every test")
            out.append({**example, "completion": solve_completion(text), "fixed": code, "source": source})
        counts["kept"] += len(kept)
    return out, counts


def _rejection(
    problem: Problem, mutant: Mutant, runs: Sequence[TestRun], index: dict[str, str] | None
) -> str | None:
    if any(run.status == "timeout" for run in runs):
        return "timeout"
    if all(run.passed for run in runs):
        return "passes_every_test"
    if all(run.passed for test, run in zip(problem.tests, runs, strict=True) if test.public):
        return "passes_public_test"
    if index and fingerprint(mutant.code, abstract_constants=True) in index:
        return "benchmark"
    return None


def _fix_example(item: Checked, mutant: Mutant, runs: Sequence[TestRun]) -> dict[str, Any] | None:
    """The fix example: the request told what went wrong, not shown the attempt, answered by the
    original program; None when the pipeline would not read that answer back as the original."""
    shown = feedback(item.problem, runs)
    public = [run for test, run in zip(item.problem.tests, runs, strict=True) if test.public]
    messages = repair.fix_messages(
        item.problem, [f for f, run in zip(shown, public, strict=True) if not run.passed]
    )
    answer = solve_completion(item.record.code)
    code = solve.parse(answer.removeprefix(solve.PREFILL).removesuffix(solve.STOP[0])).code
    if code is None or code.strip() != item.record.code.strip():
        return None
    return _example(item, messages, answer, mutant=mutant)


def _example(item: Checked, messages: list[dict[str, str]], answer: str, *, mutant: Mutant) -> dict[str, Any]:
    record = item.record
    return {
        "kind": "repair",
        "style": "fix",
        "prompt": next(m["content"] for m in reversed(messages) if m["role"] == "user"),
        "completion": answer,
        "messages": messages,
        "attempt": mutant.code,  # the attempted program the request was made from (not shown in it)
        "fixed": record.code,  # the program the answer gives
        "program_id": record.id,
        "level": record.level,
        "source": f"synth:{record.source} mutation:{mutant.kind}",
    }


def _dedup(examples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    out = []
    for example in examples:
        if example["prompt"] not in seen:
            seen.add(example["prompt"])
            out.append(example)
    return out
