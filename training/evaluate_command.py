"""``execsim train evaluate``: serve a model folder (or use a running server), evaluate it on the dev
benchmarks and compare it with a baseline item by item (``training.evaluate``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from simulator.cli import EXIT_FAILED, UsageError
from training.command_line import Bar, log_config


def register(stages: argparse._SubParsersAction) -> None:
    """Add ``train evaluate`` and its arguments."""
    ev = stages.add_parser(
        "evaluate", help="serve a model folder, evaluate it (CRUXEval-O NLEX, MBPP), compare with a baseline"
    )
    add = ev.add_argument
    add("--model", type=Path, help="the HF model folder to serve (e.g. runs/export/merged)")
    add("--url", help="evaluate this running OpenAI-compatible server instead of serving --model")
    add("--name", help="the served model's name (default: the folder's name)")
    add("--out", type=Path, required=True, help="output folder (one subfolder per task)")
    add("--variant", default="checkpoint", help="what the result rows call this model, e.g. base, sft or rl")
    add("--tasks", default="cruxeval-o,mbpp", help="comma-separated benchmarks: cruxeval-o, mbpp")
    add("--limit", type=int, help="evaluate only the first N items of each benchmark")
    add("--baseline", type=Path, help="an earlier `train evaluate --out` to compare with, item by item")
    add("--baseline-variant", default="base", help="what the result rows call the baseline, e.g. current")
    add("--concurrency", type=int, default=16, help="requests in flight at once (default %(default)s)")
    add("--max-model-len", type=int, help="the context length vLLM serves (default: the model's)")
    ev.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Evaluate and print one line per figure; a server that fails is said in words (exit 1), and a rerun
    resumes from the replies already cached."""
    from simulator.llm import LLMError, LLMUnavailable
    from training.evaluate import TASKS, EvalRunConfig, EvaluateError, evaluate_model

    if (args.model is None) == (args.url is None):
        raise UsageError("give exactly one of --model (a folder to serve) and --url (a running server)")
    if args.model is not None and not (args.model / "config.json").is_file():
        raise UsageError(f"--model {args.model} is not an HF model folder (no config.json)")
    if args.url is not None and not args.name:
        raise UsageError("--url needs --name (the model name that server serves)")
    tasks = tuple(t.strip() for t in args.tasks.split(",") if t.strip())
    if not tasks or any(t not in TASKS for t in tasks):
        raise UsageError(f"--tasks takes {', '.join(TASKS)}")
    if args.baseline is not None and not args.baseline.is_dir():
        raise UsageError(f"--baseline {args.baseline} is not a folder")
    config = EvalRunConfig(
        model=str(args.model or ""),
        out=str(args.out),
        variant=args.variant,
        name=args.name,
        tasks=tasks,
        limit=args.limit,
        baseline=str(args.baseline) if args.baseline else None,
        baseline_variant=args.baseline_variant,
        concurrency=args.concurrency,
        url=args.url,
        max_model_len=args.max_model_len,
    )
    log_config("evaluate", config.__dict__, args.out)
    try:
        with Bar() as bar:
            rows = evaluate_model(config, progress=bar)
    except EvaluateError as exc:
        raise UsageError(str(exc)) from None
    except LLMError as exc:  # the server is down, went away or refuses: say so, keep what is cached
        print(f"execsim train evaluate: {exc}", file=sys.stderr)
        if isinstance(exc, LLMUnavailable):
            print(LLMUnavailable.HINT, file=sys.stderr)
        print("rerun the same command to resume: replies already received are cached", file=sys.stderr)
        return EXIT_FAILED
    for row in rows:
        interval = f"[{row['low']:+.3f}, {row['high']:+.3f}]"
        print(f"{row['benchmark']} {row['model']}: {row['value']:+.3f} {interval} n={row['n']}")
    print(f"wrote {args.out / 'eval-results.json'} (pass it to `execsim train export --eval-results`)")
    return 0
