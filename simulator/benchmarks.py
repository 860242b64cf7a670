"""Benchmark records -> ``Problem``: pure converters for the formats in ../shared/benchmarks.

One function per format, each taking one decoded JSON record (a dict) and returning a validated
``Problem`` (built through ``Problem.from_dict``, so the same field errors apply). A record that cannot
be converted raises ``ProblemError`` naming the offending field.

- CRUXEval ``{"code", "input", "output", "id"}``: a call problem on ``f``; the reference code is shown
  in the statement and kept in ``extra["reference_code"]``.
- MBPP ``{"task_id", "prompt", "code", "test_list", ...}``: a call problem; each ``assert f(args) == value``
  becomes a test (the first public, the rest private). Asserts of any other shape are skipped and
  counted in ``extra["skipped_asserts"]``.
- Code Jam ``{"id", "name", "statement_text", "public_tests", "private_tests", "output_validator_flags"}``:
  a stdin problem; ``float_tolerance`` comes from the validator flags. The statement is the scraped
  text less the site's copy-button labels (``ICON_LINES``).
"""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path
from typing import Any

from simulator.problem import Problem, ProblemError
from simulator.source import load_json, parse_python, unparse

FORMATS = ("execsim", "cruxeval", "mbpp", "codejam")


# The fields that identify each format's records (the benchmarks' own names).
FIELDS = {
    "CRUXEval": {"code", "input", "output", "id"},
    "MBPP": {"task_id", "prompt", "test_list"},
    "Code Jam": {"id", "statement_text", "public_tests", "private_tests"},
}


def read_jsonl(path: Path, *formats: str) -> list[tuple[str, dict[str, Any]]]:
    """``(format, record)`` for each line of a benchmark JSONL file, the format being the first of
    ``formats`` whose fields the record has; a line of none of them is a ValueError naming the line."""
    items = []
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        record = load_json(line)
        found = next((name for name in formats if FIELDS[name] <= set(record)), None)
        if found is None:
            raise ValueError(f"{path}:{number}: not a record of {' or '.join(formats)}")
        items.append((found, record))
    return items


def _require(record: Any, *names: str) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise ProblemError("(top level)", "a record is a JSON object")
    for name in names:
        if not isinstance(record.get(name), str):
            raise ProblemError(name, "must be a string")
    return record


def from_cruxeval(record: Any) -> Problem:
    record = _require(record, "code", "input", "output")
    ident = str(record.get("id", "cruxeval"))
    statement = (
        f"Write a function `f` that behaves exactly like this one:\n\n```python\n{record['code']}\n```\n"
    )
    problem = Problem.from_dict(
        {
            "title": f"CRUXEval {ident}",
            "statement": statement,
            "kind": "call",
            "entry_point": "f",
            "tests": [{"input": record["input"], "output": record["output"], "public": True}],
        }
    )
    problem.extra.update({"reference_code": record["code"], "benchmark": "cruxeval", "id": ident})
    return problem


def _split_assert(source: str) -> tuple[str, str, str] | None:
    """``assert name(args) == value`` -> (name, args source, value source); None for any other shape."""
    try:
        tree = parse_python(source.strip())
    except SyntaxError:  # too deeply nested included
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assert):
        return None
    test = tree.body[0].test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return None
    call, expected = test.left, test.comparators[0]
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
        return None
    if hasattr(builtins, call.func.id):  # `set(f(x)) == set(y)`: the function is inside, compared as a set
        return None
    try:
        args = [unparse(a) for a in call.args] + [unparse(k) for k in call.keywords]
        return call.func.id, ", ".join(args), unparse(expected)
    except SyntaxError:  # parsed, but too deep to print again
        return None


def _gist(prompt: Any, limit: int = 70) -> str:
    """What an MBPP task asks, for a title a user can pick from a list: ``Write a function to find
    the shared elements from the given two lists.`` -> ``find the shared elements from the given two
    lists``, cut at a word near ``limit`` characters."""
    text = " ".join(str(prompt).split()).rstrip(".")
    for opening in (
        "Write a python function to ",
        "Write a function to ",
        "Write a function that ",
        "Write a function which ",
    ):
        if text.lower().startswith(opening.lower()):
            text = text[len(opening) :]
            break
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0] + "…"
    return text


def from_mbpp(record: Any) -> Problem:
    record = _require(record, "prompt")
    asserts = record.get("test_list")
    if not isinstance(asserts, list) or not asserts:
        raise ProblemError("test_list", "must be a non-empty list of assert statements")
    entry: str | None = None
    tests: list[dict[str, Any]] = []
    skipped = 0
    for source in asserts:
        split = _split_assert(source) if isinstance(source, str) else None
        if split is None or (entry is not None and split[0] != entry):
            skipped += 1
            continue
        entry = split[0]
        tests.append({"input": split[1], "output": split[2], "public": not tests})
    if entry is None:
        raise ProblemError("test_list", "no assert of the form `assert f(args) == value`")
    example = asserts[0] if isinstance(asserts[0], str) else ""
    statement = f"{record['prompt']}\n\nYour function `{entry}` should pass:\n\n```python\n{example}\n```\n"
    ident = str(record.get("task_id", "mbpp"))
    problem = Problem.from_dict(
        {
            "title": f"MBPP {ident}: {_gist(record['prompt'])}",
            "statement": statement,
            "kind": "call",
            "entry_point": entry,
            "tests": tests,
        }
    )
    problem.extra.update(
        {
            "benchmark": "mbpp",
            "id": ident,
            "reference_code": record.get("code", ""),
            "skipped_asserts": skipped,
        }
    )
    return problem


def _tolerance(flags: Any) -> float | None:
    if not isinstance(flags, str):
        return None
    words = flags.split()
    for i, word in enumerate(words[:-1]):
        if word == "float_tolerance":
            try:
                return float(words[i + 1])
            except ValueError:
                raise ProblemError(
                    "output_validator_flags", f"bad float_tolerance {words[i + 1]!r}"
                ) from None
    return None


# The Code Jam site's download and copy buttons, scraped into every sample of every statement as three
# lines of icon names ("save_alt", "content_copy", "Copied!"), with the blank lines before each.
ICON_LINES = re.compile(r"(?:\n[ \t]*)*\n[ \t]*(?:save_alt|content_copy|Copied!)[ \t]*(?=\n|$)")


def _without_heading(statement: str, source: str, name: str) -> str:
    """The statement less the contest and problem name it was scraped with, which the title says."""
    lines = statement.lstrip("\n").split("\n")
    if [line.strip() for line in lines[:2]] == [source.strip(), name.strip()]:
        return "\n".join(lines[2:]).lstrip("\n")
    return statement


def from_codejam(record: Any) -> Problem:
    record = _require(record, "name", "statement_text")
    tests = []
    for key, public in (("public_tests", True), ("private_tests", False)):
        raw = record.get(key, [])
        if not isinstance(raw, list):
            raise ProblemError(key, "must be a list of {input, output}")
        for i, test in enumerate(raw):
            if not isinstance(test, dict):
                raise ProblemError(f"{key}[{i}]", "must be an object with input and output")
            tests.append({"input": test.get("input"), "output": test.get("output"), "public": public})
    source = record.get("source")  # "Code Jam 2008 - AMER Semifinal"
    if not isinstance(source, str) or not source.strip():
        source = f"Code Jam {record.get('year', '')} {record.get('round', '')}".replace("  ", " ").strip()
    title = f"{record['name']} ({source.replace(' - ', ', ')})"
    statement = record["statement_text"]
    if isinstance(statement, str):
        statement = _without_heading(ICON_LINES.sub("", statement), source, str(record["name"]))
    data = {"title": title, "statement": statement, "kind": "stdin", "tests": tests}
    tolerance = _tolerance(record.get("output_validator_flags"))
    if tolerance is not None:
        data["float_tolerance"] = tolerance
    problem = Problem.from_dict(data)
    # statement_text is plain text ("5*2 ≤ 20", "x_i"): shown as written, not read as Markdown
    problem.extra.update(
        {"benchmark": "codejam", "id": str(record.get("id", "")), "statement_format": "text"}
    )
    return problem


def convert(fmt: str, record: Any) -> Problem:
    """Dispatch on the format name (one of FORMATS)."""
    if fmt == "execsim":
        return Problem.from_dict(record)
    converters = {"cruxeval": from_cruxeval, "mbpp": from_mbpp, "codejam": from_codejam}
    if fmt not in converters:
        raise ProblemError("format", f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return converters[fmt](record)
