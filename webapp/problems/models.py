"""A problem as stored by the web app, convertible to and from ``simulator.problem.Problem``."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q, QuerySet

from simulator.problem import Problem as CoreProblem
from simulator.problem import TestCase as CoreTestCase
from webapp.accounts.roles import is_staff
from webapp.limits import LimitExceeded
from webapp.text import storable


class ProblemQuerySet(models.QuerySet["Problem"]):
    def visible_to(self, user: Any) -> QuerySet[Problem]:
        """Public problems, plus private ones owned by the user; staff see everything."""
        if is_staff(user):
            return self
        if user.is_authenticated:
            return self.filter(Q(is_public=True) | Q(owner=user))
        return self.filter(is_public=True)


class Problem(models.Model):
    KINDS = [("stdin", "stdin -> stdout"), ("call", "call -> return")]
    TITLE_CHARS = 200  # a longer title is cut to this when a problem is created from the core one
    LABEL_CHARS = 80

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="problems")
    title = models.CharField(max_length=TITLE_CHARS)
    statement = models.TextField(help_text="Markdown")
    kind = models.CharField(max_length=8, choices=KINDS, default="stdin")
    entry_point = models.CharField(max_length=100, blank=True)
    float_tolerance = models.FloatField(null=True, blank=True)
    is_public = models.BooleanField(default=True, help_text="Visible to everyone (else to you and staff)")
    source = models.CharField(max_length=40, default="manual")
    extra = models.JSONField(default=dict, blank=True)
    # Where the problem list shows it: problems with a place come first, in its order (the examples:
    # examples/*.json "order", set by ``manage.py load_examples``); the others after them, newest first.
    list_order = models.PositiveIntegerField(null=True, blank=True)
    # A few words beside its title in the list and on its page (examples/*.json "label"): what to expect.
    label = models.CharField(max_length=LABEL_CHARS, blank=True)
    # Its owner's reference solution, run on every test before each save (the editor refuses a problem it
    # fails, as Polygon validates tests against the main solution); never shown to anyone else nor to
    # the model, and not part of the problem's JSON.
    reference = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ProblemQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.title

    def editable_by(self, user: Any) -> bool:
        """Whether ``user`` (None for a share-link reader) may edit this problem, and so see its private
        tests wherever they show (its page, its download, its runs): its owner and staff."""
        if user is None or not user.is_authenticated:
            return False
        return self.owner_id == user.pk or is_staff(user)

    def to_core(self) -> CoreProblem:
        tests = tuple(CoreTestCase(input=t.input, output=t.output, public=t.public) for t in self.tests.all())
        return CoreProblem(
            title=self.title,
            statement=self.statement,
            kind=self.kind,  # type: ignore[arg-type]
            tests=tests,
            entry_point=self.entry_point or None,
            float_tolerance=self.float_tolerance,
            extra=dict(self.extra),
        )

    @classmethod
    def create_from_core(cls, core: CoreProblem, owner: Any, *, source: str, is_public: bool) -> Problem:
        problem = cls.objects.create(
            owner=owner,
            title=core.title[: cls.TITLE_CHARS],
            statement=core.statement,
            kind=core.kind,
            entry_point=core.entry_point or "",
            float_tolerance=core.float_tolerance,
            is_public=is_public,
            source=source,
            extra=core.extra,
        )
        TestCase.objects.bulk_create(
            # bulk_create skips pre_save, so the escaping of webapp.text is applied here
            TestCase(
                problem=problem, order=i, input=storable(t.input), output=storable(t.output), public=t.public
            )
            for i, t in enumerate(core.tests)
        )
        return problem


class TestCase(models.Model):
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="tests")
    order = models.PositiveIntegerField(default=0)
    input = models.TextField(blank=True)
    output = models.TextField(blank=True)
    public = models.BooleanField(default=True)

    class Meta:
        ordering = ["order", "id"]


def _problems(count: int) -> str:
    return f"{count:,} problem{'' if count == 1 else 's'}"


def check_room_for(owner: Any, adding: int, doing: str | None = None) -> None:
    """Raise LimitExceeded unless ``owner`` may own ``adding`` more problems: at most
    ``EXECSIM_MAX_PROBLEMS_PER_USER``, imported or written in the editor (one 5 MB upload made 10,000
    public problems in 15 s, issue 51, item 11). ``doing`` names what would add them ("this import")
    in the message; callers lock the owner's row first where two requests could race."""
    limit = settings.EXECSIM_MAX_PROBLEMS_PER_USER
    owned = Problem.objects.filter(owner=owner).count()
    if owned + adding <= limit:
        return
    adds = f" and {doing} would add {adding:,}" if doing else ""
    raise LimitExceeded(
        f"You own {_problems(owned)}{adds}: the limit is {_problems(limit)} per user. "
        "Delete some first, or ask the site's staff to raise it."
    )
