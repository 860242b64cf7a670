"""Exercises made through the ORM for the view tests: a traced program with a loop and a function
call, saved as the explorer saves it, and the exercise ExecSim proposes from it."""

from __future__ import annotations

from typing import Any

LOOP_AND_CALL = (
    "def square(x):\n    return x * x\n\n\n"
    "def total(xs):\n    s = 0\n    for x in xs:\n        s = s + square(x)\n    return s\n"
)
CALL = "total([1, 2, 3])"


def traced(owner: Any, code: str = LOOP_AND_CALL, call: str = CALL, **fields: Any) -> Any:
    from simulator.execution import Program
    from webapp.explorer.views import _save

    return _save(owner, Program(code=code, call=call), title=fields.pop("title", call), **fields)


def exercise_of(owner: Any, trace: Any = None, **fields: Any) -> Any:
    from simulator.exercises import propose
    from webapp.exercises.models import Exercise

    trace = trace or traced(owner)
    questions = [q.to_dict() for q in propose(trace.core_trace(), trace.program())]
    return Exercise.objects.create(owner=owner, trace=trace, title="Loops", questions=questions, **fields)
