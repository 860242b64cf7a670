"""The pool: isolation between programs, determinism, concurrency and order, recovery, results as data."""

from __future__ import annotations

import threading

import pytest

from simulator.execution import Pool, Program, SandboxError
from simulator.execution import sandbox as sandbox_module
from tests.simulator.execution.sandbox_support import (
    VARIANTS,
    data_dir_under_tmp,
    make_pool,
    run_from_threads,
)


@pytest.fixture(scope="module", params=VARIANTS)
def pool(request: pytest.FixtureRequest):
    pool = make_pool(request.param)
    yield pool
    pool.close()


def test_workers_never_run_as_root(pool: Pool) -> None:
    assert pool.worker_info and all(info["uid"] != 0 for info in pool.worker_info)


def test_no_state_survives_from_one_program_to_the_next(pool: Pool) -> None:
    patch = "import builtins, sys\nbuiltins.len = lambda x: 42\nsys.modules['math'].pi = 3\n"
    patch += "open('left', 'w').write('x')\n"
    for _ in range(2 * pool.workers):  # every worker runs the patch once
        assert pool.run(Program(code=patch, stdin="")).status == "ok"
    check = "import math, os\ndef f():\n    return (len('ab'), math.pi, os.listdir('.'))"
    for _ in range(2 * pool.workers):
        result = pool.run(Program(code=check, call="f()"))
        assert result.value == "(2, 3.141592653589793, [])"


def test_hash_seed_and_random_are_fixed(pool: Pool) -> None:
    code = "import random\ndef f():\n    return (hash('abc'), random.random())"
    values = {pool.run(Program(code=code, call="f()")).value for _ in range(4)}
    assert len(values) == 1


def test_run_many_keeps_input_order_and_is_thread_safe(pool: Pool) -> None:
    programs = [Program(code="def f(x):\n    return x * x", call=f"f({i})") for i in range(30)]
    seen: list[tuple[int, int]] = []
    results = pool.run_many(programs, progress=lambda done, total: seen.append((done, total)))
    assert [r.value for r in results] == [str(i * i) for i in range(30)]
    assert seen[-1] == (30, 30)
    # and from several threads at once
    out: dict[int, str] = {}

    def one(i: int) -> None:
        out[i] = pool.run(Program(code="def f(x):\n    return -x", call=f"f({i})")).value

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == {i: str(-i) for i in range(8)}


def test_callers_waiting_for_a_worker_get_a_fresh_one_when_every_worker_dies(pool: Pool) -> None:
    """More callers than workers, and every program kills its worker (with SIGINT, the one signal the
    worker, its sandbox's pid 1, can get from inside): each discarded worker's place goes to a waiting
    caller, who starts a fresh one (a caller waiting for a release that never came hung, and with it
    the Celery task that ran the programs)."""
    killer = Program(code="import os, signal, time\nos.kill(os.getppid(), signal.SIGINT)\ntime.sleep(5)\n")
    results = run_from_threads(pool, [killer] * (3 * pool.workers))
    assert {r.status for r in results} == {"killed"}
    add_one = [Program(code="def f(x):\n    return x + 1", call=f"f({i})") for i in range(4)]
    again = run_from_threads(pool, add_one)
    assert [r.value for r in again] == ["1", "2", "3", "4"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_data_directory_under_tmp_leaves_the_workers_running(
    variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The data directory in /tmp (the browser tests' site has it there). The sandbox once masked it with
    a tmpfs in its own /tmp, whose mount point emptying /tmp could not remove (EBUSY): the worker died
    after every program and, with more callers than workers, a "Run for real" hung. (Now nothing of it
    is made there: it lies in no folder the sandbox shows.) The programs are those a real execution
    sends, from as many callers at once (4) as it runs."""
    code = "def add_one(x):\n    return x + 1\n"
    stdin_code = "n = int(input())\nprint(n + 1)\n"
    programs = [Program(code=code, call=f"add_one({x})") for x in (1, 5, 10)] * 2
    programs += [Program(code=stdin_code, stdin=f"{x}\n", expected_stdout=f"{x + 1}\n") for x in (1, 5)]
    with data_dir_under_tmp(monkeypatch):
        pool = make_pool(variant)
        try:
            for _ in range(2):  # each worker runs several programs
                results = run_from_threads(pool, programs[:4], trace=True)
                results += run_from_threads(pool, programs[4:], trace=True)
                assert [(r.status, r.message) for r in results] == [("ok", "")] * len(programs)
                assert [r.value for r in results[:6]] == ["2", "6", "11"] * 2
                assert [r.stdout for r in results[6:]] == ["2\n", "6\n"]
                assert all(r.trace is not None and r.trace.steps for r in results)
        finally:
            pool.close()


def test_result_fields(pool: Pool) -> None:
    result = pool.run(
        Program(
            code="import sys\ndef f():\n    print('out')\n    print('err', file=sys.stderr)\n"
            "    return {1: [2]}",
            call="f()",
        )
    )
    assert (result.status, result.value, result.value_type) == ("ok", "{1: [2]}", "dict")
    assert (result.stdout, result.stderr) == ("out\n", "err\n")
    assert result.duration_s > 0 and result.peak_memory_kb and result.peak_memory_kb > 1000
    error = pool.run(Program(code="def f(x):\n    return 1 // x", call="f(0)"))
    assert error.status == "runtime_error"
    assert (error.exception.type, error.exception.line) == ("ZeroDivisionError", 2)
    unrepresentable = pool.run(
        Program(
            code="class A:\n    def __repr__(self):\n        raise ValueError\ndef f():\n    return A()",
            call="f()",
        )
    )
    assert unrepresentable.status == "ok" and unrepresentable.value.startswith("<A object")


def test_stdin_program_judged_against_expected_stdout(pool: Pool) -> None:
    code = "n = int(input())\nprint(n / 3)"
    assert pool.run(Program(code=code, stdin="1\n", expected_stdout="0.3333333333")).status == "ok"
    assert pool.run(Program(code=code, stdin="1\n", expected_stdout="0.34")).status == "wrong_answer"


def test_traced_run_returns_the_trace(pool: Pool) -> None:
    code = "def f(n):\n    total = 0\n    for i in range(n):\n        total += i\n        print(i)\n"
    code += "    return total"
    result = pool.run(Program(code=code, call="f(3)"), trace=True)
    assert result.status == "ok" and result.value == "3"
    assert result.trace.steps[0].event == "call" and result.trace.steps[-1].value.repr == "3"
    assert "".join(step.stdout for step in result.trace.steps) == "0\n1\n2\n"
    capped = pool.run(Program(code=code, call="f(1000)"), trace=True, max_steps=50)
    assert capped.status == "ok" and capped.value == "499500" and capped.trace.truncated


def test_invalid_program_is_not_run(pool: Pool) -> None:
    result = pool.run(Program(code="x = 1", call="f("))
    assert result.status == "invalid_input" and "expression" in result.message


def test_a_pool_without_bubblewrap_raises_sandbox_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox_module.shutil, "which", lambda name: None)
    with pytest.raises(SandboxError, match="bubblewrap"):
        Pool(workers=1)


def test_a_worker_that_cannot_start_raises_sandbox_error() -> None:
    with pytest.raises(SandboxError, match="did not start"):
        Pool(workers=1, python="/nonexistent/python3").start()
