"""Sending a message to a Channels group from synchronous code (tasks, views), in either mode.

The in-memory layer of the embedded mode is plain asyncio queues owned by the ASGI server's loop, so
from another thread the send must run on that loop (asyncio queues are not thread-safe).

With Redis the sends run on one event loop of this process's own, on a daemon thread, so they reuse the
layer's Redis connections: ``async_to_sync(group_send)`` ran each send on a new loop, and so on a new
connection (about 3 ms a send against 0.3 ms, on every event a Celery worker records).
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer

SEND_TIMEOUT_S = 10.0

_server_loop: asyncio.AbstractEventLoop | None = None
_sender: tuple[int, asyncio.AbstractEventLoop] | None = None  # (pid, loop): a forked child makes its own
_sender_lock = threading.Lock()


def remember_loop(loop: asyncio.AbstractEventLoop) -> None:
    global _server_loop
    _server_loop = loop


def _sender_loop() -> asyncio.AbstractEventLoop:
    global _sender
    with _sender_lock:
        if _sender is None or _sender[0] != os.getpid():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="channel-layer-sends", daemon=True).start()
            _sender = (os.getpid(), loop)
        return _sender[1]


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def group_send(group: str, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    if isinstance(layer, InMemoryChannelLayer):
        loop = _server_loop
        if loop is not None and loop.is_running() and _running_loop() is not loop:
            asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop).result(SEND_TIMEOUT_S)
            return
        async_to_sync(layer.group_send)(group, message)
        return
    future = asyncio.run_coroutine_threadsafe(layer.group_send(group, message), _sender_loop())
    future.result(SEND_TIMEOUT_S)
