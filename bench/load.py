"""Load test: a class, a lab and a lecture at once, against production mode across processes that
stand for machines, with Locust; then the same load with faults.

    .venv/bin/python bench/load.py [--scales 0.1,0.25,0.5,1] [--duration 60] [--rate 30] [--faults]
                                   [--mix students=N,...] [--ab-env KEY=VALUE] [--json FILE]

    .venv/bin/python bench/load.py --scales 0.05 --duration 15            # smallest (tests/bench)
    .venv/bin/python bench/load.py --scales 0.05,0.1,0.2,0.4 --duration 45  # docs/results.md#load
    .venv/bin/python bench/load.py --scales 0.1 --duration 120 --faults     # the faults, same section
    .venv/bin/python bench/load.py --scales 0.2,0.4 --ab-env EXECSIM_DB_POOL=16  # side by side

The stack, each part a process of its own, as on separate machines: nginx (Debian's) in front, proxying
pages and WebSocket upgrades to **two** daphne web processes (round robin; a dead one is skipped) and
serving /static/; **two** Celery workers (threads pool, ``EXECSIM_WORKER_CONCURRENCY`` threads each, 8
unless set) on the runs' queue; the reaper;
PostgreSQL (a throw-away database on 127.0.0.1:5432) and Redis (db 13); and a scripted model server
(``simulator.llm.testing.FakeModelServer``, a test double of vLLM, in this process) streaming every
reply at ``--rate`` tokens a second (a token: 4 characters), as vLLM on a GPU streams one request.
The pipeline, the sandbox, the recording and the fan-out are the real ones.

The users (bench/load_users.py, Locust user classes) at scale 1 (issue 54's mix): 100 students (the
class's shared trace, the class's exercise answered, their own small programs traced), 20 developers
(Solve, k=4 with narration, watched live to its end, then Run for real), 10 annotators (claim, read,
decide), a lecturer and 100 viewers of the lecture's run (share-link sockets). Locust runs in one
process of its own (its CPU is counted with the rest).

Reported per scale: per kind of request, requests/s, p50/p95/p99 (ms) and failures (Locust's own
figures); for live events, the delay from an event's recording (``RunEvent.created_at``) to its arrival
at a socket, p50/p95/p99, and the events lost (recorded, not received by a socket that saw its run
end); the CPU each part used (cores, from /proc via psutil, children included: the sandbox's
processes count to their worker). "Holds" = every page's p95 under 300 ms and the events' under
100 ms, with no failures.

``--faults`` runs one scale with, in order: one Celery worker SIGKILLed, one web process SIGKILLed,
Redis stopped for 10 s (``service redis-server stop``/``start``), PostgreSQL restarted (``service
postgresql restart``; the machine's own services: do not run it beside other work). Then it waits
for every run to end and counts, before and after: runs (by status), recorded events (and gaps in any
run's sequence), annotations; a run on the dead worker must end failed with a message.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.web import MODEL, VENV_BIN, BenchModel, Services, _free_port, _pct, form_defaults  # noqa: E402
from simulator.llm.testing import FakeModelServer  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PAGE_P95_MS, EVENT_P95_MS = 300.0, 100.0
# Once per session and slow on purpose (the password hash: Django's PBKDF2): reported, not held to 300 ms.
ONE_OFF = frozenset({"POST log in"})
COUNTS = {"students": 100, "developers": 20, "annotators": 10, "viewers": 100}
PASSWORD = "load-pass-4321"
NGINX_CONF = """
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {work}/nginx-body;
    proxy_temp_path {work}/nginx-proxy;
    types {{ text/css css; application/javascript js; image/svg+xml svg; }}
    upstream web {{
        server 127.0.0.1:{a} max_fails=1 fail_timeout=5s;
        server 127.0.0.1:{b} max_fails=1 fail_timeout=5s;
    }}
    map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
    server {{
        listen 127.0.0.1:{port};
        location /static/ {{ alias {static}/; }}
        location / {{
            proxy_pass http://web;
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_read_timeout 600s;
            proxy_next_upstream error timeout http_502;
        }}
    }}
}}
"""


class Stack(Services):
    """Production mode as several machines would run it: nginx, two web processes, two workers."""

    def __init__(self, workdir: Path, model_url: str) -> None:
        super().__init__("redis", workdir, model_url)
        self.web_ports = (_free_port(), _free_port())
        self.port = _free_port()  # nginx: what the users reach
        self.env.update(
            {
                "REDIS_URL": "redis://127.0.0.1:6379/13",
                "EXECSIM_BEHIND_PROXY": "true",
                "ALLOWED_HOSTS": "127.0.0.1,localhost",
                "STATIC_ROOT": str(workdir / "static"),
                # The bench's users all come from 127.0.0.1 (as a class behind one school's address)
                "EXECSIM_MAX_SOCKETS_PER_ADDRESS": "100000",
                "EXECSIM_MAX_SOCKETS_PER_USER": "100",
                "EXECSIM_MAX_CONCURRENT_RUNS": "4",
                "EXECSIM_RUNS_PER_MINUTE": "1000",
                "EXECSIM_STALE_RUN_SECONDS": "20",  # the faults' dead runs are reaped within the bench
                "EXECSIM_HEARTBEAT_SECONDS": "2",
            }
        )
        self.roles: dict[str, subprocess.Popen[bytes]] = {}

    def _role(self, name: str, *args: str) -> None:
        self._spawn(*args)
        self.roles[name] = self.procs[-1]

    def start(self) -> None:
        import psycopg

        with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as db:
            db.execute(f'CREATE DATABASE "{self.db}"')
        for command in (["migrate", "--noinput", "-v", "0"], ["collectstatic", "--noinput", "-v", "0"]):
            subprocess.run([sys.executable, "manage.py", *command], cwd=REPO, env=self.env, check=True)
        for i, port in enumerate(self.web_ports):
            self._role(
                f"web{i}",
                str(VENV_BIN / "daphne"),
                "-b",
                "127.0.0.1",
                "-p",
                str(port),
                "webapp.asgi:application",
            )
        for i in range(2):
            self._role(
                f"worker{i}", str(VENV_BIN / "celery"), "-A", "webapp", "worker", "-n", f"load{i}@%h",
                "--pool", "threads", "--concurrency", self.env.get("EXECSIM_WORKER_CONCURRENCY", "8"),
                "-Q", self.env["EXECSIM_CELERY_QUEUE"],
                "--loglevel", "WARNING",
            )  # fmt: skip
        # every 30 s, as the Procfile's reaper
        reap = f"while true; do {sys.executable} manage.py reap_runs >/dev/null; sleep 30; done"
        self._role("reaper", "sh", "-c", reap)
        for part in ("nginx-body", "nginx-proxy"):
            (self.workdir / part).mkdir(exist_ok=True)
        conf = self.workdir / "nginx.conf"
        conf.write_text(
            NGINX_CONF.format(
                work=self.workdir,
                a=self.web_ports[0],
                b=self.web_ports[1],
                port=self.port,
                static=self.workdir / "static",
            )  # fmt: skip
        )
        self._role("nginx", "/usr/sbin/nginx", "-c", str(conf), "-g", "daemon off;")
        self._wait_http()
        self._wait_worker()


# -- CPU per part ------------------------------------------------------------------------------------


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of these processes and all their descendants, dead children included."""
    import psutil

    total = 0.0
    seen: set[int] = set()
    for pid in pids:
        try:
            root = psutil.Process(pid)
            for proc in [root, *root.children(recursive=True)]:
                if proc.pid in seen:
                    continue
                seen.add(proc.pid)
                t = proc.cpu_times()
                total += t.user + t.system + getattr(t, "children_user", 0) + getattr(t, "children_system", 0)
        except psutil.Error:
            continue
    return total


def _named_pids(name: str) -> list[int]:
    import psutil

    return [
        p.pid for p in psutil.process_iter(["name"]) if p.info["name"] and p.info["name"].startswith(name)
    ]


def cpu_snapshot(stack: Stack) -> dict[str, float]:
    import psutil

    parts = {role: [proc.pid] for role, proc in stack.roles.items()}
    parts["postgres"] = _named_pids("postgres")
    parts["redis"] = _named_pids("redis-server")
    snapshot = {name: _cpu_seconds(pids) for name, pids in parts.items()}
    own = psutil.Process().cpu_times()  # this process alone (its children are the parts above)
    snapshot["model double (stands for the GPU server)"] = own.user + own.system
    return snapshot


class CpuOf:
    """A process's CPU seconds, sampled every second while it runs (its last reading stays)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.seconds = pid, 0.0
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        import psutil

        try:
            proc = psutil.Process(self.pid)
            while proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                times = proc.cpu_times()
                self.seconds = times.user + times.system
                time.sleep(1)
        except psutil.Error:
            pass


def idle_cpu(stack: Stack, seconds: float = 10) -> dict[str, float]:
    """What the stack costs with nobody on it (heartbeats, the reaper, polling)."""
    before = cpu_snapshot(stack)
    time.sleep(seconds)
    after = cpu_snapshot(stack)
    return {k: (after[k] - before.get(k, 0)) / seconds for k in after}


# -- seeding -------------------------------------------------------------------------------------------


def seed(stack: Stack, out: Path, scale: float) -> dict[str, Any]:
    """Accounts, the problem, the class's trace and exercise; the Solve form as a browser sends it."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from bench.web import Client
    from simulator.exercises import propose
    from simulator.problem import Problem as CoreProblem
    from tests.webapp.exercises.support import CALL, LOOP_AND_CALL
    from webapp.exercises.models import Exercise
    from webapp.explorer.views import _save
    from webapp.problems.models import Problem

    users = get_user_model()
    groups = {
        name: Group.objects.get_or_create(name=name)[0] for name in ("developer", "educator", "annotator")
    }
    wanted = {"student": ("educator", COUNTS["students"]), "developer": ("developer", COUNTS["developers"]),
              "annotator": ("annotator", COUNTS["annotators"]), "lecturer": ("developer", 1)}  # fmt: skip
    for prefix, (group, count) in wanted.items():
        for i in range(max(1, round(count * scale)) if prefix != "lecturer" else 1):
            user = users.objects.create_user(f"{prefix}{i}", password=PASSWORD)
            user.groups.add(groups[group])
    teacher = users.objects.create_user("teacher", password=PASSWORD)
    teacher.groups.add(groups["educator"])
    core = CoreProblem.from_dict(
        {
            "title": "Add one",
            "statement": "Return x + 1.",
            "kind": "call",
            "entry_point": "add_one",
            "tests": [{"input": "1", "output": "2"}, {"input": "5", "output": "6"}],
        }
    )
    problem = Problem.create_from_core(core, teacher, source="manual", is_public=True)
    from simulator.execution import Program

    trace = _save(teacher, Program(code=LOOP_AND_CALL, call=CALL), title="The class's trace")
    questions = propose(trace.core_trace(), trace.program())
    exercise = Exercise.objects.create(
        owner=teacher, trace=trace, title="Predict", questions=[q.to_dict() for q in questions]
    )
    client = Client(stack.port, "developer0", PASSWORD)
    page = client.http.get(f"/problems/{problem.pk}/")
    form = form_defaults(page.text, f"/problems/{problem.pk}/solve/")
    form.update({"k": "4", "narrate": "on"})
    form.pop("csrfmiddlewaretoken", None)
    data = {
        "counts": COUNTS,
        "problem": problem.pk,
        "trace": trace.slug,
        "exercise": exercise.slug,
        "questions": [{"id": q.id, "answer": q.answer} for q in questions],
        "solve_form": form,
    }
    (out / "seed.json").write_text(json.dumps(data))
    return data


# -- one load ------------------------------------------------------------------------------------------


def run_load(stack: Stack, out: Path, scale: float, duration: int, faults: bool = False) -> dict[str, Any]:
    from webapp.annotation.models import Annotation
    from webapp.runs.models import Run, RunEvent

    users = sum(max(1, round(n * scale)) if n else 0 for n in COUNTS.values()) + (
        1 if COUNTS["viewers"] else 0
    )
    prefix = out / f"scale-{scale:g}"
    for old in [*out.glob("arrivals-*.jsonl"), *out.glob("decided-*.json")]:
        old.unlink()
    env = {**os.environ, "LOAD_SCALE": str(scale), "LOAD_OUT": str(out)}
    before = {
        "runs": Run.objects.count(),
        "events": RunEvent.objects.count(),
        "annotations": Annotation.objects.count(),
    }
    started = time.time()
    cpu0 = cpu_snapshot(stack)
    locust = subprocess.Popen(
        [str(VENV_BIN / "locust"), "-f", str(REPO / "bench" / "load_users.py"), "--headless",
         "-u", str(users), "-r", str(max(5, users // 10)), "-t", f"{duration}s", "--stop-timeout", "30",
         "--csv", str(prefix), "--only-summary", "--host", f"http://127.0.0.1:{stack.port}",
         "--loglevel", "WARNING"],
        cwd=REPO, env=env, stdout=open(prefix.with_suffix(".log"), "wb"), stderr=subprocess.STDOUT,  # noqa: SIM115
    )  # fmt: skip
    locust_cpu = CpuOf(locust.pid)
    fault_log = _faults(stack, duration) if faults else []
    locust.wait(timeout=duration + 180)
    from django.db import connections

    connections.close_all()  # a fault may have restarted PostgreSQL under this process's connection
    cpu1 = cpu_snapshot(stack)
    cpu1["locust"] = locust_cpu.seconds
    elapsed = time.time() - started
    cpu = {k: (cpu1.get(k, 0) - cpu0.get(k, 0)) / elapsed for k in cpu1}
    result = {"scale": scale, "users": users, "duration": duration, "cpu": cpu, "faults": fault_log}
    result["requests"] = _locust_stats(prefix)
    result["failures"] = _locust_failures(prefix)
    result["events"] = _event_delays(out, started)
    if faults:
        decided = [pair for p in out.glob("decided-*.json") for pair in json.loads(p.read_text())]
        result["after"] = {**_settle_and_count(before), **_decisions_kept(decided)}
    return result


def _locust_stats(prefix: Path) -> list[dict[str, Any]]:
    rows = []
    with open(f"{prefix}_stats.csv") as f:
        for row in csv.DictReader(f):
            rows.append(
                {
                    "kind": f"{row['Type']} {row['Name']}".strip(),
                    "requests": int(row["Request Count"]),
                    "failures": int(row["Failure Count"]),
                    "rps": float(row["Requests/s"]),
                    "p50": float(row["50%"] or 0),
                    "p95": float(row["95%"] or 0),
                    "p99": float(row["99%"] or 0),
                }
            )
    return rows


def _locust_failures(prefix: Path) -> list[str]:
    """Why requests failed, the most frequent first: "12x POST solve: HTTPError('502 ...')"."""
    path = Path(f"{prefix}_failures.csv")
    if not path.exists():
        return []
    with path.open() as f:
        rows = sorted(csv.DictReader(f), key=lambda r: -int(r["Occurrences"]))
    return [f"{r['Occurrences']}x {r['Method']} {r['Name']}: {r['Error'][:100]}" for r in rows[:8]]


def _event_delays(out: Path, since: float) -> dict[str, Any]:
    """Delay from each event's recording to its arrival at each socket that received it; events lost:
    recorded up to the run's last seq but not received by a socket that watched the run to its end."""
    from webapp.runs.models import RunEvent

    sessions: dict[str, dict[int, float]] = defaultdict(dict)
    runs_of: dict[str, str] = {}
    ended: set[str] = set()
    for path in out.glob("arrivals-*.jsonl"):
        for line in path.read_text().splitlines():
            session, run, seq, at, end = json.loads(line)
            runs_of[session] = run
            if end:
                ended.add(session)
            else:
                sessions[session].setdefault(seq, at)
    recorded: dict[str, dict[int, float]] = defaultdict(dict)
    rows = RunEvent.objects.filter(run_id__in=set(runs_of.values())).values_list(
        "run_id", "seq", "created_at"
    )
    for run, seq, created in rows:
        recorded[str(run)][seq] = created.timestamp()
    delays, lost, watched = [], 0, 0
    for session, got in sessions.items():
        events = recorded[runs_of[session]]
        first = min(
            got.values(), default=since
        )  # events recorded before the socket's first message: replayed
        for seq, at in got.items():
            if seq in events and events[seq] >= first:
                delays.append((at - events[seq]) * 1000)
        if session in ended:
            watched += 1
            lost += sum(1 for seq in events if seq not in got and seq <= max(got, default=-1))
    return {
        "sockets": len(sessions),
        "watched_to_end": watched,
        "delays": len(delays),
        "p50": _pct(delays, 50),
        "p95": _pct(delays, 95),
        "p99": _pct(delays, 99),
        "lost": lost,
    }


# -- faults ----------------------------------------------------------------------------------------


def _faults(stack: Stack, duration: int) -> list[str]:
    """Kill and stop parts of the stack at fixed points of the load, in a thread; returns its log."""
    log: list[str] = []
    step = duration / 6

    def say(what: str) -> None:
        log.append(f"{time.strftime('%H:%M:%S')} {what}")
        print(f"  fault: {what}", flush=True)

    def inject() -> None:
        time.sleep(step)
        os.killpg(stack.roles["worker0"].pid, signal.SIGKILL)
        say("SIGKILL worker0 (its runs and sandboxes)")
        time.sleep(step)
        os.killpg(stack.roles["web0"].pid, signal.SIGKILL)
        say("SIGKILL web0")
        time.sleep(step)
        subprocess.run(["service", "redis-server", "stop"], capture_output=True)
        say("Redis stopped")
        time.sleep(10)
        subprocess.run(["service", "redis-server", "start"], capture_output=True)
        say("Redis started")
        time.sleep(step)
        subprocess.run(["service", "postgresql", "restart"], capture_output=True)
        say("PostgreSQL restarted")

    thread = threading.Thread(target=inject, daemon=True)
    thread.start()
    return log


def _settle_and_count(before: dict[str, int]) -> dict[str, Any]:
    """Wait for every run to end (the reaper ends the dead worker's), then count what is there."""
    from django.db import connections

    from webapp.annotation.models import Annotation
    from webapp.runs.models import Run, RunEvent
    from webapp.runs.record import DONE_STATUSES

    connections.close_all()  # PostgreSQL was restarted under this process's connection
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and Run.objects.exclude(status__in=DONE_STATUSES).exists():
        time.sleep(2)
        connections.close_all()
    statuses: dict[str, int] = defaultdict(int)
    for status in Run.objects.values_list("status", flat=True):
        statuses[status] += 1
    gaps = 0
    for run_id, last in Run.objects.values_list("id", "last_seq"):
        seqs = set(RunEvent.objects.filter(run_id=run_id).values_list("seq", flat=True))
        gaps += sum(1 for s in range(last + 1) if s not in seqs)
    failed = list(Run.objects.filter(status="failed").values_list("error", flat=True)[:200])
    return {
        "runs_before": before["runs"],
        "runs_after": Run.objects.count(),
        "statuses": dict(statuses),
        "still_active": Run.objects.exclude(status__in=DONE_STATUSES).count(),
        "events_before": before["events"],
        "events_after": RunEvent.objects.count(),
        "event_gaps": gaps,
        "annotations_before": before["annotations"],
        "annotations_after": Annotation.objects.count(),
        "failure_messages": sorted({m.split(":")[0][:120] for m in failed}),
    }


def _decisions_kept(decided: list[list[Any]]) -> dict[str, int]:
    """Of the decisions the server answered, how many are saved (an annotation by that annotator on
    that item). A decision refused (the item's claim lost) is answered too, so "missing" is an upper
    bound on work lost."""
    from webapp.annotation.models import Annotation

    saved = set(Annotation.objects.values_list("annotator__username", "item_id"))
    kept = sum(1 for user, item in decided if (user, item) in saved)
    return {"decisions_answered": len(decided), "decisions_saved": kept}


# -- report ------------------------------------------------------------------------------------------


def _holds(result: dict[str, Any]) -> bool:
    pages = [
        r
        for r in result["requests"]
        if not r["kind"].startswith("WS") and r["kind"] != "Aggregated" and r["kind"] not in ONE_OFF
    ]
    slow = [r for r in pages if r["p95"] > PAGE_P95_MS]
    failed = sum(r["failures"] for r in pages)
    events = result["events"]
    return not slow and not failed and (events["p95"] <= EVENT_P95_MS or events["delays"] == 0)


def report(result: dict[str, Any]) -> str:
    lines = [f"\n## scale {result['scale']:g}: {result['users']} users, {result['duration']} s"]
    lines.append(f"{'kind':34} {'reqs':>6} {'fails':>5} {'req/s':>6} {'p50':>6} {'p95':>6} {'p99':>6}")
    for r in result["requests"]:
        lines.append(
            f"{r['kind'][:34]:34} {r['requests']:6d} {r['failures']:5d} {r['rps']:6.1f} "
            f"{r['p50']:6.0f} {r['p95']:6.0f} {r['p99']:6.0f}"
        )
    e = result["events"]
    lines.append(
        f"live events: {e['delays']} delays over {e['sockets']} sockets "
        f"({e['watched_to_end']} to the run's end): "
        f"p50 {e['p50']:.0f} ms, p95 {e['p95']:.0f} ms, p99 {e['p99']:.0f} ms; lost {e['lost']}"
    )
    for failure in result.get("failures", []):
        lines.append(f"  failed: {failure}")
    cpu = sorted(result["cpu"].items(), key=lambda kv: -kv[1])
    total = sum(v for _, v in cpu)
    lines.append(
        "CPU (cores): "
        + ", ".join(f"{k} {v:.2f}" for k, v in cpu)
        + f"; total {total:.2f} of {os.cpu_count()}"
    )
    lines.append(
        f"holds (pages p95 < {PAGE_P95_MS:.0f} ms, events p95 < {EVENT_P95_MS:.0f} ms, no failures): "
        f"{_holds(result)}"
    )
    if result.get("faults"):
        lines.append("faults: " + "; ".join(result["faults"]))
    if result.get("after"):
        lines.append("after: " + json.dumps(result["after"]))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scales", default="0.1,0.25,0.5,1", help="fractions of the full mix, in order")
    parser.add_argument("--duration", type=int, default=60, help="seconds of load per scale")
    parser.add_argument("--rate", type=float, default=30.0, help="the model's tokens per second per request")
    parser.add_argument("--faults", action="store_true", help="inject the faults during the (first) scale")
    parser.add_argument(
        "--mix",
        default="",
        help="users of each kind at scale 1, e.g. students=20,developers=0,annotators=0,viewers=0 (one kind "
        "alone: what it costs); default the class mix",
    )
    parser.add_argument(
        "--ab-env",
        default="",
        help="KEY=VALUE: run every scale twice, on a stack without and then with this setting (e.g. "
        "EXECSIM_DB_POOL=10), and print their ratios",
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    scales = [float(s) for s in args.scales.split(",")]
    for item in filter(None, args.mix.split(",")):
        kind, _, number = item.partition("=")
        COUNTS[kind.strip()] = int(number)
    variants: list[dict[str, str]] = [{}]
    if args.ab_env:
        key, _, value = args.ab_env.partition("=")
        variants.append({key: value})
    results = []
    for variant in variants:
        if len(variants) > 1:
            print(f"\n# stack {'with ' + args.ab_env if variant else 'without it'}", flush=True)
        results.append(_one_stack(args, scales, variant))
    if len(variants) > 1:
        print(_ratios(results[0], results[1], args.ab_env))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


def _one_stack(args: argparse.Namespace, scales: list[float], extra: dict[str, str]) -> list[dict[str, Any]]:
    workdir = Path(tempfile.mkdtemp(prefix="execsim-load-"))
    model = BenchModel()
    model.release()
    server = FakeModelServer(model, model=MODEL, delay_s=1.0 / args.rate)
    results = []
    with server.serve() as model_url:
        stack = Stack(workdir, model_url)
        stack.env.update(extra)
        os.environ.update(stack.env)
        os.environ["DJANGO_SETTINGS_MODULE"] = "webapp.settings"
        try:
            stack.start()
            import django

            django.setup()
            seed(stack, workdir, max(scales))
            idle = idle_cpu(stack)
            busy = ", ".join(f"{k} {v:.2f}" for k, v in idle.items() if v >= 0.005)
            print("idle stack, CPU (cores): " + (busy or "every process under 0.005"))
            for scale in scales:
                result = run_load(stack, workdir, scale, args.duration, faults=args.faults)
                print(report(result), flush=True)
                results.append(result)
                if args.faults:
                    break
        finally:
            from django.db import connections

            connections.close_all()
            stack.stop()
            if os.environ.get("BENCH_KEEP"):
                print(f"logs kept in {workdir}")
            else:
                shutil.rmtree(workdir, ignore_errors=True)
            for key in extra:
                os.environ.pop(key, None)
    return results


def _ratios(before: list[dict[str, Any]], after: list[dict[str, Any]], what: str) -> str:
    """Per scale: failures, page p95 (the slowest kind) and event p95, without and with the setting."""
    lines = [
        f"\n## without / with {what}",
        "| scale | failures | slowest page p95 (ms) | event p95 (ms) |",
        "|---|---|---|---|",
    ]
    for a, b in zip(before, after, strict=True):

        def figures(r: dict[str, Any]) -> tuple[int, float, float]:
            pages = [x for x in r["requests"] if x["kind"] != "Aggregated" and not x["kind"].startswith("WS")
                     and x["kind"] not in ONE_OFF]  # fmt: skip
            return (
                sum(x["failures"] for x in r["requests"]),
                max((x["p95"] for x in pages), default=0),
                r["events"]["p95"],
            )

        fa, pa, ea = figures(a)
        fb, pb, eb = figures(b)
        page_ratio = pb / pa if pa else float("nan")
        event_ratio = eb / ea if ea else float("nan")
        lines.append(
            f"| {a['scale']:g} | {fa} / {fb} | {pa:.0f} / {pb:.0f} (x{page_ratio:.2f}) "
            f"| {ea:.0f} / {eb:.0f} (x{event_ratio:.2f}) |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
