"""Scoring model predictions by execution, with the project's one CRUXEval rule and its sandbox.

CRUXEval-O (``cruxeval_passes``) is ``simulator.rewards.OutputPredictionReward`` (call items): an answer
passes when ``<code>\nassert <gold output> == <answer>`` holds (Python value equality) within 3 s, and
an answer containing the call ``f(<input>)`` never counts. Programs run in ``simulator.execution``
(the sandbox pool), never in this process.
"""

from __future__ import annotations

from simulator.execution import run as sandbox_run
from simulator.execution.program import Program
from simulator.prompts.parsing import answer_found, eval_answer
from simulator.rewards import OutputPredictionReward

__all__ = ["answer_found", "cruxeval_passes", "extract_answer", "run_check"]

TIMEOUT_S = 3.0
# The one reading of replies: ``simulator.prompts.parsing`` (re-exported for the tasks).
extract_answer = eval_answer


def cruxeval_passes(code: str, call_input: str, gold: str, answer: str, timeout_s: float = TIMEOUT_S) -> bool:
    """CRUXEval-O: does ``answer`` equal ``f(call_input)``'s gold output (by Python value)?"""
    reward = OutputPredictionReward(kind="call", timeout_s=timeout_s)
    completion = f"[ANSWER]\nassert f({call_input}) == {answer}\n[/ANSWER]"
    return reward([completion], output=[gold], code=[code], input=[call_input]) == [1.0]


def run_check(code: str, tests: list[str], timeout_s: float = TIMEOUT_S) -> bool:
    """True when ``code`` followed by the assert statements ``tests`` runs cleanly in the sandbox."""
    return sandbox_run(Program(code=code, tests=tuple(tests), timeout_s=timeout_s)).status == "ok"
