"""``execsim train export``: merge a trained adapter into its base as a servable folder, with the
manifest that records its stages, data and evaluation (``training.export.checkpoint``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from simulator.cli import UsageError
from training.command_line import log_config


def register(stages: argparse._SubParsersAction) -> None:
    """Add ``train export`` and its arguments."""
    exp = stages.add_parser("export", help="merge a checkpoint into a servable folder with a manifest")
    add = exp.add_argument
    add(
        "--checkpoint",
        type=Path,
        required=True,
        help="the adapter/ or model/ folder of `train sft` or `train rl`",
    )
    add("--out", type=Path, required=True, help="output folder (merged/, adapter/, manifest.json)")
    add("--base", help="the base model (default: the one the adapter records)")
    add("--summary", type=Path, action="append", default=[], help="a stage's summary.json (repeatable)")
    add("--card", type=Path, help="the card.json of `train synth`")
    add("--eval-results", type=Path, help="the eval-results.json of `train evaluate`")
    exp.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Read the summaries and results, export, print the manifest's main lines."""
    from training.export.checkpoint import ExportError, export

    if not args.checkpoint.is_dir():
        raise UsageError(f"--checkpoint {args.checkpoint} is not a folder")
    try:
        summaries = [json.loads(p.read_text()) for p in args.summary]
        results = json.loads(args.eval_results.read_text()) if args.eval_results else None
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read a summary or the evaluation results: {exc}") from None
    log_config("export", vars(args), args.out)
    try:
        manifest = export(
            args.checkpoint,
            args.out,
            base=args.base,
            summaries=summaries,
            card=args.card,
            eval_results=results,
        )
    except ExportError as exc:
        raise UsageError(str(exc)) from None
    shown = ("base_model", "merged", "adapter", "steps", "serve")
    print(json.dumps({k: manifest[k] for k in shown}, indent=2))
    return 0
