"""The context the run page and its fragments share (so a fragment renders as the page would).

DOM ids (the live fragments target them): ``cand-{c}-text|code|badge``; ``sim-{c}-{t}-{s}`` for the
simulations of candidate c on test t (sample s: 0, more in runs made when several were sampled), and
``rsim-{turn}-{t}-{s}`` for those of the program after repair turn ``turn``; ``verdict-{c}-{t}`` and
``rverdict-{turn}-{t}``; ``repair-{turn}-text|body``.
Test numbers are indices into the problem's tests (as in the events), not positions among public ones.
"""

from __future__ import annotations

from typing import Any

from webapp.runs import real
from webapp.runs.models import Execution, Run, Verdict, explorer_link


def sim_dom(candidate: int, test: int, sample: int, turn: int = 0) -> str:
    return f"sim-{candidate}-{test}-{sample}" if turn == 0 else f"rsim-{turn}-{test}-{sample}"


def verdict_dom(candidate: int, test: int, turn: int = 0) -> str:
    return f"verdict-{candidate}-{test}" if turn == 0 else f"rverdict-{turn}-{test}"


def really(verdict: Verdict | None, execution: Execution | None) -> dict[str, Any] | None:
    """What really came out of a verdict cell's program on its test, for the cell and the simulation's
    coloured claims (RealRun.to_dict()'s keys: status, output, expected, passed, message,
    verification): the program's stored real execution (Run for real, or the run's own execution of its
    final program), else the real run the pipeline made with the verdict (settings ``real``); None when
    the program was never run for real."""
    if execution is not None:
        fields = ("status", "output", "expected", "passed", "message", "verification")
        return {name: getattr(execution, name) for name in fields}
    return verdict.real if verdict is not None else None


STAGE_ORDER = ("solve", "simulate", "select", "repair", "execute")  # the pipeline's order


def _stage_order(item: tuple[str, Any]) -> tuple[int, str]:
    name = item[0]
    return (STAGE_ORDER.index(name) if name in STAGE_ORDER else len(STAGE_ORDER), name)


def run_context(run: Run, *, readonly: bool = False) -> dict[str, Any]:
    s = run.settings or {}
    k, turns = int(s.get("k", 1)), int(s.get("turns", 0))
    public = [(i, t) for i, t in enumerate(run.core_problem().tests) if t.public]
    candidates = {c.index: c for c in run.candidates.all()}
    simulations = {(x.turn, x.candidate, x.test, x.sample): x for x in run.simulations.all()}
    samples = 1 + max((x.sample for x in simulations.values()), default=0)  # one; more in older runs
    verdicts = {(v.turn, v.candidate, v.test): v for v in run.verdicts.all()}
    turns_by_no = {t.turn: t for t in run.repair_turns.all()}
    chosen = run.selected.get("candidate") if run.selected else None
    executions = list(run.executions.all())
    executed = {(x.turn, x.candidate, x.test): x for x in executions}
    final_turn = run.final_program()[0] if run.final_candidate is not None else None

    def sims_for(c: int | None, turn: int) -> list[dict[str, Any]]:
        return [
            {
                "t": i,
                "test": test,
                "samples": [
                    {"s": n, "dom": sim_dom(c or 0, i, n, turn), "sim": simulations.get((turn, c, i, n))}
                    for n in range(samples)
                ],
                "verdict": verdicts.get((turn, c, i)),
                "real": really(verdicts.get((turn, c, i)), executed.get((turn, c, i))),
                "link": explorer_link(run.id, c or 0, turn, i),
                "verdict_dom": verdict_dom(c or 0, i, turn),
            }
            for i, test in public
        ]

    count = max(k, len(candidates))
    cards = [{"c": c, "cand": candidates.get(c), "tests": sims_for(c, 0)} for c in range(count)]
    matrix = [
        {
            "c": c,
            "cells": [
                {
                    "t": i,
                    "dom": verdict_dom(c, i),
                    "verdict": verdicts.get((0, c, i)),
                    "real": really(verdicts.get((0, c, i)), executed.get((0, c, i))),
                }
                for i, _ in public
            ],
        }
        for c in range(count)
    ]
    numbers = sorted(set(range(1, turns + 1)) | set(turns_by_no))
    repairs = [
        {
            "no": n,
            "turn": turns_by_no.get(n),
            "tests": sims_for(chosen, n),
            "skipped": skipped_because(run, n),
        }
        for n in numbers
    ]
    return {
        "run": run,
        "readonly": readonly,
        "cards": cards,
        "public_tests": [t for _, t in public],
        "public_indexed": public,
        "final_turn": final_turn,
        "final_checks": _final_checks(run, executions, final_turn),
        "matrix": matrix,
        "repairs": repairs,
        "executions": executions,
        "stages": sorted(run.stages.items(), key=_stage_order),
        **_real_context(run, candidates),
    }


def skipped_because(run: Run, no: int) -> str:
    """Why repair turn ``no`` of an ended run was never asked ("" when it was, or may still be)."""
    if run.is_active or run.repair_turns.filter(turn=no, done=True).exists():
        return ""
    last = run.repair_turns.filter(turn__lt=no, done=True).order_by("-turn").first()
    if last is not None and last.submitted and last.decided_by != "model":
        return f"the program matched every public test at turn {last.turn}, so it was submitted"
    if last is not None and last.submitted:
        return f"the model kept its program at turn {last.turn}"  # a run made when the model was asked
    if last is not None and last.rejected:
        return f"the fix of turn {last.turn} was not kept, so the repair stopped there"
    if last is not None and not last.code:
        return f"turn {last.turn} gave no program, so the repair stopped there"
    if run.status != Run.FINISHED:
        return f"the run {run.status} before this turn"
    return "the repair stopped before this turn"


def _final_checks(run: Run, executions: list[Any], turn: int | None) -> list[Any]:
    """The final program's (the final candidate after repair ``turn``) public-test executions that
    verified a simulation: the run's summary of how its simulations held up, in the same words as the
    table and the explorer."""
    if run.final_candidate is None:
        return []
    return [
        x
        for x in executions
        if x.candidate == run.final_candidate and x.turn == (turn or 0) and x.public and x.verification
    ]


def _real_context(run: Run, candidates: dict[int, Any]) -> dict[str, Any]:
    """Run for real: whether one is pending or under way, whether there is anything to run (a run that
    ended without code has not), and its per-program results."""
    stage = run.stages.get("execute") or {}
    done = stage.get("rerun") and stage.get("state") == "finished"
    return {
        "real_pending": real.pending(run.id),
        "real_possible": run.is_active or any(c.code for c in candidates.values()),
        "real_results": stage.get("results") if done else None,
        "real_error": stage.get("error") if done else None,
    }
