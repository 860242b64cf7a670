"""When does a predicted (or real) output count as the expected one.

- stdin problems: ``simulator.compare.outputs_match`` (tokens, floats within the problem's tolerance
  or 1e-5), the same judge the rewards and benchmarks use;
- call problems: Python literal equality (``ast.literal_eval`` both sides, compared with ``==``),
  falling back to whitespace-normalised text when either side is not a literal.
"""

from __future__ import annotations

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


def _squash(text: str) -> str:
    return "".join(text.split())
