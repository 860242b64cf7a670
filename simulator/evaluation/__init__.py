"""The evaluation harness behind ``execsim eval``: benchmark tasks, metrics with intervals, reports.

Tasks (``TASKS``) map a name to its module, which has ``load(path)`` and ``async evaluate(items, ctx)``.
Implemented: ``cruxeval-o``, ``mbpp``, ``codejam``. Named but not yet implemented (the CLI says so,
exit 2): ``self-rlef``, ``whitebox``. Formats, schema and intervals: docs/evaluation.md.
"""

from __future__ import annotations

TASKS = {
    "cruxeval-o": "simulator.evaluation.cruxeval",
    "mbpp": "simulator.evaluation.mbpp",
    "codejam": "simulator.evaluation.codejam",
    "self-rlef": None,
    "whitebox": None,
}
