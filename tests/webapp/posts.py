"""What a browser posts for the app's forms, for the view tests."""

from __future__ import annotations

from typing import Any


def problem_post(tests: list[tuple[str, str, bool]], **fields: Any) -> dict[str, Any]:
    """A New problem post: ``tests`` is a list of (input, output, public); ``fields`` replace the
    defaults (a call problem "Double") or add to them (``add_test``, ``tests-1-DELETE``)."""
    data = {
        "title": "Double",
        "statement": "Return twice x.",
        "kind": "call",
        "entry_point": "double",
        "float_tolerance": "",
        "is_public": "on",
        "tests-TOTAL_FORMS": str(len(tests)),
        "tests-INITIAL_FORMS": "0",
        "tests-MIN_NUM_FORMS": "0",
        "tests-MAX_NUM_FORMS": "500",
    }
    for i, (given, expected, public) in enumerate(tests):
        data.update({f"tests-{i}-input": given, f"tests-{i}-output": expected})
        if public:
            data[f"tests-{i}-public"] = "on"
    data.update(fields)
    return data
