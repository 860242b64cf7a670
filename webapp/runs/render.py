"""Events -> HTML fragments for the live run page. Each fragment is one partial template (the same one
the page includes when it renders from the database) marked ``hx-swap-oob`` so htmx's WebSocket
extension swaps it into place. Streaming deltas are appended as escaped text.

Rendering reads the denormalised rows (already saved when the event is broadcast), so a replayed event
and a live one render the same. A live event is rendered once, by the process that recorded it
(``record.publish``), for both kinds of viewer (``render_message``); the consumers only forward it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.template.loader import render_to_string
from django.utils.html import escape

from simulator.prompts.solve import PREFILL
from webapp.marks import claims_in, shown_from
from webapp.runs.models import (
    Execution,
    RepairTurn,
    Run,
    RunEvent,
    Simulation,
    Verdict,
    explorer_link,
)
from webapp.runs.privacy import hidden_tests
from webapp.runs.views_context import (
    candidate_badges,
    real_progress,
    really,
    run_context,
    sim_dom,
    verdict_dom,
)


def _append(target: str, text: str) -> str:
    return f'<div hx-swap-oob="beforeend:#{target}">{escape(text)}</div>'


def _partial(template: str, **context: Any) -> str:
    return render_to_string(f"runs/fragments/{template}", {"oob": True, **context})


# A fragment, or one that differs for read-only viewers (share links: no Cancel, Retry, Run for real).
Part = str | Callable[[bool], str]


def _for_viewer(template: str, context: dict[str, Any]) -> Callable[[bool], str]:
    """The fragment for the run's owner (and staff) and for share-link readers, each told which tests
    they may not see (``webapp.runs.privacy``)."""
    run = context["run"]
    hidden = {False: hidden_tests(run, run.user), True: hidden_tests(run, None)}
    return lambda readonly: _partial(
        template, **{**context, "readonly": readonly, "hidden_tests": hidden[readonly]}
    )


def render_event(run: Run | Any, event: dict[str, Any], *, readonly: bool = False) -> str:
    """The HTML message for one event (several oob fragments, then the sequence marker). ``run``: the
    Run or its id."""
    return "\n".join(p if isinstance(p, str) else p(readonly) for p in _parts(run, event))


def render_message(run: Run | Any, event: dict[str, Any]) -> tuple[str, str]:
    """The event's message for the run's owner (and staff) and for share-link readers, rendering the
    rows once; the same string twice when nothing in it depends on who reads it."""
    parts = _parts(run, event)
    owner = "\n".join(p if isinstance(p, str) else p(False) for p in parts)
    if all(isinstance(p, str) for p in parts):
        return owner, owner
    return owner, "\n".join(p if isinstance(p, str) else p(True) for p in parts)


def render_messages(run_id: Any, after: int, through: int | None = None) -> list[tuple[int, str, str]]:
    """(seq, HTML for owners, HTML for share-link readers) of the run's recorded events with
    ``after < seq <= through``, in order: what a page that applied events up to ``after`` missed."""
    rows = RunEvent.objects.filter(run_id=run_id, seq__gt=after).order_by("seq")
    if through is not None:
        rows = rows.filter(seq__lte=through)
    events = [row.as_event_dict() for row in rows]
    if not events:
        return []
    run = Run.objects.select_related("problem").get(id=run_id)
    return [(event["seq"], *render_message(run, event)) for event in events]


def _parts(run: Run | Any, event: dict[str, Any]) -> list[Part]:
    if not isinstance(run, Run):
        run = Run.objects.select_related("problem").get(id=run)
    handler = HANDLERS.get(event["type"])
    parts = handler(run, event["payload"]) if handler is not None else []
    return [*parts, seq_marker(int(event["seq"]))]


def _run_started(run: Run, p: dict[str, Any]) -> list[Part]:
    ctx = run_context(run)
    return [_status(ctx), _for_viewer("provenance.html", ctx)]


def _stage(run: Run, p: dict[str, Any]) -> list[Part]:
    ctx = run_context(run)
    parts: list[Part] = []
    if p.get("rerun"):  # "Run for real" (webapp.runs.real)
        parts.append(_for_viewer("run_real.html", ctx))
        if p.get("state") == "finished":  # every row in the page's order (new ones came appended), what
            # each program really did: its card, the Result, repairs
            rows = _for_viewer("execution_rows.html", ctx)
            parts += [rows, _for_viewer("final.html", ctx), *_badges(ctx), *_repair_bodies(ctx)]
    return [*parts, _status(ctx)]


def _candidate_delta(run: Run, p: dict[str, Any]) -> list[Part]:
    return [_append(f"cand-{p['candidate']}-text", p.get("text", ""))]


def _candidate_done(run: Run, p: dict[str, Any]) -> list[Part]:
    """The candidate's program; and a copy of an earlier candidate's folds into its card at once (the
    badges say which is a copy of which)."""
    candidates = list(run.candidates.all())
    cand = next((c for c in candidates if c.index == p["candidate"]), None)
    if cand is None:
        return []
    parts: list[Part] = [_partial("candidate_code.html", cand=cand, c=cand.index)]
    public = len(run.core_problem().public_tests)
    badges = {b["c"]: b for b in candidate_badges(run, candidates, [], public)}
    same_as = badges[cand.index]["same_as"]
    if same_as is not None:
        for index in (same_as, cand.index):
            parts.append(_badge(run, badges[index]))
        if run.kind == "solve":  # a pasted program's page has no matrix
            parts.append(_partial("matrix_head.html", c=cand.index, same_as=same_as))
    return parts


def _badge(run: Run, badge: dict[str, Any]) -> str:
    return _partial("candidate_badge.html", cand=badge["cand"], c=badge["c"], badge=badge, run=run)


def _badges(ctx: dict[str, Any]) -> list[Part]:
    """Every candidate's badge: what the simulations predicted, what really came out, its copies."""
    return [_badge(ctx["run"], card["badge"]) for card in ctx["cards"] if card["badge"] is not None]


def _simulation_delta(run: Run, p: dict[str, Any]) -> list[Part]:
    dom = sim_dom(p["candidate"], p["test"], p.get("sample", 0), p.get("turn", 0))
    text = p.get("text", "")  # a reply's first delta holds its prefill: shown as the page shows it
    return [_append(f"{dom}-text", text[shown_from(text) :])]


def _simulation_done(run: Run, p: dict[str, Any]) -> list[Part]:
    sim = Simulation.objects.filter(
        run=run,
        turn=p.get("turn", 0),
        candidate=p["candidate"],
        test=p["test"],
        sample=p.get("sample", 0),
    ).first()
    if not sim:
        return []
    dom = sim_dom(sim.candidate, sim.test, sim.sample, sim.turn)
    return [_partial("simulation_result.html", sim=sim, dom=dom)]


def _verdict(run: Run, p: dict[str, Any]) -> list[Part]:
    verdict = Verdict.objects.filter(
        run=run, turn=p.get("turn", 0), candidate=p["candidate"], test=p["test"]
    ).first()
    if not verdict:
        return []
    execution = Execution.objects.filter(
        run=run, candidate=verdict.candidate, turn=verdict.turn, test=verdict.test
    ).first()
    real = really(verdict, execution)
    parts = [
        _verdict_cell(verdict, real),
        *_checked_texts(run, verdict.candidate, verdict.turn, verdict.test, real),
    ]
    if verdict.checked:  # no simulation streams: say why where it would have
        dom = sim_dom(verdict.candidate, verdict.test, 0, verdict.turn)
        parts.append(_partial("simulation_result.html", sim=None, checked=verdict.checked, dom=dom))
    return parts


def _verdict_cell(verdict: Verdict, real: dict[str, Any] | None) -> str:
    dom = verdict_dom(verdict.candidate, verdict.test, verdict.turn)
    return _partial("verdict_cell.html", verdict=verdict, real=real, dom=dom)


def _selected(run: Run, p: dict[str, Any]) -> list[Part]:
    public = len(run.core_problem().public_tests)
    badges = candidate_badges(run, list(run.candidates.all()), list(run.executions.all()), public)
    return [_partial("selected.html", run=run), *(_badge(run, b) for b in badges)]


def _repair_delta(run: Run, p: dict[str, Any]) -> list[Part]:
    # a reply's first delta holds the request's prefill, the opening code fence: not the model's words
    return [_append(f"repair-{p['turn']}-text", p.get("text", "").removeprefix(PREFILL))]


def _repair_turn(run: Run, p: dict[str, Any]) -> list[Part]:
    turn = RepairTurn.objects.filter(run=run, turn=p["turn"]).first()
    if turn is None:
        return []
    # the text streamed was the first reply; the turn shows the one taken
    return [
        _partial("repair_text.html", turn=turn, no=turn.turn),
        _partial("repair_body.html", turn=turn, no=turn.turn),
    ]


def _execution(run: Run, p: dict[str, Any]) -> list[Part]:
    execution = Execution.objects.filter(
        run=run, candidate=p["candidate"], turn=p.get("turn") or 0, test=p["test"]
    ).first()
    if not execution:
        return []
    # share-link readers get no explorer links and see no private test
    parts: list[Part] = [_for_viewer("execution_row.html", {"run": run, "x": execution, "append": True})]
    # the program's cell on this (public) test now says what really came out; a pasted program's page
    # has no cells (and a private test none anywhere)
    verdict = Verdict.objects.filter(
        run=run, candidate=execution.candidate, turn=execution.turn, test=execution.test
    ).first()
    real = really(verdict, execution)
    if verdict is not None and run.kind == "solve":
        parts.append(_verdict_cell(verdict, real))
    stage = run.stages.get("execute") or {}
    if stage.get("rerun") and stage.get("state") == "started":  # Run for real: how far it got
        parts.append(_partial("run_real_progress.html", progress=real_progress(run)))
    return [*parts, *_checked_texts(run, execution.candidate, execution.turn, execution.test, real)]


def _checked_texts(run: Run, candidate: int, turn: int, test: int, real: dict[str, Any] | None) -> list[Part]:
    """The simulations of a program on a test whose claims a real run just checked (``real``, from
    ``really``): their NLEX again, the claims coloured (``simulation_text.html``; the other samples'
    texts stay as they are)."""
    real = real or {}
    simulations = Simulation.objects.filter(run=run, candidate=candidate, turn=turn, test=test, done=True)
    context = {"run": run, "real": real, "link": explorer_link(run.id, candidate, turn, test)}
    return [
        _for_viewer(
            "simulation_text.html", {**context, "sim": sim, "dom": sim_dom(candidate, test, sim.sample, turn)}
        )
        for sim in simulations
        if claims_in(sim.text, real.get("verification"))
    ]


def _run_finished(run: Run, p: dict[str, Any]) -> list[Part]:
    """The run's end: its status, its Result, and the Run for real panel (the judge's banners of the
    final program the run executed itself; a run for real asked for meanwhile now under way)."""
    ctx = run_context(run)
    return [
        _status(ctx),
        _for_viewer("final.html", ctx),
        _for_viewer("run_real.html", ctx),
        *_badges(ctx),
        *_repair_bodies(ctx),
    ]


def _run_failed_or_cancelled(run: Run, p: dict[str, Any]) -> list[Part]:
    """The run's end: its status, its Result (no longer "Running…"), and the Run for real panel (a run
    for real asked for meanwhile now under way, or the note that there was nothing to run)."""
    ctx = run_context(run)
    return [
        _status(ctx),
        _for_viewer("final.html", ctx),
        _for_viewer("run_real.html", ctx),
        *_repair_bodies(ctx),
    ]


def _status(ctx: dict[str, Any]) -> Part:
    return _for_viewer("status.html", ctx)


def _repair_bodies(ctx: dict[str, Any]) -> list[Part]:
    """Once the run ended, or its programs ran for real: the repair turns that were never asked say
    why, and those told of a simulated failure the real run contradicts say so."""
    return [
        _partial("repair_body.html", turn=r["turn"], no=r["no"], skipped=r["skipped"], phantom=r["phantom"])
        for r in ctx["repairs"]
        if r["skipped"] or r["phantom"]
    ]


# The fragments each event type (docs/events.md) changes, before the sequence marker every event ends with.
HANDLERS: dict[str, Callable[[Run, dict[str, Any]], list[Part]]] = {
    "run_started": _run_started,
    "stage": _stage,
    "candidate_delta": _candidate_delta,
    "candidate_done": _candidate_done,
    "simulation_delta": _simulation_delta,
    "simulation_done": _simulation_done,
    "verdict": _verdict,
    "selected": _selected,
    "repair_delta": _repair_delta,
    "repair_turn": _repair_turn,
    "repair_rejected": _repair_turn,  # the turn's body now says its fix was not kept
    "execution": _execution,
    "run_finished": _run_finished,
    "run_failed": _run_failed_or_cancelled,
    "run_cancelled": _run_failed_or_cancelled,
}


def seq_marker(seq: int) -> str:
    """The fragment that ends every event's HTML: ``#run-seq`` (static/js/run.js) holds the last seq
    the page applied."""
    return f'<div id="run-seq" hx-swap-oob="true" data-seq="{seq}"></div>'
