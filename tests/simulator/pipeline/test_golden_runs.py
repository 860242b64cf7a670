"""Golden event streams: whole runs against the scripted test server (a test double) and the executor
double, with fixed seeds, compared with golden/*.json. A change to what a run emits shows up as a diff
of those files; regenerate them on purpose with ``EXECSIM_REGOLD=1 pytest`` on this file and read the
diff.

Streamed text is coalesced in time (``DeltaBuffer``), so each sample's deltas are compared as their
joined text, in the place of the first; timings and the code version are left out."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from simulator.llm.testing import PipelineScript
from simulator.pipeline import Event
from tests.simulator.pipeline.pipeline_doubles import (
    RIGHT,
    WRONG,
    ExecutorDouble,
    fence,
    perfect_simulator,
    run_script,
)

GOLDEN = Path(__file__).parent / "golden"

CALL_PROBLEM = {
    "title": "Sum of evens",
    "statement": "Return the sum of the even numbers in xs.",
    "kind": "call",
    "entry_point": "sum_evens",
    "tests": [
        {"input": "[1, 2, 4]", "output": "6"},
        {"input": "[3]", "output": "0"},
        {"input": "[2, 2]", "output": "4", "public": False},
    ],
}
SUM_RIGHT = "def sum_evens(xs):\n    return sum(x for x in xs if x % 2 == 0)\n"
SUM_WRONG = "def sum_evens(xs):\n    return sum(xs)\n"
SUM_KNOWN = "def total(xs):\n    return 0\n"  # never defines sum_evens: known to fail


def call_simulator(code: str, call: str) -> str:
    """A narrated simulation that predicts the true value of ``call`` (a model that never errs)."""
    namespace: dict[str, Any] = {}
    exec(compile(code, "<golden>", "exec"), namespace)
    value = eval(call, namespace)
    thought = "[THOUGHT] Line 2: it adds the even numbers. [/THOUGHT]"
    return f"{thought}\n[ANSWER] assert {call} == {value!r} [/ANSWER]"


def scenarios() -> dict[str, list[Event]]:
    wrong_first = PipelineScript(solve=[WRONG, RIGHT, WRONG, RIGHT], simulate=perfect_simulator)
    guided = PipelineScript(
        solve=WRONG, simulate=perfect_simulator, repair=[[WRONG, "no code", RIGHT, RIGHT]]
    )
    known = PipelineScript(
        solve=[fence(SUM_KNOWN), fence(SUM_WRONG), fence(SUM_RIGHT), fence(SUM_RIGHT)],
        simulate=call_simulator,
    )
    return {
        "answer-only": run_script(wrong_first, k=4, seed=7, narrate=False, real=True),
        "narrated-guided-repair": run_script(
            guided, k=1, turns=2, seed=3, narrate=True, real=True, executor=ExecutorDouble()
        ),
        "call-known-agreement": run_script(known, CALL_PROBLEM, k=4, seed=5, narrate=True),
        "oracle": run_script(wrong_first, k=4, seed=11, oracle=True, narrate=False),
    }


def canonical(events: list[Event]) -> list[dict[str, Any]]:
    """The events as JSON, each sample's deltas joined into one, timings and the code version out."""
    out: list[dict[str, Any]] = []
    joined: dict[tuple[Any, ...], dict[str, Any]] = {}
    for event in events:
        payload = json.loads(json.dumps(event.payload))
        if event.type.endswith("_delta"):
            key = (event.type, *(payload.get(k) for k in ("candidate", "test", "turn", "sample")))
            if key in joined:
                joined[key]["text"] += payload["text"]
                continue
            joined[key] = payload
        payload.pop("seconds", None)
        if event.type == "run_started":
            payload["provenance"].pop("code_version")
        if event.type == "run_finished":
            payload["totals"].pop("seconds")
        out.append({"type": event.type, **payload})
    return out


def test_runs_emit_their_golden_event_streams() -> None:
    runs = {name: canonical(events) for name, events in scenarios().items()}
    if os.environ.get("EXECSIM_REGOLD"):
        GOLDEN.mkdir(exist_ok=True)
        for name, events in runs.items():
            (GOLDEN / f"{name}.json").write_text(json.dumps(events, indent=1, sort_keys=True) + "\n")
    for name, events in runs.items():
        golden = json.loads((GOLDEN / f"{name}.json").read_text())
        assert events == golden, f"{name}: the event stream changed (see the module docstring)"
