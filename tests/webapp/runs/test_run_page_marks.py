"""The run page's pure helpers for issue 52: a verification cell's three marks kept apart, a repair that
only renames variables, seconds as a person reads them, stages that ended with their run, and a draw
among copies of one program."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from webapp.runs.models import Run
from webapp.runs.templatetags.run_tags import reply_text, seconds, totals_text
from webapp.runs.views_context import cell_marks, stage_rows

ANSWER_FALSE = {"answer": {"verdict": "false"}}  # the real run checked the narration's answer: wrong


def _marks(
    predicted: str | None, passes: bool | None, agrees: bool | None, contradicted: bool = False
) -> Any:
    return {"predicted": predicted, "passes": passes, "agrees": agrees, "contradicted": contradicted}


def _verdict(match: bool, simulated: str | None, source: str = "simulated") -> Any:
    return SimpleNamespace(match=match, simulated=simulated, source=source)


@pytest.mark.parametrize(
    ("verdict", "real", "marks"),
    [
        # before the program ran for real: a prediction only
        (_verdict(True, "2"), None, _marks("pass", None, None)),
        # simulated to fail, really passes: the failure is not real
        (_verdict(False, "7"), {"passed": True, "output": "6"},
         _marks("fail", True, False, contradicted=True)),
        # simulated to pass, really fails
        (_verdict(True, "2"), {"passed": False, "output": "3"},
         _marks("pass", False, False)),
        # both fail, the simulation said what really came out
        (_verdict(False, "3"), {"passed": False, "output": "3"},
         _marks("fail", False, True)),
        # the verified answer decides when the real run checked the narration
        (_verdict(False, "3"), {"passed": False, "output": "3", "verification": ANSWER_FALSE},
         _marks("fail", False, False)),
        # known to fail without a simulation: a prediction, nothing to agree
        (_verdict(False, None, "checked"), {"passed": False, "output": ""},
         _marks("fail", False, None)),
        # oracle mode: the cell is the real run itself
        (_verdict(True, None, "real"), None, _marks(None, True, None)),
    ],
)  # fmt: skip
def test_a_cell_keeps_prediction_real_outcome_and_agreement_apart(verdict, real, marks) -> None:
    assert cell_marks(verdict, real) == marks


def test_seconds_and_totals_read_as_a_person_reads_them() -> None:
    assert [seconds(v) for v in (0.019, 1.713, 21.125, 125.4, None)] == [
        "19 ms",
        "1.7 s",
        "21.1 s",
        "2 min 5 s",
        "",
    ]
    assert (
        totals_text({"tokens": 1204, "requests": 9, "seconds": 21.125})
        == "1,204 tokens · 9 requests · 21.1 s"
    )
    assert reply_text("```python\ndef f():\n    pass\n```") == "def f():\n    pass"
    assert reply_text("I would leave it.") == "I would leave it."


@pytest.mark.django_db
def test_a_stage_the_run_cut_short_says_how_it_ended_and_simulate_counts_its_tokens(make_run) -> None:
    stages = {
        "solve": {"state": "started"},
        "simulate": {"state": "finished", "seconds": 1.0, "turn": 0},
        "select": {"state": "finished"},
    }
    run = make_run(status=Run.CANCELLED, stages=stages)
    sims = [
        SimpleNamespace(turn=0, tokens=40),
        SimpleNamespace(turn=0, tokens=2),
        SimpleNamespace(turn=1, tokens=9),
    ]
    rows = dict(stage_rows(run, sims, real_pending=False))
    assert rows["solve"]["state"] == "cancelled" and rows["simulate"]["tokens"] == 42
    assert rows["select"]["no_model"] and not rows["solve"]["no_model"]
    run.status = Run.RUNNING
    assert dict(stage_rows(run, sims, real_pending=False))["solve"]["state"] == "started"


@pytest.mark.django_db
def test_a_repair_turn_told_of_a_failure_the_real_run_contradicts_says_so(client, alice, make_run) -> None:
    from webapp.runs.models import Candidate, Execution, RepairTurn, Verdict

    run = make_run(status="finished", settings={"k": 1, "turns": 1}, selected={"candidate": 0, "reason": "r"})
    Candidate.objects.create(
        run=run, index=0, code="def add_one(x):\n    return x + 1\n", done=True, selected=True
    )
    Verdict.objects.create(run=run, candidate=0, test=0, expected="2", simulated="2", match=True)
    Verdict.objects.create(run=run, candidate=0, test=1, expected="6", simulated="7", match=False)
    Execution.objects.create(run=run, candidate=0, test=1, status="ok", output="6", passed=True, expected="6")
    RepairTurn.objects.create(run=run, turn=1, done=True, code="def add_one(x):\n    return 1 + x\n",
                              previous_code="def add_one(x):\n    return x + 1\n")  # fmt: skip
    client.force_login(alice)
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert 'data-testid="repair-phantom"' in page
    assert "told that the program fails test 2, which it really passes" in page
    assert 'data-testid="contradicted"' in page  # the cell of test 2 as well
