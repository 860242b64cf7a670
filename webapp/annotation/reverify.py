"""Re-verify what is already stored with the one verifier (``simulator.nlex.verify``): the annotation
queue's items (the model's text against the item's stored trace), annotators' and adjudicators'
texts, and the runs' checked simulations (``Verdict.real`` and ``Execution.verification``: each
program is run again, traced, in the sandbox). Verdicts are replaced, nothing is deleted; exports made
afterwards carry the corrected verdicts. ``manage.py reverify`` runs it and prints what changed.

A verdict is compared by its label (agrees / diverges / unverified); records written before this
verifier say ``passed`` and ``divergence`` instead and are read in those terms.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from simulator.nlex.verify import unchecked, verify_result
from webapp.annotation.models import Adjudication, Annotation, AnnotationItem
from webapp.explorer.programs import traced
from webapp.runs.models import Execution, Run, Verdict

Progress = Callable[[str, int, int], None]  # (what, done, total)


@dataclass
class Report:
    checked: Counter[str] = field(default_factory=Counter)
    changed: Counter[str] = field(default_factory=Counter)
    moves: Counter[tuple[str, str, str]] = field(default_factory=Counter)  # (what, old, new)

    def note(self, what: str, old: dict[str, Any] | None, new: dict[str, Any]) -> None:
        before, after = label_of(old), label_of(new)
        self.checked[what] += 1
        if before != after:
            self.changed[what] += 1
            self.moves[(what, before, after)] += 1

    def lines(self) -> list[str]:
        out = [f"{what}: {self.checked[what]} checked, {self.changed[what]} changed" for what in self.checked]
        out += [f"  {what}: {old} -> {new}: {n}" for (what, old, new), n in sorted(self.moves.items())]
        return out


def label_of(record: dict[str, Any] | None) -> str:
    """agrees / diverges / unverified, of a verification record old or new."""
    if not record:
        return "unverified"
    if "label" in record:
        return str(record["label"])
    if record.get("divergence") or record.get("first_false") or record.get("false"):
        return "diverges"
    return "agrees" if record.get("passed") else "unverified"


def reverify(progress: Progress | None = None) -> Report:
    report = Report()
    _annotation_items(report, progress)
    _runs(report, progress)
    return report


def _each(what: str, rows: Iterable[Any], total: int, progress: Progress | None) -> Iterable[Any]:
    for done, row in enumerate(rows, 1):
        yield row
        if progress is not None:
            progress(what, done, total)


def _annotation_items(report: Report, progress: Progress | None) -> None:
    items = AnnotationItem.objects.all()
    for item in _each("annotation items", items.iterator(), items.count(), progress):
        new = item.verify(item.text, fresh=True).to_dict()
        report.note("annotation items", item.original_check, new)
        item.original_check, item.divergent = new, new["first_divergence"] is not None
        item.save(update_fields=["original_check", "divergent"])
        for row in [
            *item.annotations.exclude(decision=Annotation.SKIP),
            *Adjudication.objects.filter(item=item),
        ]:
            if not row.verification:  # a reject or a skip was never verified
                continue
            new = item.verify(row.text).to_dict()
            report.note("annotators' texts", row.verification, new)
            row.verification = new
            row.save(update_fields=["verification"])


def _runs(report: Report, progress: Progress | None) -> None:
    runs = (
        Run.objects.filter(executions__verification__isnull=False).distinct()
        | Run.objects.filter(verdicts__real__isnull=False).distinct()
    )
    runs = runs.distinct()
    for run in _each("runs", runs.iterator(), runs.count(), progress):
        for execution in Execution.objects.filter(run=run, public=True, verification__isnull=False):
            new = _checked(run, execution.candidate, execution.test, execution.turn)
            report.note("real executions", execution.verification, new)
            execution.verification = new
            execution.save(update_fields=["verification"])
        for verdict in Verdict.objects.filter(run=run, real__isnull=False, source="simulated"):
            old = verdict.real.get("verification") or verdict.real.get("divergence")
            new = _checked(run, verdict.candidate, verdict.test, verdict.turn)
            report.note("simulation verdicts", old if isinstance(old, dict) else None, new)
            verdict.real = {**verdict.real, "verification": new}
            verdict.save(update_fields=["real"])


def _checked(run: Run, candidate: int, test: int, turn: int) -> dict[str, Any]:
    """The verification of the simulation the run judged on this program and test, run again."""
    nlex = run.judged_nlex(candidate, turn).get(test)
    try:
        program = run.program_of(candidate, test, turn)
    except LookupError as exc:
        return unchecked("error", str(exc)).to_dict()
    if not nlex:
        return unchecked("no_trace", "no simulation was stored for this test").to_dict()
    return verify_result(nlex, traced(program, settings.EXECSIM_EXPLORER_MAX_STEPS), program).to_dict()
