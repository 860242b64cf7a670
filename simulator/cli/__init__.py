"""The ``execsim`` command line: one subcommand module per area, each with ``register(subparsers)``.

Exit codes (a contract): 0 the work ran (whatever the programs' statuses), 1 a run failed, 2 usage error
or unreadable/malformed input, 3 the sandbox itself failed. Commands from other packages (``training``)
plug in through the ``execsim.commands`` entry-point group, so this package never imports them.

Every file a command reads (a program, a ``--stdin`` file or ``-``, a problem, an NLEX text, a tasks
file, an evaluation's data) goes through ``read_input`` or ``check_input_size``: at most
``EXECSIM_CLI_MAX_INPUT_BYTES`` (default 64 MiB), refused past it in one line with exit 2. A special
file that never ends (``--stdin /dev/zero`` grew by 1.2 GB/s until the machine ran out, issue 51,
item 12) is refused after that many bytes; ``/dev/null``, pipes and process substitution still read.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import sys
from importlib.metadata import entry_points
from pathlib import Path

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


MAX_INPUT_ENV = "EXECSIM_CLI_MAX_INPUT_BYTES"
DEFAULT_MAX_INPUT_BYTES = 64 * 1024 * 1024  # six times the largest benchmark file read (Code Jam dev, 10 MB)


def max_input_bytes() -> int:
    """The most bytes the CLI reads from one input: ``EXECSIM_CLI_MAX_INPUT_BYTES``, else 64 MiB."""
    raw = os.environ.get(MAX_INPUT_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_INPUT_BYTES
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 18 and int(raw) >= 1):
        raise UsageError(f"{MAX_INPUT_ENV}={raw!r}: expected a whole number of bytes, at least 1")
    return int(raw)


def _too_big(what: str, path: Path | str, limit: int) -> UsageError:
    return UsageError(
        f"{what} {path} holds more than {limit:,} bytes, the most the command line reads from one input "
        f"(set {MAX_INPUT_ENV} to read more)"
    )


def read_input(path: Path | str, what: str) -> str:
    """The UTF-8 text of ``path`` (``-``: this process's stdin), lines ending in ``\\n`` as a text
    file's read does, read up to ``max_input_bytes`` and refused past it (``UsageError``: exit 2), as
    it is when it cannot be opened or is not UTF-8. Reading stops at the cap whatever the file is, so
    a special file that never ends (``/dev/zero``) costs at most that much memory and time."""
    limit = max_input_bytes()
    try:
        if str(path) == "-":
            stream = getattr(sys.stdin, "buffer", None)
            data = stream.read(limit + 1) if stream is not None else sys.stdin.read(limit + 1).encode()
        else:
            with open(path, "rb") as file:
                data = file.read(limit + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise _too_big(what, path, limit)
    try:
        with io.TextIOWrapper(io.BytesIO(data), encoding="utf-8") as text:  # universal newlines
            return text.read()
    except UnicodeDecodeError as exc:
        raise UsageError(f"cannot read {what} {path}: not UTF-8 text (byte {exc.start})") from None


def check_input_size(path: Path, what: str) -> None:
    """Refuse (exit 2) a file another module will read (an evaluation's data, its results) when it is
    not a regular file or is larger than ``max_input_bytes``."""
    limit = max_input_bytes()
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if not path.is_file():
        raise UsageError(f"{what} {path} is not a regular file")
    if size > limit:
        raise _too_big(what, path, limit)


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
