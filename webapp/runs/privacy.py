"""Who may see which of a run's tests: the one answer for the run page, its live fragments, its share
link, its export, and for starting new work on a run (retry, Run for real).

A problem's private tests (input, expected output, and what a program printed or returned on them) are
for the problem's owner and staff. A run's owner may be someone else (bob's run on alice's public
problem): he sees the public tests and, of the private ones, only that they exist and whether each
passed, as judges show hidden tests. Not how one failed (a time limit, an error, its message), nor what
it cost (time, memory), nor a figure that adds its time in (the execute stage's seconds, the run's
total seconds): a program that sleeps or allocates in proportion to its input's characters read a
private input back through them. A share link shows what a visitor may see, whoever opens it: the
public tests only, and of the provenance what was run, not where (no local folder, no model server
address).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from simulator import config
from simulator.pipeline.judge import Judgement, judge
from webapp.problems.models import Problem
from webapp.runs.models import Run, at_last_turn

# Provenance that says where, not what: the model's folder and the model server's address.
LOCAL_DETAILS = frozenset({"model_root", "server"})
# What an event about a hidden test keeps: which test and program it is about, and whether it passed
# (not its status, message, time or memory).
_KEPT = frozenset({"candidate", "test", "turn", "final", "sample", "public", "passed", "match", "source"})
# The stages whose seconds add up the real runs of every test, private ones included.
TIMED_STAGES = frozenset({"execute"})


def sees_private_tests(run: Run, viewer: Any) -> bool:
    """Whether ``viewer`` (a user; None for a share-link reader) may see the private tests of
    ``run``'s problem: its owner and staff. A pasted program's run has no private test."""
    return run.problem_id is None or run.problem.editable_by(viewer)


def hidden_tests(run: Run, viewer: Any) -> frozenset[int]:
    """The indices (into all the problem's tests, as in the events) of the tests ``viewer`` may not
    see: the private ones, unless ``sees_private_tests``."""
    if sees_private_tests(run, viewer):
        return frozenset()
    return frozenset(i for i, test in enumerate(run.core_problem().tests) if not test.public)


def may_see_test(run: Run, viewer: Any, index: int) -> bool:
    """May ``viewer`` see test ``index`` of ``run`` (its input, expected output, outputs on it)?"""
    return index not in hidden_tests(run, viewer)


def problem_for(problem: dict[str, Any], hidden: frozenset[int]) -> dict[str, Any]:
    """A problem's JSON form (``simulator.problem.Problem.to_dict``) with the hidden tests' input and
    output blanked to None; they stay in place so that test numbers keep their meaning."""
    tests = [
        {"input": None, "output": None, "public": False} if i in hidden else test
        for i, test in enumerate(problem.get("tests") or [])
    ]
    return {**problem, "tests": tests}


def provenance_for(provenance: dict[str, Any], shared: bool) -> dict[str, Any]:
    """A run's provenance as its reader sees it: a share-link reader (``shared``) without the
    ``LOCAL_DETAILS``."""
    if not shared:
        return provenance
    return {k: v for k, v in provenance.items() if k not in LOCAL_DETAILS}


def stages_for(
    stages: dict[str, Any], hidden: frozenset[int], shared: bool = False, server: str | None = None
) -> dict[str, Any]:
    """A run's stages (``Run.stages``) as a viewer who may not see ``hidden`` reads them: without the
    seconds of the stages that ran the hidden tests (``TIMED_STAGES``); for a share-link reader
    (``shared``), their errors without where (``message_for``)."""
    return {name: _stage_for(name, stage, hidden, shared, server) for name, stage in stages.items()}


def _stage_for(
    name: str, stage: dict[str, Any], hidden: frozenset[int], shared: bool, server: str | None
) -> dict[str, Any]:
    if hides_seconds(name, hidden):
        stage = {k: v for k, v in stage.items() if k != "seconds"}
    if shared and isinstance(stage.get("error"), str):
        stage = {**stage, "error": message_for(stage["error"], shared, server)}
    return stage


def totals_for(totals: dict[str, Any], hidden: frozenset[int]) -> dict[str, Any]:
    """A run's totals as a viewer who may not see ``hidden`` reads them: without the run's seconds,
    which add up the hidden tests' runs too."""
    return {k: v for k, v in totals.items() if k != "seconds"} if hidden else totals


def hides_seconds(stage: str, hidden: Any) -> bool:
    """Whether a viewer who may not see ``hidden`` is shown no seconds for stage ``stage``."""
    return bool(hidden) and _timed(stage)


def _timed(stage: str) -> bool:
    return stage.split(" ", 1)[0] in TIMED_STAGES  # "execute", or a stage keyed with its turn


# Where, in a message (a failed run's, a Run for real's): an address (a URL, a host with its port) or
# an absolute path with a folder in it. A model server's errors name it by its URL (simulator.llm.client).
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s'\"<>()]+", re.IGNORECASE)
_HOST_PORT = re.compile(
    r"\b(?:localhost|\d{1,3}(?:\.\d{1,3}){3}|[a-z0-9-]+(?:\.[a-z0-9-]+)+)(?::\d{1,5})\b|\[[0-9a-f:]+\]:\d{1,5}",
    re.IGNORECASE,
)
_PATH = re.compile(r"(?<![\w.:/~-])/(?:[\w.+@-]+/)+[\w.+@-]*")
_MODEL_SERVER, _ADDRESS, _FOLDER = "the model server", "(address hidden)", "(path hidden)"


def message_for(text: str, shared: bool, server: str | None = None) -> str:
    """A message recorded for a run (``Run.error``, ``run_failed``'s ``message``, a Run for real's
    error) as its reader sees it: a share-link reader (``shared``) reads what happened, not where, as
    with the provenance (``LOCAL_DETAILS``): the model server's URL (``server``: the run's
    provenance's, else the one configured) becomes "the model server", any other address "(address
    hidden)" and a server folder "(path hidden)". The run's owner and staff read it as recorded."""
    if not shared or not text:
        return text
    served = urlsplit(server or config.model_url()).netloc

    def address(match: re.Match[str]) -> str:
        url = match.group(0).rstrip(".,;:")  # the sentence's punctuation stays
        tail = match.group(0)[len(url) :]
        return (_MODEL_SERVER if urlsplit(url).netloc == served else _ADDRESS) + tail

    text = _URL.sub(address, text)
    text = re.sub(rf"\bmodel server at {_MODEL_SERVER}", "model server", text)
    return _PATH.sub(_FOLDER, _HOST_PORT.sub(_ADDRESS, text))


def server_of(run: Run) -> str | None:
    """The model server ``run`` talked to (its provenance's), for ``message_for``."""
    return (run.provenance or {}).get("server") or None


def event_for(
    event: dict[str, Any], hidden: frozenset[int], shared: bool = False, server: str | None = None
) -> dict[str, Any]:
    """An event (``RunEvent.as_event_dict``) as a viewer who may not see ``hidden`` reads it: the
    ``run_started`` problem redacted; an event about a hidden test keeps only which test and program
    it is about and whether it passed or matched (``redacted: true`` says so); the execute stage's
    and the run's seconds dropped. A share-link reader (``shared``) reads the provenance and the run's
    and a stage's error message without where (``provenance_for``, ``message_for``; ``server``: the
    run's model server)."""
    payload = event["payload"]
    if shared and isinstance(payload.get("provenance"), dict):
        payload = {**payload, "provenance": provenance_for(payload["provenance"], shared)}
    if shared and event["type"] in ("run_failed", "stage"):
        payload = {
            k: message_for(v, shared, server) if k in ("message", "error") and isinstance(v, str) else v
            for k, v in payload.items()
        }
    if not hidden:
        return {**event, "payload": payload}
    if isinstance(payload.get("problem"), dict):
        payload = {**payload, "problem": problem_for(payload["problem"], hidden)}
    elif payload.get("test") in hidden:
        kept = {k: v for k, v in payload.items() if k in _KEPT}
        if isinstance(payload.get("real"), dict):
            kept["real"] = {k: v for k, v in payload["real"].items() if k in _KEPT}
        payload = {**kept, "redacted": True}
    elif event["type"] == "stage" and hides_seconds(str(payload.get("stage")), hidden):
        payload = {k: v for k, v in payload.items() if k != "seconds"}
    elif isinstance(payload.get("totals"), dict):
        payload = {**payload, "totals": totals_for(payload["totals"], hidden)}
    return {**event, "payload": payload}


def final_judgement_for(run: Run, viewer: Any) -> Judgement | None:
    """``Run.final_judgement`` as ``viewer`` (None: a share-link reader) may read it (the lists'
    verdict column): a private test they may not see shows whether it passed only. Reads the
    prefetched ``executions``; asks who the viewer is only when the final program ran a private test."""
    rows = [x for x in run.executions.all() if x.candidate == run.final_candidate]
    if run.final_candidate is None or not rows:
        return None
    final = at_last_turn(rows, lambda x: x.turn)
    private = frozenset(x.test for x in final if not x.public)
    hidden = private if private and not sees_private_tests(run, viewer) else frozenset()
    return judge([x.outcome() for x in final], hidden, run.test_label)


def shared_for_annotation(run: Run) -> bool:
    """Whether ``run``'s simulations go into the shared annotation queue, which every annotator reads
    (title, code, inputs, the model's text). The model's runs on a public problem do. A user's own
    program ("Simulate my code": ``Run.code``, with or without a problem chosen, a public one
    included) and a private problem's runs only when whoever started the run opted in (``annotate``
    in its settings, a box on the Solve and Simulate forms, off by default there: "only you see it";
    only the owner and staff can run a private problem): pasted code is its author's until they share
    it. Staff adding a run by hand with ``manage.py enqueue_annotations RUN_ID`` opt it in; the queue
    page's picker offers only runs this says are shared."""
    if run.settings.get("annotate") is True:
        return True
    if run.code:  # the user's own program: never shared by the problem's being public
        return False
    return run.problem_id is not None and run.problem.is_public


def may_start_work(run: Run, user: Any) -> bool:
    """Whether ``user`` may start new work on ``run``'s problem (retry it, run it for real): only while
    the problem is still visible to them. A problem made private since is not run again for a user
    who may no longer see it; what the run already shows stays readable (redacted as above)."""
    if run.problem_id is None:
        return True
    return Problem.objects.visible_to(user).filter(pk=run.problem_id).exists()
