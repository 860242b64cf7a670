"""The results page's socket: the class's results, sent again whenever a student joins or answers or
the model's answers arrive (coalesced: a class answering at once costs a few renders, not one per
answer). On (re)connecting the page gets the results as they are, so a reconnect misses nothing."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from webapp.exercises.models import Exercise
from webapp.exercises.results import results_fragment

COALESCE_S = 0.25  # changes within this are sent as one


class ExerciseResultsConsumer(AsyncWebsocketConsumer):
    exercise: Exercise | None = None
    refresh: asyncio.Task[None] | None = None
    again = False

    async def connect(self) -> None:
        self.exercise = await self._managed(self.scope["url_route"]["kwargs"]["slug"])
        if self.exercise is None:
            await self.close(code=4403)
            return
        await self.channel_layer.group_add(self.exercise.group, self.channel_name)
        await self.accept()
        await self._send()

    async def disconnect(self, code: int) -> None:
        if self.refresh is not None:
            self.refresh.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.refresh
        if self.exercise is not None:
            with contextlib.suppress(Exception):  # a layer that is down: nothing left to leave
                await self.channel_layer.group_discard(self.exercise.group, self.channel_name)

    async def exercise_changed(self, event: dict[str, Any]) -> None:
        if self.refresh is None or self.refresh.done():
            self.refresh = asyncio.create_task(self._refresh_soon())
        else:
            self.again = True

    async def _refresh_soon(self) -> None:
        while True:
            await asyncio.sleep(COALESCE_S)
            self.again = False
            await self._send()
            if not self.again:
                return

    async def _send(self) -> None:
        await self.send(text_data=await self._render())

    @database_sync_to_async
    def _render(self) -> str:
        assert self.exercise is not None
        self.exercise.refresh_from_db()
        return results_fragment(self.exercise, oob=True)

    @database_sync_to_async
    def _managed(self, slug: str) -> Exercise | None:
        return Exercise.managed(slug, self.scope.get("user"))
