"""Synthesis end to end: constraints -> programs (rules and/or a model) -> inputs -> filters -> JSONL + card.

    execsim train synth --out runs/synth --programs 200 --levels 1-6 --seed 0 [--tasks] [--reference-url URL]

Writes ``programs.jsonl`` (one SynthRecord per line), ``card.json`` and ``card.md``.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from simulator.execution import RunPrograms
from training.execution import run_programs
from training.synth import filters
from training.synth.card import DatasetCard
from training.synth.constraints import draw_constraint
from training.synth.generator import GenerationError, generate_checked
from training.synth.inputs import inputs_for
from training.synth.llm_source import from_model
from training.synth.records import IOPair, SynthRecord
from training.synth.sampler import Sampler
from training.synth.tasks import task_records

Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass
class SynthConfig:
    programs: int = 50  # programs drawn per source before filtering
    levels: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
    seed: int = 0
    value_mutations: int = 2
    type_mutations: int = 1
    timeout_s: float = filters.EXECUTION_TIMEOUT_S
    rules: bool = True  # the model-free generator
    tasks: bool = False  # the stated tasks (training.synth.tasks), one record a variant
    model_programs: int = 0  # programs asked of the generator model (0: none)
    difficulty_samples: int = 10
    max_pass: int = 3
    extra: dict = field(default_factory=dict)


def generate_records(config: SynthConfig) -> list[SynthRecord]:
    """``config.programs`` rule-generated programs spread evenly over the levels, with their inputs."""
    records = []
    for i in range(config.programs):
        level = config.levels[i % len(config.levels)]
        rng = random.Random(f"{config.seed}:{i}")
        for _ in range(5):
            constraint = draw_constraint(level, rng)
            try:
                program = generate_checked(constraint, rng)
            except GenerationError:
                continue
            io = inputs_for(program.params, rng, config.value_mutations, config.type_mutations)
            records.append(
                SynthRecord(
                    id=f"rules-L{level}-{config.seed}-{i:06d}",
                    source="rules",
                    level=level,
                    constraint=constraint.to_dict(),
                    code=program.code,
                    entry_point=program.entry,
                    io=[IOPair(x.args, x.mutation) for x in io],
                )
            )
            break
    return records


def synthesize(
    config: SynthConfig,
    *,
    executor: RunPrograms = run_programs,
    benchmark_index: dict[str, str] | None = None,
    generator_model: Sampler | None = None,
    reference_model: Sampler | None = None,
    progress: Progress | None = None,
) -> tuple[list[SynthRecord], DatasetCard]:
    """Generate and filter; returns the kept records and the dataset card."""
    report = progress or (lambda stage, done, total: None)
    rejected: Counter = Counter()
    generated: list[SynthRecord] = []
    sources: dict[str, str] = {}
    if config.rules:
        generated += generate_records(config)
        sources["rules"] = "model-free generator (training.synth.generator)"
    stated = task_records(config.seed) if config.tasks else []
    if stated:
        generated += stated
        sources["tasks"] = "stated tasks with a reference solution (training.synth.tasks)"
    report("generate", len(generated), config.programs + len(stated))
    candidates = list(generated)
    if generator_model is not None and config.model_programs:
        rng = random.Random(f"{config.seed}:model")
        constraints = [
            draw_constraint(config.levels[i % len(config.levels)], rng) for i in range(config.model_programs)
        ]
        model_records, broken = from_model(constraints, generator_model, id_prefix=f"model-{config.seed}")
        rejected["model_reply_broke_rules"] += broken
        generated += model_records
        candidates += filters.constraint(model_records, rejected)
        sources["model"] = generator_model.name
    stages: list[tuple[str, Callable[[list[SynthRecord]], list[SynthRecord]]]] = [
        ("decontaminate", lambda rs: filters.decontaminate(rs, benchmark_index or {}, rejected)),
        ("deduplicate", lambda rs: filters.deduplicate(rs, rejected)),
        ("execute", lambda rs: filters.execute(rs, rejected, executor, config.timeout_s)),
        ("deterministic", lambda rs: filters.deterministic(rs, rejected, executor, config.timeout_s)),
        ("nontrivial", lambda rs: filters.nontrivial(rs, rejected)),
    ]
    if reference_model is not None:
        stages.append(
            (
                "difficulty",
                lambda rs: filters.difficulty(
                    rs, rejected, reference_model, config.difficulty_samples, config.max_pass
                ),
            )
        )
    kept = candidates
    for name, stage in stages:
        kept = stage(kept)
        report(name, len(kept), len(candidates))
    card = DatasetCard.build(
        seed=config.seed,
        sources=sources,
        generated=generated,
        kept=kept,
        rejected=rejected,
        reference_model=reference_model.name if reference_model is not None else None,
        settings={
            **{k: v for k, v in asdict(config).items() if k != "extra"},
            "decontaminated_against": len(benchmark_index) if benchmark_index is not None else None,
        },
    )
    return kept, card


def write(out: Path, records: list[SynthRecord], card: DatasetCard) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with (out / "programs.jsonl").open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record.to_dict(), ensure_ascii=False) + "\n")
    (out / "card.json").write_text(json.dumps(card.to_dict(), indent=2) + "\n", encoding="utf-8")
    (out / "card.md").write_text(card.to_markdown(), encoding="utf-8")


def read(path: Path) -> list[SynthRecord]:
    with Path(path).open(encoding="utf-8") as handle:
        return [SynthRecord.from_dict(json.loads(line)) for line in handle if line.strip()]
