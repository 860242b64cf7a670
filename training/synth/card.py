"""The dataset card: where the data came from and what each filter removed, as JSON and Markdown."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from training.synth.records import SynthRecord


@dataclass
class DatasetCard:
    seed: int
    sources: dict[str, str]  # source -> description (e.g. the model and URL)
    generated_per_level: dict[int, int]
    kept_per_level: dict[int, int]
    rejected: dict[str, int]  # filter reason -> programs (or inputs, for ``input_*``)
    inputs_per_mutation: dict[str, int]
    pass_rate_histogram: dict[int, int] | None  # reference model passes (0..samples) -> programs
    reference_model: str | None
    settings: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        *,
        seed: int,
        sources: dict[str, str],
        generated: list[SynthRecord],
        kept: list[SynthRecord],
        rejected: Counter,
        reference_model: str | None,
        settings: dict[str, Any],
    ) -> DatasetCard:
        histogram = None
        samples = {r.samples for r in kept if r.samples is not None}
        if reference_model is not None:
            passes = Counter(r.pass_count for r in generated if r.pass_count is not None)
            top = max(samples) if samples else 10
            histogram = {k: passes.get(k, 0) for k in range(top + 1)}
        return cls(
            seed=seed,
            sources=sources,
            generated_per_level=dict(sorted(Counter(r.level for r in generated).items())),
            kept_per_level=dict(sorted(Counter(r.level for r in kept).items())),
            rejected=dict(sorted(rejected.items())),
            inputs_per_mutation=dict(sorted(Counter(p.mutation for r in kept for p in r.io).items())),
            pass_rate_histogram=histogram,
            reference_model=reference_model,
            settings=settings,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_markdown(self) -> str:
        lines = ["# Synthesised execution data: dataset card", ""]
        lines.append(
            f"Seed {self.seed}. Sources: " + "; ".join(f"{k}: {v}" for k, v in self.sources.items()) + "."
        )
        lines.append(
            "Never drawn from benchmark files; programs matching a benchmark program's normalised AST "
            "are removed."
        )
        lines += ["", "| level | generated | kept |", "|---|---|---|"]
        for level in sorted(set(self.generated_per_level) | set(self.kept_per_level)):
            lines.append(
                f"| {level} | {self.generated_per_level.get(level, 0)} "
                f"| {self.kept_per_level.get(level, 0)} |"
            )
        lines += ["", "| filter (reason) | rejected |", "|---|---|"]
        lines += [f"| {reason} | {count} |" for reason, count in self.rejected.items()]
        lines += [
            "",
            "Inputs kept per kind: " + ", ".join(f"{k} {v}" for k, v in self.inputs_per_mutation.items()),
        ]
        lines.append("")
        if self.pass_rate_histogram is None:
            lines.append("Difficulty filter: not run (no reference model).")
        else:
            lines.append(f"Difficulty filter, reference model {self.reference_model}: passes -> programs")
            width = max(self.pass_rate_histogram.values(), default=0) or 1
            for k, v in self.pass_rate_histogram.items():
                lines.append(f"    {k:>2} | {'#' * round(40 * v / width)} {v}")
        lines += ["", "Settings: `" + ", ".join(f"{k}={v}" for k, v in self.settings.items()) + "`", ""]
        return "\n".join(lines)
