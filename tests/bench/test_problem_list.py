"""bench/problem_list.py with 10 runs in a throw-away PostgreSQL database (skipped without one)."""

from __future__ import annotations

import socket

import pytest


def _postgres() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 5432), timeout=1):
            return True
    except OSError:
        return False


@pytest.mark.skipif(not _postgres(), reason="bench/problem_list.py needs PostgreSQL on 127.0.0.1:5432")
def test_problem_list_bench_prints_a_row_per_size(run_bench) -> None:
    out = run_bench("problem_list", "--runs", "10", "--repeat", "1").stdout
    header, *rows = [line for line in out.splitlines() if line.strip()]
    assert header.split() == ["runs", "standing", "per", "run", "ratio", "?status=solved", "/problems/"]
    assert rows and rows[0].split()[0] == "10", out
