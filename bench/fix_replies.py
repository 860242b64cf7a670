"""What a guided repair run's fix replies are, read from its request cache (issue 12, results.md
section 19): new programs, the attempt again, and the replies with no program by how they ended
(by themselves, stopped looping, cut by the budget).

    .venv/bin/python bench/fix_replies.py runs/s17/t08s0-f4 [--fixes 4] \
        [--data /work/shared/benchmarks/mbpp/sanitized-dev.jsonl]

The folder is an ``execsim eval self-rlef --repair guided`` output; its fix requests are the cached
requests with ``--fixes`` replies (the run's solve and simulate requests ask for one). With ``--data``
(the MBPP file the run used) it also runs the new programs on every test, and counts the replies
with no program that begin with a whole definition of the asked function followed by code that does
not parse, and how many of those functions pass (salvaging them: not done by the app).
"""

from __future__ import annotations

import argparse
import ast
import json
from collections import Counter
from pathlib import Path

from simulator.benchmarks import from_mbpp
from simulator.evaluation import mbpp
from simulator.prompts import solve
from simulator.source import same_program


def fix_requests(folder: Path, fixes: int) -> list[dict]:
    records = [json.loads(line) for line in (folder / "requests.jsonl").read_text().splitlines() if line]
    return [r for r in records if len(r["texts"]) == fixes]


def leading_function(text: str, name: str) -> str | None:
    """The longest run of whole top-level statements at the start of ``text`` that parses, when it
    defines ``name``."""
    lines = text.split("\n")
    starts = [
        i
        for i, line in enumerate(lines)
        if i and line[:1].strip() and not line.startswith(("else", "elif", "except", "finally"))
    ]
    for end in reversed(starts):
        code = "\n".join(lines[:end]).rstrip() + "\n"
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        defined = any(isinstance(node, ast.FunctionDef) and node.name == name for node in tree.body)
        return code if defined else None
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--fixes", type=int, default=4)
    parser.add_argument("--data", type=Path, help="the MBPP JSONL the run used: run the programs")
    args = parser.parse_args()
    results = json.loads((args.folder / "results.json").read_text())
    attempts = {item["id"]: item["initial"]["code"] for item in results["items"]}
    items = {str(i["task_id"]): i for i in mbpp.load(args.data)} if args.data else {}
    counts: Counter[str] = Counter()
    for record in fix_requests(args.folder, args.fixes):
        item = items.get(record["item"])
        for text, reason in zip(record["texts"], record["finish_reasons"], strict=True):
            counts["replies"] += 1
            code = solve.parse(text).code
            if (
                code is not None
                and attempts.get(record["item"])
                and same_program(code, attempts[record["item"]], "call")
            ):
                counts["the attempt again"] += 1
            elif code is not None:
                counts["new program"] += 1
                if item:
                    counts["new program, passes every test"] += mbpp.passes(item, code, item["test_list"])
            else:
                counts[f"no program, finish_reason {reason}"] += 1
                kept = item and leading_function(text, from_mbpp(item).entry_point)
                if kept:
                    counts["no program, a whole function first"] += 1
                    counts["no program, that function passes every test"] += mbpp.passes(
                        item, kept, item["test_list"]
                    )
    for name, value in sorted(counts.items()):
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()
