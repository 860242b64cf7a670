"""Where two executions part ways: the first step at which two traces disagree.

``first_divergence(a, b)`` compares steps in order on event, function, line, the changed values, the
stdout and the returned/raised value; ``Divergence.step`` is the index of the first differing step (or
the length of the shorter trace when one is a prefix of the other). Nothing differs -> ``None``.

Where an NLEX *text* first disagrees with a trace is the verifier's (``simulator.nlex.verify``):
execution compares traces only and knows nothing of texts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simulator.execution.trace import Step, Trace

_FIELDS = ("event", "function", "line", "changed", "stdout", "value")


@dataclass
class Divergence:
    step: int  # index in the second trace
    field: str  # which part differs: a Step field, or "length"
    expected: Any  # what the reference trace (``b``) shows
    found: Any  # what ``a`` shows


def first_divergence(a: Trace, b: Trace) -> Divergence | None:
    """The first disagreement between trace ``a`` and the reference trace ``b``."""
    return _between_traces(a, b)


def _between_traces(a: Trace, b: Trace) -> Divergence | None:
    for left, right in zip(a.steps, b.steps, strict=False):
        for name in _FIELDS:
            found, expected = _field(left, name), _field(right, name)
            if found != expected:
                return Divergence(step=right.index, field=name, expected=expected, found=found)
    if len(a.steps) != len(b.steps):
        return Divergence(
            step=min(len(a.steps), len(b.steps)), field="length", expected=len(b.steps), found=len(a.steps)
        )
    return None


def _field(step: Step, name: str) -> Any:
    value = getattr(step, name)
    if name == "changed":
        return {k: (v.repr, v.type) for k, v in value.items()}
    if name == "value" and value is not None:
        return (value.repr, value.type)
    return value
