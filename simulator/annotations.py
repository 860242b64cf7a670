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
     "decided_by": "agreement" | "adjudication", "adjudicator": str | null,
     "decided_at": str | null,  # ISO 8601, the site's time: when the item got its final decision
     "schema_version": int}

Which records an export holds is an ``ExportFilter``: by verification status (verified, unverified,
all), by queue (the model) and by the date the item was decided; the export page, its download and
``manage.py export_annotations`` all read one.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import date, datetime
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
    decided_at: str | None = None  # ISO 8601 in the site's time zone

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "schema_version": SCHEMA_VERSION}

    @property
    def verified(self) -> bool:
        return self.verification.get("verified") is True


def keep(record: ExportRecord, status: str) -> bool:
    """Whether ``record`` passes the ``--status`` filter (verified, unverified or all)."""
    return ExportFilter(status).keeps(record)


def _date(value: str | date | None, name: str) -> date | None:
    if value is None or isinstance(value, date):
        return value
    if not value.strip():
        return None
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(f"{name} must be a date (YYYY-MM-DD), not {value[:20]!r}") from None


@dataclass(frozen=True)
class ExportFilter:
    """Which records an export holds: ``status`` (verified, unverified or all), ``model`` (one queue;
    "" for every one), and the days the item was decided, ``since`` and ``until`` both included (None:
    no bound). Raises ValueError when a field is not one of these."""

    status: str = "verified"
    model: str = ""
    since: date | None = None
    until: date | None = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}")
        if self.since and self.until and self.since > self.until:
            raise ValueError(f"the first day ({self.since}) is after the last ({self.until})")

    @classmethod
    def parse(
        cls,
        status: str | None = None,
        model: str | None = None,
        since: str | None = None,
        until: str | None = None,
    ) -> ExportFilter:
        """From text as a form or a command line gives it (blank: no filter; status blank: verified)."""
        return cls(
            (status or "").strip() or "verified",
            (model or "").strip(),
            _date(since, "since"),
            _date(until, "until"),
        )

    @classmethod
    def from_query(cls, query: Mapping[str, Any]) -> ExportFilter:
        """From a query string's ``status``, ``model``, ``since`` and ``until``."""
        return cls.parse(*(query.get(key) for key in ("status", "model", "since", "until")))

    def keeps(self, record: ExportRecord) -> bool:
        """Whether ``record`` is one this filter exports (a record with no decision time fails a date
        bound)."""
        if self.status != "all" and record.verified != (self.status == "verified"):
            return False
        if self.model and record.model != self.model:
            return False
        if self.since is None and self.until is None:
            return True
        if not record.decided_at:
            return False
        day = datetime.fromisoformat(record.decided_at).date()
        return (self.since is None or day >= self.since) and (self.until is None or day <= self.until)

    def query(self) -> dict[str, str]:
        """The filter as query parameters (the page's form fields), the defaults left out."""
        fields = {"status": self.status, "model": self.model}
        fields |= {"since": self.since.isoformat() if self.since else ""}
        fields |= {"until": self.until.isoformat() if self.until else ""}
        return {
            key: value for key, value in fields.items() if value and (key, value) != ("status", "verified")
        }

    def describe(self) -> str:
        """In words, for a page: "verified, queue m, decided from 2026-01-01 to 2026-01-31"."""
        parts = [self.status, f"queue {self.model}" if self.model else "every queue"]
        if self.since and self.until:
            parts.append(f"decided from {self.since} to {self.until}")
        elif self.since or self.until:
            parts.append(f"decided from {self.since}" if self.since else f"decided until {self.until}")
        return ", ".join(parts)

    def command(self) -> str:
        """The same export from the command line."""
        options = [f"--{key} {shlex.quote(value)}" for key, value in self.query().items()]
        return " ".join(["python manage.py export_annotations --out annotations.jsonl", *options])
