"""``execsim run | trace | batch``: run programs in the sandbox (a contract scripts rely on).

- ``run PROGRAM.py (--call EXPR | --stdin FILE) [--json]``: one program; ``--json`` prints one record
  (the fields of a batch line), otherwise a readable summary.
- ``trace PROGRAM.py (--call EXPR | --stdin FILE) [--json | --nlex] [--max-steps N]``: the same, traced;
  prints the steps (numbered from 1, as the explorer counts them), the trace record (``--json``, whose
  ``index`` counts from 0) or the deterministic narration (``--nlex``).
- ``batch TASKS.jsonl [--workers N] [--trace]``: one JSON line per input line, in input order, on stdout;
  a malformed line gives ``{"id": null, "line": N, "status": "invalid_input", ...}`` and the rest still run.
  Progress goes to stderr, only when it is a terminal.

Exit codes: 0 the program(s) ran, whatever their status; 2 usage error or unreadable input; 3 the
sandbox itself failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from simulator.cli import EXIT_FAILED, EXIT_OK, EXIT_SANDBOX, UsageError, read_input
from simulator.execution.program import Program, call_from_input
from simulator.execution.result import ExecutionResult
from simulator.execution.trace import DEFAULT_MAX_STEPS, Trace
from simulator.source import load_json, parse_python


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = sub.add_parser("run", help="run one program in the sandbox")
    _program_arguments(run)
    run.add_argument("--json", action="store_true", help="print one JSON record")
    run.set_defaults(handler=_run)

    trace = sub.add_parser("trace", help="run one program in the sandbox with the line tracer")
    _program_arguments(trace)
    output = trace.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the JSON record with its trace")
    output.add_argument("--nlex", action="store_true", help="print the natural-language narration")
    trace.add_argument(
        "--max-steps", type=int, default=DEFAULT_MAX_STEPS, help="stop recording after N steps"
    )
    trace.set_defaults(handler=_trace)

    batch = sub.add_parser("batch", help="run a JSONL file of tasks; JSONL results on stdout")
    batch.add_argument("tasks", type=Path, metavar="TASKS.jsonl")
    batch.add_argument("--workers", type=int, default=None, help="sandbox workers (default: CPU count)")
    batch.add_argument("--trace", action="store_true", help="include each program's trace")
    batch.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS, help=argparse.SUPPRESS)
    batch.set_defaults(handler=_batch)


def _program_arguments(parser: argparse.ArgumentParser, *, timeout: bool = True) -> None:
    parser.add_argument("program", type=Path, metavar="PROGRAM.py")
    how = parser.add_mutually_exclusive_group(required=True)
    how.add_argument("--call", metavar="EXPR", help='the call whose value is the result, e.g. "f(1, 2)"')
    how.add_argument(
        "--stdin", metavar="FILE", help="run as a script reading FILE ('-': this stdin; '': nothing)"
    )
    if timeout:
        parser.add_argument(
            "--timeout", type=float, default=None, help="wall-clock limit in seconds (default 3)"
        )


# -- reading input ---------------------------------------------------------------------------------


def _read(path: Path, what: str) -> str:
    """Every file these commands read, bounded (``simulator.cli.read_input``)."""
    return read_input(path, what)


def _read_stdin(value: str) -> str:
    """What ``--stdin`` feeds the program: a file's text, this process's stdin for '-', and nothing for
    '' (a script that only prints)."""
    return _read(Path(value), "stdin file") if value else ""


def _program_from_args(args: argparse.Namespace) -> Program:
    """The program ``_program_arguments`` describe; refuses (exit 2) code that does not parse, before
    any work."""
    code = _read(args.program, "program")
    check_parses(code, args.program)
    extra: dict[str, Any] = {}
    if getattr(args, "timeout", None) is not None:
        extra["timeout_s"] = args.timeout
    if args.call is not None:
        program = Program(code=code, call=args.call, **extra)
    else:
        program = Program(code=code, stdin=_read_stdin(args.stdin), **extra)
    problems = program.problems()
    if problems:
        raise UsageError("; ".join(problems))
    return program


def check_parses(code: str, path: Path) -> None:
    """Refuse (exit 2) a program file that does not parse, too deeply nested included, before any work."""
    try:
        parse_python(code, filename=str(path))
    except SyntaxError as exc:
        raise UsageError(f"{path} does not parse: {exc.msg} (line {exc.lineno})") from None


def program_from_task(task: Any) -> tuple[Any, Program]:
    """(id, Program) from one batch line's object; raises ValueError with a one-line reason."""
    if not isinstance(task, dict):
        raise ValueError("each line must be a JSON object")
    if not isinstance(task.get("code"), str):
        raise ValueError('"code" (a string) is required')
    shapes = [key for key in ("call", "input", "stdin", "tests") if key in task]
    if len(shapes) != 1:
        raise ValueError('give exactly one of "call", "input", "stdin", "tests"')
    extra: dict[str, Any] = {}
    if "timeout_s" in task:
        if not isinstance(task["timeout_s"], int | float) or isinstance(task["timeout_s"], bool):
            raise ValueError('"timeout_s" must be a number')
        extra["timeout_s"] = float(task["timeout_s"])
    shape = shapes[0]
    value = task[shape]
    if shape == "tests":
        if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
            raise ValueError('"tests" must be a list of assert statements')
        program = Program(code=task["code"], tests=tuple(value), **extra)
    elif not isinstance(value, str):
        raise ValueError(f'"{shape}" must be a string')
    elif shape == "stdin":
        program = Program(code=task["code"], stdin=value, **extra)
    else:
        entry = task.get("entry", "f")
        if not isinstance(entry, str) or not entry.isidentifier():
            raise ValueError('"entry" must be a function name')
        call = value if shape == "call" else call_from_input(entry, value)
        program = Program(code=task["code"], call=call, **extra)
    problems = program.problems()
    if problems:
        raise ValueError("; ".join(problems))
    return task.get("id"), program


# -- commands --------------------------------------------------------------------------------------


def _execute(program: Program, trace: bool, max_steps: int = DEFAULT_MAX_STEPS) -> ExecutionResult | None:
    from simulator.execution import SandboxError, run

    try:
        return run(program, trace=trace, max_steps=max_steps)
    except SandboxError as exc:
        print(f"execsim: sandbox failure: {exc}", file=sys.stderr)
        return None


def _run(args: argparse.Namespace) -> int:
    program = _program_from_args(args)
    result = _execute(program, trace=False)
    if result is None:
        return EXIT_SANDBOX
    if args.json:
        print(json.dumps(result.to_record(id=str(args.program))))
    else:
        print(summary(result))
    return EXIT_OK


def _trace(args: argparse.Namespace) -> int:
    if args.max_steps < 1:
        raise UsageError("--max-steps must be at least 1")
    program = _program_from_args(args)
    narrate: Callable[[Trace, Program], str] | None = None
    if args.nlex:
        try:
            from simulator.nlex.narrator import narrate
        except ImportError:
            print(
                "execsim trace: --nlex needs simulator/nlex/narrator.py, which is not available",
                file=sys.stderr,
            )
            return EXIT_FAILED
    result = _execute(program, trace=True, max_steps=args.max_steps)
    if result is None:
        return EXIT_SANDBOX
    if args.json:
        print(json.dumps(result.to_record(id=str(args.program))))
    elif narrate is not None:
        if result.trace is not None:
            print(narrate(result.trace, program))
        print(summary(result), file=sys.stderr)
    else:
        if result.trace is not None:
            print(steps_text(result.trace))
        print(summary(result))
    return EXIT_OK


def _batch(args: argparse.Namespace) -> int:
    from simulator.execution import Pool, SandboxError

    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be at least 1")
    text = _read(args.tasks, "tasks file")
    records: list[dict[str, Any] | None] = []
    programs: list[tuple[int, Any, Program]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            task_id, program = program_from_task(load_json(line))
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            record = ExecutionResult.invalid(f"line {number}: {exc}").to_record(id=None)
            record["line"] = number
            records.append(record)
            continue
        programs.append((len(records), task_id, program))
        records.append(None)
    try:
        with Pool(workers=args.workers) as pool:
            results = pool.run_many(
                [p for _, _, p in programs], trace=args.trace, max_steps=args.max_steps, progress=_progress()
            )
    except SandboxError as exc:
        print(f"execsim batch: sandbox failure: {exc}", file=sys.stderr)
        return EXIT_SANDBOX
    for (index, task_id, _), result in zip(programs, results, strict=True):
        records[index] = result.to_record(id=task_id)
    out = sys.stdout
    for entry in records:
        out.write(json.dumps(entry) + "\n")
    out.flush()
    return EXIT_OK


def _progress() -> Any:
    """A rich progress callback on stderr when it is a terminal; otherwise nothing."""
    if not sys.stderr.isatty():
        return None
    from rich.console import Console
    from rich.progress import Progress

    bar = Progress(console=Console(stderr=True), transient=True)
    task = None

    def update(done: int, total: int) -> None:
        nonlocal task
        if task is None:
            bar.start()
            task = bar.add_task("running", total=total)
        bar.update(task, completed=done)
        if done == total:
            bar.stop()

    return update


# -- output ----------------------------------------------------------------------------------------


def summary(result: ExecutionResult) -> str:
    """A few readable lines about one result."""
    lines = [f"status: {result.status}" + (f" ({result.message})" if result.message else "")]
    if result.value is not None:
        lines.append(f"value: {result.value}  [{result.value_type}]")
    if result.stdout:
        lines.append("stdout:" + (" (truncated)" if result.stdout_truncated else ""))
        lines.append(_indent(result.stdout))
    if result.stderr:
        lines.append("stderr:" + (" (truncated)" if result.stderr_truncated else ""))
        lines.append(_indent(result.stderr))
    memory = f", peak memory {result.peak_memory_kb / 1024:.1f} MB" if result.peak_memory_kb else ""
    lines.append(f"time: {result.duration_s * 1000:.1f} ms{memory}")
    return "\n".join(lines)


def steps_text(trace: Any) -> str:
    """One line per recorded step: its number (from 1, as the explorer counts; the JSON's ``index`` is
    this less 1), event, function:line, changed variables, printed text."""
    lines = []
    for step in trace.steps:
        parts = [f"{step.index + 1:>5} {step.kind:<9} {'  ' * step.depth}{step.function}:{step.line}"]
        if step.changed:
            parts.append(", ".join(f"{name}={value.repr}" for name, value in step.changed.items()))
        if step.value is not None:
            parts.append(f"-> {step.value.repr}")
        if step.stdout:
            parts.append(f"printed {step.stdout!r}")
        lines.append("  ".join(parts))
    if trace.truncated:
        lines.append(f"({trace.truncation})")
    return "\n".join(lines)


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.rstrip("\n").splitlines())
