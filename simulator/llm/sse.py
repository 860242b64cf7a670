"""Server-sent events as OpenAI-compatible servers stream them: ``data: <json>`` lines, blank-line
separated, ending with ``data: [DONE]``.

Kept apart from the client so the parsing can be tested on raw lines.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from simulator.llm.errors import MalformedReply

DONE = object()
"""Returned for the ``[DONE]`` sentinel."""


def parse_data(lines: list[str]) -> Any:
    """Decode the ``data:`` lines of one event: a JSON object, or ``DONE``; None for comments/empty."""
    data = "\n".join(line[5:].removeprefix(" ") for line in lines if line.startswith("data:"))
    if not data:
        return None
    if data.strip() == "[DONE]":
        return DONE
    try:
        obj = json.loads(data)
    except json.JSONDecodeError as exc:
        raise MalformedReply(
            f"the model server sent a stream event that is not JSON: {data[:200]!r}"
        ) from exc
    if not isinstance(obj, dict):
        raise MalformedReply(f"the model server sent a stream event that is not an object: {data[:200]!r}")
    return obj


async def iter_events(lines: AsyncIterator[str]) -> AsyncIterator[Any]:
    """Group lines into events and decode each (JSON objects, then ``DONE``)."""
    pending: list[str] = []
    async for raw in lines:
        line = raw.rstrip("\r\n")
        if line:
            pending.append(line)
            continue
        event = parse_data(pending)
        pending = []
        if event is not None:
            yield event
    event = parse_data(pending)
    if event is not None:
        yield event
