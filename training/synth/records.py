"""One synthesised program and its input/output pairs, as stored in the synthesis JSONL."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class IOPair:
    input: str  # Python source of the argument list: the call is ``<entry_point>(<input>)``
    mutation: str  # "original" | "value" | "type" (| "model" for a model-written call)
    output: str | None = None  # repr of the return value, filled by the execution filter
    output_type: str | None = None


@dataclass
class SynthRecord:
    id: str
    source: str  # "rules" or "model"
    level: int
    constraint: dict[str, Any]
    code: str
    entry_point: str = "f"
    io: list[IOPair] = field(default_factory=list)
    pass_count: int | None = None  # reference model's correct answers (difficulty filter), if run
    samples: int | None = None
    statement: str | None = None  # what the function computes, for a stated task (training.synth.tasks)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SynthRecord:
        io = [IOPair(**pair) for pair in data.get("io", [])]
        return cls(**{**data, "io": io})
