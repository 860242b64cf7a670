"""White-box question counts on the CRUXEval dev split: ``simulator/questions.py`` at REF against the
working tree, on the same real traces.

    .venv/bin/python bench/questions.py --ab REF [--seed 0] [--limit 200]

Each program is traced once in the sandboxed pool (``f(<input>)``, as ``execsim eval whitebox`` does in
``simulator.evaluation.whitebox.question_set``); both versions of ``select_questions`` then draw their
questions from that one trace with the same seed. Prints, per side, the programs asked (ran cleanly,
pass the filter, at least one question) and the path and state questions; then how many of REF's
questions the working tree does not ask, how many it asks that REF did not, and in how many programs.
Light: one traced pass.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CRUXEVAL = ROOT.parent / "shared" / "benchmarks" / "cruxeval" / "dev.jsonl"
ENTRY = "f"


def questions_at(ref: str, folder: Path) -> ModuleType:
    """``simulator/questions.py`` as it was at git revision ``ref``, loaded as its own module."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{ref}:simulator/questions.py"],
        capture_output=True,
        check=True,
        text=True,
    ).stdout
    path = folder / "questions_at_ref.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("questions_at_ref", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def keys(qset: Any) -> Counter[tuple[Any, ...]]:
    """The questions of a set as comparable tuples (a multiset)."""
    if qset is None:
        return Counter()
    return Counter((q.kind, q.line, q.occurrence, q.variable, q.answers) for q in qset.questions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ab", metavar="REF", required=True, help="git revision of questions.py to compare")
    parser.add_argument("--seed", type=int, default=0, help="selection seed (execsim eval's default: 0)")
    parser.add_argument("--limit", type=int, default=200, help="how many dev programs")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from simulator import questions as current
    from simulator.execution import Program, run_many

    items = [json.loads(line) for line in CRUXEVAL.read_text().splitlines() if line.strip()][: args.limit]
    results = run_many(
        [Program(code=item["code"], call=f"{ENTRY}({item['input']})") for item in items], trace=True
    )
    with tempfile.TemporaryDirectory() as folder:
        before_module = questions_at(args.ab, Path(folder))
        sides: dict[str, list[Any]] = {args.ab: [], "working tree": []}
        for item, result in zip(items, results, strict=True):
            for side, module in ((args.ab, before_module), ("working tree", current)):
                qset = None
                if result.status == "ok" and result.trace is not None:
                    qset = module.select_questions(
                        item["code"], ENTRY, item["input"], result.trace, seed=args.seed
                    )
                sides[side].append(qset if qset is not None and qset.questions else None)
    print(f"{len(items)} CRUXEval dev programs, seed {args.seed}")
    for side, qsets in sides.items():
        asked = [q for q in qsets if q is not None]
        paths = sum(len(q.path) for q in asked)
        states = sum(len(q.state) for q in asked)
        counts = f"path {paths:>4}  state {states:>4}  all {paths + states:>4}"
        print(f"  {side:<14} programs asked {len(asked):>4}  {counts}")
    gone = added = programs = 0
    for before, after in zip(sides[args.ab], sides["working tree"], strict=True):
        gone += sum((keys(before) - keys(after)).values())
        added += sum((keys(after) - keys(before)).values())
        programs += keys(after) != keys(before)
    print(f"  changed: {gone} questions of {args.ab} gone, {added} new, in {programs} programs")


if __name__ == "__main__":
    main()
