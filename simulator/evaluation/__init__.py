"""The evaluation harness behind ``execsim eval``: benchmark tasks, metrics with intervals, reports.

Tasks (``TASKS``) map a name to its module, which has ``load(path)`` and ``async evaluate(items, ctx)``:
``cruxeval-o``, ``mbpp``, ``codejam``, ``self-rlef`` (fix/break of simulated-feedback repair, through
the pipeline) and ``whitebox`` (ExecVerify questions about traced CRUXEval programs). Every request
goes through ``simulator.llm.client.ChatClient`` behind a resumable cache (``requests``). Formats,
schema and intervals: docs/evaluation.md.
"""

from __future__ import annotations

TASKS: dict[str, str | None] = {
    "cruxeval-o": "simulator.evaluation.cruxeval",
    "mbpp": "simulator.evaluation.mbpp",
    "codejam": "simulator.evaluation.codejam",
    "self-rlef": "simulator.evaluation.self_rlef",
    "whitebox": "simulator.evaluation.whitebox",
}
