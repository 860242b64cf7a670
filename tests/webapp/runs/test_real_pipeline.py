"""The task wired to the real ``simulator.pipeline.run`` and ``ChatClient``, against the fake model
server of ``simulator.llm.testing`` (a test double of vLLM): the web app records what the real pipeline
emits, and a model that is down ends the run failed with a clear message."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import pytest
from django.test import override_settings

from simulator.llm.testing import FakeModelServer, PipelineScript
from simulator.problem import Problem as CoreProblem
from webapp.problems.models import Problem
from webapp.runs.models import Candidate, Run, Verdict
from webapp.runs.tasks import execute_run

pytestmark = pytest.mark.django_db(transaction=True)

DOUBLE = {
    "title": "Double",
    "statement": "Read an integer n and print 2*n.",
    "kind": "stdin",
    "tests": [{"input": "2\n", "output": "4\n"}, {"input": "5\n", "output": "10\n"}],
}
RIGHT = "```python\nn = int(input())\nprint(2 * n)\n```"
WRONG = "```python\nn = int(input())\nprint(n + 2)\n```"


def _true_output(code: str, stdin: str) -> str:
    """What a trusted test program prints (the fake model 'simulates' perfectly)."""
    out, lines = io.StringIO(), iter(stdin.splitlines())
    with redirect_stdout(out):
        exec(compile(code, "<test>", "exec"), {"input": lambda *_: next(lines)})
    return out.getvalue()


def _perfect_simulator(code: str, stdin: str) -> str:
    return f"[THOUGHT] it prints the result [/THOUGHT]\n<output>\n{_true_output(code, stdin)}"


@pytest.fixture(autouse=True)
def real_pipeline(tmp_path, monkeypatch):
    monkeypatch.setenv("EXECSIM_DATA_DIR", str(tmp_path))
    with override_settings(EXECSIM_PIPELINE="simulator.pipeline.run"):
        yield


def _run(alice, **settings):
    problem = Problem.create_from_core(CoreProblem.from_dict(DOUBLE), alice, source="manual", is_public=True)
    defaults = {"k": 2, "turns": 1, "sims": 1, "seed": 7, "temperature": 0.5, "real": False, "model": ""}
    return Run.objects.create(problem=problem, user=alice, settings={**defaults, **settings})


def test_it_records_a_real_pipeline_run(alice, monkeypatch):
    server = FakeModelServer(PipelineScript(solve=[WRONG, RIGHT], simulate=_perfect_simulator))
    with server.serve() as url:
        monkeypatch.setenv("EXECSIM_MODEL_URL", url)
        monkeypatch.setenv("EXECSIM_MODEL_NAME", server.model)
        run = _run(alice)
        assert execute_run(str(run.id)) == Run.FINISHED

    run.refresh_from_db()
    assert run.provenance["model"] == "fake-model"
    assert Candidate.objects.get(run=run, index=1).selected
    assert Verdict.objects.filter(run=run, turn=0, candidate=1, match=True).count() == 2
    assert run.final_code == "n = int(input())\nprint(2 * n)\n"
    assert run.result["passed_public_simulated"] == 2
    seqs = list(run.events.values_list("seq", flat=True))
    assert seqs == list(range(len(seqs)))


def test_a_model_that_is_down_fails_the_run_with_a_message(alice, monkeypatch):
    monkeypatch.setenv("EXECSIM_MODEL_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    run = _run(alice, turns=0)
    assert execute_run(str(run.id)) == Run.FAILED
    run.refresh_from_db()
    assert run.events.last().type == "run_failed"
    assert run.events.last().payload["error"] == "model_unavailable"
    assert run.error
