"""How well claim extraction reads model-style NLEX: precision and recall against hand-labelled claims,
and how often the checker's verdict agrees with the human one on the claims both found.

Items (tests/simulator/nlex/model_style.jsonl) hold ``code``, ``call`` or ``stdin``, the NLEX ``text``
and ``claims``: ``[{"kind", "line"?, "name"?, "value"?, "truth": "true"|"false"|"unverifiable"}]``.
Run: ``python -m simulator.nlex.scoring tests/simulator/nlex/model_style.jsonl`` (it runs each
item's code in this process to trace it: trusted fixtures only).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simulator.compare import NOT_LITERAL, literal, same_value
from simulator.execution.tracer import trace_in_process
from simulator.nlex.check import check_claims
from simulator.nlex.claims import Claim, extract_claims, program_names


@dataclass
class ExtractionScore:
    gold: int = 0
    extracted: int = 0
    matched: int = 0
    verdicts_agreed: int = 0
    misses: list[str] = field(default_factory=list)  # "item: gold claim not found"
    extras: list[str] = field(default_factory=list)  # "item: extracted claim not in gold"

    @property
    def precision(self) -> float:
        return self.matched / self.extracted if self.extracted else 1.0

    @property
    def recall(self) -> float:
        return self.matched / self.gold if self.gold else 1.0

    @property
    def verdict_agreement(self) -> float:
        return self.verdicts_agreed / self.matched if self.matched else 1.0


def _same_value(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return a == b
    left, right = literal(a), literal(b)
    if left is NOT_LITERAL or right is NOT_LITERAL:
        return " ".join(a.split()) == " ".join(b.split())
    return same_value(left, right)


def _agrees(gold: dict[str, Any], claim: Claim) -> bool:
    if gold["kind"] != claim.kind:
        return False
    if claim.kind == "line":
        return gold.get("line") == claim.line
    if claim.kind == "value" and gold.get("name") != claim.name:
        return False
    return _same_value(gold.get("value"), claim.value)


def score_items(items: list[dict[str, Any]]) -> ExtractionScore:
    """Greedy in-order matching of extracted to gold claims, item by item."""
    score = ExtractionScore()
    for item in items:
        claims = extract_claims(item["text"], program_names(item["code"]))
        run = trace_in_process(item["code"], item.get("call"), stdin=item.get("stdin") or "")
        verdicts = {id(v.claim): v.verdict for v in check_claims(claims, run.trace).verdicts}
        used: set[int] = set()
        for gold in item["claims"]:
            hit = next((c for c in claims if id(c) not in used and _agrees(gold, c)), None)
            if hit is None:
                score.misses.append(f"{item['id']}: {gold}")
                continue
            used.add(id(hit))
            score.matched += 1
            score.verdicts_agreed += verdicts[id(hit)] == gold["truth"]
        score.extras += [f"{item['id']}: {c.kind} {c.text!r}" for c in claims if id(c) not in used]
        score.gold += len(item["claims"])
        score.extracted += len(claims)
    return score


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    path = Path((argv or sys.argv[1:] or ["tests/simulator/nlex/model_style.jsonl"])[0])
    score = score_items(load(path))
    print(f"items {len(load(path))}  gold claims {score.gold}  extracted {score.extracted}")
    print(f"precision {score.precision:.3f}  recall {score.recall:.3f}", end="  ")
    print(f"verdict agreement {score.verdict_agreement:.3f}")
    for line in score.misses:
        print("missed ", line)
    for line in score.extras:
        print("extra  ", line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
