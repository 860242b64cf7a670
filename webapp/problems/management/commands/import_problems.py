"""``manage.py import_problems FILE --format F --owner USER [--private] [--skip-bad]``: the import page's
work from the command line, for files over the upload limit (the Code Jam dev file is 10 MB) and for
setting up a class or a server without a browser. Same converters, limits and all-or-none rule: a file
over ``EXECSIM_MAX_IMPORT_RECORDS`` records, or an owner past ``EXECSIM_MAX_PROBLEMS_PER_USER``, is
refused, and the message names the setting an operator may raise for one command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from simulator.benchmarks import FORMATS
from webapp.limits import LimitExceeded
from webapp.problems.importers import import_problems


class Command(BaseCommand):
    help = "Import problems from a JSON, JSON Lines or gzipped file (the import page's formats)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="the file to import (.jsonl, .json, or either gzipped)")
        parser.add_argument("--format", choices=sorted(FORMATS), required=True, help="the records' format")
        parser.add_argument("--owner", required=True, help="username of the user who will own the problems")
        parser.add_argument(
            "--private", action="store_true", help="only the owner sees them (default: public)"
        )
        parser.add_argument(
            "--skip-bad", action="store_true", help="import the records that can be, list the others"
        )

    def handle(self, *args: Any, **options: Any) -> str:
        try:
            owner = User.objects.get(username=options["owner"])
        except User.DoesNotExist:
            raise CommandError(f"no user named {options['owner']!r}") from None
        try:
            raw = options["file"].read_bytes()
        except OSError as exc:
            raise CommandError(f"cannot read {options['file']}: {exc.strerror or exc}") from None
        result = import_problems(raw, options["format"])
        if result.errors and not (result.problems and options["skip_bad"]):
            hint = (
                f"\n{len(result.problems)} record(s) could be imported: give --skip-bad to import them"
                if result.problems
                else _raise_hint(result.limit_hit)
            )
            reasons = result.reasons(20, sep="\n")
            raise CommandError(f"nothing was imported:\n{reasons}{hint}")
        try:
            created = result.save(owner, source=options["format"], is_public=not options["private"])
        except LimitExceeded as exc:
            raise CommandError(f"nothing was imported:\n{exc}{_raise_hint(result.limit_hit)}") from None
        if result.errors:
            self.stderr.write(result.skipped())
        return f"For {owner.username}: {result.summary(len(created))}"


def _raise_hint(setting: str) -> str:
    """How an operator lets one command past a limit the site keeps for everyone."""
    if not setting:
        return ""
    return f"\n(the limit is {setting}; for this command: {setting}=N manage.py import_problems ...)"
