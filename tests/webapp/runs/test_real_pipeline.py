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
from webapp.runs.models import Candidate, RepairTurn, Run, Verdict
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
    defaults = {"k": 2, "turns": 1, "seed": 7, "temperature": 0.5, "real": False, "model": ""}
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


def _solve_for_real(alice, monkeypatch, script: PipelineScript, **settings) -> Run:
    server = FakeModelServer(script)
    with server.serve() as url:
        monkeypatch.setenv("EXECSIM_MODEL_URL", url)
        monkeypatch.setenv("EXECSIM_MODEL_NAME", server.model)
        run = _run(alice, **settings)
        assert execute_run(str(run.id)) == Run.FINISHED
    run.refresh_from_db()
    return run


def test_a_fix_not_kept_is_recorded_and_the_page_says_why(alice, client, monkeypatch):
    squares = "```python\nn = int(input())\nprint(n * n)\n```"  # 2 -> 4 right, 5 -> 25 wrong: as the attempt
    script = PipelineScript(solve=[WRONG], simulate=_perfect_simulator, repair=[squares])
    # greedy, so a fix not kept ends the repair (sampled, turn 2 asks again)
    run = _solve_for_real(alice, monkeypatch, script, k=1, turns=2, temperature=0.0)
    turn = RepairTurn.objects.get(run=run, turn=1)
    assert turn.code == "n = int(input())\nprint(n * n)\n" and turn.decided_by == "model"
    assert (turn.rejected["matched"], turn.rejected["attempt_matched"], turn.rejected["public_tests"]) == (
        1,
        1,
        2,
    )
    wrong = "n = int(input())\nprint(n + 2)\n"
    assert run.final_code == wrong and run.final_program() == (0, wrong)  # the attempt, not the fix
    assert turn.text.startswith("```python\n")  # the prefilled fence streamed once, as the start of the text
    client.force_login(alice)
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert 'data-testid="repair-not-kept"' in page
    assert "The fix is not kept: its simulation matched 1 of 2 public tests, the attempt" in page
    assert "Not asked: the fix of turn 1 was not kept, so the repair stopped there." in page


def test_a_program_the_simulation_accepts_is_submitted_unasked_and_the_page_says_so(
    alice, client, monkeypatch
):
    script = PipelineScript(solve=[RIGHT], simulate=_perfect_simulator)
    run = _solve_for_real(alice, monkeypatch, script, k=1, turns=2)
    turn = RepairTurn.objects.get(run=run, turn=1)
    assert turn.submitted and turn.decided_by == "simulation" and turn.text == ""
    client.force_login(alice)
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert 'data-testid="repair-submitted-unasked"' in page and "without asking the model" in page
    assert 'data-testid="repair-submitted"' not in page
    assert "Not asked: the program matched every public test at turn 1, so it was submitted." in page


def test_a_run_judged_by_real_runs_picks_what_really_passes_and_the_page_says_so(alice, client, monkeypatch):
    def misleading(code: str, stdin: str) -> str:  # simulated, the wrong program would be picked
        return f"<output>\n{int(stdin) * 2 if '+ 2' in code else 0}\n"

    silent = "```python\nn = int(input())\n```"  # prints nothing
    script = PipelineScript(solve=[WRONG, RIGHT, silent], simulate=misleading)
    server = FakeModelServer(script)
    with server.serve() as url:
        monkeypatch.setenv("EXECSIM_MODEL_URL", url)
        monkeypatch.setenv("EXECSIM_MODEL_NAME", server.model)
        run = _run(alice, k=3, turns=0, oracle=True)
        assert execute_run(str(run.id)) == Run.FINISHED
    assert script.calls == {"solve": 1}  # nothing simulated
    run.refresh_from_db()
    assert Candidate.objects.get(run=run, index=1).selected
    assert set(Verdict.objects.filter(run=run).values_list("source", flat=True)) == {"real"}
    assert run.selected["scores"] == [1, 2, 0] and "real execution" in run.selected["reason"]
    client.force_login(alice)
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert "Scores (real outputs, from running each candidate on the public tests" in page
    assert "Expected vs real output (the run judged by running the public tests)" in page
    assert "real output <code>4" in page  # a verdict cell shows what came out,
    assert 'real output <em class="muted">nothing</em>, expected' in page  # or that nothing did
    assert 'data-testid="run-real-oracle"' in page  # the real-execution panel says what already ran


def test_by_default_a_tie_goes_to_the_program_written_most_often_and_the_page_lists_the_counts(
    alice, client, monkeypatch
):
    def no_match(code: str, stdin: str) -> str:
        return "<output>\n0\n"  # every candidate ties at 0 matches

    server = FakeModelServer(PipelineScript(solve=[WRONG, RIGHT, RIGHT], simulate=no_match))
    with server.serve() as url:
        monkeypatch.setenv("EXECSIM_MODEL_URL", url)
        monkeypatch.setenv("EXECSIM_MODEL_NAME", server.model)
        run = _run(alice, k=3, turns=0)
        assert execute_run(str(run.id)) == Run.FINISHED
    run.refresh_from_db()
    assert run.selected["candidate"] in (1, 2) and run.selected["agreement"] == [1, 2, 2]
    client.force_login(alice)
    page = client.get(f"/runs/{run.id}/").content.decode()
    # candidates 1 and 2 are one program: the draw between them picks nothing, and is not called random
    assert (
        "(tie broken by how often the model wrote each program; the candidates left are one program)" in page
    )
    assert "at random" not in page
    assert 'data-testid="selected-agreement"' in page and "<code>0: 1, 1: 2, 2: 2</code>" in page
