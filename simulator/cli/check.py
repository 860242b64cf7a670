"""``execsim check``: run a program in the sandbox with the tracer and check an NLEX text against it.

    execsim check PROGRAM.py (--call EXPR | --stdin FILE) --nlex TEXT_FILE [--json]

``--json`` prints one object, ``simulator.nlex.verify.Verification.to_dict()`` (a contract other
scripts rely on): ``{"schema_version", "status", "verified", "accuracy", "answer": {"verdict",
"claimed", "actual", ...}, "claims": [{"kind", "text", "start", "end", "verdict", "step", "actual",
...}], "first_divergence": null | {"start", "end", "kind", "text", "step", "claimed", "actual",
"sentence"}, ...}`` with ``start``/``end`` character offsets into the text. Exit 0 when the text was
checked, whatever the verdict; 2 for bad arguments or unreadable input; 3 when the sandbox failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from simulator.cli import EXIT_OK, EXIT_SANDBOX
from simulator.cli.execute import _program_arguments, _program_from_args, _read
from simulator.nlex.verify import Verification, verify_program

MARKS = {"true": "✓", "false": "✗", "unverifiable": "?"}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = sub.add_parser("check", help="check an NLEX text against the program's real execution")
    _program_arguments(check)
    check.add_argument(
        "--nlex", type=Path, required=True, metavar="TEXT_FILE", help="the NLEX text ('-': stdin)"
    )
    check.add_argument("--json", action="store_true", help="print the verification as one JSON object")
    check.set_defaults(handler=_check)


def _check(args: argparse.Namespace) -> int:
    program = _program_from_args(args)
    text = _read(args.nlex, "NLEX file")
    verification, _ = verify_program(text, program)
    if verification.status == "error":
        print(f"execsim check: sandbox failure: {verification.message}", file=sys.stderr)
        return EXIT_SANDBOX
    print(json.dumps(verification.to_dict(), ensure_ascii=False) if args.json else report(verification))
    return EXIT_OK


def report(v: Verification) -> str:
    """The verification for a person: the verdict, the answer, then every claim with its mark."""
    answer = v.answer
    lines = [v.summary, f"answer: {answer.verdict}"]
    if answer.claimed is not None or answer.actual is not None:
        lines[-1] += f" (claimed {answer.claimed!r}, actual {answer.actual!r})"
    for claim in v.claims:
        actual = "" if claim.verdict == "true" or claim.actual is None else f"  [real: {claim.actual}]"
        lines.append(f"  {MARKS.get(claim.verdict, '?')} {' '.join(claim.text.split())[:120]}{actual}")
    return "\n".join(lines)
