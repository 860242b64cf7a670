"""A scripted double of ``simulator.pipeline.run`` for the web app's tests: same signature, a realistic
event sequence (run_started, stages, streamed candidates and simulations, verdicts, selection, one
repair turn, optional real executions, run_finished), no model.

Knobs (environment variables, read at call time so a Celery worker subprocess sees them too):
- EXECSIM_DOUBLE_DELAY      seconds to sleep before each event (default 0)
- EXECSIM_DOUBLE_IGNORE_CANCEL  "1": keep going when cancelled (tests the host's grace period)
- EXECSIM_DOUBLE_FAIL       "1": raise an exception after the candidates (tests crash handling)
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from typing import Any

from simulator.pipeline.events import Event, Sequencer
from tests.simulator.pipeline.pipeline_doubles import double_verification

XSS = "<script>alert('x')</script>"


def _settings(settings: Any) -> dict[str, Any]:
    return dict(settings) if isinstance(settings, dict) else settings.to_dict()


async def scripted_pipeline(
    problem: Any,
    settings: Any,
    client: Any,
    *,
    run_id: str | None = None,
    executor: Any = None,
    cancel: Any = None,
) -> AsyncIterator[Event]:
    s = _settings(settings)
    k, turns = int(s.get("k", 2)), int(s.get("turns", 1))
    delay = float(os.environ.get("EXECSIM_DOUBLE_DELAY", "0"))
    ignore_cancel = os.environ.get("EXECSIM_DOUBLE_IGNORE_CANCEL") == "1"
    emit = Sequencer(run_id or "double")
    public = [t for t in problem.tests if t.public]
    entry = problem.entry_point or "solve"

    async def step(type_: str, **payload: Any) -> Event | None:
        if delay:
            await asyncio.sleep(delay)
        if cancel is not None and cancel.is_set() and not ignore_cancel:
            return None
        return emit(type_, **payload)

    plan: list[tuple[str, dict[str, Any]]] = [
        (
            "run_started",
            {
                "problem": problem.to_dict(),
                "settings": s,
                "provenance": {
                    "model": "double",
                    "weights_sha256": "0" * 64,
                    "prompts": {"solve": "v1", "simulate": "v1", "repair": "v1"},
                    "sampling": {"temperature": s.get("temperature")},
                    "seed": s.get("seed"),
                },
            },
        ),
        ("stage", {"stage": "solve", "state": "started"}),
    ]
    codes = [f"def {entry}(x):\n    return x + {c}\n" for c in range(k)]
    for c in range(k):
        text = f"Here is my answer {XSS}\n```python\n{codes[c]}```\n"
        plan += [
            ("candidate_delta", {"candidate": c, "text": text[:20]}),
            ("candidate_delta", {"candidate": c, "text": text[20:]}),
            (
                "candidate_done",
                {"candidate": c, "text": text, "code": codes[c], "parse_error": None, "tokens": 17},
            ),
        ]
    plan.append(("stage", {"stage": "solve", "state": "finished", "seconds": 0.5, "tokens": 17 * k}))
    plan.append(("stage", {"stage": "simulate", "state": "started"}))
    scores = {}
    for c in range(k):
        score = 0
        for t, test in enumerate(public):
            simulated = test.output if c == 0 else f"wrong {XSS}"
            sample = 0  # one simulation per test, as the pipeline runs it
            nlex = f"Line 1: x is {test.input}. {XSS} Line 2: returns {simulated}."
            plan += [
                ("simulation_delta", {"candidate": c, "test": t, "sample": sample, "text": nlex}),
                (
                    "simulation_done",
                    {
                        "candidate": c,
                        "test": t,
                        "sample": sample,
                        "text": nlex,
                        "predicted": simulated,
                        "parse_error": None,
                        "tokens": 9,
                    },
                ),
            ]
            match = simulated == test.output
            score += match
            plan.append(
                (
                    "verdict",
                    {
                        "candidate": c,
                        "test": t,
                        "expected": test.output,
                        "simulated": simulated,
                        "match": match,
                    },
                )
            )
        scores[str(c)] = score
    plan.append(("stage", {"stage": "simulate", "state": "finished", "seconds": 1.0, "tokens": 9 * k}))
    plan.append(
        (
            "selected",
            {
                "candidate": 0,
                "scores": scores,
                "tied": False,
                "seed": s.get("seed"),
                "reason": "candidate 0 matched the most public tests in simulation",
            },
        )
    )
    final_code = codes[0]
    for turn in range(1, turns + 1):
        repaired = final_code.replace("return x", "return (x)")
        plan += [
            ("repair_delta", {"turn": turn, "text": "Fixed: "}),
            (
                "repair_turn",
                {
                    "turn": turn,
                    "submitted": False,
                    "code": repaired,
                    "text": "Fixed: ...",
                    "feedback": [{"input": "1", "expected": "1", "simulated": "2"}],
                    "parse_error": None,
                },
            ),
        ]
        final_code = repaired
        for t, test in enumerate(public):  # the repaired program is simulated again, labelled with its turn
            plan += [
                ("simulation_delta", {"candidate": 0, "test": t, "turn": turn, "sample": 0, "text": "again"}),
                (
                    "simulation_done",
                    {
                        "candidate": 0,
                        "test": t,
                        "turn": turn,
                        "sample": 0,
                        "text": "again",
                        "predicted": test.output,
                        "parse_error": None,
                        "tokens": 3,
                    },
                ),
                (
                    "verdict",
                    {
                        "candidate": 0,
                        "test": t,
                        "turn": turn,
                        "expected": test.output,
                        "simulated": test.output,
                        "match": True,
                    },
                ),
            ]
    if s.get("real"):
        for t, test in enumerate(problem.tests):
            plan.append(
                (
                    "execution",
                    {
                        "candidate": 0,
                        "test": t,
                        "public": test.public,
                        "status": "ok",
                        "output": test.output,
                        "expected": test.output,
                        "passed": True,
                        "verification": double_verification({"claimed": "1", "actual": "2"}).to_dict()
                        if test.public
                        else None,
                    },
                )
            )
    plan.append(
        (
            "run_finished",
            {
                "candidate": 0,
                "code": final_code,
                "passed_public_simulated": True,
                "turns_used": turns,
                "totals": {"tokens": 26 * k, "seconds": 1.5},
            },
        )
    )

    for type_, payload in plan:
        if (
            os.environ.get("EXECSIM_DOUBLE_FAIL") == "1"
            and type_ == "stage"
            and payload["stage"] == "simulate"
        ):
            raise RuntimeError("scripted failure")
        event = await step(type_, **payload)
        if event is None:
            yield emit("run_cancelled", reason="cancelled by the user")
            return
        yield event


async def scripted_simulation(
    program: Any,
    settings: Any,
    client: Any,
    *,
    run_id: str | None = None,
    executor: Any = None,
    cancel: Any = None,
) -> AsyncIterator[Event]:
    """A double of ``simulator.pipeline.simulate_program``: one program, one input."""
    emit = Sequencer(run_id or "double")
    s = _settings(settings)
    shown = {"code": program.code, "call": program.call, "stdin": program.stdin}
    yield emit("run_started", program=shown, settings=s, provenance={"model": "double"})
    yield emit("stage", stage="simulate", state="started")
    nlex = f"Line 1: the call starts. {XSS}"
    yield emit("simulation_delta", candidate=0, test=0, turn=0, sample=0, text=nlex)
    yield emit(
        "simulation_done",
        candidate=0,
        test=0,
        turn=0,
        sample=0,
        text=nlex,
        predicted="3",
        parse_error=None,
        tokens=5,
    )
    yield emit("stage", stage="simulate", state="finished", seconds=0.1)
    yield emit(
        "execution",
        candidate=0,
        test=0,
        public=True,
        status="ok",
        output="4",
        expected="3",
        passed=False,
        predicted="3",
        verification=double_verification({"claimed": "2", "actual": "3"}).to_dict(),
    )
    yield emit(
        "run_finished",
        predicted="3",
        real_output="4",
        status="ok",
        match=False,
        verification=double_verification({"claimed": "2", "actual": "3"}).to_dict(),
        totals={"tokens": 5},
    )
