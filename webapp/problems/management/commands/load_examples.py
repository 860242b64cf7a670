"""``manage.py load_examples [DIR]``: load every examples/*.json (the CLI's problem format) as public
problems owned by the "examples" user. Idempotent: a title already loaded from the examples is not loaded
again, but its place in the list and its label are set from the file again.

Two keys of the example files are the web app's own (the CLI ignores them): ``"order"``, where the example
stands in the problem list (1 first; the examples with one come before every other problem, the others
after them, newest first), and ``"label"``, a few words beside its title in the list and on its page
(what a newcomer should expect of it, e.g. that the small default model rarely solves it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand

from simulator.problem import Problem as CoreProblem
from simulator.problem import ProblemError
from webapp.problems.models import Problem


def placing(data: dict[str, Any], errors: list[str], name: str) -> dict[str, Any]:
    """The example's ``list_order`` and ``label`` from its file's "order" and "label" (absent: none); a
    bad value is reported in ``errors`` (as 'file: field: message') and left out."""
    order, label = data.get("order"), data.get("label", "")
    fields: dict[str, Any] = {"list_order": None, "label": ""}
    if order is not None:
        if isinstance(order, bool) or not isinstance(order, int) or not 0 <= order < 2**31:
            errors.append(f"{name}: order: must be a whole number from 0 (first), not {order!r}")
        else:
            fields["list_order"] = order
    if not isinstance(label, str) or len(label) > Problem.LABEL_CHARS:
        errors.append(f"{name}: label: must be a string of at most {Problem.LABEL_CHARS} characters")
    else:
        fields["label"] = label.strip()
    return fields


def load_examples(folder: Path) -> tuple[int, list[str]]:
    """Returns (problems created, errors as 'file: field: message')."""
    owner, created_user = User.objects.get_or_create(username="examples")
    if created_user:
        owner.set_unusable_password()
        owner.save()
    created, errors = 0, []
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text())
            core = CoreProblem.from_dict(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            errors.append(f"{path.name}: not JSON ({exc})")
            continue
        except ProblemError as exc:
            errors.append(f"{path.name}: {exc.field}: {exc.message}")
            continue
        fields = placing(data, errors, path.name)
        loaded = Problem.objects.filter(source="example", title=core.title)
        if loaded.exists():  # its place and label follow the file (the only fields set again)
            loaded.update(**fields)
            continue
        problem = Problem.create_from_core(core, owner, source="example", is_public=True)
        Problem.objects.filter(pk=problem.pk).update(**fields)
        created += 1
    return created, errors


class Command(BaseCommand):
    help = "Load examples/*.json as public problems (skips those already loaded, but sets their order)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("folder", nargs="?", default=str(settings.BASE_DIR / "examples"))

    def handle(self, *args: Any, **options: Any) -> str:
        created, errors = load_examples(Path(options["folder"]))
        for error in errors:
            self.stderr.write(error)
        return f"loaded {created} example problem(s)"
