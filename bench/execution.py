"""Execution throughput on the 200 dev CRUXEval programs, and the tracer's overhead.

    .venv/bin/python bench/execution.py [--workers 2] [--limit 200] [--data FILE]  # docs/results.md#execution
    .venv/bin/python bench/execution.py --ab REF [--rounds 5]     # the pool, REF against the working tree
    .venv/bin/python bench/execution.py --data tiny.jsonl --limit 4 --loop-sizes 200  # smallest

``--data`` is a CRUXEval-format JSONL file (``code``, ``input``; default the dev split in shared/ beside
the checkout); tests/bench/test_execution.py runs the smallest command on four programs of its own.

Prints programs/s for:
  (a) a fresh interpreter per program (``python -c`` in a subprocess),
  (b) the CRUXEval/human-eval harness pattern: a multiprocessing process per program, no isolation
      (b1 exactly as human-eval's ``check_correctness``: a Manager and a Process per program;
       b2 the lighter form: a forked Process and a Pipe),
  (c) the sandboxed pool,
  (d) the sandboxed pool, traced,
each with ``--workers`` programs in flight, and the ratios to (a) side by side; then the tracer's overhead
on a loop-heavy program (time inside the sandbox, untraced vs traced; n as ``--loop-sizes``). Every way
must agree on the values.

``--ab REF`` compares the pool's code at a git revision with the working tree side by side, for a machine
that is not idle: ``simulator/`` at REF is exported under build/bench-ab/, and each round runs (a), then
(c) and (d) with REF's pool, then with the working tree's, each in a fresh process. It prints the median
programs/s, the ratios to the same round's (a), and the CPU time a program costs (the benchmark process,
the workers, the workers' children; read from /proc), which a loaded machine disturbs far less than
programs/s.
"""

from __future__ import annotations

import argparse
import io
import json
import multiprocessing
import os
import re
import statistics
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
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


def _pairs(limit: int, data: Path = CRUXEVAL) -> list[tuple[str, str]]:
    from simulator.execution.program import call_from_input

    if not data.exists():
        sys.exit(f"missing {data} (the CRUXEval dev split is in shared/ next to the repository)")
    items = [json.loads(line) for line in data.read_text().splitlines() if line.strip()][:limit]
    return [(item["code"], call_from_input("f", item["input"])) for item in items]


def _cpu_seconds(pids: list[int]) -> tuple[float, float]:
    """CPU seconds of ``pids`` themselves, and of their children they have reaped (from /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    own = reaped = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
        except OSError:
            continue
        own += int(fields[11]) + int(fields[12])
        reaped += int(fields[13]) + int(fields[14])
    return own / tick, reaped / tick


def _worker_pids() -> list[int]:
    """This process's sandbox workers (the Python process inside each bwrap), from /proc."""
    parents: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                ppid = int(Path(f"/proc/{name}/stat").read_text().rsplit(") ", 1)[1].split()[1])
            except OSError:
                continue
            parents.setdefault(ppid, []).append(int(name))
    found, todo = [], [os.getpid()]
    while todo:
        for pid in parents.get(todo.pop(), []):
            todo.append(pid)
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            argv = cmdline.split(b"\0")
            if b"simulator.execution.worker" in argv and os.path.basename(argv[0]).startswith(b"python"):
                found.append(pid)
    return found


def measure_pool(args: argparse.Namespace) -> None:
    """One side of ``--ab``: (c) and (d) with the pool of the tree on sys.path; prints one JSON line."""
    from simulator.execution import Pool, Program

    programs = [Program(code=code, call=call) for code, call in _pairs(args.limit, args.data)]
    out: dict[str, Any] = {}
    with Pool(workers=args.workers) as pool:
        pool.run_many(programs[: args.workers * 4])  # start every worker
        workers = _worker_pids()
        for way, trace in (("c", False), ("d", True)):
            host0, (own0, reaped0) = os.times(), _cpu_seconds(workers)
            started = time.perf_counter()
            for _ in range(3):  # CPU times come in 10 ms ticks: enough programs for a fine average
                results = pool.run_many(programs, trace=trace)
            elapsed = time.perf_counter() - started
            host1, (own1, reaped1) = os.times(), _cpu_seconds(workers)
            n = 3 * len(programs)
            out[way] = {
                "rate": n / elapsed,
                "host_ms": ((host1.user + host1.system) - (host0.user + host0.system)) / n * 1e3,
                "worker_ms": (own1 - own0) / n * 1e3,
                "children_ms": (reaped1 - reaped0) / n * 1e3,
                "ok": sum(r.status == "ok" for r in results),
            }
    print(json.dumps(out))


def measure_fresh(args: argparse.Namespace) -> None:
    """(a) alone, for ``--ab``; prints one JSON line."""
    pairs = _pairs(args.limit, args.data)
    started = time.perf_counter()
    list(ThreadPoolExecutor(args.workers).map(fresh_interpreter, pairs))
    print(json.dumps({"a": {"rate": len(pairs) / (time.perf_counter() - started)}}))


def ab(args: argparse.Namespace) -> None:
    """``--ab REF``: REF's pool against the working tree's, alternating, in fresh processes."""
    tree = ROOT / "build" / "bench-ab" / re.sub(r"[^A-Za-z0-9._-]", "_", args.ab)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", args.ab, "simulator"], capture_output=True, check=True
    ).stdout
    if tree.exists():
        subprocess.run(["rm", "-rf", str(tree)], check=True)
    tree.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tree, filter="data")
    sides = {args.ab: tree, "working tree": ROOT}
    common = ["--workers", str(args.workers), "--limit", str(args.limit), "--data", str(args.data)]
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    fresh: list[float] = []

    def child(extra: list[str]) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, __file__, *extra, *common], capture_output=True, text=True, check=True
        )
        return json.loads(done.stdout.strip().splitlines()[-1])

    print(f"{args.ab} against the working tree, {args.rounds} rounds, {args.workers} in flight")
    for round_ in range(args.rounds):
        fresh.append(child(["--measure", "a"])["a"]["rate"])
        line = [f"round {round_ + 1}: (a) {fresh[-1]:6.1f}/s"]
        for side, path in sides.items():
            runs[side].append(child(["--measure", "pool", "--tree", str(path)]))
            rates = runs[side][-1]
            line.append(f"{side}: (c) {rates['c']['rate']:6.1f}/s (d) {rates['d']['rate']:6.1f}/s")
        print("  " + " | ".join(line), flush=True)

    def median(side: str, way: str, key: str) -> float:
        return statistics.median(run[way][key] for run in runs[side])

    def cpu(side: str, way: str) -> list[float]:
        return [median(side, way, key) for key in ("host_ms", "worker_ms", "children_ms")]

    print("\nmedians (CPU ms a program = the benchmark process + the workers + their children)")
    old, new = sides
    for way in ("c", "d"):
        for side in sides:
            ratio = statistics.median(run[way]["rate"] / a for run, a in zip(runs[side], fresh, strict=True))
            host, worker, children = cpu(side, way)
            print(
                f"  ({way}) {side:<14} {median(side, way, 'rate'):7.1f} programs/s  {ratio:5.1f}x (a)   "
                f"CPU {host + worker + children:5.2f} ms = {host:.2f} + {worker:.2f} + {children:.2f}"
            )
        print(
            f"  ({way}) working tree / {old}: programs/s x"
            f"{median(new, way, 'rate') / median(old, way, 'rate'):.2f}, "
            f"CPU a program x{sum(cpu(new, way)) / sum(cpu(old, way)):.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="programs in flight for every way")
    parser.add_argument("--limit", type=int, default=200, help="how many CRUXEval programs")
    parser.add_argument("--data", type=Path, default=CRUXEVAL, help="CRUXEval-format JSONL (code, input)")
    parser.add_argument(
        "--loop-sizes",
        default="20000,200000",
        help="n of the tracer-overhead program, comma-separated (default %(default)s)",
    )
    parser.add_argument("--ab", metavar="REF", help="the pool at git revision REF against the working tree")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of --ab")
    parser.add_argument("--measure", choices=["a", "pool"], help=argparse.SUPPRESS)  # one side of --ab
    parser.add_argument("--tree", default=str(ROOT), help=argparse.SUPPRESS)  # whose simulator/ to use
    args = parser.parse_args()
    sys.path.insert(0, args.tree)
    if args.ab:
        return ab(args)
    if args.measure == "a":
        return measure_fresh(args)
    if args.measure == "pool":
        return measure_pool(args)

    from simulator.execution import Pool, Program

    pairs = _pairs(args.limit, args.data)
    programs = [Program(code=code, call=call) for code, call in pairs]
    n = len(pairs)
    multiprocessing.set_start_method("fork")

    def threaded(fn: Callable[[tuple[str, str]], str]) -> Callable[[], list[str]]:
        return lambda: list(ThreadPoolExecutor(args.workers).map(fn, pairs))

    print(f"{n} CRUXEval programs ({args.data.name}), {args.workers} in flight")
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
        for size in (int(s) for s in args.loop_sizes.split(",")):
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
