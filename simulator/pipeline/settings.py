"""The knobs of one run, validated, and their JSON form (the web app stores it on the Run row)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


class SettingsError(ValueError):
    """A setting out of range; ``field`` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


INT_RANGES = {  # the bounds of RunSettings' integer fields, which the command lines check too
    "k": (1, 64),
    "turns": (0, 20),
    "max_tokens": (16, 32768),
    "concurrency": (1, 256),
}


@dataclass(frozen=True)
class RunSettings:
    """One run: ``k`` candidates, each simulated once per public test (greedy), the best picked
    (``selection.best_of``), then up to ``turns`` repair turns (``pipeline.repair``).

    ``narrate``: each simulation narrates the run (NLEX) before its answer, streamed live; off, the
    model states each output at once (quicker, nothing to check claim by claim). ``oracle`` judges
    candidates by running them instead of simulating them; ``real`` also runs them for real and
    records where each simulation first went wrong. ``seed`` None draws one (recorded in the run).
    Repair is off by default: it is not shown to raise the hidden-test score with the default model
    (docs/results.md#repair)."""

    k: int = 4
    turns: int = 0
    oracle: bool = False
    real: bool = False
    narrate: bool = True
    seed: int | None = None
    temperature: float = 0.8
    top_p: float = 0.95
    max_tokens: int = 512
    model: str | None = None
    concurrency: int = 8

    def __post_init__(self) -> None:
        for name, (low, high) in INT_RANGES.items():
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise SettingsError(name, f"must be an integer from {low} to {high}, not {value!r}")
        for name in ("oracle", "real", "narrate"):
            if not isinstance(getattr(self, name), bool):
                raise SettingsError(name, "must be true or false")
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0
        ):
            raise SettingsError("seed", f"must be a non-negative integer or null, not {self.seed!r}")
        if not _number(self.temperature) or not 0 <= self.temperature <= 2:
            raise SettingsError("temperature", f"must be a number from 0 to 2, not {self.temperature!r}")
        if not _number(self.top_p) or not 0 < self.top_p <= 1:
            raise SettingsError("top_p", f"must be a number in (0, 1], not {self.top_p!r}")
        if self.model is not None and (not isinstance(self.model, str) or not self.model.strip()):
            raise SettingsError("model", "must be a non-empty string or null")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> RunSettings:
        """Build from JSON; unknown keys are an error (a typo must not silently use a default)."""
        if not isinstance(data, dict):
            raise SettingsError("(top level)", "settings are a JSON object")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise SettingsError(unknown[0], f"unknown setting (known: {', '.join(sorted(known))})")
        return cls(**data)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
