"""Verifying an NLEX text against a real trace, and the JSONL record annotators' corrections are
exported as (the format ``training.data.examples.annotation_examples`` reads).

``verify(text, trace, code)`` checks every claim of the text (``simulator.nlex.check``) and returns a
``Verification``: counts, the first false claim, and per-claim ``marks`` with character offsets so a
page can colour each claim right or wrong. A text *passes* when no claim is false and at least one
claim was checked true: a correction that contradicts the real execution never passes.

Export record (one JSON object per line)::

    {"prompt": str,          # the user turn of the simulate prompt (simulator.prompts.simulate)
     "completion": str,      # the accepted NLEX text
     "source_run": str,      # the run the simulation came from
     "model": str,           # the model (or checkpoint) that wrote the original simulation
     "annotator": str,       # whose text this is
     "verification": {"passed": bool, "claims": int, "true": int, "false": int, "unverifiable": int,
                      "accuracy": float | null, "first_false": {...} | null},
     "item": int, "candidate": int, "test": int, "turn": int, "sample": int,
     "decided_by": "agreement" | "adjudication", "adjudicator": str | null, "schema_version": int}
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from simulator import SCHEMA_VERSION
from simulator.execution.trace import Trace
from simulator.nlex import check_text, program_names

EXPORT_FIELDS = ("prompt", "completion", "source_run", "model", "annotator", "verification")
STATUSES = ("verified", "unverified", "all")


@dataclass
class ClaimMark:
    """One claim's place in the text and its verdict against the trace."""

    start: int
    end: int
    kind: str
    text: str
    verdict: str  # "true" | "false" | "unverifiable"
    step: int | None = None
    actual: str | None = None
    reason: str = ""
    claimed: str | None = None


@dataclass
class Verification:
    passed: bool
    claims: int
    true: int
    false: int
    unverifiable: int
    accuracy: float | None
    first_false: dict[str, Any] | None
    marks: list[ClaimMark] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """The JSON-safe summary stored with an annotation and exported (marks left out)."""
        data = asdict(self)
        data.pop("marks")
        return data


def verify(text: str, trace: Trace, code: str) -> Verification:
    """Check every claim of ``text`` against ``trace`` (the real execution of ``code``)."""
    result = check_text(text, trace, program_names(code))
    marks = [
        ClaimMark(
            start=v.claim.start,
            end=v.claim.end,
            kind=v.claim.kind,
            text=v.claim.text,
            verdict=v.verdict,
            step=v.step,
            actual=v.actual,
            reason=v.reason,
            claimed=v.claim.value,
        )
        for v in result.verdicts
    ]
    first = next((m for m in marks if m.verdict == "false"), None)
    true, false = result.count("true"), result.count("false")
    return Verification(
        passed=false == 0 and true > 0,
        claims=len(marks),
        true=true,
        false=false,
        unverifiable=result.count("unverifiable"),
        accuracy=result.accuracy,
        first_false=None
        if first is None
        else {
            "text": first.text,
            "kind": first.kind,
            "step": first.step,
            "claimed": first.claimed,
            "actual": first.actual,
            "start": first.start,
        },
        marks=marks,
    )


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
        return bool(self.verification.get("passed"))


def keep(record: ExportRecord, status: str) -> bool:
    """Whether ``record`` passes the ``--status`` filter (verified, unverified or all)."""
    if status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}")
    return status == "all" or record.verified == (status == "verified")
