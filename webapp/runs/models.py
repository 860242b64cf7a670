"""A run of the pipeline and what it produced: the event log (RunEvent, the source of truth) and the
denormalised rows the pages read (Candidate, Simulation, RepairTurn, Execution), kept by ``record``."""

from __future__ import annotations

import secrets
import uuid
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import QuerySet

from simulator.problem import Problem as CoreProblem
from simulator.problem import TestCase as CoreTestCase
from webapp.accounts.roles import is_staff
from webapp.problems.models import Problem


def _share_token() -> str:
    return secrets.token_urlsafe(24)


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

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE

    def core_problem(self) -> CoreProblem:
        """What the pipeline is given: the problem, or for "Simulate my code" a one-test problem whose
        ``extra`` holds the pasted program (``code``) and how its input is fed (``mode``)."""
        if self.problem is not None:
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
    source = models.CharField(max_length=20, default="simulated")  # or "real execution" (oracle mode)
    real = models.JSONField(null=True, blank=True)  # with `real`: status, output, match, divergence

    class Meta:
        ordering = ["turn", "candidate", "test"]
        constraints = [
            models.UniqueConstraint(fields=["run", "turn", "candidate", "test"], name="verdict_unique")
        ]


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

    class Meta:
        ordering = ["turn"]
        constraints = [models.UniqueConstraint(fields=["run", "turn"], name="repair_turn_unique")]


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
    divergence = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["candidate", "turn", "-public", "test"]
        constraints = [
            models.UniqueConstraint(fields=["run", "candidate", "turn", "test"], name="execution_unique_turn")
        ]
