"""The synthesis filters, each a function ``records -> kept records`` that counts what it rejects.

In pipeline order (cheap checks first):

- ``constraint``:  the program parses and has the constructs its level claims (model-written programs);
- ``decontaminate``: no program whose normalised AST (names and literals abstracted) matches a benchmark
  program in /work/shared/benchmarks;
- ``deduplicate``: one program per normalised AST (names abstracted, literals kept);
- ``execute``:     each input runs in the sandbox within the timeout; failing inputs are dropped, a
  program with none left is rejected (``timeout`` or ``error``);
- ``deterministic``: a second run gives the same output for every input;
- ``nontrivial``:  outputs are Python literals, not all equal across inputs, not all empty, not over-long;
- ``difficulty``:  a reference model gets the output right at most ``max_pass`` times in ``samples``
  (ExecVerify: 10 samples at T=1.0, a pass when the gold output string appears in the answer, keep <= 3).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable

from simulator.execution import RunPrograms
from simulator.execution.program import Program
from training.execution import run_programs
from training.synth.analysis import features, unmet
from training.synth.constraints import Constraint
from training.synth.normalize import fingerprint
from training.synth.records import IOPair, SynthRecord
from training.synth.sampler import Sampler

EXECUTION_TIMEOUT_S = 0.5  # ExecVerify's execution filter
MAX_OUTPUT_CHARS = 300
_EMPTY = {"None", "''", '""', "[]", "{}", "()", "set()", "0", "False"}

Rejections = Counter  # reason -> count
_ANSWER = re.compile(r"\[ANSWER\](.*?)(?:\[/ANSWER\]|$)", re.DOTALL)


def constraint(records: list[SynthRecord], rejected: Rejections) -> list[SynthRecord]:
    kept = []
    for record in records:
        try:
            found = features(record.code, record.entry_point)
        except SyntaxError:
            rejected["syntax"] += 1
            continue
        if unmet(Constraint.from_dict(record.constraint), found):
            rejected["constraint"] += 1
            continue
        kept.append(record)
    return kept


def decontaminate(
    records: list[SynthRecord], benchmark_index: dict[str, str], rejected: Rejections
) -> list[SynthRecord]:
    kept = []
    for record in records:
        if fingerprint(record.code, abstract_constants=True) in benchmark_index:
            rejected["contaminated"] += 1
        else:
            kept.append(record)
    return kept


def deduplicate(records: list[SynthRecord], rejected: Rejections) -> list[SynthRecord]:
    seen: set[str] = set()
    kept = []
    for record in records:
        key = fingerprint(record.code)
        if key in seen:
            rejected["duplicate"] += 1
            continue
        seen.add(key)
        kept.append(record)
    return kept


def _programs(records: list[SynthRecord], timeout_s: float) -> list[tuple[SynthRecord, IOPair, Program]]:
    jobs = []
    for record in records:
        for pair in record.io:
            call = f"{record.entry_point}({pair.input})"
            jobs.append((record, pair, Program(code=record.code, call=call, timeout_s=timeout_s)))
    return jobs


def execute(
    records: list[SynthRecord],
    rejected: Rejections,
    executor: RunPrograms = run_programs,
    timeout_s: float = EXECUTION_TIMEOUT_S,
) -> list[SynthRecord]:
    """Fill each input's output; drop inputs that fail; reject programs left without inputs."""
    jobs = _programs(records, timeout_s)
    results = executor([program for _, _, program in jobs])
    ok: dict[str, list[IOPair]] = {r.id: [] for r in records}
    timed_out: set[str] = set()
    for (record, pair, _), result in zip(jobs, results, strict=True):
        if result.status == "ok" and result.value is not None:
            ok[record.id].append(IOPair(pair.input, pair.mutation, result.value, result.value_type))
        else:
            rejected[f"input_{result.status}"] += 1
            if result.status == "timeout":
                timed_out.add(record.id)
    kept = []
    for record in records:
        if ok[record.id]:
            record.io = ok[record.id]
            kept.append(record)
        else:
            rejected["timeout" if record.id in timed_out else "error"] += 1
    return kept


def deterministic(
    records: list[SynthRecord],
    rejected: Rejections,
    executor: RunPrograms = run_programs,
    timeout_s: float = EXECUTION_TIMEOUT_S,
) -> list[SynthRecord]:
    """Run every kept input again; a program with any output that changed is rejected."""
    jobs = _programs(records, timeout_s)
    results = executor([program for _, _, program in jobs])
    changed: set[str] = set()
    for (record, pair, _), result in zip(jobs, results, strict=True):
        if result.status != "ok" or result.value != pair.output:
            changed.add(record.id)
    rejected["nondeterministic"] += len(changed)
    return [r for r in records if r.id not in changed]


def nontrivial(records: list[SynthRecord], rejected: Rejections) -> list[SynthRecord]:
    kept = []
    for record in records:
        outputs = [pair.output or "" for pair in record.io]
        if any(len(o) > MAX_OUTPUT_CHARS for o in outputs):
            rejected["too_long"] += 1
        elif not all(_is_literal(o) for o in outputs):  # e.g. the sandbox's "<str of length N>"
            rejected["not_literal"] += 1
        elif all(o in _EMPTY for o in outputs):
            rejected["trivial_empty"] += 1
        elif len(outputs) > 1 and len(set(outputs)) == 1:
            rejected["trivial_constant"] += 1
        else:
            kept.append(record)
    return kept


def _is_literal(text: str) -> bool:
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def prediction_prompt(record: SynthRecord) -> str:
    """The output-prediction prompt the reference model answers (CRUXEval style)."""
    call = f"{record.entry_point}({record.io[0].input})"
    return (
        "Complete the assertion with the literal output of the call. Answer inside [ANSWER] [/ANSWER].\n"
        f"[PYTHON]\n{record.code}\nassert {call} == ??\n[/PYTHON]"
    )


def passes(answer: str, gold: str) -> bool:
    """ExecVerify's check (the gold output string appears in the answer), applied to the answer part only:
    the text inside ``[ANSWER]`` after ``==`` when present (else ``"1"`` would pass on any ``f([1])``);
    an equal Python literal also passes."""
    match = _ANSWER.search(answer)
    body = match.group(1) if match else answer
    tail = body.rsplit("==", 1)[-1].strip()
    if gold in tail:
        return True
    try:
        return ast.literal_eval(tail) == ast.literal_eval(gold)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def difficulty(
    records: list[SynthRecord],
    rejected: Rejections,
    sampler: Sampler,
    samples: int = 10,
    max_pass: int = 3,
    temperature: float = 1.0,
    max_tokens: int = 512,
    progress: Callable[[int], None] | None = None,
) -> list[SynthRecord]:
    """Keep the programs the reference model gets right at most ``max_pass`` times in ``samples``."""
    answers = sampler.sample(
        [prediction_prompt(r) for r in records], n=samples, temperature=temperature, max_tokens=max_tokens
    )
    kept = []
    for record, texts in zip(records, answers, strict=True):
        gold = record.io[0].output or ""
        record.pass_count = sum(passes(text, gold) for text in texts)
        record.samples = samples
        if progress:
            progress(1)
        if record.pass_count > max_pass:
            rejected["too_easy"] += 1
        else:
            kept.append(record)
    return kept
