"""Browser-facing protections that are not Django's own (docs/security.md).

- ``ContentSecurityPolicyMiddleware``: every response gets a Content-Security-Policy that the app's
  pages satisfy (scripts, styles, fonts, images, sockets from this origin only; no inline script, no
  eval, no plugins; framed by nobody except the explorer's embed view). Django 5.2 has no built-in CSP.
- ``same_origin`` / ``SameOriginValidator``: a WebSocket is accepted only from a page of this very
  origin (scheme-less host *and port* equal to the Host header) or from CSRF_TRUSTED_ORIGINS. Channels'
  AllowedHostsOriginValidator compares host names only, so a page on another port of the same machine
  could open a run's socket with the visitor's cookies.
- ``SocketLimits``: open WebSockets per account and per client address (``webapp.limits.open_socket``);
  beyond either limit the handshake is refused.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from asgiref.sync import sync_to_async
from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.http.request import validate_host

from webapp import limits

log = logging.getLogger(__name__)

POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        # The run page's matrix sets one CSS variable in a style attribute (--cols); attributes cannot
        # load anything or run script.
        "style-src-attr 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
    ]
)


class ContentSecurityPolicyMiddleware:
    """Adds POLICY, with ``frame-ancestors 'none'`` unless the view is exempt from X-Frame-Options
    (``xframe_options_exempt``: the explorer's embed view, which other sites may frame)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if "Content-Security-Policy" not in response:
            framing = "" if getattr(response, "xframe_options_exempt", False) else "; frame-ancestors 'none'"
            response["Content-Security-Policy"] = POLICY + framing
        return response


def same_origin(origin: str | None, host: str) -> bool:
    """True when ``origin`` (a browser's Origin header) is this site: its host and port equal the
    request's Host header (default ports made explicit) and that host is allowed, or it is listed in
    CSRF_TRUSTED_ORIGINS."""
    if not origin:
        return False
    if origin in settings.CSRF_TRUSTED_ORIGINS:
        return True
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    default = 443 if parts.scheme == "https" else 80
    try:
        origin_port = parts.port or default
        requested = urlsplit(f"//{host}")
        host_port = requested.port or default
    except ValueError:  # a malformed port
        return False
    return (
        parts.hostname == requested.hostname
        and origin_port == host_port
        and validate_host(parts.hostname, settings.ALLOWED_HOSTS)
    )


class SameOriginValidator:
    """ASGI wrapper for WebSocket routes: deny (403) unless ``same_origin`` holds for the handshake."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        headers = dict(scope.get("headers") or [])
        origin = headers.get(b"origin", b"").decode("latin-1") or None
        host = headers.get(b"host", b"").decode("latin-1")
        if same_origin(origin, host):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)


REFUSED_TOO_MANY = 4429  # the close code of a handshake refused by SocketLimits (daphne answers 403)


class SocketLimits:
    """ASGI wrapper for WebSocket routes, inside the auth middleware (it reads ``scope["user"]``): each
    socket holds a place in its account's and its address's counts (``limits.open_socket``: leases in
    the cache, shared by every server process) while it is open, renewed every third of
    ``limits.SOCKET_LEASE_SECONDS`` and given back when it closes. A handshake beyond either limit is
    refused before anything else is done for it (no database, no channel layer): the cheapest answer
    to a flood, and nginx's ``limit_conn`` does the same per address. The page's ws extension retries
    a refused handshake after a growing delay, so a reader who closes a tab elsewhere gets back in."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        user = scope.get("user")
        user_pk = user.pk if user is not None and user.is_authenticated else None
        address = limits.socket_client_ip(scope)
        socket_id = uuid.uuid4().hex
        try:
            await sync_to_async(limits.open_socket, thread_sensitive=False)(socket_id, user_pk, address)
        except limits.LimitExceeded as exc:
            log.info("a WebSocket was refused (user %s, address %s): %s", user_pk, address, exc)
            message = await receive()  # the handshake (websocket.connect), refused
            if message["type"] == "websocket.connect":
                await send({"type": "websocket.close", "code": REFUSED_TOO_MANY})
            return None
        renewing = asyncio.create_task(self._renew(socket_id, user_pk, address))
        try:
            return await self.application(scope, receive, send)
        finally:
            renewing.cancel()
            try:
                await sync_to_async(limits.close_socket, thread_sensitive=False)(socket_id, user_pk, address)
            except Exception:  # Redis down: the places lapse by themselves
                log.warning("a closed WebSocket's places were not given back", exc_info=True)

    @staticmethod
    async def _renew(socket_id: str, user_pk: Any, address: str | None) -> None:
        while True:
            await asyncio.sleep(limits.SOCKET_LEASE_SECONDS / 3)
            try:
                await sync_to_async(limits.renew_socket, thread_sensitive=False)(socket_id, user_pk, address)
            except Exception:  # Redis down: try again next time; the page reconnects if it must
                log.warning("an open WebSocket's places were not renewed", exc_info=True)
