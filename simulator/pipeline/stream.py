"""Turning a driver coroutine into an async generator of sequenced events, with cancellation.

The driver runs as its own task and emits ``(type, payload)`` pairs into a queue; the generator numbers
them as it yields them (so sequence numbers are gap-free whatever happens) and stops after the first
final event. Cancellation, in all its forms, ends with exactly one ``run_cancelled``:

- the ``cancel`` event is set: the driver task is cancelled and emits ``run_cancelled`` itself;
- the task iterating the generator is cancelled: the driver is stopped, ``run_cancelled`` is yielded,
  and CancelledError is raised on the next resumption (so the consumer's task still ends cancelled);
- the consumer stops iterating (``break``/``aclose``): the driver is stopped; nothing more is yielded.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Coroutine
from typing import Any

from simulator.pipeline.events import Event, EventType, Sequencer

Emit = Callable[..., None]


async def stream_events(
    run_id: str,
    drive: Callable[[Emit], Coroutine[Any, Any, None]],
    cancel: asyncio.Event | None,
    cancelled: Callable[[], None],
) -> AsyncGenerator[Event, None]:
    """``drive(emit)`` must emit exactly one final event, including when it is cancelled.
    ``cancelled()`` is called before the driver is cancelled on request (to record the reason)."""
    sequence = Sequencer(run_id)
    queue: asyncio.Queue[tuple[EventType, dict[str, Any]]] = asyncio.Queue()

    def emit(type: EventType, **payload: Any) -> None:
        queue.put_nowait((type, payload))

    driver = asyncio.create_task(drive(emit), name=f"execsim-run-{run_id}")
    watcher = None
    if cancel is not None:
        watcher = asyncio.create_task(_watch(cancel, driver, cancelled), name=f"execsim-watch-{run_id}")
    try:
        while True:
            try:
                type, payload = await queue.get()
            except asyncio.CancelledError:
                await _stop(driver)
                yield sequence("run_cancelled", reason="the task running the pipeline was cancelled")
                raise
            event = sequence(type, **payload)
            yield event
            if event.is_final:
                return
    finally:
        await _stop(watcher)
        await _stop(driver)


async def _watch(cancel: asyncio.Event, driver: asyncio.Task[None], cancelled: Callable[[], None]) -> None:
    await cancel.wait()
    if not driver.done():
        cancelled()
        driver.cancel()


async def _stop(task: asyncio.Task[None] | None) -> None:
    """Cancel ``task`` and wait for it; its own outcome is not ours to raise (a cancellation of the
    caller still propagates out of ``asyncio.wait``)."""
    if task is None:
        return
    if not task.done():
        task.cancel()
        await asyncio.wait({task})
    if not task.cancelled():
        task.exception()  # retrieved, so asyncio does not warn about it
