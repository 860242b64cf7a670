"""A synthesised program as a problem the pipeline could be asked, and its tests run in the sandbox.

The solve and repair prompts take a ``simulator.problem.Problem``. Synthesised programs have no
statement, so ``synth_problem`` describes the function from its signature and argument types (a
stated task, ``training.synth.tasks``, brings its own statement) and turns its input/output pairs into
asserts, then builds the problem with ``simulator.benchmarks.from_mbpp``, the converter the pipeline's
MBPP problems go through: the statement repeats the first assert, the first test is public and the
others private, exactly as for an MBPP problem.

``run_tests`` judges code on every test the way the pipeline's real execution does
(``simulator.pipeline.executor.program_for``, ``real_output`` and ``simulator.pipeline.matching``),
through training's one sandbox seam.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from simulator.benchmarks import from_mbpp
from simulator.execution import RunPrograms
from simulator.execution.program import Program
from simulator.pipeline.executor import program_for, real_output
from simulator.pipeline.matching import matches
from simulator.problem import Problem, ProblemError
from simulator.source import parse_python
from training.execution import run_programs
from training.synth.records import SynthRecord

# A mutant that loops forever costs this, not the pipeline's 3 s; examples keep no timed-out run (its
# message names the limit, so it would not be the feedback the pipeline shows), and a run that ends
# within 1 s gives the same result under 3 s.
TEST_TIMEOUT_S = 1.0


@dataclass(frozen=True)
class TestRun:
    """One test of one program, as the repair prompt would show it."""

    status: str  # the ExecutionResult status
    output: str  # real_output: the value's repr or stdout, with the status appended when it failed
    passed: bool


def synth_problem(record: SynthRecord) -> Problem | None:
    """The record as an MBPP-style call problem, or None when it has no input/output pair to test."""
    pairs = [p for p in record.io if p.output is not None]
    if not pairs:
        return None
    entry = record.entry_point
    asserts = [f"assert {entry}({p.input}) == {p.output}" for p in pairs]
    try:
        problem = from_mbpp(
            {
                "task_id": f"synth-{record.id}",
                "prompt": record.statement or describe(record.code, entry, pairs[0].input),
                "test_list": asserts,
            }
        )
    except ProblemError:
        return None
    problem = dataclasses.replace(problem, title=f"synth {record.id}")
    problem.extra.update({"benchmark": None, "source": "synth", "id": record.id})
    return problem


def describe(code: str, entry: str, args: str) -> str:
    """``Write a function `f(nums, k)` that takes a list and an int and returns ...``: the signature and
    the types of the first test's arguments, all that is known about a synthesised function."""
    params = parameters(code, entry)
    signature = f"{entry}({', '.join(params)})" if params is not None else entry
    types = _argument_types(args)
    takes = f" that takes {_listed(types)} and returns" if types else " that returns"
    return f"Write a Python function `{signature}`{takes} the value the test shows for its arguments."


def run_tests(
    jobs: Sequence[tuple[Problem, Sequence[str]]], *, executor: RunPrograms = run_programs
) -> list[list[list[TestRun]]]:
    """For each (problem, codes) job and each of its codes, every test of the problem run in the sandbox
    (all jobs in one batch), judged as the pipeline judges a real run: ``[job][code][test]``."""
    programs: list[Program] = []
    for problem, codes in jobs:
        for code in codes:
            for test in problem.tests:
                program = program_for(problem, code, test)
                programs.append(dataclasses.replace(program, timeout_s=TEST_TIMEOUT_S))
    results = iter(executor(programs))
    out = []
    for problem, codes in jobs:
        per_code = []
        for _code in codes:
            row = []
            for test in problem.tests:
                result = next(results)
                output = real_output(problem.kind, result)
                passed = result.status == "ok" and matches(
                    problem.kind, test.output, output, problem.float_tolerance
                )
                row.append(TestRun(result.status, output, passed))
            per_code.append(row)
        out.append(per_code)
    return out


@dataclass(frozen=True)
class Checked:
    """A synthesised program that passes every test of its problem in the sandbox, with those runs."""

    record: SynthRecord
    problem: Problem
    runs: tuple[TestRun, ...]


def passing(
    records: Iterable[SynthRecord], *, executor: RunPrograms = run_programs
) -> tuple[list[Checked], dict[str, int]]:
    """The records whose program passes every test of its problem in the sandbox (they all should: the
    outputs came from running them; this is the check, not an assumption), with counts of the rest."""
    records = list(records)
    jobs = [(record, problem) for record in records if (problem := synth_problem(record)) is not None]
    counts = {"no_problem": len(records) - len(jobs), "original_fails": 0}
    runs = run_tests([(problem, [record.code]) for record, problem in jobs], executor=executor)
    kept = []
    for (record, problem), (original,) in zip(jobs, runs, strict=True):
        if all(t.passed for t in original):
            kept.append(Checked(record, problem, tuple(original)))
        else:
            counts["original_fails"] += 1
    return kept, counts


def parameters(code: str, entry: str) -> list[str] | None:
    """The names of ``entry``'s positional parameters in ``code``, or None when it defines no such
    function (or does not parse)."""
    try:
        tree = parse_python(code)
    except (SyntaxError, ValueError, RecursionError):
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == entry:
            return [a.arg for a in node.args.args]
    return None


def argument_values(args: str) -> tuple[Any, ...] | None:
    """The values of a record's argument list (``IOPair.input``, Python source), or None when it
    is not one of literals."""
    try:
        return ast.literal_eval(f"({args},)")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _argument_types(args: str) -> list[str]:
    return [_type_word(v) for v in argument_values(args) or ()]


def _type_word(value: object) -> str:
    name = type(value).__name__
    article = "an" if name[0] in "aeiou" else "a"
    return f"{article} {name}"


def _listed(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
