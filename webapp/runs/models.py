"""A run of the pipeline and what it produced: the event log (RunEvent, the source of truth) and the
denormalised rows the pages read (Candidate, Simulation, RepairTurn, Execution), kept by ``record``."""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Callable, Iterable
from functools import cached_property
from typing import Any, TypeVar

from django.conf import settings
from django.db import models
from django.db.models import QuerySet
from django.urls import reverse

from simulator.execution.program import Program
from simulator.pipeline.executor import program_for
from simulator.pipeline.judge import Judgement, Outcome, cost, judge
from simulator.pipeline.settings import RunSettings
from simulator.problem import Problem as CoreProblem
from simulator.problem import TestCase as CoreTestCase
from simulator.source import first_same
from webapp.accounts.roles import is_staff
from webapp.problems.models import Problem
from webapp.runs.pipeline import program_for_simulation


def _share_token() -> str:
    return secrets.token_urlsafe(24)


def explorer_link(run_id: Any, candidate: int, turn: int, test: int) -> str:
    """The explorer for a run's program (``candidate`` after ``turn`` repairs) on test ``test``; the
    page adds ``&step=N`` to open it at a step."""
    url = reverse("explorer:run", args=[run_id])
    return f"{url}?candidate={candidate}&turn={turn}&test={test}"


Row = TypeVar("Row")


def at_last_turn(rows: list[Row], turn: Callable[[Row], int]) -> list[Row]:
    """The final candidate's rows of its last turn run: the final program's (real execution runs the
    candidate as generated and the final program, ``real.programs_for``). ``rows`` is not empty."""
    last = max(turn(row) for row in rows)
    return [row for row in rows if turn(row) == last]


class RunQuerySet(models.QuerySet["Run"]):
    def visible_to(self, user: Any) -> QuerySet[Run]:
        """A run is visible to its owner and to staff (others reach it only through its share link)."""
        if is_staff(user):
            return self
        if user.is_authenticated:
            return self.filter(user=user)
        return self.none()

    def active(self) -> QuerySet[Run]:
        return self.filter(status__in=Run.ACTIVE)

    def standing(self, user: Any, problem_ids: Iterable[int] | None = None) -> dict[int, str]:
        """Per problem ``user`` has solve runs on (among ``problem_ids``; None: any): "accepted" when a
        final program of theirs passed every test for real, else "tried" (the problems list's column
        and its status filter, as a judge marks solved ones)."""
        runs = self.filter(user=user, problem__isnull=False)
        if problem_ids is not None:
            runs = runs.filter(problem_id__in=list(problem_ids))
        standing = dict.fromkeys(runs.values_list("problem_id", flat=True).distinct(), "tried")
        # The final candidate's rows as plain tuples (a user with thousands of runs has tens of
        # thousands of rows), read as ``Run.final_judgement`` reads them: those of its last turn.
        rows = Execution.objects.filter(run__in=runs, candidate=models.F("run__final_candidate"))
        by_run: dict[tuple[Any, int], list[tuple[int, bool]]] = {}
        for run_id, problem_id, turn, passed in rows.values_list(
            "run_id", "run__problem_id", "turn", "passed"
        ):
            by_run.setdefault((run_id, problem_id), []).append((turn, passed))
        for (_, problem_id), results in by_run.items():
            if all(passed for _, passed in at_last_turn(results, lambda r: r[0])):
                standing[problem_id] = "accepted"
        return standing


class Run(models.Model):
    QUEUED, RUNNING, FINISHED, FAILED, CANCELLED = "queued", "running", "finished", "failed", "cancelled"
    STATUSES = [(s, s) for s in (QUEUED, RUNNING, FINISHED, FAILED, CANCELLED)]
    ACTIVE = (QUEUED, RUNNING)
    KINDS = [("solve", "solve"), ("simulate", "simulate my code")]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=10, choices=KINDS, default="solve")
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="runs", null=True, blank=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="runs")
    settings = models.JSONField(default=dict)
    status = models.CharField(max_length=10, choices=STATUSES, default=QUEUED, db_index=True)
    seed = models.BigIntegerField(null=True, blank=True)
    share_token = models.CharField(max_length=64, unique=True, default=_share_token)
    retry_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL)
    cancel_requested = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    provenance = models.JSONField(default=dict, blank=True)
    stages = models.JSONField(default=dict, blank=True)  # stage -> {seconds, tokens, state}
    totals = models.JSONField(default=dict, blank=True)
    selected = models.JSONField(default=dict, blank=True)  # the `selected` payload
    final_candidate = models.IntegerField(null=True, blank=True)
    final_code = models.TextField(blank=True)
    result = models.JSONField(default=dict, blank=True)  # the run_finished payload
    last_seq = models.IntegerField(default=-1)
    # "Simulate my code": the pasted program and input.
    code = models.TextField(blank=True)
    code_input = models.TextField(blank=True)
    # The problem as it was when the run was made (simulator.problem's JSON form): the run, its pages,
    # its export and its real executions read this, never the problem as edited since.
    problem_snapshot = models.JSONField(null=True, blank=True)

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.problem_snapshot is None and self.problem_id is not None:
            self.problem_snapshot = self.problem.to_core().to_dict()
        super().save(*args, **kwargs)

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE

    @cached_property
    def pipeline_settings(self) -> RunSettings:
        """The pipeline's RunSettings, parsed once from what the run stores (``mode`` is the web app's
        own). Raises SettingsError naming a bad field."""
        known = {k: v for k, v in self.settings.items() if k in RunSettings.__dataclass_fields__}
        if not known.get("model"):
            known["model"] = None
        return RunSettings.from_dict(known)

    def core_problem(self) -> CoreProblem:
        """What the pipeline is given: the problem as it was when the run was made, or for "Simulate
        my code" a one-test problem whose ``extra`` holds the pasted program (``code``) and how its
        input is fed (``mode``)."""
        if self.problem_snapshot is not None:
            return CoreProblem.from_dict(self.problem_snapshot)
        if self.problem is not None:  # a run made before snapshots
            return self.problem.to_core()
        mode = self.settings.get("mode", "call")
        return CoreProblem(
            title="Simulate my code",
            statement=f"```python\n{self.code}\n```",
            kind="stdin" if mode == "stdin" else "call",
            tests=(CoreTestCase(input=self.code_input, output="", public=True),),
            extra={"code": self.code, "mode": mode},
        )

    @property
    def group_name(self) -> str:
        return f"run_{self.id.hex}"

    def same_programs(self, candidates: list[Candidate] | None = None) -> dict[int, int | None]:
        """Per candidate index, the first earlier candidate that is the same program
        (``source.same_program``), which the page names instead of letting the reader compare two
        cards; None for a first or a new one. From the rows given (the run's own when None), in one
        comparison pass, so the run page makes as many queries for k=8 as for k=2."""
        rows = list(self.candidates.all()) if candidates is None else candidates
        written = [c for c in sorted(rows, key=lambda c: c.index) if c.done and c.code]
        firsts = first_same([c.code for c in written], self.core_problem().kind)
        same: dict[int, int | None] = {c.index: None for c in rows}
        for cand, first in zip(written, firsts, strict=True):
            same[cand.index] = None if written[first] is cand else written[first].index
        return same

    # -- what the run holds: one answer for every view, the explorer, the queue and the export ------

    @staticmethod
    def test_label(index: int) -> str:
        """The one name of test ``index`` (an index into all the problem's tests, as in the events) on
        every screen: the matrix, the candidate cards, the real-execution table, the explorer."""
        return f"test {index + 1}"

    def code_of(self, candidate: int, turn: int = 0) -> str:
        """The program of ``candidate`` after ``turn`` repairs ("" when the run has none): turn 0 is
        the sampled candidate; turn t the program repair turn t wrote, or the one it kept."""
        if self.kind == "simulate":
            return self.code
        if turn > 0:
            repair = self.repair_turns.filter(turn=turn).first()
            return (repair.code or repair.previous_code) if repair is not None else ""
        row = self.candidates.filter(index=candidate).first()
        return row.code if row is not None else ""

    @property
    def chosen_candidate(self) -> int:
        """The candidate the run went on with: the final one, else the selected one (else 0)."""
        if self.final_candidate is not None:
            return self.final_candidate
        return int((self.selected or {}).get("candidate") or 0)

    def final_program(self) -> tuple[int | None, str]:
        """(turn, code) of the final program: the last repair turn that wrote it and whose fix was kept
        (turn 0: the selected candidate); (None, "") when the run has none (it failed or was cancelled
        before selection)."""
        code = self.final_code
        repaired = (
            self.repair_turns.filter(done=True, rejected__isnull=True).exclude(code="").order_by("-turn")
        )
        if not code:  # not finished: the program the run had reached
            last = repaired.first()
            if last is not None:
                return last.turn, last.code
            selected = self.candidates.filter(selected=True).first()
            return (0, selected.code) if selected is not None and selected.code else (None, "")
        for turn in repaired:
            if turn.code == code:
                return turn.turn, code
        return 0, code

    def final_judgement(self) -> Judgement | None:
        """The judge's verdict on the final program's real runs; None before they ran. Real execution
        runs each candidate as generated and the final program (``real.programs_for``), so the final
        program's rows are the chosen candidate's at the latest turn run. Reads ``executions`` as
        prefetched (the run list asks it of each row)."""
        if self.final_candidate is None:
            return None
        rows = [x for x in self.executions.all() if x.candidate == self.final_candidate]
        if not rows:
            return None
        return judge([x.outcome() for x in at_last_turn(rows, lambda x: x.turn)], (), self.test_label)

    def judged_nlex(
        self,
        candidate: int,
        turn: int = 0,
        *,
        verdicts: list[Verdict] | None = None,
        simulations: list[Simulation] | None = None,
    ) -> dict[int, str]:
        """Per public test: the NLEX of the first sample whose prediction the verdict took (else the
        first sample with text): the simulation that is verified against the real run. ``verdicts`` and
        ``simulations``: the run's rows when the caller loaded them already (one query for every
        candidate instead of two each)."""
        if verdicts is None:
            verdicts = list(self.verdicts.filter(candidate=candidate, turn=turn))
        if simulations is None:
            simulations = list(
                self.simulations.filter(candidate=candidate, turn=turn, done=True).exclude(text="")
            )
        winners = {v.test: v.simulated for v in verdicts if (v.candidate, v.turn) == (candidate, turn)}
        by_test: dict[int, list[Simulation]] = {}
        for sim in simulations:
            if (sim.candidate, sim.turn) == (candidate, turn) and sim.done and sim.text:
                by_test.setdefault(sim.test, []).append(sim)  # ordered by sample (the model's ordering)
        return {
            test: next(
                (s for s in samples if s.predicted is not None and s.predicted == winners.get(test)),
                samples[0],
            ).text
            for test, samples in by_test.items()
        }

    def program_of(self, candidate: int, test: int, turn: int = 0) -> Program:
        """The program that runs ``candidate`` (after ``turn`` repairs) on test ``test`` of the run.
        Raises LookupError when the run has no such program or test."""
        code = self.code_of(candidate, turn)
        if not code:
            raise LookupError(f"no code for candidate {candidate} (turn {turn}) in this run")
        if self.kind == "simulate":
            return program_for_simulation(code, self.code_input, self.settings.get("mode", "call"))
        core = self.core_problem()
        if not 0 <= test < len(core.tests):
            raise LookupError(f"the problem has no {self.test_label(test)}")
        return program_for(core, code, core.tests[test])


class RunEvent(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="events")
    seq = models.IntegerField()
    type = models.CharField(max_length=32)
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["seq"]
        constraints = [models.UniqueConstraint(fields=["run", "seq"], name="run_event_unique_seq")]

    def as_event_dict(self) -> dict[str, Any]:
        return {"run_id": str(self.run_id), "seq": self.seq, "type": self.type, "payload": self.payload}


class Candidate(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="candidates")
    index = models.IntegerField()
    text = models.TextField(blank=True)
    code = models.TextField(blank=True)
    parse_error = models.TextField(blank=True)
    done = models.BooleanField(default=False)
    tokens = models.IntegerField(default=0)
    # "length": the reply used its whole budget; "repetition": it looped and was stopped
    finish_reason = models.CharField(max_length=20, blank=True)
    score = models.IntegerField(null=True, blank=True)
    selected = models.BooleanField(default=False)

    class Meta:
        ordering = ["index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="candidate_unique_index")]


class Simulation(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="simulations")
    candidate = models.IntegerField()
    test = models.IntegerField()  # index into the problem's tests (public ones only are simulated)
    turn = models.IntegerField(default=0)  # 0: the candidate as generated; n: after repair turn n
    sample = models.IntegerField(default=0)
    text = models.TextField(blank=True)
    predicted = models.TextField(null=True, blank=True)
    parse_error = models.TextField(blank=True)
    done = models.BooleanField(default=False)
    tokens = models.IntegerField(default=0)
    cut = models.BooleanField(default=False)  # the reply (the narration, if narrated) used its whole budget
    forced = models.BooleanField(default=False)  # the narration ended before its answer, asked for then
    copied = models.CharField(max_length=10, blank=True)  # a stdin prediction is a copy: "input", "example"

    class Meta:
        ordering = ["turn", "candidate", "test", "sample"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "turn", "candidate", "test", "sample"], name="simulation_unique"
            )
        ]


class Verdict(models.Model):
    """One cell of the verification matrix: candidate x test, expected vs simulated."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="verdicts")
    candidate = models.IntegerField()
    test = models.IntegerField()
    turn = models.IntegerField(default=0)
    expected = models.TextField(blank=True)
    simulated = models.TextField(null=True, blank=True)
    match = models.BooleanField(default=False)
    # "simulated", "real" (oracle mode) or "checked" (known to fail unsimulated: pipeline.static)
    source = models.CharField(max_length=20, default="simulated")
    reason = models.TextField(blank=True, default="")  # "checked": why the program cannot pass
    real = models.JSONField(null=True, blank=True)  # with `real`: executor.RealRun.to_dict()

    class Meta:
        ordering = ["turn", "candidate", "test"]
        constraints = [
            models.UniqueConstraint(fields=["run", "turn", "candidate", "test"], name="verdict_unique")
        ]

    @property
    def checked(self) -> str | None:
        """Why the program fails this test, when that was known without simulating it (else None)."""
        return self.reason if self.source == "checked" else None


class RepairTurn(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="repair_turns")
    turn = models.IntegerField()
    text = models.TextField(blank=True)
    submitted = models.BooleanField(default=False)
    code = models.TextField(blank=True)
    previous_code = models.TextField(blank=True)
    feedback = models.JSONField(default=list, blank=True)
    parse_error = models.TextField(blank=True)
    done = models.BooleanField(default=False)
    # who decided the turn: "model" (asked), or in guided repair "simulation" / "real execution" (the
    # program matched every public test and was submitted without asking)
    decided_by = models.CharField(max_length=20, default="model")
    # guided repair: the fix was not kept (repair_rejected's payload: matched, attempt_matched,
    # public_tests, judged_by, reason); null: kept, or not judged
    rejected = models.JSONField(null=True, blank=True)
    # guided repair: every reply the turn sampled ({fix, text, code, error}) and the index of the one
    # taken (null: none was a new program); ``text`` and ``code`` are the one taken
    replies = models.JSONField(default=list, blank=True)
    fix = models.IntegerField(null=True, blank=True)

    class Meta:
        ordering = ["turn"]
        constraints = [models.UniqueConstraint(fields=["run", "turn"], name="repair_turn_unique")]

    @property
    def taken_reply(self) -> dict[str, Any] | None:
        """The reply (of ``replies``) the turn took as its fix, or None."""
        return (
            next((r for r in self.replies if r.get("fix") == self.fix), None)
            if self.fix is not None
            else None
        )


class Execution(models.Model):
    """A real, sandboxed execution of a candidate on a test, and where the simulation diverged."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="executions")
    candidate = models.IntegerField()
    turn = models.IntegerField(default=0)  # 0: the candidate as generated; n: the program after repair n
    test = models.IntegerField()
    public = models.BooleanField(default=True)
    status = models.CharField(max_length=20)
    output = models.TextField(blank=True)
    passed = models.BooleanField(default=False)
    expected = models.TextField(null=True, blank=True)
    message = models.TextField(blank=True)  # why a run failed: "TypeError: ... (line 3)", "wall-clock ..."
    # simulator.nlex.verify.Verification.to_dict() of the NLEX judged on this (public) test, or None
    verification = models.JSONField(null=True, blank=True)
    # what the run cost (RealRun): wall seconds (slower when traced) and peak memory; None: not run
    seconds = models.FloatField(null=True, blank=True)
    memory_kb = models.IntegerField(null=True, blank=True)
    traced = models.BooleanField(default=False)

    @property
    def explorer_link(self) -> str:
        return explorer_link(self.run_id, self.candidate, self.turn, self.test)

    def outcome(self) -> Outcome:
        """This test's real run as the judge reads it (``simulator.pipeline.judge``)."""
        return Outcome(
            self.test, self.public, self.status, self.passed, self.output, self.expected, self.message,
            self.seconds, self.memory_kb, self.traced,
        )  # fmt: skip

    @property
    def cost(self) -> str:
        """This test's run as a judge shows it: "12 ms · 9.8 MB"."""
        return cost(self.seconds, self.memory_kb, self.traced)

    class Meta:
        ordering = ["candidate", "turn", "-public", "test"]
        constraints = [
            models.UniqueConstraint(fields=["run", "candidate", "turn", "test"], name="execution_unique_turn")
        ]
