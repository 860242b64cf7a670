"""Fan-out of a run's live events inside one server process.

Every WebSocket viewing a run used to be a member of the run's Channels group: each event was delivered,
dispatched and sent once per viewer, and 50 viewers of one run fell seconds behind (bench/web.py).
Now one ``Feed`` per run and process is the group's only member here. It keeps the events it received
(already rendered by the process that recorded them, ``record.publish``) in order, and wakes the run's
``Viewer``s; each viewer sends everything it has not sent yet as ONE WebSocket message (the events in
order, each ending with its ``#run-seq`` marker), so a viewer that falls behind catches up in a few
messages instead of one per event.

Nothing is lost or sent twice:
- ``floor``: every event with seq <= floor was recorded before the feed joined the group (or the feed
  has let it go: it keeps its last KEEP events and all its slowest viewer still needs), so the
  database has it; every later one reaches the feed live. A viewer behind the floor (a page rendered
  before the feed existed) replays from the database up to the floor first.
- A live event past a gap (a channel layer drops messages when a receiver falls behind, or two
  recorders' broadcasts cross) makes the feed fill the gap from the database; every event is persisted
  before it is broadcast.
- Each viewer sends seqs > its cursor only, in order, and the cursor starts at the page's last_seq.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from webapp.runs.models import Run
from webapp.runs.render import render_messages

log = logging.getLogger(__name__)

KEEP = 512  # events a feed keeps behind its slowest viewer, so pages (re)connecting replay from memory
MAX_EVENTS_PER_MESSAGE = 256  # a viewer far behind catches up in messages of at most this many events

Send = Callable[[str], Awaitable[None]]


class Feed:
    """The live events of one run in this process, shared by its viewers here."""

    def __init__(self, run_id: uuid.UUID) -> None:
        self.run_id = run_id
        self.group = f"run_{run_id.hex}"
        self.layer = get_channel_layer()
        self.channel: str | None = None
        self.joined = False
        self.closed = False
        self.floor = -1  # see the module docstring
        self.top = -1  # the highest seq the feed has (or the floor)
        self.events: dict[int, tuple[str, str]] = {}  # seq -> (HTML for owners, for share-link readers)
        self.viewers: set[Viewer] = set()
        self.started: asyncio.Future[None] | None = None
        self.receiver: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.channel = await self.layer.new_channel()
        await self.layer.group_add(self.group, self.channel)
        self.joined = True
        self.floor = self.top = await database_sync_to_async(_last_seq)(self.run_id)
        self.receiver = asyncio.create_task(self._receive())

    async def close(self) -> None:
        self.closed = True
        if self.started is not None:  # let a start under way finish first, however it ends
            with contextlib.suppress(Exception):
                await asyncio.shield(self.started)
        if self.receiver is not None:
            self.receiver.cancel()
            await asyncio.gather(self.receiver, return_exceptions=True)
        if self.joined:
            try:
                await self.layer.group_discard(self.group, self.channel)
            except Exception:  # Redis down: the membership expires (channels_redis's group_expiry)
                log.warning("run %s: the live feed could not leave its group", self.run_id, exc_info=True)

    async def _receive(self) -> None:
        try:
            while True:
                message = await self.layer.receive(self.channel)
                if message.get("type") != "run.event":
                    continue
                try:
                    await self.add(message)
                except Exception:  # a database error while filling a gap: the next event retries
                    log.exception("run %s: live event %s not forwarded", self.run_id, message["event"]["seq"])
        except Exception:  # the channel layer failed: let the pages reconnect, to a new feed
            log.exception("run %s: the live feed stopped", self.run_id)
            feeds = _loop_feeds()
            if feeds.get(self.run_id) is self:
                del feeds[self.run_id]
            for viewer in list(self.viewers):
                await viewer.fail()

    async def add(self, message: dict[str, Any]) -> None:
        """One ``run.event`` group message (``record.publish``)."""
        event = message["event"]
        seq = int(event["seq"])
        if seq <= self.top:  # recorded before the feed joined, or a gap fill brought it already
            return
        if seq > self.top + 1 or "html" not in message:
            for row in await database_sync_to_async(render_messages)(self.run_id, self.top, seq):
                self._put(*row)
        else:
            self._put(seq, message["html"], message.get("html_readonly", message["html"]))
        if self.top < seq:  # not in the database either: skip it rather than wait for it forever
            log.warning("run %s: events %s..%s missing from the database", self.run_id, self.top + 1, seq)
            self.top = seq
        for viewer in self.viewers:
            viewer.wake.set()
        if len(self.events) > 2 * KEEP:
            self.trim()

    def _put(self, seq: int, owner: str, reader: str) -> None:
        if seq > self.top:  # so the dict stays in seq order
            self.events[seq] = (owner, reader)
            self.top = seq

    def trim(self) -> None:
        """Forget the events every viewer has sent, but the last KEEP."""
        slowest = min((v.cursor for v in self.viewers), default=self.top)
        keep_from = min(slowest, self.top - KEEP) + 1
        while self.events and (first := next(iter(self.events))) < keep_from:
            del self.events[first]
        self.floor = max(self.floor, keep_from - 1)


class Viewer:
    """One WebSocket's position in a feed; its task sends what the socket has not had yet."""

    def __init__(
        self, feed: Feed, cursor: int, readonly: bool, send: Send, on_error: Callable[[], Awaitable[None]]
    ) -> None:
        self.feed, self.cursor, self.readonly = feed, cursor, readonly
        self.send, self.on_error = send, on_error
        self.wake = asyncio.Event()
        self.wake.set()  # a first look: the page may be behind the feed
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        try:
            await self._forward()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("run %s: a live viewer failed", self.feed.run_id)
            await self.on_error()

    async def fail(self) -> None:
        if self.task is not None:
            self.task.cancel()
        await self.on_error()

    async def _forward(self) -> None:
        feed = self.feed
        while True:
            await self.wake.wait()
            self.wake.clear()
            while self.cursor < feed.top:
                if self.cursor < feed.floor:  # older than the feed: from the database
                    through = feed.floor
                    rows = await database_sync_to_async(render_messages)(feed.run_id, self.cursor, through)
                else:
                    through = feed.top
                    rows = [
                        (s, *feed.events[s]) for s in range(self.cursor + 1, through + 1) if s in feed.events
                    ]
                html = [
                    reader if self.readonly else owner for seq, owner, reader in rows if seq > self.cursor
                ]
                self.cursor = max(through, self.cursor)
                for start in range(0, len(html), MAX_EVENTS_PER_MESSAGE):
                    await self.send("\n".join(html[start : start + MAX_EVENTS_PER_MESSAGE]))


def _last_seq(run_id: uuid.UUID) -> int:
    return Run.objects.values_list("last_seq", flat=True).get(id=run_id)


_feeds: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[uuid.UUID, Feed]] = (
    weakref.WeakKeyDictionary()
)


def _loop_feeds() -> dict[uuid.UUID, Feed]:
    return _feeds.setdefault(asyncio.get_running_loop(), {})


async def join(
    run_id: uuid.UUID, last_seq: int, *, readonly: bool, send: Send, on_error: Callable[[], Awaitable[None]]
) -> Viewer:
    """A viewer of the run's events after ``last_seq``, subscribed (through the run's feed in this
    process) when this returns; ``viewer.start()`` starts sending them through ``send``, ``stop(viewer)``
    ends it. ``on_error`` is awaited if the viewer fails (the socket should close; the page reconnects)."""
    feeds = _loop_feeds()
    feed = feeds.get(run_id)
    if feed is None:
        feed = feeds[run_id] = Feed(run_id)
        feed.started = asyncio.ensure_future(feed.start())
    viewer = Viewer(feed, last_seq, readonly, send, on_error)
    feed.viewers.add(viewer)  # before awaiting: the feed must not close meanwhile
    try:
        assert feed.started is not None
        await asyncio.shield(feed.started)
    except BaseException:
        await stop(viewer)
        raise
    return viewer


async def stop(viewer: Viewer) -> None:
    """Stop a viewer; the feed leaves the group with its last viewer."""
    if viewer.task is not None and viewer.task is not asyncio.current_task():
        viewer.task.cancel()
        await asyncio.gather(viewer.task, return_exceptions=True)
    feed = viewer.feed
    feed.viewers.discard(viewer)
    feeds = _loop_feeds()
    if feeds.get(feed.run_id) is feed and not feed.viewers:
        del feeds[feed.run_id]
    if feeds.get(feed.run_id) is not feed and not feed.viewers and not feed.closed:
        await feed.close()
