"""The context the run page and its fragments share (so a fragment renders as the page would).

DOM ids (the live fragments target them): ``cand-{c}-text|code|badge``; ``sim-{c}-{t}-{s}`` for the
simulations of candidate c on test t (sample s: 0, more in runs made when several were sampled), and
``rsim-{turn}-{t}-{s}`` for those of the program after repair turn ``turn``; ``verdict-{c}-{t}`` and
``rverdict-{turn}-{t}``; ``repair-{turn}-text|body``; ``mrow-{c}`` (a matrix row's head);
``run-real-progress`` (Run for real under way); ``run-live`` (the page's WebSocket).
Test numbers are indices into the problem's tests (as in the events), not positions among public ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from simulator.compare import DEFAULT_TOLERANCE, outputs_match
from webapp.runs import real
from webapp.runs.models import Candidate, Execution, Run, Simulation, Verdict, explorer_link


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
    # keyed by (turn, candidate, ...): a repair turn's candidate is the chosen one, None before selection
    simulations: dict[tuple[int, int | None, int, int], Simulation] = {
        (x.turn, x.candidate, x.test, x.sample): x for x in run.simulations.all()
    }
    samples = 1 + max((x.sample for x in simulations.values()), default=0)  # one; more in older runs
    verdicts: dict[tuple[int, int | None, int], Verdict] = {
        (v.turn, v.candidate, v.test): v for v in run.verdicts.all()
    }
    turns_by_no = {t.turn: t for t in run.repair_turns.all()}
    chosen = run.selected.get("candidate") if run.selected else None
    executions = list(run.executions.all())
    executed: dict[tuple[int, int | None, int], Execution] = {
        (x.turn, x.candidate, x.test): x for x in executions
    }
    final_turn = run.final_program()[0] if run.final_candidate is not None else None

    def real_of(turn: int, c: int | None, i: int) -> dict[str, Any] | None:
        return really(verdicts.get((turn, c, i)), executed.get((turn, c, i)))

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
                "real": real_of(turn, c, i),
                "link": explorer_link(run.id, c or 0, turn, i),
                "verdict_dom": verdict_dom(c or 0, i, turn),
            }
            for i, test in public
        ]

    count = max(k, len(candidates))
    badges = {b["c"]: b for b in candidate_badges(run, list(candidates.values()), executions, len(public))}
    cards = [
        {"c": c, "cand": candidates.get(c), "badge": badges.get(c), "tests": sims_for(c, 0)}
        for c in range(count)
    ]
    matrix = [
        {
            "c": c,
            "same_as": badges[c]["same_as"] if c in badges else None,
            "cells": [
                {
                    "t": i,
                    "dom": verdict_dom(c, i),
                    "verdict": verdicts.get((0, c, i)),
                    "real": real_of(0, c, i),
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
            "phantom": _phantom_failures(n, chosen, public, verdicts, real_of),
        }
        for n in numbers
    ]
    real_context = _real_context(run, candidates, executions)
    return {
        "run": run,
        "readonly": readonly,
        "cards": cards,
        "public_tests": [t for _, t in public],
        "public_indexed": public,
        "final_turn": final_turn,
        "final_checks": _final_checks(run, executions, final_turn),
        "final_prediction": _final_prediction(run, final_turn, public, verdicts, real_of),
        "matrix": matrix,
        "repairs": repairs,
        "executions": executions,
        "stages": stage_rows(run, simulations.values(), real_context["real_pending"]),
        **real_context,
    }


# -- marks: what the simulation predicted, whether the program passes, whether the two agree --------


def simulation_agrees(verdict: Verdict, real: dict[str, Any]) -> bool:
    """Whether a cell's simulated output is what really came out (``real``: ``really``'s dict): the
    verified answer when the real run checked the narration, else the outputs compared as the judge
    compares them. A prediction that passes where the program fails, or the reverse, never agrees."""
    answer = ((real.get("verification") or {}).get("answer") or {}).get("verdict")
    if answer in ("true", "false"):
        return bool(answer == "true")
    if verdict.simulated is None:
        return False
    if verdict.match != bool(real.get("passed")):
        return False
    return verdict.match or outputs_match(real.get("output") or "", verdict.simulated, DEFAULT_TOLERANCE)


def cell_marks(verdict: Verdict | None, real: dict[str, Any] | None) -> dict[str, Any] | None:
    """A verification cell's three marks, kept apart (issue 52): ``predicted`` ("pass"/"fail": the
    simulated output against the expected one; None in oracle mode, where nothing is predicted),
    ``passes`` (the program really passes this test; None before it ran for real), ``agrees`` (the
    simulation says what really came out; None where there is no simulation or no real run), and
    ``contradicted``: simulated to fail, it really passes."""
    if verdict is None:
        return None
    if verdict.source == "real":  # oracle mode: the cell is the real run itself
        return {"predicted": None, "passes": verdict.match, "agrees": None, "contradicted": False}
    predicted = "pass" if verdict.match else "fail"
    passes = None if real is None else bool(real.get("passed"))
    agrees = simulation_agrees(verdict, real) if real is not None and verdict.source == "simulated" else None
    return {
        "predicted": predicted,
        "passes": passes,
        "agrees": agrees,
        "contradicted": predicted == "fail" and passes is True,
    }


def _phantom_failures(
    no: int, chosen: int | None, public: list[tuple[int, Any]], verdicts: dict[Any, Verdict], real_of: Any
) -> list[int]:
    """The public tests repair turn ``no`` was told its program fails (the simulation of the program
    it was given: the latest earlier turn simulated) that the program really passes: failures the
    real run contradicts."""
    if chosen is None:
        return []
    for turn in range(no - 1, -1, -1):
        if any((turn, chosen, i) in verdicts for i, _ in public):
            return [
                i
                for i, _ in public
                if (v := verdicts.get((turn, chosen, i))) is not None
                and (marks := cell_marks(v, real_of(turn, chosen, i))) is not None
                and marks["contradicted"]
            ]
    return []


def _final_prediction(
    run: Run, turn: int | None, public: list[tuple[int, Any]], verdicts: dict[Any, Verdict], real_of: Any
) -> dict[str, Any] | None:
    """The Result box's prediction, apart from the judge's verdict: how many public tests the final
    program's simulations matched, how many it really passes (None before it ran for real), and
    whether the two agree test by test (the tests where they do not)."""
    if run.final_candidate is None or turn is None:
        return None
    cells = [
        (i, verdicts.get((turn, run.final_candidate, i)), real_of(turn, run.final_candidate, i))
        for i, _ in public
    ]
    judged = [(i, v, r) for i, v, r in cells if v is not None]
    if not judged:
        return None
    ran = [(i, v, r) for i, v, r in judged if r is not None]
    wrong = [i for i, v, r in ran if v.match != bool(r.get("passed"))]
    return {
        "predicted": sum(v.match for _, v, _ in judged),
        "tests": len(judged),
        "oracle": any(v.source == "real" for _, v, _ in judged),
        "passes": sum(bool(r.get("passed")) for _, _, r in ran) if ran else None,
        "wrong": wrong,
        "agrees": None if not ran else not wrong,
    }


# -- candidates: identical programs, and what each really did --------------------------------------


def candidate_badges(
    run: Run, candidates: list[Candidate], executions: list[Execution], public_tests: int
) -> list[dict[str, Any]]:
    """Per candidate, its card's badge: the candidate, the first earlier one that is the same program
    (``same_as``; its card then folds into that one's), the later ones that are (``copies``; the one of
    them selected, ``selected_copy``, since this card stands for it), and what
    its program really did (``real``: passed, total, passes; None before it ran for real). Pass/fail
    only, so nothing here depends on who reads it (a private test's pass shows on share links too)."""
    by_index = {c.index: c for c in candidates}
    same = run.same_programs(candidates)
    copies: dict[int, list[int]] = {}
    for index, first in sorted(same.items()):
        if first is not None:
            copies.setdefault(first, []).append(index)
    ran: dict[int, list[bool]] = {}
    for x in executions:
        if x.turn == 0:
            ran.setdefault(x.candidate, []).append(x.passed)
    return [
        {
            "c": index,
            "cand": cand,
            "same_as": same[index],
            "copies": copies.get(index, []),
            # a copy of this program was the one selected: this card, which stands for it, says so
            "selected_copy": next((c for c in copies.get(index, []) if by_index[c].selected), None),
            "public_tests": public_tests,
            "real": {"passed": sum(ran[index]), "total": len(ran[index]), "passes": all(ran[index])}
            if index in ran
            else None,
        }
        for index, cand in sorted(by_index.items())
    ]


# -- stages -------------------------------------------------------------------------------------------

_ENDED_STAGE = {Run.CANCELLED: "cancelled", Run.FAILED: "failed", Run.FINISHED: "stopped"}
_NO_MODEL = ("select", "execute")  # stages that ask the model nothing: no tokens to count


def stage_rows(
    run: Run, simulations: Iterable[Simulation], real_pending: bool
) -> list[tuple[str, dict[str, Any]]]:
    """The stages in the pipeline's order, as the page shows them: a stage the run's end cut short
    says how it ended (not "started"); the simulate stages' tokens, which their events do not carry,
    added up from their simulations; ``no_model`` on stages that ask the model nothing."""
    rows = []
    for name, stage in sorted(run.stages.items(), key=_stage_order):
        shown = dict(stage)
        under_way = run.is_active or (shown.get("rerun") and real_pending)
        if shown.get("state") == "started" and not under_way:
            shown["state"] = _ENDED_STAGE.get(run.status, "stopped")
        kind = name.split(" ", 1)[0]
        if kind == "simulate" and shown.get("tokens") is None:
            turn = int(shown.get("turn") or 0)
            tokens = sum(x.tokens for x in simulations if x.turn == turn)
            shown["tokens"] = tokens or None
        shown["no_model"] = kind in _NO_MODEL
        rows.append((name, shown))
    return rows


# -- repairs ------------------------------------------------------------------------------------------


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


def _real_context(run: Run, candidates: dict[int, Any], executions: list[Execution]) -> dict[str, Any]:
    """Run for real: whether one is pending or under way (and how far it got), whether there is
    anything to run (a run that ended without code has not), which programs have not run for real yet
    (``real_todo``: the button is offered for those only), and its per-program results."""
    stage = run.stages.get("execute") or {}
    done = stage.get("rerun") and stage.get("state") == "finished"
    pending = real.pending(run.id)
    todo: list[dict[str, Any]] = []
    if not pending and not run.is_active and run.kind == "solve" and any(c.code for c in candidates.values()):
        todo = [p.label for p in real.programs_for(run)]
    return {
        "real_pending": pending,
        "real_progress": real_progress(run) if pending else None,
        "real_possible": run.is_active or any(c.code for c in candidates.values()),
        "real_todo": todo,
        "real_ran": bool(executions),
        "real_results": stage.get("results") if done else None,
        "real_error": stage.get("error") if done else None,
    }


def real_progress(run: Run) -> dict[str, Any]:
    """How far a Run for real under way got: tests run of all (its programs x tests); ``total`` None
    until its stage started (it names the programs), ``waiting`` while it waits for the run or a
    worker."""
    stage = run.stages.get("execute") or {}
    started = bool(stage.get("rerun")) and stage.get("state") == "started"
    tests = len(run.core_problem().tests)
    if started:
        programs = {(p["candidate"], p.get("turn") or 0) for p in stage.get("programs") or []}
        rows = run.executions.values_list("candidate", "turn")
        done = sum((candidate, turn) in programs for candidate, turn in rows)
    else:  # asked for: what it will run, once the run has ended (until then its candidates may change)
        programs, done = set(), 0
        if not run.is_active:
            programs = {(p.candidate, p.turn) for p in real.programs_for(run)}
    return {"done": done, "total": len(programs) * tests or None, "waiting": not started}
