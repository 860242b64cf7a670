"""The users of bench/load.py, as Locust user classes (a locustfile): what a class, a lab and a lecture
do at once, in the proportions of issue 54 (per 1 of ``LOAD_SCALE``: 100 students, 20 developers,
10 annotators, 100 lecture viewers and the lecturer).

- Student: logged in; opens the class's shared trace (the page, as a browser loads it), steps through
  it (in the page: no request), answers the class's exercise (join, then an answer every few seconds),
  and traces a small program of their own now and then (the explorer's paste form: a sandboxed run).
  In the proportions 6 answers, 2 reopenings of the trace, 1 program of their own, in a fixed cycle
  that each student enters at their own place (``STUDENT_CYCLE``), so that even the shortest run (five
  students, two or three steps each) makes every kind of request; chance could leave one out.
- Developer: opens a problem, submits a Solve run (k=4, narration on, the form's other defaults),
  watches it live on its page's WebSocket to its end, asks Run for real, then thinks.
- Annotator: works the queue: claims the next item, reads it, decides (reject or skip).
- LectureViewer: watches the lecture's run live through its share link (a read-only socket); when
  it ends, the next one.
- Lecturer (one): starts the lecture's runs one after another.

Each HTTP request is Locust's (its name groups the kind); each WebSocket message's events are written
to ``LOAD_OUT/arrivals-<pid>.jsonl`` (run, seq, arrival time) so that bench/load.py measures each
event's delay against the time it was recorded, as bench/web.py does. Seeded by bench/load.py: the
accounts (password ``load-pass-4321``), the problem, the class's trace and exercise, in LOAD_OUT/seed.json.
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from pathlib import Path
from typing import Any

import websocket  # websocket-client: blocking, and cooperative under Locust's gevent
from locust import HttpUser, between, constant, events, task

SCALE = float(os.environ.get("LOAD_SCALE", "1"))
OUT = Path(os.environ.get("LOAD_OUT", "build/load"))
SEED = json.loads((OUT / "seed.json").read_text()) if (OUT / "seed.json").exists() else {}
PASSWORD = "load-pass-4321"
SEQ_RE = re.compile(r'id="run-seq"[^>]*data-seq="(-?\d+)"')
ENDED_RE = re.compile(r'id="run-status"[^>]*data-status="(finished|failed|cancelled)"')
RUN_RE = re.compile(r"/runs/([0-9a-f-]{36})/$")
SHARE_RE = re.compile(r'href="/share/([^/"]+)/"')
# a student's steps, in turn (each student starts at their own place): 1 own program, 6 answers, 2 reopenings
STUDENT_CYCLE = ["trace_my_program"] + ["answer", "reopen_trace", "answer", "answer"] * 2
MY_PROGRAM = "def f(xs):\n    total = 0\n    for x in xs:\n        total += x * {k}\n    return total\n"

_arrivals: list[list[Any]] = []  # [socket session, run, seq, arrival time, ended]
_sessions = iter(range(10**9))
lecture: dict[str, str] = {}  # the lecture's current run: {"run": id, "token": share token}
_decided: list[list[Any]] = []  # [annotator, item] of each decision the server answered (saved)


def _count(name: str) -> int:
    wanted = SEED.get("counts", {}).get(name, 0) * SCALE
    return max(1, round(wanted)) if wanted > 0 else 0


@events.test_stop.add_listener
def _write_arrivals(**_: Any) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with (OUT / f"arrivals-{os.getpid()}.jsonl").open("w") as out:
        for row in _arrivals:
            out.write(json.dumps(row) + "\n")
    (OUT / f"decided-{os.getpid()}.json").write_text(json.dumps(_decided))


def _fire(name: str, started: float, exc: BaseException | None = None) -> None:
    events.request.fire(
        request_type="WS",
        name=name,
        response_time=(time.perf_counter() - started) * 1000,
        response_length=0,
        exception=exc,
        context={},
    )


def watch(base: str, run: str, query: str, cookie: str = "", limit_s: float = 300) -> bool:
    """Read a run's live events until it ends (its status fragment says so), recording each arrival;
    when the socket closes first (a web process died), reconnect from the last event received, as the
    run page does (``last_seq``). True when the end was seen."""
    session = f"{os.getpid()}-{next(_sessions)}"
    deadline = time.monotonic() + limit_s
    last_seq, name = -1, "ws connect"
    while time.monotonic() < deadline:
        url = base.replace("http", "ws", 1) + f"/ws/runs/{run}/?{query}&last_seq={last_seq}"
        started = time.perf_counter()
        try:
            ws = websocket.create_connection(url, origin=base, cookie=cookie or None, timeout=30)
        except websocket.WebSocketBadStatusException as exc:  # refused (403): trying again will not help
            _fire(name, started, exc)
            return False
        except Exception as exc:  # no web process answers yet: the page tries again
            _fire(name, started, exc)
            time.sleep(1)
            name = "ws reconnect"
            continue
        _fire(name, started)
        try:
            while time.monotonic() < deadline:
                try:
                    message = ws.recv()
                except websocket.WebSocketTimeoutException:
                    continue
                if not message:
                    raise websocket.WebSocketConnectionClosedException("closed")
                now = time.time()
                for seq in SEQ_RE.findall(message):
                    _arrivals.append([session, run, int(seq), now, 0])
                    last_seq = max(last_seq, int(seq))
                if ENDED_RE.search(message):
                    _arrivals.append([session, run, -1, now, 1])
                    return True
        except Exception:  # closed under it: reconnect from last_seq
            name = "ws reconnect"
        finally:
            ws.close()
    return False


class LoggedIn(HttpUser):
    abstract = True
    prefix = ""

    def on_start(self) -> None:
        counters = getattr(self.environment, "counters", None)
        self.number = next(counters[self.prefix]) if counters else 0
        self.username = f"{self.prefix}{self.number}"
        self.client.get("/accounts/login/", name="login page")
        token = self.client.cookies.get("csrftoken", "")
        self.client.post(
            "/accounts/login/",
            data={"username": self.username, "password": PASSWORD, "csrfmiddlewaretoken": token},
            name="log in",
            allow_redirects=False,
        )

    def csrf(self) -> str:
        return self.client.cookies.get("csrftoken", "")

    def cookie_header(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.client.cookies)


class Student(LoggedIn):
    prefix = "student"
    wait_time = between(3, 8)
    fixed_count = _count("students")

    def on_start(self) -> None:
        super().on_start()
        self.client.get(f"/explorer/t/{SEED['trace']}/", name="shared trace")
        reply = self.client.post(
            f"/x/{SEED['exercise']}/join/", json={"name": self.username}, name="exercise join"
        )
        self.token = reply.json().get("token", "") if reply.ok else ""
        self.questions = list(SEED["questions"])
        self.turn = self.number  # each student starts the cycle at their own place

    @task
    def next_step(self) -> None:
        getattr(self, STUDENT_CYCLE[self.turn % len(STUDENT_CYCLE)])()
        self.turn += 1

    def answer(self) -> None:
        if not self.questions or not self.token:
            return
        question = self.questions.pop(0)
        guess = (
            question["answer"] if random.random() < 0.6 else str(random.randint(1, 9))
        )  # a line, or a value
        self.client.post(
            f"/x/{SEED['exercise']}/answer/",
            json={"token": self.token, "question": question["id"], "text": guess},
            name="exercise answer",
        )

    def reopen_trace(self) -> None:
        self.client.get(f"/explorer/t/{SEED['trace']}/", name="shared trace")

    def trace_my_program(self) -> None:
        k = random.randint(1, 9)
        data = {
            "title": f"mine {k}",
            "code": MY_PROGRAM.format(k=k),
            "mode": "call",
            "call_input": f"f({list(range(k))})",
            "csrfmiddlewaretoken": self.csrf(),
        }
        with self.client.post(
            "/explorer/", data=data, name="trace my program", allow_redirects=False, catch_response=True
        ) as reply:
            if reply.status_code != 302:
                reply.failure(f"no trace: {reply.status_code}")
                return
        self.client.get(reply.headers["location"], name="my trace")


class Developer(LoggedIn):
    prefix = "developer"
    wait_time = between(5, 15)
    fixed_count = _count("developers")

    @task
    def solve_and_watch(self) -> None:
        problem = SEED["problem"]
        self.client.get(f"/problems/{problem}/", name="problem page")
        form = {**SEED["solve_form"], "csrfmiddlewaretoken": self.csrf()}
        with self.client.post(
            f"/problems/{problem}/solve/", data=form, name="solve", allow_redirects=False, catch_response=True
        ) as reply:
            match = RUN_RE.match(reply.headers.get("location", ""))
            if reply.status_code != 302 or not match:
                reply.failure(f"no run: {reply.status_code} {reply.headers.get('location')}")
                return
        run = match.group(1)
        self.client.get(f"/runs/{run}/", name="run page")
        if watch(self.host, run, "", self.cookie_header()):
            self.client.post(
                f"/runs/{run}/real/", data={"csrfmiddlewaretoken": self.csrf()}, name="run for real",
                allow_redirects=False,
            )  # fmt: skip


class Annotator(LoggedIn):
    prefix = "annotator"
    wait_time = between(4, 10)
    fixed_count = _count("annotators")

    @task
    def review_one(self) -> None:
        self.client.get("/annotation/", name="annotation queue")
        with self.client.post(
            "/annotation/next/", data={"csrfmiddlewaretoken": self.csrf()}, name="claim next",
            allow_redirects=False, catch_response=True,
        ) as reply:  # fmt: skip
            location = reply.headers.get("location", "")
            if not re.search(r"/annotation/items/\d+/", location):
                reply.success()  # an empty queue is not an error
                return
        self.client.get(location, name="review item")
        item = re.search(r"/annotation/items/(\d+)/", location).group(1)  # type: ignore[union-attr]
        decision = random.choice(["reject", "skip"])
        with self.client.post(
            f"/annotation/items/{item}/decide/",
            data={"decision": decision, "csrfmiddlewaretoken": self.csrf()},
            name="decide", allow_redirects=False, catch_response=True,
        ) as reply:  # fmt: skip
            if reply.status_code == 302:
                _decided.append([self.username, int(item)])


class Lecturer(LoggedIn):
    prefix = "lecturer"
    wait_time = constant(1)
    fixed_count = 1 if _count("viewers") else 0  # a lecture only where it is watched

    @task
    def lecture_run(self) -> None:
        problem = SEED["problem"]
        form = {**SEED["solve_form"], "csrfmiddlewaretoken": self.csrf()}
        reply = self.client.post(
            f"/problems/{problem}/solve/", data=form, name="lecture solve", allow_redirects=False
        )
        match = RUN_RE.match(reply.headers.get("location", ""))
        if not match:
            time.sleep(2)
            return
        page = self.client.get(f"/runs/{match.group(1)}/", name="run page")
        share = SHARE_RE.search(page.text)
        lecture.update({"run": match.group(1), "token": share.group(1) if share else ""})
        watch(self.host, match.group(1), "", self.cookie_header())


class LectureViewer(HttpUser):
    wait_time = constant(0.2)
    fixed_count = _count("viewers")

    @task
    def follow_the_lecture(self) -> None:
        run, token = lecture.get("run"), lecture.get("token")
        if not run or not token or run == getattr(self, "last_run", None):
            return
        self.last_run = run
        self.client.get(f"/share/{token}/", name="lecture share page")
        watch(self.host, run, f"token={token}")


@events.init.add_listener
def _numbering(environment: Any, **_: Any) -> None:
    """Each user of a kind logs in as the next seeded account of that kind."""
    import itertools

    environment.counters = {
        prefix: itertools.count() for prefix in ("student", "developer", "annotator", "lecturer")
    }
