"""A private test shows another user its verdict only: passed or failed (issue 51, item 2).

A program that sleeps and allocates in proportion to the characters of its input read a private
input back, two characters per run and test, from the time and memory the run page showed for it
("test 2 private … 1.66 s · 55.6 MB"). Judges (Codeforces, LeetCode, Judge0's hosts) show a hidden
test's verdict only. alice owns a public problem with a private test; bob runs it; carol is staff; a
visitor holds a share link. alice and carol see everything; bob, on his own run, and every share-link
reader see of the private test only whether it passed: no time, memory, status or message, and no
figure that adds its time in (the slowest test, the execute stage's seconds, the run's total seconds).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from simulator.pipeline.events import Sequencer
from simulator.problem import Problem as CoreProblem
from webapp.problems.models import Problem
from webapp.runs.models import Run
from webapp.runs.render import render_message
from webapp.runs.tasks import execute_run

pytestmark = pytest.mark.django_db(transaction=True)

CODE = "def add_one(x):\n    return x + 1\n"
# what the private test's run cost, and how it ended: each a channel out of the private input
PRIVATE_COST = ("1.66 s", "55.6 MB")
PRIVATE_DETAIL = ("timeout", "Time limit exceeded", "wall-clock limit of 1 s exceeded")
STAGE_SECONDS, TOTAL_SECONDS = "1.713", "4.321"  # the execute stage (both tests), the whole run
SHOWN_STAGE_SECONDS, SHOWN_TOTAL_SECONDS = "1.7 s", "4.3 s"  # as the page shows them


async def costly_pipeline(problem: Any, settings: Any, client: Any, *, run_id: str, **extra: Any):
    """One candidate, run for real: fast on the public test, slow, big and out of time on the private
    one (what a program timing itself on its input would do)."""
    emit = Sequencer(run_id)
    yield emit("run_started", problem=problem.to_dict(), settings={}, provenance={"model": "double"})
    yield emit("candidate_done", candidate=0, text=CODE, code=CODE, parse_error=None, tokens=3)
    yield emit("selected", candidate=0, scores=[1], tied=[0], broken_by=[], seed=7, reason="only one")
    yield emit("stage", stage="execute", state="started", final=True)
    common = {"candidate": 0, "turn": 0, "final": True, "verification": None, "traced": False}
    yield emit("execution", **common, test=0, public=True, status="ok", output="2", expected="2",
               passed=True, message="", seconds=0.012, memory_kb=10035)  # fmt: skip
    yield emit("execution", **common, test=1, public=False, status="timeout", output="", expected="8",
               passed=False, message=PRIVATE_DETAIL[2], seconds=1.66, memory_kb=56934)  # fmt: skip
    yield emit("stage", stage="execute", state="finished", final=True, seconds=float(STAGE_SECONDS))
    yield emit("run_finished", candidate=0, code=CODE, passed_public_simulated=True, public_tests=1,
               turns_used=0, real={"passed_public": 1, "public_tests": 1, "passed_private": 0,
               "private_tests": 1}, totals={"tokens": 3, "seconds": float(TOTAL_SECONDS)})  # fmt: skip


@pytest.fixture(autouse=True)
def _costly(settings: Any) -> None:
    settings.EXECSIM_PIPELINE = f"{__name__}.costly_pipeline"


@pytest.fixture
def timed_problem(alice: Any) -> Problem:
    core = CoreProblem.from_dict(
        {
            "title": "Add one, timed",
            "statement": "Return `x + 1`.",
            "kind": "call",
            "entry_point": "add_one",
            "tests": [{"input": "1", "output": "2"}, {"input": "7", "output": "8", "public": False}],
        }
    )
    return Problem.create_from_core(core, alice, source="manual", is_public=True)


def _run(user: Any, problem: Problem) -> Run:
    made = Run.objects.create(
        problem=problem, user=user, settings={"k": 1, "turns": 0, "seed": 7, "real": True}
    )
    assert execute_run(str(made.id)) == Run.FINISHED
    made.refresh_from_db()
    assert made.executions.get(test=1).cost == " · ".join(PRIVATE_COST)  # there to leak
    return made


def _private_row(page: str) -> str:
    rows = re.findall(r'<div class="xrow[^"]*"[^>]*data-test="1">.*?\n</div>', page, re.S)
    assert len(rows) == 1, page
    return rows[0]


def _hides(html: str) -> None:
    """Nothing of the private test beyond its verdict, nor a figure that adds its time in."""
    for shown in (
        *PRIVATE_COST,
        *PRIVATE_DETAIL,
        STAGE_SECONDS,
        TOTAL_SECONDS,
        SHOWN_STAGE_SECONDS,
        SHOWN_TOTAL_SECONDS,
    ):
        assert shown not in html, shown


def _shows(html: str) -> None:
    for shown in (*PRIVATE_COST, "Time limit exceeded", SHOWN_STAGE_SECONDS):
        assert shown in html, shown


def test_bob_sees_his_run_on_alices_problem_fail_a_private_test_and_nothing_more(client, bob, timed_problem):
    run = _run(bob, timed_problem)
    client.force_login(bob)
    page = client.get(f"/runs/{run.id}/").content.decode()
    row = _private_row(page)
    assert 'data-testid="execution-status">failed<' in row and "✗" in row
    _hides(page)
    assert "Failed on test 2 (a private test) (1/2 passed)" in page
    assert "12 ms · 9.8 MB" in page  # the public test's cost is his to see
    assert "Slowest test 12 ms · peak memory 9.8 MB" in page  # over the tests he may see
    history = client.get("/runs/").content.decode()
    assert "Failed 1/2" in history and "Time limit exceeded" not in history
    problem_page = client.get(f"/problems/{timed_problem.pk}/").content.decode()
    assert "Failed 1/2" in problem_page and "Time limit exceeded" not in problem_page


def test_share_link_readers_see_the_verdict_only_even_of_the_problem_owners_run(
    client, alice, bob, timed_problem
):
    for run in (_run(bob, timed_problem), _run(alice, timed_problem)):
        page = client.get(f"/share/{run.share_token}/").content.decode()
        assert 'data-testid="execution-status">failed<' in _private_row(page)
        _hides(page)


def test_the_problems_owner_and_staff_see_the_private_tests_cost(client, alice, bob, carol, timed_problem):
    client.force_login(alice)
    _shows(client.get(f"/runs/{_run(alice, timed_problem).id}/").content.decode())
    client.force_login(carol)  # staff, on bob's run
    page = client.get(f"/runs/{_run(bob, timed_problem).id}/").content.decode()
    _shows(page)
    assert 'data-testid="execution-status">timeout<' in _private_row(page)


def _export(client: Any, run: Run, token: str | None = None) -> tuple[str, dict[str, Any]]:
    response = client.get(f"/runs/{run.id}/export.json" + (f"?token={token}" if token else ""))
    assert response.status_code == 200
    return response.content.decode(), response.json()


def test_the_export_keeps_only_the_private_tests_verdict(client, alice, bob, timed_problem):
    run = _run(bob, timed_problem)
    for viewer, token in ((bob, None), (None, run.share_token)):  # bob; a visitor with the link
        client.logout()
        if viewer is not None:
            client.force_login(viewer)
        body, data = _export(client, run, token)
        private = next(e for e in data["events"] if e["type"] == "execution" and e["payload"]["test"] == 1)
        assert private["payload"]["passed"] is False and private["payload"]["redacted"] is True
        for key in ("status", "seconds", "memory_kb", "message"):
            assert key not in private["payload"], key
        public = next(e for e in data["events"] if e["type"] == "execution" and e["payload"]["test"] == 0)
        assert public["payload"]["seconds"] == 0.012  # the public test's cost stays
        assert "seconds" not in data["stages"]["execute"] and "seconds" not in data["totals"]
        assert '"seconds": 1.66' not in body and STAGE_SECONDS not in body and TOTAL_SECONDS not in body
    client.force_login(alice)  # the problem's owner exports her own run whole
    body, data = _export(client, _run(alice, timed_problem))
    private = next(e for e in data["events"] if e["type"] == "execution" and e["payload"]["test"] == 1)
    assert private["payload"]["status"] == "timeout" and private["payload"]["memory_kb"] == 56934
    assert json.dumps(data["stages"]["execute"]["seconds"]) == STAGE_SECONDS


def test_live_fragments_show_the_verdict_only(alice, bob, timed_problem):
    run = _run(bob, timed_problem)
    for event in run.events.filter(type__in=("execution", "stage", "run_finished")):
        owner, reader = render_message(run, event.as_event_dict())  # bob's page; a share link's
        _hides(owner)
        _hides(reader)
    alices = _run(alice, timed_problem)
    private = alices.events.get(type="execution", payload__test=1).as_event_dict()
    owner, reader = render_message(alices, private)
    assert "1.66 s · 55.6 MB" in owner and "1.66 s" not in reader
