from __future__ import annotations

import ast
from pathlib import Path

import pytest

from training.data.problems import run_tests, synth_problem
from training.paths import benchmarks_dir
from training.synth.normalize import benchmark_fingerprints
from training.synth.pipeline import SynthConfig, synthesize
from training.synth.tasks import task_records

STATED = SynthConfig(programs=0, rules=False, tasks=True, seed=5)


def test_every_stated_task_names_its_function_and_defines_it():
    records = task_records(seed=5)
    assert len({r.id for r in records}) == len(records) >= 75
    assert len({r.code for r in records}) == len(records)  # every variant is a different program
    for record in records:
        assert record.statement is not None and "{" not in record.statement
        assert record.statement.startswith(f"Write a function `{record.entry_point}(")
        defined = [n.name for n in ast.parse(record.code).body if isinstance(n, ast.FunctionDef)]
        assert defined == [record.entry_point]
        inputs = [pair.input for pair in record.io]
        assert len(inputs) == len(set(inputs)) == 4 and record.io[0].mutation == "original"


def test_stated_tasks_pass_their_tests_in_the_sandbox_and_a_written_in_answer_does_not():
    kept, card = synthesize(STATED, benchmark_index={})
    assert card.sources.keys() == {"tasks"} and len(kept) >= 0.9 * len(task_records(seed=5))
    problems = [synth_problem(record) for record in kept]
    assert all(p is not None for p in problems)
    for record, problem in zip(kept, problems, strict=True):
        assert problem.statement.startswith(record.statement)  # the task's words, not describe()'s
        assert [t.public for t in problem.tests] == [True, False, False, False]
    # the reference passes every test; returning the public test's answer fails a private one
    written_in = [f"def {p.entry_point}(*args):\n    return {p.public_tests[0].output}\n" for p in problems]
    runs = run_tests([(p, [r.code, w]) for p, r, w in zip(problems, kept, written_in, strict=True)])
    for (reference, constant), problem in zip(runs, problems, strict=True):
        assert all(run.passed for run in reference), problem.title
        assert constant[0].passed and not all(run.passed for run in constant), problem.title


@pytest.mark.skipif(benchmarks_dir() is None, reason="no benchmark folder (../shared/benchmarks)")
def test_stated_tasks_that_match_a_benchmark_program_are_left_out():
    _, card = synthesize(STATED, benchmark_index=benchmark_fingerprints(Path(benchmarks_dir())))
    assert card.rejected.get("contaminated", 0) >= 1  # e.g. s.replace('a', 'e') is a benchmark's body
