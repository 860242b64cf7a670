"""'Simulate my code' against a problem: the user's program becomes the only candidate of a solve run on
the problem (simulated on its public tests, run for real on all, judged), only for problems the user
may see."""

from __future__ import annotations

import pytest

from webapp.runs.models import Run
from webapp.runs.tasks import execute_run

pytestmark = pytest.mark.django_db

OWN = "def add_one(x):\n    return x + 1\n"


def test_a_program_against_a_problem_is_a_solve_run_of_that_program(client, alice, problem, no_enqueue):
    client.force_login(alice)
    form = {"code": OWN, "mode": "call", "code_input": "", "problem": problem.pk, "max_tokens": 128}
    response = client.post("/simulate/", form)
    run = Run.objects.get()
    assert response["Location"] == f"/runs/{run.id}/"
    assert (run.kind, run.problem, run.code) == ("solve", problem, OWN)
    assert run.settings["k"] == 1 and run.settings["real"] is True and run.settings["max_tokens"] == 128
    assert run.pipeline_settings.narrate is True  # this mode is for the narration beside the real run
    assert run.problem_snapshot["title"] == problem.title


def test_someone_elses_private_problem_cannot_be_chosen(client, bob, problem, no_enqueue):
    problem.is_public = False
    problem.save()
    client.force_login(bob)
    page = client.post("/simulate/", {"code": OWN, "mode": "call", "code_input": "", "problem": problem.pk})
    assert page.status_code == 200 and "Select a valid choice" in page.content.decode()
    assert not Run.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_run_hands_the_program_to_the_pipeline(make_run, settings):
    seen: dict = {}

    async def pipeline(subject, run_settings, client, *, run_id, cancel, executor=None, code=None):  # double
        seen["code"] = code
        from simulator.pipeline.events import Sequencer

        emit = Sequencer(run_id)
        yield emit("run_started", problem=subject.to_dict(), settings={}, provenance={})
        yield emit("run_finished", candidate=0, code=code, totals={})

    import sys
    import types

    module = types.ModuleType("given_code_double")
    module.pipeline = pipeline  # type: ignore[attr-defined]
    sys.modules["given_code_double"] = module
    settings.EXECSIM_PIPELINE = "given_code_double.pipeline"
    run = make_run(code=OWN, settings={"k": 1, "turns": 0, "real": True})
    assert execute_run(str(run.id)) == Run.FINISHED and seen["code"] == OWN
