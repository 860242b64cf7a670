"""``execsim solve`` and ``execsim simulate``: the pipeline from the command line.

    execsim solve PROBLEM.json [--k 4] [--turns 0] [--answer-only] [--oracle] [--real] [--seed S]
                  [--temperature T] [--max-tokens N] [--json]
    execsim simulate PROGRAM.py (--call EXPR | --stdin FILE) [--max-tokens N] [--json]

Both stream progress (rich) as the model writes; ``--json`` prints one event per line instead:
``{"schema_version", "run_id", "seq", "type", "payload"}`` (docs/events.md). Exit 0 when the run
finished, 1 when it failed (the message says why: server down, unknown model ...), 2 for a malformed
problem file or bad arguments (the message names the field). The model server is the one configured
by EXECSIM_MODEL_URL / EXECSIM_MODEL_NAME / EXECSIM_MODEL_API_KEY.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax

from simulator.cli import EXIT_FAILED, EXIT_OK, UsageError, read_input
from simulator.cli.check import report
from simulator.cli.execute import _program_arguments, _program_from_args
from simulator.llm.client import ChatClient
from simulator.llm.errors import LLMUnavailable
from simulator.nlex.verify import Verification
from simulator.pipeline.events import Event
from simulator.pipeline.judge import cost
from simulator.pipeline.run import run
from simulator.pipeline.settings import RunSettings, SettingsError
from simulator.pipeline.single import simulate_program
from simulator.problem import Problem, ProblemError
from simulator.source import load_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    solve = sub.add_parser("solve", help="solve a problem: k candidates, simulate, select, repair")
    solve.add_argument("problem", type=Path, help="the problem's JSON file (docs/problem-format.md)")
    solve.add_argument(
        "--k",
        type=int,
        default=RunSettings.k,
        help="how many candidate programs to write (default %(default)s)",
    )
    solve.add_argument(
        "--turns",
        type=int,
        default=RunSettings.turns,
        help="repair turns at most (default %(default)s: repair does not yet raise the hidden-test "
        "score, docs/results.md#repair)",
    )
    solve.add_argument(
        "--answer-only",
        dest="narrate",
        action="store_false",
        help="quicker: the model states each output at once instead of narrating the run (NLEX)",
    )
    solve.add_argument(
        "--oracle",
        action="store_true",
        help="pick and repair by running the public tests instead of simulating",
    )
    solve.add_argument(
        "--real",
        action="store_true",
        help="also run the programs for real and show where each simulation first went wrong",
    )
    solve.add_argument(
        "--seed", type=int, default=None, help="seed of the tie-breaking draw (default: drawn and recorded)"
    )
    solve.add_argument(
        "--temperature",
        type=float,
        default=RunSettings.temperature,
        help="how varied the candidates are (default %(default)s)",
    )
    solve.add_argument(
        "--top-p",
        type=float,
        default=RunSettings.top_p,
        help="nucleus sampling of the candidates (default %(default)s)",
    )
    _reply_arguments(solve)
    solve.add_argument(
        "--concurrency",
        type=int,
        default=RunSettings.concurrency,
        help="model requests in flight at most (default %(default)s)",
    )
    solve.set_defaults(handler=_solve)

    simulate = sub.add_parser(
        "simulate", help="let the model simulate a program, then check it against reality"
    )
    _program_arguments(simulate, timeout=False)
    _reply_arguments(simulate)
    simulate.set_defaults(handler=_simulate)


def _reply_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=RunSettings.max_tokens,
        help="the longest reply the model may write, in tokens (default %(default)s)",
    )
    parser.add_argument("--model", default=None, help="the model to ask (default: EXECSIM_MODEL_NAME)")
    parser.add_argument("--json", action="store_true", help="print one JSON event per line")


# -- solve ---------------------------------------------------------------------------------------


def _solve(args: argparse.Namespace) -> int:
    problem = _load_problem(args.problem)
    settings = _settings(
        k=args.k, turns=args.turns, oracle=args.oracle, real=args.real, seed=args.seed, narrate=args.narrate,
        temperature=args.temperature, top_p=args.top_p, max_tokens=args.max_tokens, model=args.model,
        concurrency=args.concurrency,
    )  # fmt: skip

    async def main(client: ChatClient) -> AsyncIterator[Event]:
        async for event in run(problem, settings, client):
            yield event

    printer = _JsonPrinter() if args.json else _SolvePrinter(problem)
    return _drive(main, printer, settings.concurrency)


def _load_problem(path: Path) -> Problem:
    text = read_input(path, "problem file")  # bounded; unreadable or not UTF-8: exit 2
    try:
        data = load_json(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not a JSON file: {exc}") from None
    try:
        return Problem.from_dict(data)
    except ProblemError as exc:
        raise UsageError(f"{path}: invalid problem: {exc}") from None


def _settings(**values: Any) -> RunSettings:
    try:
        return RunSettings(**values)
    except SettingsError as exc:
        raise UsageError(f"--{exc.field.replace('_', '-')}: {exc.message}") from None


# -- simulate ------------------------------------------------------------------------------------


def _simulate(args: argparse.Namespace) -> int:
    program = _program_from_args(args)  # as ``run`` reads it: never ask the model about code that cannot run
    settings = _settings(
        k=1, turns=0, max_tokens=args.max_tokens, model=args.model, real=True,
    )  # fmt: skip

    async def main(client: ChatClient) -> AsyncIterator[Event]:
        async for event in simulate_program(program, settings, client):
            yield event

    printer = _JsonPrinter() if args.json else _SimulatePrinter()
    return _drive(main, printer, settings.concurrency)


# -- driving and printing ------------------------------------------------------------------------


def _drive(events: Callable[[ChatClient], AsyncIterator[Event]], printer: _Printer, concurrency: int) -> int:
    async def main() -> str:
        final = "run_failed"
        async with ChatClient(concurrency=concurrency) as client:
            async for event in events(client):
                printer.show(event)
                if event.is_final:
                    final = event.type
        return final

    try:
        final = asyncio.run(main())
    finally:
        printer.close()
    return EXIT_OK if final == "run_finished" else EXIT_FAILED


class _Printer:
    def show(self, event: Event) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


class _JsonPrinter(_Printer):
    def show(self, event: Event) -> None:
        sys.stdout.write(event.to_json() + "\n")
        sys.stdout.flush()


class _RichPrinter(_Printer):
    """Human output. ``HANDLERS`` maps each event type a printer shows (docs/events.md) to its method
    for it; the other events print nothing."""

    HANDLERS: ClassVar[dict[str, Callable[[Any, Event], None]]] = {}

    def __init__(self) -> None:
        self.out = Console(highlight=False, soft_wrap=True)
        self.err = Console(stderr=True, highlight=False, soft_wrap=True)

    def show(self, event: Event) -> None:
        handler = self.HANDLERS.get(event.type)
        if handler is not None:
            handler(self, event)

    def _run_started(self, event: Event) -> None:
        prov = event.payload["provenance"]
        weights = str(prov.get("weights_sha256", "unknown"))[:12]
        self.out.print(
            f"[bold]run {event.run_id}[/] · model {prov['model']} (weights {weights}) · "
            f"seed {prov['seed']} · {prov['code_version']}"
        )

    def _run_failed(self, event: Event) -> None:
        p = event.payload
        self.err.print(f"[bold red]run failed[/] ({p['error']}): {escape(p['message'])}")
        if p["error"] == "model_unavailable":
            self.err.print(LLMUnavailable.HINT)

    def _run_cancelled(self, event: Event) -> None:
        self.err.print(f"[yellow]run cancelled[/]: {escape(event.payload['reason'])}")


class _Waiting:
    """The live status line's text, rendered at each refresh (rich calls ``__rich__``): what the run
    is doing and, once nothing has arrived for a few seconds outside the sandbox stage, how long it
    has waited for the model, so that a silent server shows as waiting rather than as a frozen line."""

    QUIET_S = 3.0

    def __init__(self, text: str) -> None:
        self.text = text
        self.since = time.monotonic()

    def heard(self) -> None:
        self.since = time.monotonic()

    def __rich__(self) -> str:
        quiet = time.monotonic() - self.since
        if quiet < self.QUIET_S or self.text.startswith("execute"):
            return self.text
        return f"{self.text} · waiting for the model ({quiet:.0f} s)"


class _SolvePrinter(_RichPrinter):
    """Human output for ``solve``: a live status line while text streams, then each result."""

    def __init__(self, problem: Problem) -> None:
        super().__init__()
        self.problem = problem
        self.line = _Waiting("starting")
        self.status = self.out.status(self.line, spinner="dots")
        self.status.start()
        self.streamed = 0
        self.verdicts = 0

    def close(self) -> None:
        self.status.stop()

    def show(self, event: Event) -> None:
        self.line.heard()
        if event.is_final:  # the status line goes before the last lines print
            self.status.stop()
        super().show(event)

    def _delta(self, event: Event) -> None:
        """Any streamed text (candidate, simulation, repair): counted on the status line."""
        self.streamed += 1
        self.line.text = f"streaming ({self.streamed} chunks, {self.verdicts} verdicts)"

    def _stage(self, event: Event) -> None:
        p = event.payload
        if p["state"] == "started":
            turn = f" (turn {p['turn']})" if p.get("turn") else ""
            self.line.text = f"{p['stage']}{turn} ..."

    def _candidate_done(self, event: Event) -> None:
        p = event.payload
        title = f"candidate {p['candidate']} ({p['tokens']} tokens)"
        if p["code"] is None:
            self.out.print(f"[red]{title}: {escape(p['parse_error'])}[/]")
        else:
            self.out.print(Panel(Syntax(p["code"].rstrip(), "python"), title=title, title_align="left"))

    def _verdict(self, event: Event) -> None:
        p = event.payload
        self.verdicts += 1
        # a checked verdict is the static judgement: a hard-coded function may give the expected value
        wrong = "[red]judged wrong[/]" if p["source"] == "checked" else "[red]differs[/]"
        mark = "[green]match[/]" if p["match"] else wrong
        got = p["simulated"] if p["source"] == "simulated" else (p.get("real") or {}).get("output")
        got = "(no answer)" if got is None else got
        turn = f" turn {p['turn']}" if p.get("turn") else ""
        said = f"not simulated: {p['reason']}" if p["source"] == "checked" else f"{p['source']} {_short(got)}"
        expected = _short(p["expected"])
        line = f"candidate {p['candidate']}{turn} · test {p['test']}: {mark} ({said}, expected {expected})"
        real = p.get("real")
        if real and p["source"] == "simulated":
            line += f" · real {real['status']} {_short(real['output'])}"
            if real.get("verification"):
                line += f" · simulation {_short(real['verification']['summary'], 200)}"
        self.out.print(line)

    def _selected(self, event: Event) -> None:
        p = event.payload
        self.out.print(f"[bold]selected candidate {p['candidate']}[/]: {p['reason']} (scores {p['scores']})")

    def _repair_turn(self, event: Event) -> None:
        p = event.payload
        if p["submitted"]:
            self.out.print(
                f"repair turn {p['turn']}: [green]submitted[/] without asking the model "
                f"(its {p['decided_by']} matches every public test)"
            )
            return
        replies = p.get("replies") or []  # every reply sampled, each with its why
        if p["code"] is not None:
            title = f"repair turn {p['turn']}: new program"
            self.out.print(Panel(Syntax(p["code"].rstrip(), "python"), title=title, title_align="left"))
        else:
            self.out.print(f"repair turn {p['turn']}: [red]{escape(p['parse_error'])}[/]")
        for reply in replies if len(replies) > 1 else []:
            taken = "taken: " if reply["fix"] == p.get("fix") else ""
            self.out.print(f"  reply {reply['fix'] + 1} of {len(replies)}: {taken}{escape(reply['why'])}")

    def _repair_rejected(self, event: Event) -> None:
        p = event.payload
        self.out.print(f"repair turn {p['turn']}: [yellow]the fix is {escape(p['reason'])}[/]")

    def _execution(self, event: Event) -> None:
        p = event.payload
        mark = "[green]pass[/]" if p["passed"] else "[red]fail[/]"
        where = "public" if p["public"] else "private"
        line = f"real run · test {p['test']} ({where}): {mark} {p['status']}"
        if spent := _cost(p):
            line += f" · {spent}"
        if p.get("verification"):
            line += f" · simulation {_short(p['verification']['summary'], 200)}"
        self.out.print(line)

    def _run_finished(self, event: Event) -> None:
        p = event.payload
        summary = (
            f"candidate {p['candidate']} · "
            f"{p['passed_public_simulated']}/{p['public_tests']} public tests by {p['judged_by']} · "
            f"{p['turns_used']} repair turn(s)"
            f"{' · submitted' if p['submitted'] else ''}"
        )
        if p.get("real"):
            r = p["real"]
            summary += f" · real: {r['passed_public']}/{r['public_tests']} public, "
            summary += f"{r['passed_private']}/{r['private_tests']} private"
        self.out.print(Panel(Syntax(p["code"].rstrip(), "python"), title="final program", title_align="left"))
        totals = p["totals"]
        self.out.print(f"{summary} · {totals['tokens']} tokens in {totals['seconds']:.1f} s")

    HANDLERS = {
        "run_started": _RichPrinter._run_started,
        "stage": _stage,
        "candidate_delta": _delta,
        "candidate_done": _candidate_done,
        "simulation_delta": _delta,
        "verdict": _verdict,
        "selected": _selected,
        "repair_delta": _delta,
        "repair_turn": _repair_turn,
        "repair_rejected": _repair_rejected,
        "execution": _execution,
        "run_finished": _run_finished,
        "run_failed": _RichPrinter._run_failed,
        "run_cancelled": _RichPrinter._run_cancelled,
    }


class _SimulatePrinter(_RichPrinter):
    """Human output for ``simulate``: the NLEX as it streams, then every claim checked."""

    def _simulation_delta(self, event: Event) -> None:
        self.out.print(event.payload["text"], end="", markup=False)

    def _simulation_done(self, event: Event) -> None:
        p = event.payload
        self.out.print()
        if p.get("forced"):
            how = "used its whole budget" if p.get("cut") else "stopped before its answer"
            asked = "at once" if p.get("cut") else "after it"
            self.out.print(f"[yellow]the narration {how}: the answer was asked for {asked}[/]")
        if p["parse_error"]:
            self.out.print(f"[red]sample {p['sample']}: {escape(p['parse_error'])}[/]")
        else:
            self.out.print(f"[bold]predicted[/] (sample {p['sample']}): {_short(p['predicted'], 200)}")
        if p.get("copied"):
            what = "the program's input" if p["copied"] == "input" else "the prompt's example output"
            self.out.print(f"[yellow]the prediction is {what}: the model may have copied it[/]")

    def _execution(self, event: Event) -> None:
        p = event.payload
        spent = _cost(p)
        self.out.print(
            f"[bold]real run[/]: {p['status']} {_short(p['output'], 200)} {escape(p['message'] or '')}"
            + (f" ({spent})" if spent else "")
        )
        verification = p.get("verification")
        if verification:
            self.out.print(report(Verification.from_dict(verification)), markup=False)

    def _run_finished(self, event: Event) -> None:
        verdict = "[green]matches[/]" if event.payload["match"] else "[red]differs from[/]"
        self.out.print(f"the prediction {verdict} the real output")

    HANDLERS = {
        "run_started": _RichPrinter._run_started,
        "simulation_delta": _simulation_delta,
        "simulation_done": _simulation_done,
        "execution": _execution,
        "run_finished": _run_finished,
        "run_failed": _RichPrinter._run_failed,
        "run_cancelled": _RichPrinter._run_cancelled,
    }


def _cost(real: dict[str, Any]) -> str:
    """What a real run (an ``execution`` event's payload) cost, as the run page shows it."""
    return cost(real.get("seconds"), real.get("memory_kb"), bool(real.get("traced")))


def _short(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.strip().replace("\n", "⏎")
    return escape(text if len(text) <= limit else text[: limit - 1] + "…")
