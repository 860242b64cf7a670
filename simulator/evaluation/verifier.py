"""How far the verifier (``simulator.nlex.verify``) can be trusted on what the model really writes:
its verdicts against a careful reader's labels of real replies (tests/simulator/nlex/real).

Figures (docs/results.md#verifier):

- answer agreement: the verifier's answer verdict (true / false / missing) equals the label's, over
  all texts; ``unverifiable`` agrees with nothing (the real run of every labelled text ended);
- falsely verified: texts shown "verified" although the reader found a false statement or the answer
  is not true (the target is none);
- first divergence on the labelled line: of the texts with a labelled first false statement, the
  share whose first divergence the verifier puts on the same line of the text;
- claims: precision and recall of the checkable claims the verifier found against the labelled
  ones (a found claim matches a labelled one of the same kind whose quote it overlaps), and how often
  their verdicts agree.

Run: ``python -m simulator.evaluation.verifier tests/simulator/nlex/real`` (reads texts.jsonl and
labels.jsonl there; uses the real traces stored with the texts, runs nothing).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simulator.execution.program import Program
from simulator.execution.trace import Trace
from simulator.nlex.verify import Verification, verify

# The reader's kinds and the verifier's: a prose "the result is X" is the reader's return or answer.
_SAME_KIND = {"result": ("return", "answer")}
# Statements the labels record only as a first false statement, never as claims: left out of precision.
_UNLABELLED_KINDS = ("condition", "calls")


@dataclass
class VerifierScore:
    texts: int = 0
    answers_agreed: int = 0
    falsely_verified: list[str] = field(default_factory=list)
    labelled_first: int = 0
    first_on_line: int = 0
    gold_claims: int = 0
    found_claims: int = 0
    matched_claims: int = 0
    verdicts_agreed: int = 0
    answer_confusion: Counter[tuple[str, str]] = field(default_factory=Counter)  # (label, verifier)
    first_misses: list[str] = field(default_factory=list)

    def rate(self, part: int, whole: int) -> float:
        return part / whole if whole else 1.0

    def lines(self) -> list[str]:
        return [
            f"texts {self.texts}",
            f"answer verdict agrees with the label: {self.answers_agreed}/{self.texts}"
            f" = {self.rate(self.answers_agreed, self.texts):.1%}",
            f"falsely verified: {len(self.falsely_verified)} {self.falsely_verified}",
            f"first divergence on the labelled text line: {self.first_on_line}/{self.labelled_first}"
            f" = {self.rate(self.first_on_line, self.labelled_first):.1%}",
            f"claims: precision {self.rate(self.matched_claims, self.found_claims):.1%}"
            f" ({self.matched_claims}/{self.found_claims}), recall"
            f" {self.rate(self.matched_claims, self.gold_claims):.1%}"
            f" ({self.matched_claims}/{self.gold_claims}),"
            f" verdicts agree on {self.rate(self.verdicts_agreed, self.matched_claims):.1%} of the matched",
            "answer (label -> verifier): "
            + ", ".join(f"{a}->{b} {n}" for (a, b), n in sorted(self.answer_confusion.items())),
        ]


def verify_record(record: dict[str, Any]) -> Verification:
    """The verifier's verdict on one collected text, against its stored real run."""
    real = record["real"]
    program = Program(code=record["code"], call=record.get("call"), stdin=record.get("stdin"))
    trace = Trace.from_dict(real["trace"]) if real.get("trace") else None
    raised = (real.get("exception") or {}).get("type")
    return verify(record["text"], trace, program, status=real.get("status"), raised=raised)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def score(texts: list[dict[str, Any]], labels: dict[str, dict[str, Any]]) -> VerifierScore:
    result = VerifierScore()
    for record in texts:
        label = labels[record["id"]]
        v = verify_record(record)
        text = record["text"]
        result.texts += 1
        ours = v.answer.verdict
        result.answer_confusion[(label["answer"], ours)] += 1
        result.answers_agreed += ours == label["answer"]
        if v.verified and (label["first_false"] is not None or label["answer"] != "true"):
            result.falsely_verified.append(record["id"])
        if label["first_false"] is not None:
            result.labelled_first += 1
            first = v.first_divergence
            if first is not None and _line_of(text, first.start) == label["first_false"]["line"]:
                result.first_on_line += 1
            else:
                where = "none" if first is None else f"line {_line_of(text, first.start)} {first.text!r}"
                result.first_misses.append(
                    f"{record['id']}: labelled line {label['first_false']['line']}"
                    f" {label['first_false']['quote']!r}, verifier {where}"
                )
        gold = [
            (c, (c["start"], c["start"] + len(c["quote"])))
            for c in label["claims"]
            if c.get("start") is not None
        ]
        used: set[int] = set()
        found = [c for c in v.claims if c.kind not in _UNLABELLED_KINDS]
        for claim in found:
            kinds = _SAME_KIND.get(claim.kind, (claim.kind,))
            hit = next(
                (
                    i
                    for i, (c, span) in enumerate(gold)
                    if i not in used and c["kind"] in kinds and _overlaps(span, (claim.start, claim.end))
                ),
                None,
            )
            if hit is None:
                continue
            used.add(hit)
            result.matched_claims += 1
            result.verdicts_agreed += gold[hit][0]["truth"] == claim.verdict
        result.gold_claims += len(gold)
        result.found_claims += len(found)
    return result


def load(folder: Path) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    def rows(name: str) -> list[dict[str, Any]]:
        return [json.loads(x) for x in (folder / name).read_text(encoding="utf-8").splitlines() if x.strip()]

    return rows("texts.jsonl"), {label["id"]: label for label in rows("labels.jsonl")}


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    folder = Path(args[0] if args else "tests/simulator/nlex/real")
    texts, labels = load(folder)
    by_source: dict[str, list[dict[str, Any]]] = {}
    for record in texts:
        by_source.setdefault(record["source"], []).append(record)
    for name, group in [("all", texts), *sorted(by_source.items())]:
        print(f"== {name}")
        result = score(group, labels)
        print("\n".join(result.lines()))
        if name == "all" and "-v" in args:
            print("\n".join(result.first_misses))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
