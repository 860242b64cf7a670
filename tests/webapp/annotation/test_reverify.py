"""``manage.py reverify``: verdicts the old checker got wrong (a wrong final answer whose closing tag
vLLM cut was "verified") are corrected in the queue, in annotators' records, in the runs' checked
simulations, and so in exports; nothing is deleted."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from tests.webapp.explorer.support import FIXED_5
from webapp.annotation.enqueue import enqueue_run
from webapp.annotation.export import export_records
from webapp.annotation.models import Annotation, AnnotationItem
from webapp.runs.models import Simulation, Verdict

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("sandbox")]

# As vLLM returns it: no [/ANSWER]. The real add_one(5) is 6.
CUT_WRONG = "[THOUGHT] add_one is called with x = 5. [/THOUGHT]\n[ANSWER]\nassert add_one(5) == 7\n"
OLD_PASSED = {"passed": True, "claims": 1, "true": 1, "false": 0, "unverifiable": 0, "first_false": None}


def test_reverify_corrects_what_the_old_checker_verified(sim_run, ann1):
    Simulation.objects.filter(run=sim_run, test=1).update(text=CUT_WRONG)
    assert enqueue_run(sim_run).created == 2
    item = AnnotationItem.objects.get(simulation__test=1)
    # what the old verifier stored: the cut answer found no claim, so nothing was false
    AnnotationItem.objects.filter(pk=item.pk).update(
        original_check=OLD_PASSED, divergent=False, status="done", decision="accept"
    )
    Annotation.objects.create(
        item=item, annotator=ann1, decision="accept", text=CUT_WRONG, verification=OLD_PASSED
    )
    kept = Annotation.objects.create(
        item=AnnotationItem.objects.get(simulation__test=0),
        annotator=ann1,
        decision="reject",
        text=FIXED_5,
        verification={},
    )
    old_real = {"status": "ok", "output": "6", "match": True, "divergence": None}
    Verdict.objects.create(
        run=sim_run, candidate=0, test=1, expected="6", simulated="7", match=False, real=old_real
    )
    assert not AnnotationItem.objects.filter(divergent=True, pk=item.pk).exists()  # hidden by the filter

    out = io.StringIO()
    call_command("reverify", stdout=out)
    printed = out.getvalue()

    item.refresh_from_db()
    assert item.divergent and item.original_check["answer"]["verdict"] == "false"
    assert "annotation items: 2 checked, 1 changed" in printed
    assert "annotators' texts: 1 checked, 1 changed" in printed
    assert "simulation verdicts: 1 checked, 1 changed" in printed
    verdict = Verdict.objects.get(run=sim_run, test=1)
    assert verdict.real["verification"]["label"] == "diverges" and verdict.real["output"] == "6"
    [record] = export_records("all")
    assert record.verification["label"] == "diverges" and not record.verified
    assert list(export_records("verified")) == []
    assert Annotation.objects.count() == 2 and kept.pk in Annotation.objects.values_list("pk", flat=True)
