"""Near misses of correct programs, as programs to simulate: the judge's hard case.

Where a Best@k pick matters, the failing candidates are near misses of the passing ones, and the
default model predicts an expected-looking output for both: its simulation matches 19% of the
programs there that pass every test and 13% of those that fail (docs/results.md, issue 12 section
25). Simulate examples of a correct program beside one-node mutants of it (``training.data.mutations``)
on the same inputs, each answered by its own real run (``examples.sft_examples`` traces every one),
ask for exactly that distinction: the same call, a program that differs in one place, another
answer.

A mutant is kept when it runs without an error on every test of its problem and fails at least one
(its output differs from the original's there; one that passes every test is no near miss), and
when it is no benchmark program (``training.synth.normalize.fingerprint``). It becomes a record with
the original's inputs and no outputs (id ``<program id>-near<n>``, source ``near miss (<kind>)``).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from simulator.execution import RunPrograms
from training.data.mutations import sample
from training.data.problems import Checked, run_tests
from training.execution import run_programs
from training.synth.normalize import fingerprint
from training.synth.records import IOPair, SynthRecord

SOURCE = "near miss"


def near_misses(
    checked: Sequence[Checked],
    *,
    per_program: int = 2,
    attempts: int = 6,
    seed: int = 0,
    executor: RunPrograms = run_programs,
    benchmark_index: dict[str, str] | None = None,
) -> tuple[list[SynthRecord], dict[str, Any]]:
    """Up to ``per_program`` near misses of each program that passes its tests (``problems.passing``),
    from ``attempts`` mutants tried (kinds drawn uniformly, seeded), as records to simulate; the
    counts say how many were tried and why the others were dropped."""
    rng = random.Random(seed)
    tried = [(item, sample(item.record.code, rng, attempts)) for item in checked]
    runs = run_tests([(item.problem, [m.code for m in ms]) for item, ms in tried], executor=executor)
    counts: Counter = Counter()
    records: list[SynthRecord] = []
    for (item, mutants), per_mutant in zip(tried, runs, strict=True):
        kept = 0
        for mutant, tests in zip(mutants, per_mutant, strict=True):
            if kept == per_program:
                break
            counts["tried"] += 1
            if any(t.status != "ok" for t in tests):
                counts["dropped_error"] += 1
            elif all(t.passed for t in tests):
                counts["dropped_passes_every_test"] += 1
            elif benchmark_index and fingerprint(mutant.code, abstract_constants=True) in benchmark_index:
                counts["dropped_benchmark"] += 1
            else:
                kept += 1
                counts[f"kept_{mutant.kind}"] += 1
                inputs = [IOPair(pair.input, pair.mutation) for pair in item.record.io]  # outputs: its own
                source = f"{SOURCE} ({mutant.kind})"
                records.append(
                    replace(
                        item.record,
                        id=f"{item.record.id}-near{kept}",
                        code=mutant.code,
                        io=inputs,
                        source=source,
                    )
                )
    counts["kept"] = len(records)
    return records, dict(sorted(counts.items()))
