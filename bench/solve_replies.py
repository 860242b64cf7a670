"""How solve replies end, read from evaluation caches: completion tokens per candidate and the share of
replies cut by the token limit (issue 12).

    .venv/bin/python bench/solve_replies.py out/i12/mbpp-before out/i12/mbpp-after

Each argument is an ``execsim eval mbpp`` (or ``codejam``) output folder; its ``requests.jsonl`` holds
every request's replies with their finish reasons and completion tokens. Solve requests are the ones
keyed by a bare item id (an MBPP simulation's item is ``ID/cN/tM``). Reading the caches, rather than
results.json, measures a run made before ``execsim eval`` reported these figures the same way as one
made after. Prints one line per folder:
``FOLDER requests=R replies=N tokens_per_candidate=T cut=C rate=x[low,high]`` (Wilson 95%).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from simulator.evaluation.metrics import wilson


def solve_records(folder: Path) -> list[dict]:
    records = []
    for line in (folder / "requests.jsonl").read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a torn last line (the cache skips it too)
        if "/" not in str(record.get("item", "")):
            records.append(record)
    return records


def summary(folder: Path) -> dict:
    records = solve_records(folder)
    replies = sum(len(r["texts"]) for r in records)
    tokens = sum(int(r.get("completion_tokens") or 0) for r in records)
    cut = sum(reason == "length" for r in records for reason in r.get("finish_reasons") or [])
    est = wilson(cut, replies)
    return {
        "folder": str(folder),
        "requests": len(records),
        "replies": replies,
        "tokens_per_candidate": tokens / replies if replies else 0.0,
        "cut": cut,
        "rate": est.value,
        "low": est.low,
        "high": est.high,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", type=Path, nargs="+", help="execsim eval output folders")
    args = parser.parse_args(argv)
    for folder in args.folders:
        s = summary(folder)
        print(
            f"{s['folder']} requests={s['requests']} replies={s['replies']} "
            f"tokens_per_candidate={s['tokens_per_candidate']:.1f} cut={s['cut']} "
            f"rate={s['rate']:.3f}[{s['low']:.3f},{s['high']:.3f}]"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
