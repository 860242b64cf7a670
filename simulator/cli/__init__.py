"""The ``execsim`` command line: one subcommand module per area, each with ``register(subparsers)``.

Exit codes (a contract): 0 the work ran (whatever the programs' statuses), 1 a run failed, 2 usage error
or unreadable/malformed input, 3 the sandbox itself failed. Commands from other packages (``training``)
plug in through the ``execsim.commands`` entry-point group, so this package never imports them.
"""

from __future__ import annotations

import argparse
import importlib
import io
import sys
from importlib.metadata import entry_points

BUILTIN = [
    "simulator.cli.execute",
    "simulator.cli.check",
    "simulator.cli.model",
    "simulator.cli.solve",
    "simulator.cli.evaluate",
]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_SANDBOX = 0, 1, 2, 3


class UsageError(Exception):
    """Bad arguments or unreadable input: printed as one line, exit 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="execsim", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in BUILTIN:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(sub)
    for ep in entry_points(group="execsim.commands"):
        try:
            ep.load()(sub)
        except ImportError as exc:  # an optional extra that is not installed
            sub.add_parser(ep.name, help=f"(unavailable: {exc})")
    return parser


def _escape_what_cannot_print() -> None:
    """Write a character the output's encoding cannot hold as its escape instead of failing: a model
    reply or a program's output holding a lone surrogate made ``execsim solve --json`` die with
    ``UnicodeEncodeError`` (issue 51, item 14). In JSON output the escape (``\\udc80``) is the JSON
    escape of that character, so the event reads back exactly; people see what the web app shows."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors != "backslashreplace":
            stream.reconfigure(errors="backslashreplace")


def main(argv: list[str] | None = None) -> int:
    _escape_what_cannot_print()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except UsageError as exc:
        print(f"execsim {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
