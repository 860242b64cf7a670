"""The ASGI application: HTTP through Django, WebSockets through Channels (run pages stream events)."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
django_asgi = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import WebsocketDenier  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402
from django.core.exceptions import SuspiciousOperation  # noqa: E402
from django.http import Http404  # noqa: E402
from django.urls import re_path  # noqa: E402

from webapp import broadcast  # noqa: E402
from webapp.errors import WebsocketOutages  # noqa: E402
from webapp.exercises.routing import websocket_urlpatterns as exercise_sockets  # noqa: E402
from webapp.runs.routing import websocket_urlpatterns as run_sockets  # noqa: E402
from webapp.security import SameOriginValidator, SocketLimits  # noqa: E402


class StaticFiles(ASGIStaticFilesHandler):
    """/static/ in embedded mode; a path that climbs out of the static folders (``%2e%2e/``) is a 404
    like any missing file, not a 500 (Django's handler catches only Http404)."""

    def serve(self, request: Any) -> Any:
        try:
            return super().serve(request)
        except SuspiciousOperation as exc:
            raise Http404(str(exc)) from None


http_app: Any = StaticFiles(django_asgi) if settings.SERVE_STATIC else django_asgi

# Any other socket path is refused (403: daphne's only answer before accept), not a crash in the router.
websocket_routes = [*run_sockets, *exercise_sockets, re_path(r"", WebsocketDenier.as_asgi())]
router = ProtocolTypeRouter(
    {
        "http": http_app,
        # Same origin, port included (webapp.security); channels' validator compared host names only.
        # A service down during a handshake (sessions, the channel layer): a clean 1013 (webapp.errors).
        # Open sockets per account and per address: SocketLimits (webapp.security, webapp.limits).
        "websocket": WebsocketOutages(
            SameOriginValidator(AuthMiddlewareStack(SocketLimits(URLRouter(websocket_routes))))
        ),
    }
)


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    # Remember the server's loop: the in-process task runner broadcasts onto it from its threads.
    broadcast.remember_loop(asyncio.get_running_loop())
    await router(scope, receive, send)
