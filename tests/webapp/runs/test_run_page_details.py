"""Run page details a developer reads: provenance as a table (no local paths or server address for
share-link readers), a candidate that used its whole token budget flagged, repair turns that say what
happened (no program in the reply; a turn never asked, and why)."""

from __future__ import annotations

import pytest

from webapp.runs.models import Candidate, RepairTurn

pytestmark = pytest.mark.django_db

PROVENANCE = {
    "model": "smollm2-135m-nlex",
    "server": "http://10.1.2.3:8765/v1",
    "model_root": "/srv/models/x",
}


@pytest.fixture
def ended(make_run):
    run = make_run(status="finished", provenance=PROVENANCE, settings={"k": 1, "turns": 2, "model": ""})
    Candidate.objects.create(run=run, index=0, code="def add_one(x):\n    return x\n", done=True, tokens=512,
                             finish_reason="length", selected=True)  # fmt: skip
    RepairTurn.objects.create(run=run, turn=1, text="I am not sure.", done=True, code="",
                              parse_error="neither #SUBMIT nor a corrected program")  # fmt: skip
    return run


def test_the_owner_sees_provenance_as_a_table_and_share_readers_see_no_local_detail(client, alice, ended):
    client.force_login(alice)
    page = client.get(f"/runs/{ended.id}/").content.decode()
    assert 'data-testid="provenance-table"' in page and "Model server" in page and "/srv/models/x" in page
    assert "model: default" in page and "model: ," not in page  # the settings' empty model named
    client.logout()
    shared = client.get(f"/share/{ended.share_token}/").content.decode()
    assert "smollm2-135m-nlex" in shared
    assert "10.1.2.3" not in shared and "/srv/models/x" not in shared


def test_a_share_link_export_has_no_local_detail_either(client, alice, ended):
    from webapp.runs.models import RunEvent

    RunEvent.objects.create(run=ended, seq=0, type="run_started", payload={"provenance": PROVENANCE})
    client.force_login(alice)
    own = client.get(f"/runs/{ended.id}/export.json").json()
    assert own["provenance"] == PROVENANCE and own["events"][0]["payload"]["provenance"] == PROVENANCE
    client.logout()
    shared = client.get(f"/runs/{ended.id}/export.json?token={ended.share_token}").content.decode()
    assert "smollm2-135m-nlex" in shared
    assert "10.1.2.3" not in shared and "/srv/models/x" not in shared


def test_budget_and_repair_turns_say_what_happened(client, alice, ended):
    client.force_login(alice)
    page = client.get(f"/runs/{ended.id}/").content.decode()
    assert 'data-testid="candidate-budget"' in page and "used its whole token budget" in page
    assert 'data-testid="candidate-looped"' not in page
    Candidate.objects.filter(run=ended).update(finish_reason="repetition", tokens=96)
    looped = client.get(f"/runs/{ended.id}/").content.decode()
    assert 'data-testid="candidate-budget"' not in looped and 'data-testid="candidate-looped"' in looped
    assert "96 tokens: the reply began repeating itself and was stopped there" in looped
    assert 'data-testid="repair-no-program"' in page and "No program in the reply" in page
    assert "Diff against the previous program" not in page
    assert 'data-testid="repair-skipped"' in page and "turn 1 gave no program" in page


def test_a_program_known_to_fail_says_why_instead_of_a_simulation(client, alice, make_run):
    """A verdict judged without simulating (``source: checked``, simulator.pipeline.static): the matrix
    cell and the candidate's simulation slot say why, live and on the page."""
    from webapp.runs.models import RunEvent
    from webapp.runs.record import apply_event
    from webapp.runs.render import render_event

    run = make_run(status="finished", settings={"k": 1, "turns": 0})
    Candidate.objects.create(run=run, index=0, code="assert add_one(1) == 2\n", done=True, selected=True)
    reason = "the program does not define add_one, which the tests call"
    payload = {"candidate": 0, "test": 0, "turn": 0, "expected": "2", "source": "checked",
               "simulated": None, "match": False, "reason": reason}  # fmt: skip
    apply_event(run, "verdict", payload)
    RunEvent.objects.create(run=run, seq=0, type="verdict", payload=payload)

    live = render_event(run, {"seq": 0, "type": "verdict", "payload": payload})
    assert f"not simulated: {reason}" in live  # the verdict cell
    assert 'id="sim-0-0-0-result"' in live and f"Not simulated: {reason}." in live  # the simulation slot
    client.force_login(alice)
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert page.count('data-testid="verdict-checked"') == 1
    assert 'data-testid="simulation-checked"' in page and f"Not simulated: {reason}." in page


def test_a_guided_turn_shows_every_reply_and_which_was_taken_live_and_on_the_page(
    client, alice, bob, make_run
):
    """A guided turn samples several replies and takes the one judged best: the streamed text (the
    first reply) is replaced by the reply taken, and every reply says why it was or was not taken
    (its ``why``, the pipeline's sentence)."""
    from webapp.runs.record import apply_event
    from webapp.runs.render import render_event

    run = make_run(status="finished", settings={"k": 1, "turns": 1, "fixes": 3})
    Candidate.objects.create(
        run=run, index=0, code="def add_one(x):\n    return x\n", done=True, selected=True
    )
    fix = "def add_one(x):\n    return x + 1\n"
    replies = [
        {"fix": 0, "text": "```python\ndef add_one(x):\n    return x", "code": None,
         "error": "the reply repeats the attempted code", "matched": None,
         "why": "the reply repeats the attempted code"},
        {"fix": 1, "text": "```python\ndef add_one(x):\n    return x + 1", "code": fix, "error": None,
         "matched": 1, "why": "its verdicts matched 1 of 1 public tests, the most of the replies"},
        {"fix": 2, "text": "```python\ndef add_one(x):\n    return x + 2", "code": "...", "error": None,
         "matched": 0, "why": "its verdicts matched 0 of 1 public tests"},
    ]  # fmt: skip
    apply_event(run, "repair_delta", {"turn": 1, "text": replies[0]["text"]})
    payload = {"turn": 1, "submitted": False, "code": fix, "text": replies[1]["text"], "feedback": [],
               "parse_error": None, "decided_by": "model", "fix": 1, "replies": replies}  # fmt: skip
    apply_event(run, "repair_turn", payload)

    turn = RepairTurn.objects.get(run=run, turn=1)
    assert turn.text == replies[1]["text"] and turn.fix == 1 and turn.replies == replies
    live = render_event(run, {"seq": 5, "type": "repair_turn", "payload": payload})
    # the reply taken, without the code fence its request opened it with (issue 52)
    assert 'id="repair-1-text" hx-swap-oob="true">def add_one(x):\n    return x + 1</pre>' in live
    assert "Reply 2 of 3 was taken" in live
    client.force_login(alice)
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert (
        "Reply 2 of 3 was taken: its verdicts matched 1 of 1 public tests, the most of the replies." in page
    )
    assert page.count('data-testid="repair-reply"') == 3
    assert '<li data-testid="repair-reply">the reply repeats the attempted code.' in page
    assert (
        "Taken: its verdicts matched 1 of 1" in page and ">its verdicts matched 0 of 1 public tests." in page
    )
    turn.replies = [{k: v for k, v in r.items() if k != "why"} for r in replies]  # a run saved before ``why``
    turn.save(update_fields=["replies"])
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert "the reply repeats the attempted code." in page and "None." not in page
    client.force_login(bob)  # another user's private run: nothing of it
    assert client.get(f"/runs/{run.id}/").status_code == 404
    client.logout()
    assert "Reply 2 of 3" not in client.get(f"/runs/{run.id}/").content.decode()


@pytest.mark.parametrize(
    ("recorded", "headline"),
    [
        (  # a tie decided in three steps, each named in turn
            {"broken_by": ["known", "agreement", "random"], "agreement": [1, 2, 1]},
            "(tie broken with the programs known to fail left out, then by how often the model wrote "
            "each program, then at random among equals, seed 7).",
        ),
        ({"broken_by": ["known"]}, "(tie broken with the programs known to fail left out)."),
        ({"broken_by": ["random"]}, "(tie broken at random, seed 7)."),
        (  # a run recorded before ``broken_by``: what its payload holds, then the draw
            {"agreement": [1, 2, 1]},
            "(tie broken by how often the model wrote each program, then at random among equals, seed 7).",
        ),
    ],
)
def test_the_selected_panel_says_what_decided_a_tie(client, alice, make_run, recorded, headline):
    run = make_run(status="finished", settings={"k": 3, "turns": 0})
    run.selected = {
        "candidate": 1,
        "scores": [0, 0, 0],
        "tied": [0, 1, 2],
        "seed": 7,
        "reason": "r",
        **recorded,
    }
    run.save()
    client.force_login(alice)
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert headline in page


@pytest.mark.parametrize(
    ("narrate", "said"),
    [(False, "simulated output, answered at once (no narration)"), (True, "simulated execution (NLEX)")],
)
def test_a_simulation_says_whether_it_narrated(client, alice, make_run, narrate, said):
    """The default asks for the answer at once (its reply opens with an empty thought): the card does
    not call that a narration."""
    from webapp.runs.models import Simulation

    run = make_run(status="finished", settings={"k": 1, "turns": 0, "narrate": narrate})
    Candidate.objects.create(run=run, index=0, code="def add_one(x):\n    return x + 1\n", done=True)
    Simulation.objects.create(
        run=run, candidate=0, test=0, text="[THOUGHT]\n[/THOUGHT]\n[ANSWER]\n", done=True
    )
    client.force_login(alice)
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert said in page and ("simulated execution (NLEX)" in page) == narrate
    # the empty thought is the request's prefill: the page does not show it (the live stream: below)
    assert "[/THOUGHT]" not in page and "[ANSWER]" in page


def test_the_live_stream_of_an_answer_at_once_starts_with_the_models_words(make_run):
    from webapp.runs.render import render_event

    run = make_run(status="running", settings={"k": 1, "turns": 0})
    delta = {"candidate": 0, "test": 0, "turn": 0, "sample": 0}
    first = render_event(
        run,
        {
            "seq": 3,
            "type": "simulation_delta",
            "payload": {**delta, "text": "[THOUGHT]\n[/THOUGHT]\n[ANSWER]\nassert f(1) == 2"},
        },
    )
    narrated = render_event(
        run, {"seq": 4, "type": "simulation_delta", "payload": {**delta, "text": "[THOUGHT]\nf is"}}
    )
    assert "THOUGHT" not in first and "[ANSWER]\nassert f(1) == 2" in first
    assert "[THOUGHT]\nf is" in narrated


@pytest.mark.parametrize(
    ("cut", "said"),
    [
        (True, "used its whole token budget, so the answer was asked for at once"),
        (False, "the model stopped"),
    ],
)
def test_a_forced_answer_says_how_the_narration_ended(client, alice, make_run, cut, said):
    """The ``simulation_done`` event's ``cut`` is recorded, and the card says which way it was asked."""
    from webapp.runs.record import apply_event

    run = make_run(status="finished", settings={"k": 1, "turns": 0, "narrate": True})
    Candidate.objects.create(run=run, index=0, code="def add_one(x):\n    return x + 1\n", done=True)
    done = {"candidate": 0, "test": 0, "turn": 0, "sample": 0, "text": "[THOUGHT]\n", "predicted": "2"}
    apply_event(run, "simulation_done", {**done, "tokens": 9, "cut": cut, "forced": True})
    client.force_login(alice)
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert 'data-testid="simulation-forced"' in page and said in page


@pytest.mark.parametrize(
    ("copied", "said"), [("input", "repeats the program's input"), ("example", "example output")]
)
def test_a_prediction_that_may_be_a_copy_says_so(client, alice, make_run, copied, said):
    """The ``simulation_done`` event's ``copied`` is recorded and flagged on the card."""
    from webapp.runs.record import apply_event

    run = make_run(status="finished", settings={"k": 1, "turns": 0})
    Candidate.objects.create(run=run, index=0, code="print(input())\n", done=True)
    done = {"candidate": 0, "test": 0, "turn": 0, "sample": 0, "text": "<output>\n", "predicted": "5\n"}
    apply_event(run, "simulation_done", {**done, "tokens": 3, "copied": copied})
    client.force_login(alice)
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert f'data-copied="{copied}"' in page and said in page
    apply_event(run, "simulation_done", {**done, "tokens": 3, "copied": None})
    assert 'data-testid="simulation-copied"' not in client.get(f"/runs/{run.id}/").content.decode()


def test_a_candidate_that_repeats_an_earlier_one_folds_into_its_card(client, alice, make_run):
    """Four identical cards read as four programs: a copy's badge names the first of the same program
    (layout, comments and added test code aside, as the agreement tie-break counts them), whose badge
    counts the copies, as soon as they are written (issue 52: one card with a count)."""
    run = make_run(status="finished", settings={"k": 3, "turns": 0})
    programs = [
        "def add_one(x):\n    return x + 1\n",
        "def add_one(x):  # one more\n    return x + 1\n\nassert add_one(1) == 2\n",
        "def add_one(x):\n    return x + 2\n",
    ]
    for i, code in enumerate(programs):
        Candidate.objects.create(run=run, index=i, code=code, done=True)
    client.force_login(alice)
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert page.count('data-testid="candidate-same-as"') == 1
    assert 'the same program as <a href="#cand-0">#0</a>' in page
    assert 'id="cand-1-badge" class="badge" data-testid="candidate-badge" data-same-as="0"' in page
    assert page.count('data-testid="candidate-copies"') == 1 and "written 2 times" in page
