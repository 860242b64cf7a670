"""``execsim eval TASK --data FILE``: run a benchmark against the configured model server;
``execsim eval-diff A B``: the paired difference of two such runs (simulator.evaluation.paired).

Writes results.json, report.md and PNG plots to --out (default ./out/eval-TASK), resumes from the
request cache there, and prints ``TASK n=N metric=value ...`` as its last line. The server is the one
EXECSIM_MODEL_URL / EXECSIM_MODEL_NAME name (default: the local ``execsim model serve``).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from simulator import config
from simulator.cli import EXIT_FAILED, UsageError, check_input_size
from simulator.evaluation import TASKS, cruxeval
from simulator.evaluation.harness import EvalSettings, final_line, run
from simulator.llm.client import ChatClient
from simulator.llm.errors import LLMUnavailable
from simulator.pipeline.settings import INT_RANGES


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("eval", help="evaluate the model on a benchmark")
    parser.add_argument("task", choices=sorted(TASKS), metavar="TASK", help=", ".join(sorted(TASKS)))
    parser.add_argument(
        "--data", type=Path, required=True, help="the benchmark file to read (the shared/benchmarks formats)"
    )
    parser.add_argument("--limit", type=int, help="evaluate only the first N items")
    parser.add_argument("--n", type=int, default=1, help="samples per item (default 1)")
    parser.add_argument("--k", type=int, default=1, help="also report pass@k and Best@k, for k <= n")
    parser.add_argument(
        "--prompt",
        choices=cruxeval.PROMPTS,
        default="direct",
        help="how a program's output is asked for: direct, nlex, or the app's own simulate request, "
        "narrated (simulate) or answered at once (simulate-answer)",
    )
    parser.add_argument(
        "--temperature", type=float, help="sampling temperature (default 0 for --n 1, else 0.8)"
    )
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight at most (default 8)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the tie-breaking draws (default 0)")
    parser.add_argument(
        "--turns", type=int, default=2, help="self-rlef: repair turns after the first program (default 2)"
    )
    parser.add_argument(
        "--candidates",
        type=Path,
        metavar="RESULTS",
        help="mbpp: judge the candidates of an earlier run's results.json instead of writing new ones, "
        "to compare two models' judges on the same programs",
    )
    parser.add_argument("--out", type=Path, help="where to write the results (default ./out/eval-TASK)")
    parser.set_defaults(handler=_eval)

    diff = sub.add_parser(
        "eval-diff", help="paired difference of two evaluations of the same items (B minus A)"
    )
    diff.add_argument(
        "a", type=Path, metavar="A", help="the reference run's results.json (e.g. the base model's)"
    )
    diff.add_argument("b", type=Path, metavar="B", help="the results.json of the run compared with it")
    diff.add_argument(
        "--measure",
        metavar="WAY",
        help="mbpp: compare a way of picking (sim, paper, oracle or random) instead of pass@1",
    )
    diff.add_argument("--json", action="store_true", help="print the comparison as one JSON object")
    diff.set_defaults(handler=_eval_diff)


def _eval(args: argparse.Namespace) -> int:
    module_name = TASKS[args.task]
    if module_name is None:
        implemented = ", ".join(name for name, module in TASKS.items() if module)
        raise UsageError(f"task {args.task!r} is not implemented yet (implemented: {implemented})")
    if not args.data.is_file():
        raise UsageError(f"--data {args.data}: no such file")
    check_input_size(args.data, "--data")
    if args.candidates is not None:
        check_input_size(args.candidates, "--candidates")
    if args.n < 1 or args.k < 1 or args.k > args.n:
        raise UsageError("need 1 <= --k <= --n")
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be at least 1")
    low, high = INT_RANGES["turns"]
    if not low <= args.turns <= high:
        raise UsageError(f"--turns must be from {low} to {high}")
    if args.task == "self-rlef" and args.n != 1:
        raise UsageError("self-rlef solves one program per problem (k=1, as the pipeline runs it): use --n 1")
    settings = EvalSettings(
        task=args.task,
        data=args.data,
        out=args.out or Path("out") / f"eval-{args.task}",
        limit=args.limit,
        n=args.n,
        k=args.k,
        prompt=args.prompt,
        temperature=args.temperature,
        concurrency=args.concurrency,
        seed=args.seed,
        turns=args.turns,
        candidates=args.candidates,
    )
    module = importlib.import_module(module_name)
    try:
        items_check = module.load(args.data)
    except (ValueError, KeyError) as exc:
        raise UsageError(f"--data {args.data}: {exc}") from None
    if not items_check:
        raise UsageError(f"--data {args.data}: no items")
    if args.candidates is not None:
        _check_candidates(args, items_check[: args.limit] if args.limit else items_check)
    client = ChatClient(
        config.model_url(),
        config.model_name(),
        config.model_api_key(),
        concurrency=args.concurrency,
        timeout_s=600.0,
    )
    console = Console(stderr=True)
    columns = (TextColumn(args.task), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    try:
        with Progress(*columns, console=console) as bar:
            job = bar.add_task(args.task, total=None)

            def progress(done: int, total: int) -> None:
                bar.update(job, completed=done, total=total)

            async def go() -> dict[str, Any]:
                try:
                    return await run(settings, (module.load, module.evaluate), client, progress)
                finally:
                    await client.aclose()

            record = asyncio.run(go())
    # the server went away, or answered garbage: say so (under the closed bar), keep the cache
    except Exception as exc:
        console.print(f"[red]eval failed:[/] {type(exc).__name__}: {exc}")
        if isinstance(exc, LLMUnavailable):
            console.print(LLMUnavailable.HINT)
        console.print(f"rerun the same command to resume from {settings.out / 'requests.jsonl'}")
        return EXIT_FAILED
    console.print(f"wrote {settings.out}/results.json, report.md, plots")
    print(final_line(record), flush=True)
    return 0


def _check_candidates(args: argparse.Namespace, items: list[dict[str, Any]]) -> None:
    """--candidates: an mbpp run's results.json with n candidates for every item evaluated."""
    from simulator.benchmarks import from_mbpp
    from simulator.evaluation.harness import convert_items
    from simulator.evaluation.mbpp import given_candidates

    if args.task != "mbpp":
        raise UsageError("--candidates is for eval mbpp")
    try:
        given = given_candidates(args.candidates)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"--candidates {args.candidates}: {exc}") from None
    converted, _ = convert_items(items, from_mbpp)  # the items evaluated: those that are problems
    for _, item, _ in converted:
        solved = given.get(str(item["task_id"]))
        if solved is None or len(solved.codes) != args.n:
            have = "none" if solved is None else len(solved.codes)
            raise UsageError(
                f"--candidates {args.candidates}: item {item['task_id']} needs {args.n} candidates (--n), "
                f"the file has {have}"
            )


def _eval_diff(args: argparse.Namespace) -> int:
    import json

    from simulator.evaluation.paired import compare_files

    for path in (args.a, args.b):
        if not path.is_file():
            raise UsageError(f"{path}: no such file (give two results.json files from `execsim eval`)")
        check_input_size(path, "results file")
    try:
        result = compare_files(args.a, args.b, measure=args.measure)
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"cannot compare {args.a} and {args.b}: {exc}") from None
    print(json.dumps(result.to_dict()) if args.json else result.line())
    return 0
