"""Sending a message to a Channels group from synchronous code (tasks, views), in either mode.

With Redis, ``async_to_sync(group_send)`` works from any thread or process. The in-memory layer of the
embedded mode is plain asyncio queues owned by the ASGI server's loop, so from another thread the send
must run on that loop (asyncio queues are not thread-safe).
"""

from __future__ import annotations

import asyncio
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer

_server_loop: asyncio.AbstractEventLoop | None = None


def remember_loop(loop: asyncio.AbstractEventLoop) -> None:
    global _server_loop
    _server_loop = loop


def group_send(group: str, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    loop = _server_loop
    if isinstance(layer, InMemoryChannelLayer) and loop is not None and loop.is_running():
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not loop:
            asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop).result(timeout=10)
            return
    async_to_sync(layer.group_send)(group, message)
