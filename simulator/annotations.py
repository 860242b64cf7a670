"""The JSONL record annotators' corrections are exported as (the format
``training.data.examples.annotation_examples`` reads).

A correction is checked by the one verifier, ``simulator.nlex.verify``: it is *verified* when its
answer was checked true against the real run and no claim is false, so a correction that contradicts
the real execution, or says nothing checkable about the result, is never exported as verified.

Export record (one JSON object per line)::

    {"prompt": str,          # the user turn of the simulate prompt (simulator.prompts.simulate)
     "completion": str,      # the accepted NLEX text
     "source_run": str,      # the run the simulation came from
     "model": str,           # the model (or checkpoint) that wrote the original simulation
     "annotator": str,       # whose text this is
     "verification": {...},  # simulator.nlex.verify.Verification.to_dict(): verified, answer, claims, ...
     "item": int, "candidate": int, "test": int, "turn": int, "sample": int,
     "decided_by": "agreement" | "adjudication", "adjudicator": str | null, "schema_version": int}
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from simulator import SCHEMA_VERSION

EXPORT_FIELDS = ("prompt", "completion", "source_run", "model", "annotator", "verification")
STATUSES = ("verified", "unverified", "all")


def prompt_for(code: str, *, call: str | None = None, stdin: str | None = None) -> str:
    """The user turn the model was given to simulate ``code`` (what training prompts with)."""
    from simulator.prompts import simulate

    messages = (
        simulate.call_messages(code, call) if call is not None else simulate.stdin_messages(code, stdin or "")
    )
    return messages[-1]["content"]


@dataclass
class ExportRecord:
    prompt: str
    completion: str
    source_run: str
    model: str
    annotator: str
    verification: dict[str, Any]
    item: int
    candidate: int
    test: int
    turn: int = 0
    sample: int = 0
    decided_by: str = "agreement"
    adjudicator: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "schema_version": SCHEMA_VERSION}

    @property
    def verified(self) -> bool:
        return self.verification.get("verified") is True


def keep(record: ExportRecord, status: str) -> bool:
    """Whether ``record`` passes the ``--status`` filter (verified, unverified or all)."""
    if status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}")
    return status == "all" or record.verified == (status == "verified")
