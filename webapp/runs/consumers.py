"""The live run page's WebSocket: replay what the page has not seen (seq > last_seq) from the database,
in order, then forward live events of the run's group. Thin: recording happens in the task."""

from __future__ import annotations

import asyncio
import secrets
import uuid
from collections import OrderedDict
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from webapp.runs.models import Run, RunEvent
from webapp.runs.render import render_event

_RENDERED: OrderedDict[tuple[Any, int, bool], asyncio.Future[str]] = OrderedDict()
_RENDERED_MAX = 4096


async def _rendered(run_id: Any, event: dict[str, Any], readonly: bool) -> str:
    """The event's HTML, rendered once per process and shared by every viewer of the run (50 viewers
    used to render it 50 times, which is what made live pages fall behind: bench/web.py)."""
    key = (run_id, int(event["seq"]), readonly)
    future = _RENDERED.get(key)
    if future is None or (future.done() and future.exception() is not None):
        future = asyncio.ensure_future(database_sync_to_async(render_event)(run_id, event, readonly=readonly))
        _RENDERED[key] = future
        while len(_RENDERED) > _RENDERED_MAX:
            _RENDERED.popitem(last=False)
    return await asyncio.shield(future)


class RunConsumer(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        query = parse_qs(self.scope.get("query_string", b"").decode())
        try:
            run_id = uuid.UUID(self.scope["url_route"]["kwargs"]["run_id"])
            self.last_seq = int(query.get("last_seq", ["-1"])[0])
        except (KeyError, ValueError):
            await self.close(code=4400)
            return
        token = query.get("token", [""])[0]
        access = await self._access(run_id, token)
        if access is None:
            await self.close(code=4403)
            return
        self.run_id, self.readonly = run_id, access == "read"
        self.group = f"run_{run_id.hex}"
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        for event in await self._missed_events():
            await self._send_event(event)

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Channels runs ``close_old_connections`` on its one sync thread before *every* handler: for
        live events that is a thread hop per event per viewer, all queued behind one thread. The
        ``run.event`` path reaches the database only through ``database_sync_to_async``, which does
        that clean-up itself, so it skips the hop."""
        if message["type"] == "run.event":
            await self.run_event(message)
        else:
            await super().dispatch(message)

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def run_event(self, message: dict[str, Any]) -> None:
        """A live event from the task (group message type ``run.event``). Every event is persisted before
        it is broadcast, so when one arrives past a gap (a channel layer drops messages for a viewer that
        fell behind) the gap is filled from the database, in order."""
        event = message["event"]
        if event["seq"] > self.last_seq + 1:
            for missed in await self._missed_events():
                await self._send_event(missed)
        else:
            await self._send_event(event)

    async def _send_event(self, event: dict[str, Any]) -> None:
        if event["seq"] <= self.last_seq:  # already replayed (or already on the page)
            return
        self.last_seq = event["seq"]
        await self.send(text_data=await _rendered(self.run_id, event, self.readonly))

    @database_sync_to_async
    def _access(self, run_id: uuid.UUID, token: str) -> str | None:
        run = Run.objects.filter(id=run_id).first()
        if run is None:
            return None
        user = self.scope.get("user")
        if user is not None and Run.objects.visible_to(user).filter(id=run_id).exists():
            return "write"
        if token and secrets.compare_digest(token, run.share_token):
            return "read"
        return None

    @database_sync_to_async
    def _missed_events(self) -> list[dict[str, Any]]:
        rows = RunEvent.objects.filter(run_id=self.run_id, seq__gt=self.last_seq).order_by("seq")
        return [row.as_event_dict() for row in rows]
