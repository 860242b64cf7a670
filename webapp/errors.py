"""Clear answers when something other than the page's own logic fails.

- A service that is down (PostgreSQL, Redis as cache, channel layer or Celery broker): pages answer 503
  naming it (``ErrorPagesMiddleware``, and ``server_error`` for failures outside a view, such as the
  session middleware's), commands print one line naming it and exit 1 (``run_command``).
- A bad setting (``ImproperlyConfigured`` from webapp.env's readers): one line, exit 2.
- A limit hit that a view did not catch itself (``webapp.limits.LimitExceeded``): 429 with its message.
- A request body over DATA_UPLOAD_MAX_MEMORY_SIZE: 413 saying what the limit is (``bad_request``).
- A page that is not there, or not the asker's to see: 404 with the site's navigation (``not_found``).
- A WebSocket whose handshake meets a service that is down: accepted and closed with 1013 ("try again
  later", which the page's ws extension reconnects after) instead of daphne's HTTP 500
  (``WebsocketOutages``, around every socket route in webapp/asgi.py).

The page of a service failure, a limit or a body too large is ``templates/errors/error.html``, which
extends nothing: it renders with the database and Redis down (no user, no session, no messages). The
404 page has the site's navigation: the database is up when a view finds nothing.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator
from typing import Any

from django.core.exceptions import ImproperlyConfigured, RequestDataTooBig, TooManyFieldsSent
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.views import defaults

log = logging.getLogger(__name__)

EXIT_FAILED, EXIT_USAGE = 1, 2  # simulator.cli's codes (the CLI contract in README.md)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception and those it was raised from or during (a wrapper hides the driver's error)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def service_down(exc: BaseException) -> str | None:
    """The service whose failure ``exc`` is ("the database", "Redis", "the task queue (Redis)"), or
    None when it is not a connection failure of one."""
    import django.db
    import kombu.exceptions
    import psycopg
    import redis.exceptions

    for error in _chain(exc):
        if isinstance(
            error, django.db.OperationalError | django.db.InterfaceError | psycopg.OperationalError
        ):
            return "the database"
        if isinstance(error, redis.exceptions.ConnectionError | redis.exceptions.TimeoutError):
            return "Redis"
        if isinstance(error, kombu.exceptions.OperationalError):
            return "the task queue (Redis)"
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


TRY_AGAIN_LATER = 1013  # the WebSocket close code (RFC 6455's registry): a service is down, come back


class WebsocketOutages:
    """ASGI wrapper for WebSocket routes: a service failure (``service_down``) that escapes the app
    closes the socket with TRY_AGAIN_LATER, accepting it first when the handshake was not answered yet
    (daphne answers a handshake the app crashed in with HTTP 500, and refuses one closed before it is
    accepted with a bare 403; neither says "come back"). The page's ws extension reconnects after 1013
    and replays from its last event. Any other error goes up as before."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        accepted = closed = False

        async def tracked(message: dict[str, Any]) -> None:
            nonlocal accepted, closed
            accepted = accepted or message["type"] == "websocket.accept"
            closed = closed or message["type"] == "websocket.close"
            await send(message)

        try:
            return await self.application(scope, receive, tracked)
        except Exception as exc:
            service = service_down(exc)
            if service is None or closed:
                raise
            log.warning("a WebSocket was closed: %s is not reachable: %s", service, _first_line(exc))
            if not accepted:
                await send({"type": "websocket.accept"})
            await send({"type": "websocket.close", "code": TRY_AGAIN_LATER})
            return None


def error_page(status: int, title: str, message: str) -> HttpResponse:
    html = render_to_string("errors/error.html", {"status": status, "title": title, "message": message})
    return HttpResponse(html, status=status)


def error_response(exc: BaseException | None) -> HttpResponse | None:
    """The page for a service failure or a limit, or None for any other exception (a real bug: 500)."""
    from webapp.limits import LimitExceeded

    if exc is None:
        return None
    if isinstance(exc, LimitExceeded):
        return error_page(429, "Limit reached", str(exc))
    service = service_down(exc)
    if service is None:
        return None
    log.error("%s is not reachable: %s", service, _first_line(exc))
    name = service[0].upper() + service[1:]
    response = error_page(
        503,
        f"{name} is not reachable",
        f"{name} is not reachable right now, so ExecSim cannot answer. Try again shortly.",
    )
    response["Retry-After"] = "30"
    return response


class ErrorPagesMiddleware:
    """Turns a view's service failure or uncaught limit into its page (503 or 429) instead of a 500."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        return error_response(exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: a failure outside any view (a middleware's) may still be a service that is down."""
    return error_response(sys.exc_info()[1]) or defaults.server_error(request)


def _check_this_threads_connections() -> None:
    """For the database connections of the thread an error page renders on, what ``request_started``
    and ``request_finished`` (``close_old_connections``) do for the request's own thread: close one
    that failed and is unusable or is past CONN_MAX_AGE, and have the next query health-check the rest
    (CONN_HEALTH_CHECKS). Django's ASGI handler renders the page for an exception raised outside a view
    (an address no route matches) on a thread of the event loop's default executor, whose connections
    nothing else ever checks: after a PostgreSQL restart, every logged-in 404 (its navigation reads the
    session and the user) answered 503 until the server restarted (issue 51, item 15). A connection
    inside a transaction (a test's) is left alone, as ``close_old_connections`` leaves it."""
    from django.db import connections

    for conn in connections.all(initialized_only=True):
        if not conn.in_atomic_block:
            conn.close_if_unusable_or_obsolete()


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler404: the site's page with its navigation, saying that a private thing is not found too
    (a problem, run or trace not shared with the asker is a 404, so that its existence is not told).
    It may render on a thread of its own, whose connections it checks before and after."""
    _check_this_threads_connections()
    try:
        return render(request, "errors/not_found.html", status=404)
    finally:
        _check_this_threads_connections()


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler400: a body over the upload limit says what the limit is (413) instead of a bare 400."""
    from django.conf import settings

    if isinstance(exception, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return error_page(
            413,
            "Too large",
            f"The request is larger than the limit of {limit:,} bytes (DATA_UPLOAD_MAX_MEMORY_SIZE). "
            f"Programs and inputs may have at most {settings.EXECSIM_MAX_CODE_CHARS:,} characters, "
            f"imported files {settings.EXECSIM_MAX_UPLOAD_BYTES:,} bytes.",
        )
    if isinstance(exception, TooManyFieldsSent):
        return error_page(
            413, "Too many fields", f"The form has more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} fields."
        )
    return defaults.bad_request(request, exception)


def run_command(main: Callable[[], int | None]) -> int:
    """Run a command's ``main`` (manage.py, ``execsim up``): a bad setting is one line and exit 2, a
    service that is down one line naming it and exit 1; anything else is a bug and keeps its traceback."""
    try:
        return int(main() or 0)
    except ImproperlyConfigured as exc:
        print(f"configuration error: {_first_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        service = service_down(exc)
        if service is None:
            raise
        print(f"{service} is not reachable: {_first_line(exc)}", file=sys.stderr)
        return EXIT_FAILED
