"""Streamed text is coalesced per sample: the first piece at once, then at most one event per interval,
and nothing lost or reordered at the end."""

from __future__ import annotations

from simulator.pipeline.job import DeltaBuffer


def test_the_first_piece_goes_at_once_then_pieces_wait_for_the_interval() -> None:
    emitted: list[tuple[int, str]] = []
    buffer = DeltaBuffer(lambda i, t: emitted.append((i, t)), interval=3600)
    buffer.add(0, "def ")
    buffer.add(0, "f(")
    buffer.add(1, "x")
    buffer.add(0, "):")
    assert emitted == [(0, "def "), (1, "x")]
    buffer.flush()
    assert emitted == [(0, "def "), (1, "x"), (0, "f():")]
    buffer.flush()
    assert len(emitted) == 3


def test_with_no_interval_every_piece_is_an_event() -> None:
    emitted: list[tuple[int, str]] = []
    buffer = DeltaBuffer(lambda i, t: emitted.append((i, t)), interval=0)
    for piece in ["a", "b", "c"]:
        buffer.add(2, piece)
    buffer.flush()
    assert emitted == [(2, "a"), (2, "b"), (2, "c")]
