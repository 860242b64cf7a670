"""Web benchmark: live-update delay to WebSocket viewers, and concurrent runs each runtime mode sustains.

    .venv/bin/python bench/web.py [--viewers 50] [--modes embedded,redis] [--max-runs 16] [--rate 100]
                                  [--append docs/results.md]

For each mode the script starts the real services on free ports and drives them over HTTP and real
WebSockets (``websockets`` clients):
- embedded: ``execsim up --no-model`` (SQLite in a temporary data directory, in-memory channel layer,
  in-process task runner with EXECSIM_INPROCESS_WORKERS=64);
- redis: ``manage.py migrate`` + ``daphne webapp.asgi:application`` + ``celery -A webapp worker --pool
  threads --concurrency 64`` (a throw-away PostgreSQL database on 127.0.0.1:5432, Redis db 12,
  a queue of its own).

Runs are started with the Solve form (POST /problems/<id>/solve/) and executed by the real task
(``webapp.runs.tasks.execute_run``) with EXECSIM_PIPELINE pointing at ``replay_pipeline`` below: a
scripted, realistic event sequence (``scripted_events``: 4 streamed candidates, 2 public tests
simulated with streamed NLEX, verdicts, selection, one repair turn with its re-simulation: ~360
events), so every event goes through the same persist-then-broadcast path (``record_and_publish``)
and the same consumer/rendering as a real run. The double waits for a "go" file (written once all
viewers are connected) whose content is its pace (events per second, 0 = as fast as recording allows).

Delay = arrival of the message carrying an event at a viewer (``time.time()`` in this process) minus the
moment the event was persisted (``time.time()`` stamped in the server/worker process right after the
recording transaction committed, before the event is rendered and broadcast: ``record.publish`` is
wrapped to log it).
Same machine, same clock.

Figures:
1. one run, ``--viewers`` viewers (read-only share-link sockets), replayed at full speed: p50/p95/max
   delay, events lost (a viewer that never got an event), and the replay's events per second;
2. the bare channel-layer send: ``group_send`` of as many messages to as many receivers of the same
   layer (in this process), p50/p95 from send to receive: the floor under figure 1;
3. sustained concurrent runs: N runs at once (N = 1, 2, 4, ... up to ``--max-runs``), each paced at
   ``--rate`` events/s (a model streaming tokens) with one viewer each. N is *sustained* when every
   run finishes, every viewer receives every event, the p95 delay over all events is under 100 ms,
   and no run takes more than 1.25x its scripted duration. The figure is the largest N sustained.
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
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
SEQ_RE = re.compile(r'id="run-seq"[^>]*data-seq="(-?\d+)"')
TARGET_P95_MS = 100.0

# -- the scripted pipeline (imported by the server or worker through EXECSIM_PIPELINE) -------------------


def scripted_events(public: list[tuple[int, str, str]], k: int = 4, turns: int = 1) -> list[tuple[str, dict]]:
    """A realistic event sequence for a call problem: ``public`` is [(test index, input, output)]."""
    words = [
        "the",
        "loop",
        "adds",
        "one",
        "to",
        "x",
        "and",
        "returns",
        "the",
        "result",
        "so",
        "the",
        "call",
        "evaluates",
        "to",
    ]
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "run_started",
            {"problem": {"title": "bench"}, "settings": {"k": k}, "provenance": {"model": "replay"}},
        ),
        ("stage", {"stage": "solve", "state": "started"}),
    ]
    codes = [f"def add_one(x):\n    y = x\n    return y + {c % 2}\n" for c in range(k)]
    for c in range(k):
        text = f"I will add one.\n```python\n{codes[c]}```\n"
        pieces = [text[i : i + 4] for i in range(0, 64, 4)]
        events += [("candidate_delta", {"candidate": c, "text": p}) for p in pieces]
        events.append(
            (
                "candidate_done",
                {"candidate": c, "text": text, "code": codes[c], "parse_error": None, "tokens": 16},
            )
        )
    events.append(("stage", {"stage": "solve", "state": "finished", "seconds": 1.0, "tokens": 64}))

    def simulate(candidate: int, turn: int) -> list[tuple[str, dict[str, Any]]]:
        out: list[tuple[str, dict[str, Any]]] = [
            ("stage", {"stage": "simulate", "state": "started", "turn": turn})
        ]
        for index, given, expected in public:
            nlex = " ".join(words[i % len(words)] for i in range(24))
            predicted = expected if candidate % 2 else given
            labels = {"candidate": candidate, "test": index, "turn": turn, "sample": 0}
            out += [("simulation_delta", {**labels, "text": w + " "}) for w in nlex.split()]
            out.append(
                (
                    "simulation_done",
                    {**labels, "text": nlex, "predicted": predicted, "parse_error": None, "tokens": 24},
                )
            )
            out.append(
                (
                    "verdict",
                    {
                        "candidate": candidate,
                        "test": index,
                        "turn": turn,
                        "expected": expected,
                        "source": "simulated",
                        "simulated": predicted,
                        "match": predicted == expected,
                    },
                )
            )
        out.append(("stage", {"stage": "simulate", "state": "finished", "turn": turn, "seconds": 1.0}))
        return out

    for c in range(k):
        events += [e for e in simulate(c, 0) if e[0] != "stage" or c == 0 or e[1]["state"] != "started"]
    scores = [len(public) if c % 2 else 0 for c in range(k)]
    events += [
        ("stage", {"stage": "select", "state": "started"}),
        ("selected", {"candidate": 1, "scores": scores, "tied": [1, 3], "seed": 7, "reason": "bench"}),
        ("stage", {"stage": "select", "state": "finished"}),
        ("stage", {"stage": "repair", "state": "started"}),
    ]
    for turn in range(1, turns + 1):
        events += [("repair_delta", {"turn": turn, "text": w + " "}) for w in words[:16]]
        events.append(
            (
                "repair_turn",
                {
                    "turn": turn,
                    "submitted": False,
                    "code": codes[1].replace("y + 1", "x + 1"),
                    "text": " ".join(words[:16]),
                    "feedback": [],
                    "parse_error": None,
                },
            )
        )
        events += simulate(1, turn)
    events.append(("stage", {"stage": "repair", "state": "finished", "turns": turns}))
    events.append(
        (
            "run_finished",
            {
                "candidate": 1,
                "code": codes[1],
                "passed_public_simulated": len(public),
                "public_tests": len(public),
                "judged_by": "simulation",
                "turns_used": turns,
                "submitted": False,
                "seed": 7,
                "real": None,
                "totals": {"tokens": 300, "requests": 4, "seconds": 1.0},
            },
        )
    )
    return events


_stamp_lock = threading.Lock()


def _install_persist_stamp() -> None:
    """Wrap ``record.publish`` (called right after the recording transaction commits) to log
    ``<run hex> <seq> <time.time()>`` per event into BENCH_DIR."""
    from webapp.runs import record

    with _stamp_lock:
        if getattr(record.publish, "bench", False):
            return
        original = record.publish
        log = open(Path(os.environ["BENCH_DIR"]) / f"persist-{os.getpid()}.log", "a", buffering=1)  # noqa: SIM115

        def publish(run: Any, data: dict[str, Any]) -> None:
            stamp = time.time()
            with _stamp_lock:
                log.write(f"{run.id.hex} {data['seq']} {stamp:.6f}\n")
            original(run, data)

        publish.bench = True  # type: ignore[attr-defined]
        record.publish = publish


async def replay_pipeline(
    problem: Any,
    settings: Any,
    client: Any,
    *,
    run_id: str | None = None,
    executor: Any = None,
    cancel: Any = None,
) -> AsyncIterator[Any]:
    """Same signature as ``simulator.pipeline.run``: waits for its go file, then yields the script."""
    from simulator.pipeline.events import Sequencer

    _install_persist_stamp()
    go = Path(os.environ["BENCH_DIR"]) / f"go-{uuid.UUID(str(run_id)).hex}"
    deadline = time.monotonic() + 120
    while not go.exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    rate = float(go.read_text() or 0) if go.exists() else 0.0
    public = [(i, t.input, t.output) for i, t in enumerate(problem.tests) if t.public]
    emit = Sequencer(str(run_id))
    started = time.monotonic()
    for n, (type_, payload) in enumerate(scripted_events(public)):
        if rate:
            await asyncio.sleep(max(0.0, started + n / rate - time.monotonic()))
        yield emit(type_, **payload)


# -- the services ------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Services:
    """The server (and worker) of one mode, as child processes; stopped by ``stop()``."""

    def __init__(self, mode: str, workdir: Path) -> None:
        self.mode, self.workdir = mode, workdir
        self.port = _free_port()
        self.procs: list[subprocess.Popen[bytes]] = []
        self.env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "BENCH_DIR": str(workdir),
            "EXECSIM_PIPELINE": "bench.web.replay_pipeline",
            "EXECSIM_DATA_DIR": str(workdir / "data"),
            "EXECSIM_MAX_CONCURRENT_RUNS": "1000",
            "EXECSIM_RUNS_PER_MINUTE": "100000",
            "EXECSIM_INPROCESS_WORKERS": "64",
            "EXECSIM_MODEL_URL": "http://127.0.0.1:9/v1",  # never used by the replay
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
                args, cwd=REPO, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        )

    def start(self) -> None:
        if self.mode == "redis":
            import psycopg

            with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as db:
                db.execute(f'CREATE DATABASE "{self.db}"')
            subprocess.run(
                [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
                cwd=REPO,
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
            self._spawn(str(VENV_BIN / "execsim"), "up", "--no-model", "--port", str(self.port))
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

    def solve(self, problem_id: int) -> str:
        token = self.http.cookies["csrftoken"]
        form = {"k": 4, "turns": 1, "sims": 1, "temperature": 0.5, "csrfmiddlewaretoken": token}
        response = self.http.post(f"/problems/{problem_id}/solve/", data=form)
        match = re.match(r"/runs/([0-9a-f-]{36})/$", response.headers.get("location", ""))
        if response.status_code != 302 or not match:
            raise RuntimeError(f"solve failed: {response.status_code} {response.headers.get('location')}")
        return match.group(1)


async def _viewer(
    url: str, origin: str, last: int, arrivals: dict[int, float], ready: asyncio.Event, timeout: float
) -> None:
    import websockets

    async with websockets.connect(url, origin=origin, max_size=None) as ws:  # type: ignore[arg-type]
        ready.set()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                message = await asyncio.wait_for(ws.recv(), timeout=max(0.1, deadline - time.monotonic()))
            except TimeoutError:
                return
            now = time.time()
            # One message carries one event or several (a viewer catching up), each with its marker.
            seqs = [int(m) for m in SEQ_RE.findall(message if isinstance(message, str) else message.decode())]
            for seq in seqs:
                arrivals.setdefault(seq, now)
            if seqs and max(seqs) >= last:
                return


def _persist_times(workdir: Path) -> dict[tuple[str, int], float]:
    times: dict[tuple[str, int], float] = {}
    for path in workdir.glob("persist-*.log"):
        for line in path.read_text().splitlines():
            run, seq, stamp = line.split()
            times[(run, int(seq))] = float(stamp)
    return times


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


async def _watch_runs(
    services: Services, client: Client, problem_id: int, runs: int, viewers: int, rate: float, n_events: int
) -> dict[str, Any]:
    """Start ``runs`` runs with ``viewers`` sockets each, release them at once, measure delays."""
    from webapp.runs.models import Run

    run_ids = [client.solve(problem_id) for _ in range(runs)]
    tokens = {r: (await asyncio.to_thread(lambda r=r: Run.objects.get(id=r).share_token)) for r in run_ids}
    origin = client.base
    timeout = (n_events / rate if rate else 60.0) * 3 + 60
    arrivals = {(r, v): {} for r in run_ids for v in range(viewers)}
    tasks, readies = [], []
    for (r, _v), got in arrivals.items():
        ready = asyncio.Event()
        readies.append(ready)
        url = f"ws://127.0.0.1:{services.port}/ws/runs/{r}/?last_seq=-1&token={tokens[r]}"
        tasks.append(asyncio.create_task(_viewer(url, origin, n_events - 1, got, ready, timeout)))
    await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), timeout=60)
    released = time.time()
    for r in run_ids:
        (services.workdir / f"go-{uuid.UUID(r).hex}").write_text(str(rate))
    await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.sleep(0.5)  # the last persist stamps
    persisted = _persist_times(services.workdir)
    delays, lost, durations = [], 0, []
    for (r, _v), got in arrivals.items():
        hexid = uuid.UUID(r).hex
        for seq in range(n_events):
            if seq not in got:
                lost += 1
            elif (hexid, seq) in persisted:
                delays.append((got[seq] - persisted[(hexid, seq)]) * 1000)
    for r in run_ids:
        hexid = uuid.UUID(r).hex
        stamps = [t for (run, _), t in persisted.items() if run == hexid]
        if stamps:
            durations.append(max(stamps) - released)
    statuses = await asyncio.to_thread(
        lambda: list(Run.objects.filter(id__in=run_ids).values_list("status", flat=True))
    )
    return {
        "runs": runs,
        "viewers": viewers,
        "events": n_events,
        "p50_ms": _pct(delays, 50),
        "p95_ms": _pct(delays, 95),
        "max_ms": max(delays) if delays else float("nan"),
        "lost": lost,
        "finished": sum(s == Run.FINISHED for s in statuses),
        "longest_run_s": max(durations) if durations else float("nan"),
        "events_per_s": (n_events * runs / max(durations)) if durations else float("nan"),
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
    services = Services(mode, workdir)
    os.environ.update(services.env)
    for key in ("DATABASE_URL", "REDIS_URL"):
        if key not in services.env:
            os.environ.pop(key, None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "webapp.settings"
    sys.path.insert(0, str(REPO))
    result: dict[str, Any] = {"mode": mode}
    try:
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
        public = [(i, t.input, t.output) for i, t in enumerate(core.tests) if t.public]
        n_events = len(scripted_events(public))
        client = Client(services.port, "bench", "bench-pw-123")

        result["headline"] = asyncio.run(_watch_runs(services, client, problem.pk, 1, viewers, 0.0, n_events))
        print(f"[{mode}] {viewers} viewers, full speed: {json.dumps(result['headline'])}", flush=True)
        result["bare"] = asyncio.run(_bare_layer(viewers, n_events))
        capacity: list[dict[str, Any]] = []
        runs = 1
        while runs <= max_runs:
            trial = asyncio.run(_watch_runs(services, client, problem.pk, runs, 1, rate, n_events))
            trial["sustained"] = (
                trial["finished"] == runs
                and trial["lost"] == 0
                and trial["p95_ms"] < TARGET_P95_MS
                and trial["longest_run_s"] <= 1.25 * n_events / rate
            )
            capacity.append(trial)
            print(f"[{mode}] {runs} concurrent run(s) at {rate:g} ev/s: {json.dumps(trial)}", flush=True)
            if not trial["sustained"]:
                break
            runs *= 2
        result["capacity"] = capacity
        result["sustained"] = max((t["runs"] for t in capacity if t["sustained"]), default=0)
        result["n_events"] = n_events
    finally:
        services.stop()
        if os.environ.get("BENCH_KEEP"):
            print(f"[{mode}] logs and data kept in {workdir}", flush=True)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return result


# -- the report ------------------------------------------------------------------------------------


def _table(results: dict[str, dict[str, Any]], args: argparse.Namespace) -> str:
    modes = list(results)
    rows: list[tuple[str, list[str]]] = []

    def fmt(value: Any, digits: int = 1) -> str:
        return "n/a" if value is None else f"{value:.{digits}f}" if isinstance(value, float) else str(value)

    rows.append(("events in the replayed run", [fmt(results[m].get("n_events")) for m in modes]))
    rows.append(
        (f"{args.viewers} viewers, full speed: p50 / p95 delay (ms)",
         [f"{fmt(results[m]['headline']['p50_ms'])} / {fmt(results[m]['headline']['p95_ms'])}"
          for m in modes])
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
        (f"concurrent runs sustained ({args.rate:g} ev/s each, p95 < {TARGET_P95_MS:g} ms)",
         [fmt(results[m]["sustained"]) for m in modes])
    )  # fmt: skip
    for m in modes:
        trials = ", ".join(
            f"{t['runs']}: p95 {fmt(t['p95_ms'])} ms, lost {t['lost']}, {fmt(t['longest_run_s'], 2)} s"
            for t in results[m]["capacity"]
        )
        rows.append((f"  trials ({m})", [trials if x == m else "" for x in modes]))
    header = "| figure | " + " | ".join(modes) + " |\n|---|" + "---|" * len(modes) + "\n"
    return header + "\n".join(f"| {name} | " + " | ".join(cells) + " |" for name, cells in rows) + "\n"


def _append(path: Path, text: str) -> None:
    """Append under '## Web' (created if absent), before the next '## ' section."""
    content = path.read_text() if path.exists() else "# Results\n"
    if "\n## Web" not in "\n" + content:
        content = content.rstrip("\n") + "\n\n## Web\n"
    start = ("\n" + content).index("\n## Web")
    nxt = content.find("\n## ", start + 1)
    if nxt == -1:
        content = content.rstrip("\n") + "\n\n" + text
    else:
        content = content[:nxt].rstrip("\n") + "\n\n" + text + content[nxt:]
    path.write_text(content)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--viewers", type=int, default=50)
    parser.add_argument("--modes", default="embedded,redis")
    parser.add_argument("--max-runs", type=int, default=16)
    parser.add_argument("--rate", type=float, default=100.0, help="events per second of each run (capacity)")
    parser.add_argument("--append", type=Path, help="append the table to this Markdown file (## Web)")
    parser.add_argument("--one-mode", help=argparse.SUPPRESS)  # internal: run one mode, print JSON
    args = parser.parse_args()
    if args.one_mode:
        result = run_mode(args.one_mode, args.viewers, args.max_runs, args.rate)
        print("RESULT " + json.dumps(result), flush=True)
        return 0
    results: dict[str, dict[str, Any]] = {}
    for mode in args.modes.split(","):
        command = [sys.executable, __file__, "--one-mode", mode, "--viewers", str(args.viewers),
                   "--max-runs", str(args.max_runs), "--rate", str(args.rate)]  # fmt: skip
        proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
        sys.stderr.write(proc.stderr[-4000:] if proc.returncode else "")
        for line in proc.stdout.splitlines():
            if line.startswith("RESULT "):
                results[mode] = json.loads(line[len("RESULT ") :])
            else:
                print(line, flush=True)
        if mode not in results:
            print(f"{mode}: failed (exit {proc.returncode})", file=sys.stderr)
            return 1
    table = _table(results, args)
    cores = os.cpu_count()
    method = (
        f"Method: `bench/web.py` (docstring). {cores} CPU cores shared with other work; delays are from the "
        "commit of an event's RunEvent row to the arrival of its HTML message at a WebSocket client, "
        "same clock. Sustained: every run finished, every viewer got every event, p95 < 100 ms, no run "
        "over 1.25x its scripted duration."
    )
    print()
    print(table)
    print(method)
    if args.append:
        argv = " ".join(sys.argv[1:])
        stamp = time.strftime("%Y-%m-%d %H:%M")
        _append(args.append, f"### Live updates and concurrent runs ({stamp})\n\n"
                f"`.venv/bin/python bench/web.py {argv}`\n\n{table}\n{method}\n")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
