"""The live run page's WebSocket: the events the page has not seen (seq > last_seq), in order, from the
database and then live. Thin: recording and rendering happen where the event is recorded
(``record.publish``), the fan-out to this process's viewers of a run in ``webapp.runs.live``."""

from __future__ import annotations

import secrets
import uuid
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from webapp.params import BadNumber, bounded_int
from webapp.runs import live
from webapp.runs.models import Run

MAX_SEQ = 2**31 - 1  # RunEvent.seq and Run.last_seq are IntegerFields


class RunConsumer(AsyncWebsocketConsumer):
    """One run page's socket. It has no channel of its own (an alias no layer is configured under): the
    run's feed receives for every viewer in this process (``webapp.runs.live``). Each socket's own
    channel was one more blocking receive on Redis per socket, unused, and the one that crashed the
    consumer when Redis went away instead of the feed closing it cleanly (1011; the page reconnects)."""

    channel_layer_alias = "execsim-run-sockets-have-no-channel"
    viewer: live.Viewer | None = None

    async def connect(self) -> None:
        query = parse_qs(self.scope.get("query_string", b"").decode())
        try:
            run_id = uuid.UUID(self.scope["url_route"]["kwargs"]["run_id"])
            # the page's last applied event: -1 (none) up to the seq column's largest
            seq = bounded_int(query.get("last_seq", ["-1"])[0], low=-1, high=MAX_SEQ, default=-1)
        except (KeyError, ValueError, BadNumber):
            await self.close(code=4400)
            return
        last_seq = -1 if seq is None else seq
        token = query.get("token", [""])[0]
        access = await self._access(run_id, token)
        if access is None:
            await self.close(code=4403)
            return
        self.viewer = await live.join(
            run_id, last_seq, readonly=access == "read", send=self._send_html, on_error=self._failed
        )
        await self.accept()  # subscribed by now: the page misses nothing recorded from here on
        self.viewer.start()

    async def disconnect(self, code: int) -> None:
        if self.viewer is not None:
            await live.stop(self.viewer)
            self.viewer = None

    async def _send_html(self, html: str) -> None:
        await self.send(text_data=html)

    async def _failed(self) -> None:
        """The viewer could not go on (a database error): close, and the page reconnects from its seq."""
        await self.close(code=1011)

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
