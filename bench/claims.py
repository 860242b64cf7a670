"""Claim extraction and checking on long texts: the time to verify NLEX texts of 1 to 100 kB.

    .venv/bin/python bench/claims.py [--sizes 1,5,20,100] [--repeat 5]  # docs/results.md#claim-extraction
    .venv/bin/python bench/claims.py --sizes 1,2,3 --repeat 1             # smallest

tests/bench/test_claims.py runs the smallest command. Nothing is run in the sandbox: the traces are
made in process (``trace_in_process``) or read from tests/simulator/nlex/real.

Issue 51: reading the values of a text tried every prefix of the rest of each line (cubic in a line's
length: 16 s of CPU for one explorer page with 3,750 characters of model text, 57 s for ``execsim
check`` on 6 kB), and checking compared a false claim with every later value of its variable. Each
text below is made deterministically, cut to each size, and verified (``simulator.nlex.verify``:
extraction and checking); the table gives the best time of ``--repeat`` runs (the machine is shared:
other work only adds to a time), extraction alone beside it, the time per kB, and the time per kB
added since the size before, which stays about flat when the cost is linear (the smallest text also
pays for indexing its trace, once per trace):

- ``model``: the longest CRUXEval reply of the default model in tests/simulator/nlex/real, repeated
  (its claims, then the same claims again against a trace already walked: true, false and
  unverifiable ones), checked against its stored real trace;
- ``narrated``: a correct step-by-step simulation of a 3,000-iteration loop (``Line 4: ...; now total
  = 6.``), every claim true, against its 6,005-step trace;
- ``wrong``: false values, lines, returns and prints against the same trace (a simulation gone wrong:
  each false claim is held against the whole rest of the run);
- ``one line``: claims without a line break (the shape that was cubic);
- ``open bracket``: a list that never closes, with claims inside it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simulator.execution.program import Program  # noqa: E402
from simulator.execution.trace import Trace  # noqa: E402
from simulator.execution.tracer import trace_in_process  # noqa: E402
from simulator.nlex.claims import extract_claims, program_names  # noqa: E402
from simulator.nlex.verify import verify  # noqa: E402

REAL = ROOT / "tests" / "simulator" / "nlex" / "real" / "texts.jsonl"
LOOP = "def f(n):\n    total = 0\n    for i in range(n):\n        total += i\n    return total\n"


def _fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _narration() -> str:
    parts = ["Line 2: `total = 0`; now total = 0.\n"]
    total = 0
    for i in range(3000):
        total += i
        parts.append(
            f"Line 3: `for i in range(n)`; now i = {i}.\nLine 4: `total += i`; now total = {total}.\n"
        )
    return "".join(parts)


def shapes() -> dict[str, tuple[Callable[[int], str], Trace, Program]]:
    """Each shape: a text of a given size, the trace it is checked against, and its program."""
    records = [json.loads(line) for line in REAL.read_text().splitlines()]
    record = max((r for r in records if r["source"] == "cruxeval"), key=lambda r: len(r["text"]))
    real = (Trace.from_dict(record["real"]["trace"]), Program(code=record["code"], call=record["call"]))
    loop = (trace_in_process(LOOP, "f(3000)", max_steps=10_000).trace, Program(code=LOOP, call="f(3000)"))
    narration = _narration()
    wrong = "Then total = -1 and i = -5. Line 9: done. It returns -1. It prints 7.\n"
    one_line = "Line 3: `x = x + 1` so x = 4, and the result is [1, 2, 3]. "
    return {
        "model": (lambda size: _fill(record["text"] + "\n", size), *real),
        "narrated": (lambda size: _fill(narration, size), *loop),
        "wrong": (lambda size: _fill(wrong, size), *loop),
        "one line": (lambda size: _fill(one_line, size), *loop),
        "open bracket": (lambda size: "x = [" + _fill("1, y = 2, ", size - 5), *loop),
    }


def _best_ms(repeat: int, work: Callable[..., object], *args: object) -> float:
    """The shortest wall time of ``work(*args)`` over ``repeat`` runs, in ms."""
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        work(*args)
        times.append((time.perf_counter() - began) * 1000)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,5,20,100", help="text sizes in kB (1 kB = 1,000 characters)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per text (the best is shown)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    made = shapes()
    print(f"verify = extract the claims and check them against the trace; best of {args.repeat}")
    print("| text | size | claims | extract ms | verify ms | verify ms per kB | ms per kB added |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    added: dict[str, list[float]] = {}
    for name, (make, trace, program) in made.items():
        names = program_names(program.code)
        verify(make(1000), trace, program)  # warm: imports, the regular expressions
        before: tuple[int, float] | None = None
        for size in sizes:
            text = make(size * 1000)
            extract_ms = _best_ms(args.repeat, extract_claims, text, names)
            result = verify(text, trace, program)
            verify_ms = _best_ms(args.repeat, verify, text, trace, program)
            more = ""  # the cost of the kB added since the size before: flat when the cost is linear
            if before is not None:
                added.setdefault(name, []).append((verify_ms - before[1]) / (size - before[0]))
                more = f"{added[name][-1]:.2f}"
            before = (size, verify_ms)
            print(
                f"| {name} | {size} kB | {len(result.claims):,} | {extract_ms:.1f} | {verify_ms:.1f} |"
                f" {verify_ms / size:.2f} | {more} |",
                flush=True,
            )
    if len(sizes) > 2:
        ratios = {name: f"{v[-1] / v[-2]:.1f}x" if v[-2] > 0 else "-" for name, v in added.items()}
        growth = ", ".join(f"{name} {ratio}" for name, ratio in ratios.items())
        last, middle = f"{sizes[-2]} to {sizes[-1]} kB", f"{sizes[-3]} to {sizes[-2]} kB"
        print(f"\nms per kB added from {last} over that from {middle} (1.0x: linear): {growth}")


if __name__ == "__main__":
    main()
