"""simulator/nlex/trace_index.py: the lookups a claim's check takes. A value's key stands for it
exactly as ``same_value(strict_bool=True)`` compares, and a name's history finds the first value
equal to a claim from a position, as comparing each value in turn would."""

from __future__ import annotations

from itertools import product

from simulator.compare import same_value
from simulator.execution.tracer import trace_in_process
from simulator.nlex.trace_index import TraceIndex, Wanted, value_key

SAMPLES = [
    0, 1, 1.0, 2, -2, True, False, None, "1", "a", "", [], (), [1, 2], (1, 2), [2, 1], [True], [1],
    {1, 2}, frozenset({1, 2}), {2: 1}, {1: 2}, {1: [2]}, {1: (2,)}, [[1], (2,)], [[1], [2]],
]  # fmt: skip


def test_two_keys_are_equal_exactly_when_the_values_compare_equal() -> None:
    for a, b in product(SAMPLES, repeat=2):
        assert (value_key(a) == value_key(b)) == same_value(a, b, strict_bool=True), (a, b)


LOOP = "def f(n):\n    x = -1\n    for i in range(n):\n        x = i % 3\n    return x\n"


def _first_by_comparing(shown: list[str], claimed: str, start: int) -> int | None:
    wanted = Wanted(claimed)
    for k in range(start, len(shown)):
        text = shown[k]
        if wanted.literal and same_value(wanted.value, Wanted(text).value, strict_bool=True):
            return k
        if wanted.normal == Wanted(text).normal:
            return k
    return None


def test_the_first_equal_value_from_a_position_is_the_one_comparing_each_finds() -> None:
    trace = trace_in_process(LOOP, "f(7)").trace
    index = TraceIndex(trace)
    frame = trace.steps[0].frame
    history = index.values(frame, "x")
    shown = [value.repr for value in history.shown]
    assert shown == ["-1", "0", "1", "2", "0", "1", "2", "0"]
    for claimed, start in product(["0", "2", "2.0", "True", " 1 ", "-1", "7", "x"], range(len(shown) + 1)):
        assert history.first_match(Wanted(claimed), start) == _first_by_comparing(shown, claimed, start), (
            claimed,
            start,
        )


def test_a_value_the_tracer_cut_short_agrees_with_a_claim_that_starts_with_what_it_kept() -> None:
    trace = trace_in_process("def f():\n    s = 'ab' * 50\n    return s\n", "f()", max_repr=20).trace
    index = TraceIndex(trace)
    history = index.values(trace.steps[0].frame, "s")
    assert history.shown[0].truncated
    assert history.first_match(Wanted(repr("ab" * 50)), 0) == 0
    assert history.first_match(Wanted(repr("ba" * 50)), 0) is None
