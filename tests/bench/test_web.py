"""bench/web.py, its smallest settings: the embedded mode (no PostgreSQL or Redis), 2 viewers, one
concurrent run; the real services and pipeline on the script's scripted model."""

from __future__ import annotations


def test_web_bench_embedded_prints_its_table(run_bench) -> None:
    args = ("--modes", "embedded", "--viewers", "2", "--max-runs", "1", "--rate", "500")
    out = run_bench("web", *args, timeout=300).stdout
    assert "| figure | embedded |" in out, out
    for row in (
        "| events in a run: model at once / at 500 chunks/s |",
        "| 2 viewers, model at once: p50 / p95 delay (ms) |",
        "model requests in the run, by kind | ",
        "events lost (all viewers) | 0 |",
        "| bare channel-layer send, 2 receivers: p50 / p95 (ms) |",
        "| concurrent runs sustained (500 chunks/s per request, p95 < 100 ms) |",
        "trials (embedded) | 1: p95",
    ):
        assert row in out, row
    requests = next(line for line in out.splitlines() if "model requests in the run" in line)
    assert "solve 1" in requests and "repair 1" in requests, requests  # a whole run, one repair turn
