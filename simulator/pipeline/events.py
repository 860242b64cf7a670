"""The one seam between the pipeline and its hosts (CLI, web app, evaluation): typed events.

Every event of a run carries the run id and a gap-free sequence number starting at 0; a run ends with
exactly one final event (``run_finished``, ``run_failed`` or ``run_cancelled``). Events are plain JSON.
Payloads by type (full field list in docs/events.md; ``?`` marks fields present only sometimes).
``test`` is always an index into the problem's whole test list; ``turn`` 0 is the selection stage and
turn t the program after t repairs:

- ``run_started``       {problem | program, settings, provenance}
- ``stage``             {stage: solve|simulate|select|repair|execute, state: started|finished,
                         turn?, final?, seconds?, tokens?, turns?}
- ``candidate_delta``   {candidate, text}                 streamed text of candidate i
- ``candidate_done``    {candidate, text, code, parse_error, tokens, finish_reason}
- ``simulation_delta``  {candidate, test, turn, sample, text}   streamed NLEX
- ``simulation_done``   {candidate, test, turn, sample, text, predicted, parse_error, tokens, cut, forced}
- ``verdict``           {candidate, test, turn, expected, source: simulated|real|checked, simulated,
                         match, reason?, real?}
- ``selected``          {candidate, scores, tied, broken_by, seed, reason[, agreement]}
- ``repair_delta``      {turn, text}
- ``repair_turn``       {turn, submitted, code, text, feedback, parse_error, decided_by[, fix, replies]}
- ``repair_rejected``   {turn, matched, attempt_matched, public_tests, judged_by}  (guided repair: the
                         fix of ``turn`` matched no more public tests than the attempt; it is not kept)
- ``execution``         {candidate, turn, final, test, public, status, output, expected, passed, message,
                         verification}  (a real run: executor.RealRun)
- ``run_finished``      {candidate, code, passed_public_simulated, public_tests, judged_by, turns_used,
                         submitted, seed, real, totals}
- ``run_failed``        {error, message}
- ``run_cancelled``     {reason}
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, get_args

from simulator import SCHEMA_VERSION

EventType = Literal[
    "run_started",
    "stage",
    "candidate_delta",
    "candidate_done",
    "simulation_delta",
    "simulation_done",
    "verdict",
    "selected",
    "repair_delta",
    "repair_turn",
    "repair_rejected",
    "execution",
    "run_finished",
    "run_failed",
    "run_cancelled",
]
EVENT_TYPES: tuple[str, ...] = get_args(EventType)
FINAL_TYPES = frozenset({"run_finished", "run_failed", "run_cancelled"})


@dataclass(frozen=True)
class Event:
    run_id: str
    seq: int
    type: EventType
    payload: dict[str, Any]

    @property
    def is_final(self) -> bool:
        return self.type in FINAL_TYPES

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "run_id": self.run_id,
            "seq": self.seq,
            "type": self.type,
            "payload": self.payload,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Event:
        return cls(run_id=data["run_id"], seq=data["seq"], type=data["type"], payload=data["payload"])


class Sequencer:
    """Hands out events with consecutive sequence numbers for one run."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.next_seq = 0

    def __call__(self, type: EventType, **payload: Any) -> Event:
        if type not in EVENT_TYPES:
            raise ValueError(f"unknown event type {type!r}")
        event = Event(self.run_id, self.next_seq, type, payload)
        self.next_seq += 1
        return event
