"""Web benchmark: live-update delay to WebSocket viewers, and concurrent runs each runtime mode sustains.

    .venv/bin/python bench/web.py [--viewers 50] [--modes embedded,redis] [--max-runs 16] [--rate 100]

    .venv/bin/python bench/web.py --viewers 20 --rate 20 --max-runs 2        # docs/results.md#web
    .venv/bin/python bench/web.py --modes embedded --viewers 2 --max-runs 1 --rate 500   # smallest
    .venv/bin/python bench/web.py --ab REF [--rounds 3] --modes embedded --viewers 20 --max-runs 2

The redis mode needs PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379; the embedded mode
needs neither. tests/bench/test_web.py runs the smallest command.

For each mode the script starts the real services on free ports and drives them over HTTP and real
WebSockets (``websockets`` clients):
- embedded: ``execsim up --no-model`` (SQLite in a temporary data directory, in-memory channel layer,
  in-process task runner with EXECSIM_INPROCESS_WORKERS=64);
- redis: ``manage.py migrate`` + ``daphne webapp.asgi:application`` + ``celery -A webapp worker --pool
  threads --concurrency 64`` (a throw-away PostgreSQL database on 127.0.0.1:5432, Redis db 12,
  a queue of its own).

Runs are started with the Solve form (POST /problems/<id>/solve/: the form's defaults as the page
renders them, as a browser submits them, with k=4 and one repair turn at temperature 0.5) and
executed by the real task with the real pipeline (``simulator.pipeline.run``). Only the model
is a double: ``simulator.llm.testing.FakeModelServer`` on a real socket in this process, which the
services reach through EXECSIM_MODEL_URL like any OpenAI-compatible server. Its replies
(``BenchModel``) make a typical run: 4 candidates (two wrong), 2 public tests simulated for each with a
few lines of NLEX (the first test's simulation of each candidate off by one, as a small model's often
is), selection, a guided repair turn (4 replies) whose fix matches both tests, and its re-simulation.
It holds every chat request until all viewers are connected, then streams each reply at ``--rate``
chunks (of 4 characters) per second, or at once for the full-speed figure. So every event is the
pipeline's own, its streamed text coalesced as in production (at most one delta event per sample
every 0.1 s), and goes through the same persist-then-broadcast path and the same consumer and
rendering as a real run.

Delay = arrival of the message carrying an event at a viewer (``time.time()`` in this process) minus the
event's ``RunEvent.created_at`` (stamped by the recorder in the server/worker process as it inserts the
row, a few statements before the recording transaction commits; read from the database afterwards).
Same machine, same clock. Events recorded before the requests are released (``run_started`` and the
solve stage, which precede the first model request) count for loss but not for delay: no viewer was
connected yet.

``--ab REF`` runs the same measurements against the app at git revision REF (exported under
build/bench-ab/) and against the working tree, alternating, each in a fresh process whose services and
imports come from that tree, and prints each figure's median over the rounds side by side with the
ratio (working tree / REF). The driver, the model double and the workload are this file's for both:
the Solve form's fields as the page renders them, with narration on.

Figures:
1. one run, ``--viewers`` viewers (read-only share-link sockets), the model answering at once: p50/p95/max
   delay, events lost (a viewer that never got an event), and the events recorded per second;
2. the bare channel-layer send: ``group_send`` of as many messages to as many receivers of the same
   layer (in this process), p50/p95 from send to receive: the floor under figure 1;
3. sustained concurrent runs: N runs at once (N = 1, 2, 4, ... up to ``--max-runs``), the model
   streaming each request at ``--rate`` chunks per second, with one viewer each. N is *sustained* when
   every run finishes, every viewer receives every event, the p95 delay over all events is under 100 ms,
   and no run takes more than 1.25x as long as one run alone (the N = 1 trial).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from simulator.llm.testing import FakeModelServer, PipelineScript, ScriptedFailure

REPO = Path(__file__).resolve().parents[1]
ROOT = Path(os.environ.get("BENCH_ROOT", REPO))  # the tree whose app is measured (--ab: REF's export)
VENV_BIN = Path(sys.executable).parent
SEQ_RE = re.compile(r'id="run-seq"[^>]*data-seq="(-?\d+)"')
TARGET_P95_MS = 100.0
MODEL = "bench-model"

# -- the model: FakeModelServer with the replies of a typical run -------------------------------------

THOUGHT = (
    "The function add_one receives x and computes the sum of x and the constant in its return "
    "statement; nothing else happens before it returns, so the call evaluates to that sum."
)


COMMENT = "    # add one to x: the statement asks for x + 1, for any integer x\n"
FIRST_CALL = "add_one(1)"  # the problem's first public test


class BenchModel:
    """The replies (a ``FakeModelServer`` responder), held until ``release()``: candidates ``x + 1``
    and ``x + 2`` in turn (each with a comment, so that it streams for a while); simulations that are
    faithful except on the first public test of a candidate (off by one there, so the selected
    candidate matches 1 of 2 and a guided repair turn is asked for); a fix that matches both."""

    def __init__(self, k: int = 4) -> None:
        solve = [f"def add_one(x):\n{COMMENT}    return x + {1 + c % 2}\n" for c in range(k)]
        fix = "```python\ndef add_one(x):\n    return 1 + x\n```"
        self.script = PipelineScript(solve=solve, simulate=self._simulate, repair=[fix])
        self.released = threading.Event()

    @staticmethod
    def _simulate(code: str, call: str) -> str:
        namespace: dict[str, Any] = {}
        exec(compile(code, "<bench candidate>", "exec"), namespace)  # the bench's own programs
        value = eval(call, namespace)
        if COMMENT in code and call == FIRST_CALL:  # a first attempt's first test: the model slips
            value += 1
        return f"[THOUGHT] {THOUGHT} [/THOUGHT]\n[ANSWER] assert {call} == {value!r} [/ANSWER]"

    def hold(self) -> None:
        self.released.clear()

    def release(self) -> None:
        self.released.set()

    def __call__(self, body: dict[str, Any]) -> Any:
        if not self.released.wait(timeout=120):
            raise ScriptedFailure(503, "the benchmark never released its runs")
        return self.script(body)


# -- the services ------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Services:
    """The server (and worker) of one mode, as child processes; stopped by ``stop()``."""

    def __init__(self, mode: str, workdir: Path, model_url: str) -> None:
        self.mode, self.workdir = mode, workdir
        self.port = _free_port()
        self.procs: list[subprocess.Popen[bytes]] = []
        # the real pipelines (whatever this shell set), on the fake model
        inherited = {k: v for k, v in os.environ.items() if not k.startswith("EXECSIM_")}
        self.env = {
            **inherited,
            "PYTHONPATH": str(ROOT),
            "DJANGO_SETTINGS_MODULE": "webapp.settings",
            "EXECSIM_DATA_DIR": str(workdir / "data"),
            "EXECSIM_MAX_CONCURRENT_RUNS": "1000",
            "EXECSIM_RUNS_PER_MINUTE": "100000",
            "EXECSIM_INPROCESS_WORKERS": "64",
            "EXECSIM_MODEL_URL": model_url,
            "EXECSIM_MODEL_NAME": MODEL,
            "LOG_LEVEL": "WARNING",
        }
        (workdir / "data").mkdir(parents=True, exist_ok=True)
        if mode == "redis":
            self.db = f"execsim_bench_{os.getpid()}"
            self.env.update(
                {
                    "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{self.db}",
                    "REDIS_URL": "redis://127.0.0.1:6379/12",
                    "SECRET_KEY": "bench-only-" + "x" * 50,
                    "EXECSIM_HTTPS": "false",
                    "EXECSIM_CELERY_QUEUE": f"execsim-bench-{os.getpid()}",
                }
            )
        else:
            for key in ("DATABASE_URL", "REDIS_URL"):
                self.env.pop(key, None)

    def _spawn(self, *args: str) -> None:
        log = open(self.workdir / f"{Path(args[0]).name}-{len(self.procs)}.log", "wb")  # noqa: SIM115
        self.procs.append(
            subprocess.Popen(
                args, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        )

    def start(self) -> None:
        if self.mode == "redis":
            import psycopg

            with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as db:
                db.execute(f'CREATE DATABASE "{self.db}"')
            subprocess.run(
                [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
                cwd=ROOT,
                env=self.env,
                check=True,
            )
            self._spawn(
                str(VENV_BIN / "daphne"), "-b", "127.0.0.1", "-p", str(self.port), "webapp.asgi:application"
            )
            self._spawn(
                str(VENV_BIN / "celery"), "-A", "webapp", "worker", "--pool", "threads",
                "--concurrency", "64", "-Q", self.env["EXECSIM_CELERY_QUEUE"], "--loglevel", "WARNING",
            )  # fmt: skip
        else:
            execsim = "import sys; from simulator.cli import main; sys.exit(main())"  # the tree's own
            self._spawn(sys.executable, "-c", execsim, "up", "--no-model", "--port", str(self.port))
        self._wait_http()
        if self.mode == "redis":
            self._wait_worker()

    def _wait_http(self) -> None:
        import httpx

        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/accounts/login/", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.3)
        raise RuntimeError(f"the {self.mode} server did not come up; see {self.workdir}")

    def _wait_worker(self) -> None:
        from webapp.celery import app

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if app.control.ping(timeout=1.0):
                return
        raise RuntimeError(f"the Celery worker did not come up; see {self.workdir}")

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if self.mode == "redis":
            from django.db import connections

            connections.close_all()
            import psycopg

            with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as db:
                db.execute(f'DROP DATABASE IF EXISTS "{self.db}" WITH (FORCE)')


# -- the client side --------------------------------------------------------------------------------


class _FormReader(HTMLParser):
    """The fields of the form whose ``action`` is given, with the values a browser would submit."""

    def __init__(self, action: str) -> None:
        super().__init__()
        self.action, self.inside, self.fields = action, False, {}
        self.select: str | None = None
        self.textarea: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.inside = a.get("action") == self.action
        elif not self.inside or not a.get("name"):
            return
        elif tag == "input" and a.get("type") not in ("submit", "button", "file"):
            if a.get("type") not in ("checkbox", "radio") or "checked" in a:
                self.fields[a["name"]] = a.get("value", "on" if a.get("type") == "checkbox" else "")
        elif tag == "select":
            self.select = a["name"]
        elif tag == "textarea":
            self.textarea = a["name"]
            self.fields[a["name"]] = ""
        if tag == "option" and self.select and ("selected" in a or self.select not in self.fields):
            self.fields[self.select] = a.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.inside = False
        elif tag == "select":
            self.select = None
        elif tag == "textarea":
            self.textarea = None

    def handle_data(self, data: str) -> None:
        if self.textarea:
            self.fields[self.textarea] += data


def form_defaults(html: str, action: str) -> dict[str, str]:
    """What a browser would submit from the page's form posting to ``action``, left as it is."""
    reader = _FormReader(action)
    reader.feed(html)
    if not reader.fields:
        raise RuntimeError(f"no form posting to {action} on the page")
    return reader.fields


class Client:
    """A logged-in browser session (httpx) that starts runs with the Solve form."""

    def __init__(self, port: int, username: str, password: str) -> None:
        import httpx

        self.base = f"http://127.0.0.1:{port}"
        self.http = httpx.Client(base_url=self.base, timeout=30)
        self.http.get("/accounts/login/")
        token = self.http.cookies["csrftoken"]
        response = self.http.post(
            "/accounts/login/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": token},
        )
        if response.status_code != 302:
            raise RuntimeError(f"log-in failed: {response.status_code}")
        self.forms: dict[int, dict[str, str]] = {}

    def solve(self, problem_id: int) -> str:
        # The form as a browser submits it with its defaults (whatever fields it has today), then k=4
        # and one repair turn, sampled so that the turn asks for several replies.
        if problem_id not in self.forms:
            page = self.http.get(f"/problems/{problem_id}/")
            self.forms[problem_id] = form_defaults(page.text, f"/problems/{problem_id}/solve/")
        form = {**self.forms[problem_id], "k": "4", "turns": "1", "temperature": "0.5", "narrate": "on"}
        form["csrfmiddlewaretoken"] = self.http.cookies["csrftoken"]
        response = self.http.post(f"/problems/{problem_id}/solve/", data=form)
        match = re.match(r"/runs/([0-9a-f-]{36})/$", response.headers.get("location", ""))
        if response.status_code != 302 or not match:
            raise RuntimeError(f"solve failed: {response.status_code} {response.headers.get('location')}")
        return match.group(1)


async def _viewer(
    url: str,
    origin: str,
    run: str,
    ends: dict[str, tuple[int, float]],
    arrivals: dict[int, float],
    ready: asyncio.Event,
    timeout: float,
) -> None:
    """Read the run's messages until its last event arrived (or 5 s after the run ended without it)."""
    import websockets

    async with websockets.connect(url, origin=origin, max_size=None) as ws:  # type: ignore[arg-type]
        ready.set()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if run in ends:
                last, ended = ends[run]
                if max(arrivals, default=-1) >= last or time.monotonic() > ended + 5:
                    return
            try:
                message = await asyncio.wait_for(ws.recv(), timeout=0.2)
            except TimeoutError:
                continue
            now = time.time()
            # One message carries one event or several (a viewer catching up), each with its marker.
            seqs = [int(m) for m in SEQ_RE.findall(message if isinstance(message, str) else message.decode())]
            for seq in seqs:
                arrivals.setdefault(seq, now)


async def _wait_ends(run_ids: list[str], ends: dict[str, tuple[int, float]], timeout: float) -> None:
    """Fill ``ends`` with each run's (last seq, monotonic time seen ended) as the runs end."""
    from webapp.runs.models import Run
    from webapp.runs.record import DONE_STATUSES

    deadline = time.monotonic() + timeout
    while len(ends) < len(run_ids) and time.monotonic() < deadline:
        done = await asyncio.to_thread(
            lambda: list(
                Run.objects.filter(id__in=run_ids, status__in=DONE_STATUSES).values_list("id", "last_seq")
            )
        )
        for run_id, last_seq in done:
            ends.setdefault(str(run_id), (last_seq, time.monotonic()))
        await asyncio.sleep(0.2)


def _recorded(run_ids: list[str]) -> dict[str, dict[int, float]]:
    """run id -> seq -> the event's ``RunEvent.created_at`` as a ``time.time()`` value."""
    from webapp.runs.models import RunEvent

    recorded: dict[str, dict[int, float]] = {r: {} for r in run_ids}
    rows = RunEvent.objects.filter(run_id__in=run_ids).values_list("run_id", "seq", "created_at")
    for run, seq, created in rows:
        recorded[str(run)][seq] = created.timestamp()
    return recorded


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


async def _watch_runs(
    services: Services, model: BenchModel, client: Client, problem_id: int, runs: int, viewers: int
) -> dict[str, Any]:
    """Start ``runs`` runs with ``viewers`` sockets each, release the model's replies, measure delays."""
    from webapp.runs.models import Run

    model.hold()
    model.script.calls.clear()
    run_ids = [client.solve(problem_id) for _ in range(runs)]
    tokens = {r: (await asyncio.to_thread(lambda r=r: Run.objects.get(id=r).share_token)) for r in run_ids}
    timeout = 600.0
    ends: dict[str, tuple[int, float]] = {}
    arrivals = {(r, v): {} for r in run_ids for v in range(viewers)}
    tasks, readies = [], []
    for (r, _v), got in arrivals.items():
        ready = asyncio.Event()
        readies.append(ready)
        url = f"ws://127.0.0.1:{services.port}/ws/runs/{r}/?last_seq=-1&token={tokens[r]}"
        tasks.append(asyncio.create_task(_viewer(url, client.base, r, ends, got, ready, timeout)))
    await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), timeout=60)
    released = time.time()
    model.release()
    await _wait_ends(run_ids, ends, timeout)
    await asyncio.gather(*tasks, return_exceptions=True)
    recorded = await asyncio.to_thread(_recorded, run_ids)
    delays, lost = [], 0
    for (r, _v), got in arrivals.items():
        for seq, stamp in recorded[r].items():
            if seq not in got:
                lost += 1
            elif stamp >= released:
                delays.append((got[seq] - stamp) * 1000)
    durations = [max(recorded[r].values()) - released for r in run_ids if recorded[r]]
    n_events = sum(len(recorded[r]) for r in run_ids)
    statuses = await asyncio.to_thread(
        lambda: list(Run.objects.filter(id__in=run_ids).values_list("status", flat=True))
    )
    return {
        "runs": runs,
        "viewers": viewers,
        "events": n_events / runs,
        "p50_ms": _pct(delays, 50),
        "p95_ms": _pct(delays, 95),
        "max_ms": max(delays) if delays else float("nan"),
        "lost": lost,
        "finished": sum(s == Run.FINISHED for s in statuses),
        "longest_run_s": max(durations) if durations else float("nan"),
        "events_per_s": (n_events / max(durations)) if durations else float("nan"),
        "requests": {kind: count / runs for kind, count in sorted(model.script.calls.items())},
    }


async def _bare_layer(viewers: int, messages: int) -> dict[str, float]:
    """group_send ``messages`` messages to ``viewers`` receivers of the configured layer, back to back."""
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    group = f"bench_{uuid.uuid4().hex}"
    channels = [await layer.new_channel() for _ in range(viewers)]
    for channel in channels:
        await layer.group_add(group, channel)
    delays: list[float] = []

    async def receive(channel: str) -> None:
        for _ in range(messages):
            message = await layer.receive(channel)
            delays.append((time.time() - message["t"]) * 1000)

    receivers = [asyncio.create_task(receive(c)) for c in channels]
    await asyncio.sleep(0.2)
    for seq in range(messages):
        await layer.group_send(group, {"type": "run.event", "seq": seq, "t": time.time()})
        await asyncio.sleep(0)
    try:
        await asyncio.wait_for(asyncio.gather(*receivers), timeout=60)
    except TimeoutError:
        for task in receivers:
            task.cancel()
    for channel in channels:
        await layer.group_discard(group, channel)
    lost = viewers * messages - len(delays)
    return {"p50_ms": _pct(delays, 50), "p95_ms": _pct(delays, 95), "lost": lost}


def run_mode(mode: str, viewers: int, max_runs: int, rate: float) -> dict[str, Any]:
    """One mode, in this process (Django is configured once per process for that mode)."""
    workdir = Path(tempfile.mkdtemp(prefix=f"execsim-bench-web-{mode}-"))
    model = BenchModel()
    server = FakeModelServer(model, model=MODEL)
    with server.serve() as model_url:
        services = Services(mode, workdir, model_url)
        for key in set(os.environ) - set(services.env):
            os.environ.pop(key)
        os.environ.update(services.env)
        os.environ["DJANGO_SETTINGS_MODULE"] = "webapp.settings"
        sys.path.insert(0, str(ROOT))
        try:
            return _measure(mode, services, server, model, viewers, max_runs, rate)
        finally:
            services.stop()
            if os.environ.get("BENCH_KEEP"):
                print(f"[{mode}] logs and data kept in {workdir}", flush=True)
            else:
                shutil.rmtree(workdir, ignore_errors=True)


def _measure(
    mode: str,
    services: Services,
    server: Any,
    model: BenchModel,
    viewers: int,
    max_runs: int,
    rate: float,
) -> dict[str, Any]:
    result: dict[str, Any] = {"mode": mode}
    services.start()
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from simulator.problem import Problem as CoreProblem
    from webapp.problems.models import Problem

    user = get_user_model().objects.create_user("bench", password="bench-pw-123")
    core = CoreProblem.from_dict(
        {
            "title": "Add one",
            "statement": "Return `x + 1`.",
            "kind": "call",
            "entry_point": "add_one",
            "tests": [
                {"input": "1", "output": "2"},
                {"input": "5", "output": "6"},
                {"input": "-1", "output": "0", "public": False},
            ],
        }
    )
    problem = Problem.create_from_core(core, user, source="manual", is_public=True)
    client = Client(services.port, "bench", "bench-pw-123")

    server.delay_s = 0.0
    result["headline"] = asyncio.run(_watch_runs(services, model, client, problem.pk, 1, viewers))
    print(f"[{mode}] {viewers} viewers, model at once: {json.dumps(result['headline'])}", flush=True)
    result["bare"] = asyncio.run(_bare_layer(viewers, round(result["headline"]["events"])))
    server.delay_s = 1 / rate
    capacity: list[dict[str, Any]] = []
    runs = 1
    while runs <= max_runs:
        trial = asyncio.run(_watch_runs(services, model, client, problem.pk, runs, 1))
        alone = capacity[0]["longest_run_s"] if capacity else trial["longest_run_s"]
        trial["sustained"] = (
            trial["finished"] == runs
            and trial["lost"] == 0
            and trial["p95_ms"] < TARGET_P95_MS
            and trial["longest_run_s"] <= 1.25 * alone
        )
        capacity.append(trial)
        print(f"[{mode}] {runs} concurrent run(s) at {rate:g} chunks/s: {json.dumps(trial)}", flush=True)
        if not trial["sustained"]:
            break
        runs *= 2
    result["capacity"] = capacity
    result["sustained"] = max((t["runs"] for t in capacity if t["sustained"]), default=0)
    return result


# -- the report ------------------------------------------------------------------------------------


def _table(results: dict[str, dict[str, Any]], args: argparse.Namespace) -> str:
    modes = list(results)
    rows: list[tuple[str, list[str]]] = []

    def fmt(value: Any, digits: int = 1) -> str:
        return "n/a" if value is None else f"{value:.{digits}f}" if isinstance(value, float) else str(value)

    rows.append(
        (f"events in a run: model at once / at {args.rate:g} chunks/s",
         [f"{fmt(results[m]['headline']['events'], 0)} / {fmt(results[m]['capacity'][0]['events'], 0)}"
          for m in modes])
    )  # fmt: skip
    rows.append(
        (f"{args.viewers} viewers, model at once: p50 / p95 delay (ms)",
         [f"{fmt(results[m]['headline']['p50_ms'])} / {fmt(results[m]['headline']['p95_ms'])}"
          for m in modes])
    )  # fmt: skip
    requests = {m: results[m]["headline"]["requests"].items() for m in modes}
    rows.append(
        ("  model requests in the run, by kind",
         [", ".join(f"{kind} {fmt(count, 0)}" for kind, count in requests[m]) for m in modes])
    )  # fmt: skip
    rows.append(("  max delay (ms)", [fmt(results[m]["headline"]["max_ms"]) for m in modes]))
    rows.append(("  events lost (all viewers)", [fmt(results[m]["headline"]["lost"]) for m in modes]))
    rows.append(
        ("  recorded events per second", [fmt(results[m]["headline"]["events_per_s"]) for m in modes])
    )
    rows.append(
        (f"bare channel-layer send, {args.viewers} receivers: p50 / p95 (ms)",
         [f"{fmt(results[m]['bare']['p50_ms'], 2)} / {fmt(results[m]['bare']['p95_ms'], 2)}" for m in modes])
    )  # fmt: skip
    rows.append(
        (f"concurrent runs sustained ({args.rate:g} chunks/s per request, p95 < {TARGET_P95_MS:g} ms)",
         [fmt(results[m]["sustained"]) for m in modes])
    )  # fmt: skip
    for m in modes:
        trials = ", ".join(
            f"{t['runs']}: p95 {fmt(t['p95_ms'])} ms, lost {t['lost']}, {fmt(t['longest_run_s'], 2)} s, "
            f"{fmt(t['events_per_s'] / t['runs'])} ev/s a run"
            for t in results[m]["capacity"]
        )
        rows.append((f"  trials ({m})", [trials if x == m else "" for x in modes]))
    header = "| figure | " + " | ".join(modes) + " |\n|---|" + "---|" * len(modes) + "\n"
    return header + "\n".join(f"| {name} | " + " | ".join(cells) + " |" for name, cells in rows) + "\n"


def _one_mode(mode: str, args: argparse.Namespace, root: Path) -> dict[str, Any] | None:
    """``run_mode`` in a fresh process whose services and imports come from ``root``."""
    command = [sys.executable, __file__, "--one-mode", mode, "--viewers", str(args.viewers),
               "--max-runs", str(args.max_runs), "--rate", str(args.rate)]  # fmt: skip
    env = {**os.environ, "BENCH_ROOT": str(root), "PYTHONPATH": str(root)}
    proc = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    result = None
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT ") :])
        else:
            print(line, flush=True)
    if result is None:
        sys.stderr.write(proc.stderr[-4000:])
        print(f"{mode}: failed (exit {proc.returncode})", file=sys.stderr)
    return result


# The figures --ab compares: (name, how to read it from one mode's result).
AB_FIGURES: list[tuple[str, Any]] = [
    ("events in a run", lambda r: r["headline"]["events"]),
    ("viewers, model at once: p50 delay (ms)", lambda r: r["headline"]["p50_ms"]),
    ("viewers, model at once: p95 delay (ms)", lambda r: r["headline"]["p95_ms"]),
    ("events lost", lambda r: r["headline"]["lost"]),
    ("recorded events per second", lambda r: r["headline"]["events_per_s"]),
    ("one run alone, streamed: seconds", lambda r: r["capacity"][0]["longest_run_s"]),
    ("concurrent runs sustained", lambda r: r["sustained"]),
]


def ab(args: argparse.Namespace) -> int:
    """``--ab REF``: REF's app against the working tree's, alternating, each figure's median."""
    import io
    import statistics
    import tarfile

    tree = REPO / "build" / "bench-ab" / re.sub(r"[^A-Za-z0-9._-]", "_", args.ab)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", args.ab], capture_output=True, check=True)
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(tree, filter="data")
    sides = {args.ab: tree, "working tree": REPO}
    rows = []
    for mode in args.modes.split(","):
        results: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
        for round_ in range(args.rounds):
            for side, root in sides.items():
                print(f"[ab] {mode}, round {round_ + 1}: {side}", flush=True)
                result = _one_mode(mode, args, root)
                if result is None:
                    return 1
                results[side].append(result)
        for name, read in AB_FIGURES:
            ref, work = (statistics.median(float(read(r)) for r in results[side]) for side in sides)
            ratio = f"{work / ref:.2f}x" if ref else "n/a"
            rows.append(f"| {mode} | {name} | {ref:.1f} | {work:.1f} | {ratio} |")
    print()
    print(f"{args.ab} against the working tree, {args.rounds} rounds alternating, medians; {args.viewers} "
          f"viewers, {args.rate:g} chunks/s, up to {args.max_runs} concurrent runs")  # fmt: skip
    print(f"| mode | figure | {args.ab} | working tree | working tree / {args.ab} |\n|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--viewers", type=int, default=50)
    parser.add_argument("--modes", default="embedded,redis")
    parser.add_argument("--max-runs", type=int, default=16)
    parser.add_argument(
        "--rate", type=float, default=100.0, help="chunks per second the model streams per request (capacity)"
    )
    parser.add_argument("--ab", metavar="REF", help="the app at git revision REF against the working tree")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of --ab (default 3)")
    parser.add_argument("--one-mode", help=argparse.SUPPRESS)  # internal: run one mode, print JSON
    args = parser.parse_args()
    if args.one_mode:
        result = run_mode(args.one_mode, args.viewers, args.max_runs, args.rate)
        print("RESULT " + json.dumps(result), flush=True)
        return 0
    if args.ab:
        return ab(args)
    results: dict[str, dict[str, Any]] = {}
    for mode in args.modes.split(","):
        result = _one_mode(mode, args, REPO)
        if result is None:
            return 1
        results[mode] = result
    table = _table(results, args)
    cores = os.cpu_count()
    method = (
        f"Method: `bench/web.py` (docstring): the real pipeline on FakeModelServer. {cores} CPU cores shared "
        "with other work; delays are from an event's RunEvent.created_at (the recorder's insert) to the "
        "arrival of its HTML message at a WebSocket client, same clock. Sustained: every run finished, "
        "every viewer got every event, p95 < 100 ms, no run over 1.25x as long as one run alone."
    )
    print()
    print(table)
    print(method)
    return 0


if __name__ == "__main__":
    sys.exit(main())
