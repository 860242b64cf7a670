"""SSE framing as OpenAI-compatible servers stream it."""

from __future__ import annotations

import asyncio

import pytest

from simulator.llm.errors import MalformedReply
from simulator.llm.sse import DONE, iter_events, parse_data


def events_of(lines: list[str]) -> list[object]:
    async def source():
        for line in lines:
            yield line

    async def main():
        return [e async for e in iter_events(source())]

    return asyncio.run(main())


def test_it_groups_data_lines_into_events_and_ends_with_done() -> None:
    lines = ['data: {"a": 1}', "", ": a comment", "", 'data: {"b":', "data: 2}", "", "data: [DONE]", ""]
    assert events_of(lines) == [{"a": 1}, {"b": 2}, DONE]


def test_a_last_event_without_a_blank_line_is_kept() -> None:
    assert events_of(['data: {"a": 1}']) == [{"a": 1}]


def test_non_json_data_is_a_malformed_reply() -> None:
    with pytest.raises(MalformedReply, match="not JSON"):
        parse_data(["data: <html>"])
    with pytest.raises(MalformedReply, match="not an object"):
        parse_data(["data: [1, 2]"])
