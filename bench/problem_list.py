"""The problem list for a user with many runs: what the "You" column and the status filter cost.

    .venv/bin/python bench/problem_list.py [--runs 100,1000,3000] [--repeat 5]

    .venv/bin/python bench/problem_list.py --runs 100,1000,3000,10000 --repeat 3  # docs/results.md#web
    .venv/bin/python bench/problem_list.py --runs 10 --repeat 1                  # smallest

It needs PostgreSQL on 127.0.0.1:5432 (user postgres, no password), as the web app's tests do;
tests/bench/test_problem_list.py runs the smallest command and is skipped without it.

A user who evaluates with the app (or a class's teacher) has thousands of runs. The list marks each
problem solved or tried (``RunQuerySet.standing``) and filters by it; both read the user's runs. For
each size the script fills a throw-away PostgreSQL database (on 127.0.0.1:5432, dropped at the end)
with that many finished solve runs of one user spread over 200 problems, each with 4 candidates run
for real on 3 tests (12 ``Execution`` rows, the final program's passing every test on a third of the
runs), then times, median of ``--repeat``:
- ``standing``: the standing of every problem, as the status filter asks it, now;
- ``per run``: the same from each run's ``final_judgement`` over its prefetched rows (how the filter
  read it before: every run and every row of it as objects), and the ratio of the two;
- the list page itself, ``GET /problems/?status=solved`` and ``GET /problems/`` (50 a page), through
  Django's test client.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DB = f"execsim_bench_list_{os.getpid()}"
os.environ["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{DB}"
os.environ.setdefault("SECRET_KEY", "bench-only-" + "x" * 50)
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/13")
os.environ.setdefault("EXECSIM_HTTPS", "false")
os.environ["DJANGO_SETTINGS_MODULE"] = "webapp.settings"


def _admin(sql: str) -> None:
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as db:
        db.execute(sql)


def _fill(runs: int) -> object:
    from django.contrib.auth import get_user_model

    from webapp.problems.models import Problem
    from webapp.runs.models import Execution, Run

    user = get_user_model().objects.create_user(f"u{runs}", password="x")
    problems = Problem.objects.bulk_create(
        Problem(title=f"P{i}", statement="s", owner=user, kind="call", entry_point="f") for i in range(200)
    )
    made = Run.objects.bulk_create(
        Run(
            problem=problems[i % len(problems)],
            user=user,
            status=Run.FINISHED,
            final_candidate=i % 4,
            final_code="def f(x):\n    return x\n",
            settings={"k": 4, "turns": 0},
        )
        for i in range(runs)
    )
    Execution.objects.bulk_create(
        Execution(
            run=run,
            candidate=c,
            test=t,
            public=t < 2,
            status="ok",
            output="1",
            expected="1",
            passed=(i % 3 == 0) or c != run.final_candidate,
            seconds=0.001,
            memory_kb=13_000,
        )
        for i, run in enumerate(made)
        for c in range(4)
        for t in range(3)
    )
    return user


def _time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="100,1000,3000")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sizes = [int(n) for n in args.runs.split(",")]

    _admin(f'CREATE DATABASE "{DB}"')
    try:
        import django

        django.setup()
        from django.core.management import call_command
        from django.test import Client

        from webapp.runs.models import Run

        call_command("migrate", verbosity=0)
        heads = {"runs": 6, "standing": 10, "per run": 10, "ratio": 6, "?status=solved": 15, "/problems/": 11}
        print(" ".join(f"{name:>{width}}" for name, width in heads.items()))
        for runs in sizes:
            user = _fill(runs)

            def per_run(user=user) -> dict[int, str]:
                standing: dict[int, str] = {}
                runs_ = Run.objects.filter(user=user, problem__isnull=False).prefetch_related("executions")
                for run in runs_:
                    judgement = run.final_judgement()
                    if judgement is not None and judgement.verdict == "accepted":
                        standing[run.problem_id] = "accepted"
                    else:
                        standing.setdefault(run.problem_id, "tried")
                return standing

            assert Run.objects.standing(user) == per_run(), "the two readings disagree"
            now = _time(lambda user=user: Run.objects.standing(user), args.repeat)
            before = _time(per_run, args.repeat)
            client = Client(HTTP_HOST="127.0.0.1")
            client.force_login(user)

            def page(url: str, client=client) -> None:
                assert client.get(url).status_code == 200, url

            solved = _time(lambda: page("/problems/?status=solved"), args.repeat)
            listed = _time(lambda: page("/problems/"), args.repeat)
            print(
                f"{runs:>6} {now * 1000:>8.0f}ms {before * 1000:>8.0f}ms {before / now:>5.1f}x "
                f"{solved * 1000:>13.0f}ms {listed * 1000:>9.0f}ms",
                flush=True,
            )
    finally:
        from django.db import connections

        connections.close_all()
        _admin(f'DROP DATABASE IF EXISTS "{DB}"')
    return 0


if __name__ == "__main__":
    sys.exit(main())
