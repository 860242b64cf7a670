"""Reading an uploaded problem file: JSON object, JSON list, or JSON Lines, plain or gzipped; each record
converted by ``simulator.benchmarks`` and checked against the size limits. All records or none are
imported, unless the user asks to skip the ones that cannot be (a benchmark file holds a few asserts of
another shape: 8 of the 170 records of the MBPP sanitized dev split).

Gzip is read because a benchmark file can be larger than an upload may be: the Code Jam dev file is
10 MB as text and 3 MB gzipped. What it expands to is capped (``EXECSIM_MAX_IMPORT_BYTES``), so a
small file cannot unpack into gigabytes."""

from __future__ import annotations

import gzip
import io
import json
import zlib
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from simulator.benchmarks import convert
from simulator.problem import Problem, ProblemError
from simulator.source import load_json
from webapp.limits import LimitExceeded, problem_errors
from webapp.problems.models import Problem as SavedProblem
from webapp.problems.models import check_room_for


@dataclass
class ImportResult:
    problems: list[Problem] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # "record N: field: message"
    records: int = 0  # records read from the file
    already: int = 0  # importable records ``save`` left out: the owner has them from this source already
    limit_hit: str = ""  # the setting whose limit refused the file, if one did

    def save(self, owner: Any, *, source: str, is_public: bool) -> list[Any]:
        """The problems that could be imported, created for ``owner`` together (all or none), but for
        those the owner imported from the same source before (the same title, or the same benchmark
        record id: a title the converter words anew is still the same record), counted in ``already``:
        uploading a file again adds only what is new in it. Raises LimitExceeded, creating nothing,
        when the new ones would take the owner past ``EXECSIM_MAX_PROBLEMS_PER_USER``."""
        with transaction.atomic():
            # the owner's row locked: two imports of one user at once cannot both pass the count below
            get_user_model().objects.select_for_update().filter(pk=owner.pk).first()
            mine = SavedProblem.objects.filter(owner=owner, source=source).values_list("title", "extra")
            seen = set().union(*(_keys(title, extra) for title, extra in mine))
            fresh = []
            for problem in self.problems:
                keys = _keys(problem.title[: SavedProblem.TITLE_CHARS], problem.extra)
                if keys & seen:
                    self.already += 1
                    continue
                seen |= keys
                fresh.append(problem)
            try:
                check_room_for(owner, len(fresh), "this import")
            except LimitExceeded:
                self.limit_hit = "EXECSIM_MAX_PROBLEMS_PER_USER"
                raise
            return [
                SavedProblem.create_from_core(problem, owner, source=source, is_public=is_public)
                for problem in fresh
            ]

    def summary(self, created: int) -> str:
        """What an import did, in a sentence: how many problems it added, and how many it found there."""
        done = f"Imported {created} problem(s)."
        if not self.already:
            return done
        already = f"{self.already} you had imported already (same source, same title or record id)"
        return f"{done} {already} were left as they are."

    def reasons(self, shown: int = 10, sep: str = "; ") -> str:
        """The errors, the first ``shown`` of them, joined by ``sep``, and how many more there are."""
        more = len(self.errors) - shown
        return sep.join(self.errors[:shown]) + (f"{sep}and {more} more" if more > 0 else "")

    def skipped(self) -> str:
        """The records left out and why, in one line (the first ten reasons)."""
        left_out = self.records - len(self.problems)
        return f"Skipped {left_out} record(s) that cannot be imported: {self.reasons()}."


def _keys(title: str, extra: dict[str, Any] | None) -> set[tuple[str, str]]:
    """What identifies an imported problem among its owner's from one source: its title, and the
    benchmark's own record id where the converter kept one (``extra["id"]``)."""
    ident = (extra or {}).get("id")
    return {("title", title)} | ({("id", str(ident))} if ident else set())


GZIP_MAGIC = b"\x1f\x8b"


def decompressed(raw: bytes) -> bytes:
    """``raw`` itself, or what it expands to when it is gzipped; raises ProblemError("file", ...) when
    it is a broken gzip file or expands to more than ``EXECSIM_MAX_IMPORT_BYTES``."""
    if not raw.startswith(GZIP_MAGIC):
        return raw
    limit = settings.EXECSIM_MAX_IMPORT_BYTES
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as stream:
            data = stream.read(limit + 1)
    except (OSError, EOFError, zlib.error):
        raise ProblemError("file", "is not a valid gzip file") from None
    if len(data) > limit:
        raise ProblemError("file", f"expands to more than {limit:,} bytes, the limit for an unpacked file")
    return data


def parse_records(raw: bytes) -> list[Any]:
    """Decode the upload (gunzipped first if it is gzipped); raises ProblemError("file", ...) when it is
    neither JSON nor JSON Lines."""
    try:
        text = decompressed(raw).decode("utf-8")
    except UnicodeDecodeError:
        raise ProblemError("file", "is not UTF-8 text") from None
    try:
        data = load_json(text)  # too deeply nested is a JSONDecodeError too
        return data if isinstance(data, list) else [data]
    except json.JSONDecodeError:
        pass
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(load_json(line))
        except json.JSONDecodeError as exc:
            raise ProblemError("file", f"line {number} is not JSON ({exc.msg})") from None
    if not records:
        raise ProblemError("file", "is empty")
    return records


def import_problems(raw: bytes, fmt: str) -> ImportResult:
    """The file's records converted and checked; a file of more than ``EXECSIM_MAX_IMPORT_RECORDS``
    records is refused whole before any is converted (converting and saving is the costly part)."""
    result = ImportResult()
    try:
        records = parse_records(raw)
    except ProblemError as exc:
        result.errors.append(str(exc))
        return result
    result.records = len(records)
    limit = settings.EXECSIM_MAX_IMPORT_RECORDS
    if len(records) > limit:
        result.errors.append(
            f"file: holds {len(records):,} records; one import takes at most {limit:,}: "
            "split the file into smaller ones"
        )
        result.limit_hit = "EXECSIM_MAX_IMPORT_RECORDS"
        return result
    for number, record in enumerate(records, start=1):
        where = f"record {number}" if len(records) > 1 else "problem"
        try:
            problem = convert(fmt, record)
        except ProblemError as exc:
            result.errors.append(f"{where}: {exc.field}: {exc.message}")
            continue
        limit_errors = problem_errors(problem)
        result.errors.extend(f"{where}: {name}: {message}" for name, message in limit_errors)
        if not limit_errors:
            result.problems.append(problem)
    return result
