"""When does a predicted (or real) output count as the expected one, and majority votes over several
predictions.

- stdin problems: ``simulator.compare.outputs_match`` (tokens, floats within the problem's tolerance
  or 1e-5), the same judge the rewards and benchmarks use;
- call problems: Python literal equality (``ast.literal_eval`` both sides, compared with ``==``),
  falling back to whitespace-normalised text when either side is not a literal.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from simulator.compare import DEFAULT_TOLERANCE, NOT_LITERAL, literal, outputs_match, same_value
from simulator.problem import Kind, Problem


def matches(kind: Kind, expected: str, actual: str | None, tolerance: float | None = None) -> bool:
    """Whether ``actual`` counts as ``expected`` for a problem of this kind (None never matches)."""
    if actual is None:
        return False
    if kind == "stdin":
        return outputs_match(actual, expected, DEFAULT_TOLERANCE if tolerance is None else tolerance)
    left, right = literal(expected), literal(actual)
    if left is not NOT_LITERAL and right is not NOT_LITERAL:
        return same_value(left, right)  # Python equality, as CRUXEval's ``assert gold == answer``
    return _squash(expected) == _squash(actual)


def problem_matches(problem: Problem, expected: str, actual: str | None) -> bool:
    return matches(problem.kind, expected, actual, problem.float_tolerance)


def vote_key(kind: Kind, predicted: str) -> str:
    """A canonical form so that equal predictions are counted together."""
    if kind == "stdin":
        return " ".join(predicted.split())
    value = literal(predicted)
    return repr(value) if value is not NOT_LITERAL else _squash(predicted)


def majority(kind: Kind, predictions: Sequence[str | None]) -> tuple[str | None, list[dict[str, Any]]]:
    """The most common prediction (ties: the one seen first) and the tally, most votes first.
    Missing predictions (parse failures) do not vote."""
    first: dict[str, str] = {}
    counts: Counter[str] = Counter()
    for predicted in predictions:
        if predicted is None:
            continue
        key = vote_key(kind, predicted)
        first.setdefault(key, predicted)
        counts[key] += 1
    order = list(first)
    ranked = sorted(order, key=lambda key: (-counts[key], order.index(key)))
    tally = [{"predicted": first[key], "count": counts[key]} for key in ranked]
    return (first[ranked[0]] if ranked else None), tally


def _squash(text: str) -> str:
    return "".join(text.split())
