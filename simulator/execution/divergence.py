"""Where two executions part ways: the first step at which two traces, or an NLEX text and a trace,
disagree. The web page shows it as "the simulation first diverged here".

``first_divergence(a, b)`` accepts:

- two ``Trace`` objects: steps are compared in order on event, function, line, the changed values, the
  stdout and the returned/raised value; ``Divergence.step`` is the index of the first differing step
  (or the length of the shorter trace when one is a prefix of the other);
- a ``CheckResult`` (from ``simulator.nlex.check``) or a list of claims, and a ``Trace``: the first
  false claim, with the trace step it was held against.
Nothing differs -> ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from simulator.execution.trace import Step, Trace

if TYPE_CHECKING:
    from simulator.nlex.check import CheckResult
    from simulator.nlex.claims import Claim

_FIELDS = ("event", "function", "line", "changed", "stdout", "value")


@dataclass
class Divergence:
    step: int | None  # index in the (second) trace; None when a claim could not be placed on a step
    field: str  # which part differs: a Step field, "length", or a claim kind
    expected: Any  # what the reference trace (``b``) shows
    found: Any  # what ``a`` (the other trace, or the claim) says
    claim: Claim | None = None


def first_divergence(a: Trace | CheckResult | list[Claim], b: Trace) -> Divergence | None:
    """The first disagreement between ``a`` and the reference trace ``b`` (see module docstring)."""
    if isinstance(a, Trace):
        return _between_traces(a, b)
    if isinstance(a, list):
        from simulator.nlex.check import check_claims  # nlex builds on execution, not the reverse

        a = check_claims(a, b)
    false = a.first_false
    if false is None:
        return None
    return Divergence(
        step=false.step,
        field=false.claim.kind,
        expected=false.actual,
        found=false.claim.value,
        claim=false.claim,
    )


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
