"""bench/load.py, its smallest settings: the whole stack (nginx, two daphne, two Celery workers, the
reaper, PostgreSQL, Redis) under every kind of user at 5% of the class mix for 15 s; every kind of
request is made, nothing fails, and every live event recorded reaches the sockets that watched."""

from __future__ import annotations

import re


def test_load_bench_drives_every_kind_of_user_and_prints_its_figures(run_bench) -> None:
    out = run_bench("load", "--scales", "0.05", "--duration", "15", timeout=400).stdout
    assert "## scale 0.05:" in out, out
    for kind in (
        "GET shared trace", "POST exercise answer", "POST trace my program", "POST solve", "GET run page",
        "POST run for real", "GET annotation queue", "POST claim next", "GET lecture share page",
        "WS ws connect",
    ):  # fmt: skip
        assert re.search(rf"^{re.escape(kind)}\s+\d+\s+0\s", out, re.M), f"{kind} missing or failed:\n{out}"
    events = re.search(r"live events: (\d+) delays .* lost (\d+)", out)
    assert events and int(events.group(1)) > 0 and events.group(2) == "0", out
    cpu = re.search(r"^CPU \(cores\): (.*); total", out, re.M)
    assert cpu, out
    processes = set(re.findall(r"(\w+) \d", cpu.group(1)))
    assert {"web0", "web1", "worker0", "worker1", "nginx", "postgres"} <= processes, out
    assert "holds (pages p95" in out
