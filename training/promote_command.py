"""``execsim train promote``: replace the committed checkpoint with a candidate only when it beats it on
dev, paired item by item, or commit it beside the default under its own name (``training.promote``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from simulator.cli import EXIT_FAILED, UsageError
from simulator.config import DEFAULT_CHECKPOINT, checkpoints_dir


def register(stages: argparse._SubParsersAction) -> None:
    """Add ``train promote`` and its arguments."""
    pro = stages.add_parser(
        "promote",
        help="replace the committed checkpoint with a candidate only if it beats it on dev (paired)",
    )
    add = pro.add_argument
    add("--candidate", type=Path, required=True, help="the candidate: an `execsim train export --out` folder")
    add(
        "--current",
        type=Path,
        default=checkpoints_dir() / DEFAULT_CHECKPOINT,
        help="the committed checkpoint (default: this checkout's checkpoints/smollm2-135m-nlex)",
    )
    add(
        "--candidate-results", type=Path, required=True, help="the candidate's `execsim train evaluate --out`"
    )
    add(
        "--current-results", type=Path, required=True, help="the current one's `execsim train evaluate --out`"
    )
    add(
        "--target",
        default="cruxeval-o",
        help="the task the candidate must win: cruxeval-o, mbpp, or with self-rlef results, "
        "self-rlef or repair-replies",
    )
    add(
        "--beside",
        type=Path,
        help="commit the candidate as this new checkpoint folder whatever the verdict, beside the current",
    )
    add("--dry-run", action="store_true", help="print the comparison and the verdict only")
    pro.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Compare, print the verdict, and promote (exit 0) or refuse (exit 1); ``--beside`` always exits 0."""
    from training.promote import PromoteError, chosen_by, promote

    try:
        decision = promote(
            args.candidate,
            args.current,
            args.candidate_results,
            args.current_results,
            args.target,
            dry_run=args.dry_run,
            beside=args.beside,
        )
    except (PromoteError, OSError, json.JSONDecodeError) as exc:
        raise UsageError(str(exc)) from None
    for line in decision.lines():
        print(line)
    if args.beside:
        done = "would write" if args.dry_run else "wrote"
        print(
            f"{done} {args.candidate}'s adapter and manifest.json to {args.beside}, beside {args.current}, "
            f"which stays the default; serve it with EXECSIM_CHECKPOINT={chosen_by(args.beside)}"
        )
        return 0
    if decision.promote:
        done = "would replace" if args.dry_run else "replaced"
        print(f"{done} {args.current}/adapter and manifest.json with {args.candidate}'s")
        return 0
    return EXIT_FAILED
