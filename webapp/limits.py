"""Limits on what one user may ask of the server, with documented defaults (docs/webapp.md), each
configurable through an environment variable (see settings.py). A limit hit is a clear message, never
a crash and never a half-saved object."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

from simulator.problem import Problem as CoreProblem


class LimitExceeded(Exception):
    """Raised with the message to show the user (views catch it, or webapp.errors answers 429)."""


def client_ip(request: HttpRequest) -> str | None:
    """The visitor's address: REMOTE_ADDR, or behind a proxy (EXECSIM_BEHIND_PROXY) the last entry of
    X-Forwarded-For, the one the proxy itself added (earlier entries are the client's to forge). Sign-up
    throttling and django-axes (AXES_CLIENT_IP_CALLABLE) both read it."""
    return _address(request.META.get("HTTP_X_FORWARDED_FOR", ""), request.META.get("REMOTE_ADDR"))


def socket_client_ip(scope: dict[str, Any]) -> str | None:
    """``client_ip`` for a WebSocket's ASGI scope: the peer (``scope["client"]``), or behind a proxy
    the last X-Forwarded-For entry."""
    headers = dict(scope.get("headers") or [])
    forwarded = headers.get(b"x-forwarded-for", b"").decode("latin-1")
    client = scope.get("client") or (None, None)
    return _address(forwarded, client[0])


def _address(forwarded: str, remote: str | None) -> str | None:
    if settings.EXECSIM_BEHIND_PROXY:
        entries = [part.strip() for part in forwarded.split(",")]
        if entries[-1]:
            return entries[-1]
    return remote or None


def take_from_window(key: str, limit: int, seconds: float) -> bool:
    """A sliding window: record one hit under ``key`` unless ``limit`` hits happened in the last
    ``seconds``; False (nothing recorded) when the limit is reached. The hits' times live in the cache
    (Redis in production, so every server process counts the same hits); two requests at the same
    instant may both pass, which is fine for a throttle."""
    now = time.time()
    hits = [t for t in cache.get(key, []) if t > now - seconds]
    if len(hits) >= limit:
        return False
    cache.set(key, [*hits, now], timeout=int(seconds) + 1)
    return True


def check_can_start_run(user: Any, active: int, *, adds: int = 1) -> None:
    """Concurrent runs per user and runs started per minute (the request rate for expensive requests).
    ``active``: the user's work in progress, every kind of sandbox work counted (queued and running
    runs, and Run for real executions asked for or under way); ``adds``: what the new work adds to it
    at once (0 for a Run for real asked for during its run, which follows that run). Both limits count
    a Run for real as a run (issue 51, item 9)."""
    if active + adds > settings.EXECSIM_MAX_CONCURRENT_RUNS:
        raise LimitExceeded(
            f"You already have {active} run(s) in progress (limit {settings.EXECSIM_MAX_CONCURRENT_RUNS}). "
            "A Run for real counts as a run. Wait for one to finish or cancel it."
        )
    if not take_from_window(f"execsim:runs:{user.pk}", settings.EXECSIM_RUNS_PER_MINUTE, 60):
        raise LimitExceeded(
            f"Too many runs started in the last minute (limit {settings.EXECSIM_RUNS_PER_MINUTE} "
            "per minute). Try again shortly."
        )


def check_can_sign_up(request: HttpRequest) -> None:
    """Sign-ups per address per hour (EXECSIM_SIGNUPS_PER_HOUR), so one visitor cannot mint accounts
    to multiply the per-user limits."""
    limit = settings.EXECSIM_SIGNUPS_PER_HOUR
    if not take_from_window(f"execsim:signups:{client_ip(request) or 'unknown'}", limit, 3600):
        raise LimitExceeded(f"Too many sign-ups from your address (limit {limit} per hour). Try again later.")


EXERCISE_ANSWERS_PER_MINUTE = 20  # per student: a class answers a question every few seconds at most


def check_can_join(request: HttpRequest) -> None:
    """Exercise joins per address per minute (EXECSIM_EXERCISE_JOINS_PER_MINUTE): a school's classes
    behind one address join at once, a script minting students is stopped."""
    limit = settings.EXECSIM_EXERCISE_JOINS_PER_MINUTE
    if not take_from_window(f"execsim:joins:{client_ip(request) or 'unknown'}", limit, 60):
        raise LimitExceeded("Too many people joined from here just now: wait a minute and try again.")


def check_can_answer(student_pk: Any) -> None:
    """A student's answers per minute (``EXERCISE_ANSWERS_PER_MINUTE``)."""
    if not take_from_window(f"execsim:answers:{student_pk}", EXERCISE_ANSWERS_PER_MINUTE, 60):
        raise LimitExceeded("That is a lot of answers at once: wait a moment and try again.")


# -- one user's share of the sandbox pool ----------------------------------------------------------------

SANDBOX_SHARE_WAIT_SECONDS = 30.0  # how long an explorer trace waits for its user's other programs
_shares: dict[Any, tuple[int, threading.BoundedSemaphore]] = {}
_shares_lock = threading.Lock()


def _share(user_pk: Any) -> tuple[int, threading.BoundedSemaphore]:
    """The user's EXECSIM_MAX_PROGRAMS_PER_USER places in this process's sandbox pool (a new set when
    the setting changed: the places taken under the old one are given back to the old one)."""
    size = settings.EXECSIM_MAX_PROGRAMS_PER_USER
    with _shares_lock:
        share = _shares.get(user_pk)
        if share is None or share[0] != size:
            share = _shares[user_pk] = (size, threading.BoundedSemaphore(size))
        return share


@contextmanager
def sandbox_share(user_pk: Any, wait: float | None = None) -> Iterator[None]:
    """Hold one of the user's places in the sandbox pool while one of their programs runs (for threads:
    an explorer trace). Waits up to ``wait`` (SANDBOX_SHARE_WAIT_SECONDS) for the user's own other
    programs to leave one, then raises LimitExceeded. The places are per server process, as the pool
    is: embedded mode has one process, so one user's runs, Run for real and traces share one count."""
    size, share = _share(user_pk)
    if not share.acquire(timeout=SANDBOX_SHARE_WAIT_SECONDS if wait is None else wait):
        raise LimitExceeded(
            f"Your other programs are using your share of the sandbox (limit {size} programs at once). "
            "Try again when they finish."
        )
    try:
        yield
    finally:
        share.release()


@asynccontextmanager
async def sandbox_share_async(user_pk: Any) -> AsyncIterator[None]:
    """``sandbox_share`` for a run's event loop: waits (without blocking the loop, without a time
    limit: the run's own programs take turns) until the user has a place free."""
    _, share = _share(user_pk)
    while not share.acquire(blocking=False):
        await asyncio.sleep(0.02)
    try:
        yield
    finally:
        share.release()


@contextmanager
def trace_slot(user: Any) -> Iterator[None]:
    """Hold one of the user's EXECSIM_EXPLORER_MAX_CONCURRENT explorer traces while it runs, so one
    user's infinite loops occupy at most that many of the sandbox pool's workers and others' traces
    still start at once. The count lives in the cache (shared by every server process); it expires
    after 5 minutes should a process die holding a slot. The trace also takes one of the user's places
    in the sandbox (``sandbox_share``), which their runs' programs share: a user whose runs fill their
    share waits for them, and never holds every worker of the pool."""
    limit = settings.EXECSIM_EXPLORER_MAX_CONCURRENT
    key = f"execsim:traces:{user.pk}"
    cache.add(key, 0, timeout=300)
    try:
        held = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=300)
        held = 1
    try:
        if held > limit:
            raise LimitExceeded(
                f"You already have {held - 1} trace(s) running (limit {limit}). Wait for one to finish."
            )
        with sandbox_share(user.pk):
            yield
    finally:
        with suppress(ValueError):  # expired meanwhile: nothing to give back
            cache.decr(key)


# -- open WebSockets per account and per address ------------------------------------------------------

SOCKET_LEASE_SECONDS = 60.0  # a socket's place lapses unless its process renews it (SocketLimits: every 20 s)
_sockets_lock = threading.Lock()


def _socket_places(user_pk: Any, address: str | None) -> list[tuple[str, int, str]]:
    """(cache key, limit, whose) for each count a socket of ``user_pk`` (None: anonymous) from
    ``address`` takes a place in."""
    places = []
    if user_pk is not None:
        places.append(
            (f"execsim:sockets:user:{user_pk}", settings.EXECSIM_MAX_SOCKETS_PER_USER, "your account")
        )
    if address:
        places.append(
            (f"execsim:sockets:ip:{address}", settings.EXECSIM_MAX_SOCKETS_PER_ADDRESS, "your address")
        )
    return places


def _leases(key: str, now: float) -> dict[str, float]:
    """The places under ``key`` that have not lapsed: socket id -> when it lapses."""
    return {socket: until for socket, until in (cache.get(key) or {}).items() if until > now}


def open_socket(socket_id: str, user_pk: Any, address: str | None) -> None:
    """Take a place for one open WebSocket in its account's count (EXECSIM_MAX_SOCKETS_PER_USER) and its
    address's (EXECSIM_MAX_SOCKETS_PER_ADDRESS), or raise LimitExceeded and take none. Each place is a
    lease: the socket id and when it lapses (SOCKET_LEASE_SECONDS), kept in the cache (Redis in
    production: every server process counts the same sockets) and renewed while the socket is open
    (``renew_socket``), so the places of a process that died lapse by themselves. Within a process the
    counts are exact (one lock); two processes taking the last place at the same instant may both pass,
    as with the other limits."""
    with _sockets_lock:
        now = time.time()
        places = [
            (key, limit, whose, _leases(key, now)) for key, limit, whose in _socket_places(user_pk, address)
        ]
        for _, limit, whose, leases in places:
            if len(leases) >= limit:
                raise LimitExceeded(
                    f"Too many open live pages from {whose} (limit {limit}). Close some and reload."
                )
        for key, _, _, leases in places:
            cache.set(
                key, {**leases, socket_id: now + SOCKET_LEASE_SECONDS}, timeout=int(SOCKET_LEASE_SECONDS) + 1
            )


def renew_socket(socket_id: str, user_pk: Any, address: str | None) -> None:
    """Keep an open socket's places (another SOCKET_LEASE_SECONDS from now)."""
    with _sockets_lock:
        now = time.time()
        for key, _, _ in _socket_places(user_pk, address):
            leases = {**_leases(key, now), socket_id: now + SOCKET_LEASE_SECONDS}
            cache.set(key, leases, timeout=int(SOCKET_LEASE_SECONDS) + 1)


def close_socket(socket_id: str, user_pk: Any, address: str | None) -> None:
    """Give a closed socket's places back."""
    with _sockets_lock:
        now = time.time()
        for key, _, _ in _socket_places(user_pk, address):
            leases = _leases(key, now)
            if leases.pop(socket_id, None) is not None:
                cache.set(key, leases, timeout=int(SOCKET_LEASE_SECONDS) + 1)


def code_errors(code: str, field: str = "code") -> list[tuple[str, str]]:
    if len(code) > settings.EXECSIM_MAX_CODE_CHARS:
        return [(field, f"is {len(code)} characters; the limit is {settings.EXECSIM_MAX_CODE_CHARS}")]
    return []


def problem_errors(problem: CoreProblem) -> list[tuple[str, str]]:
    """Size limits for a problem (statement, number of tests, size of each test), by field."""
    errors = []
    if len(problem.statement) > settings.EXECSIM_MAX_STATEMENT_CHARS:
        limit = settings.EXECSIM_MAX_STATEMENT_CHARS
        errors.append(("statement", f"is {len(problem.statement)} characters; the limit is {limit}"))
    if len(problem.tests) > settings.EXECSIM_MAX_TESTS:
        errors.append(("tests", f"has {len(problem.tests)} tests; the limit is {settings.EXECSIM_MAX_TESTS}"))
    for i, test in enumerate(problem.tests):
        for name in ("input", "output"):
            size = len(getattr(test, name))
            if size > settings.EXECSIM_MAX_TEST_CHARS:
                errors.append(
                    (
                        f"tests[{i}].{name}",
                        f"is {size} characters; the limit is {settings.EXECSIM_MAX_TEST_CHARS}",
                    )
                )
    return errors
