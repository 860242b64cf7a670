"""``manage.py load_examples [DIR]``: load every examples/*.json (the CLI's problem format) as public
problems owned by the "examples" user. Idempotent: a title already loaded from the examples is skipped."""

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


def load_examples(folder: Path) -> tuple[int, list[str]]:
    """Returns (problems created, errors as 'file: field: message')."""
    owner, created_user = User.objects.get_or_create(username="examples")
    if created_user:
        owner.set_unusable_password()
        owner.save()
    created, errors = 0, []
    for path in sorted(folder.glob("*.json")):
        try:
            core = CoreProblem.from_dict(json.loads(path.read_text()))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            errors.append(f"{path.name}: not JSON ({exc})")
            continue
        except ProblemError as exc:
            errors.append(f"{path.name}: {exc.field}: {exc.message}")
            continue
        if Problem.objects.filter(source="example", title=core.title).exists():
            continue
        Problem.create_from_core(core, owner, source="example", is_public=True)
        created += 1
    return created, errors


class Command(BaseCommand):
    help = "Load examples/*.json as public problems (skips those already loaded)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("folder", nargs="?", default=str(settings.BASE_DIR / "examples"))

    def handle(self, *args: Any, **options: Any) -> str:
        created, errors = load_examples(Path(options["folder"]))
        for error in errors:
            self.stderr.write(error)
        return f"loaded {created} example problem(s)"
