"""Scoring model predictions by execution, with the project's one CRUXEval rule and its sandbox.

CRUXEval-O (``cruxeval_passes``) is ``simulator.rewards.OutputPredictionReward`` (call items): an answer
passes when ``<code>\nassert <gold output> == <answer>`` holds (Python value equality) within 3 s, and
an answer containing the call ``f(<input>)`` never counts. ``prediction_passes`` applies the same rule
to any expression (an MBPP assert's left side). Programs run in ``simulator.execution`` (the sandbox
pool), never in this process.
"""

from __future__ import annotations

import re

from simulator.execution import run as sandbox_run
from simulator.execution.program import Program
from simulator.rewards import OutputPredictionReward

TIMEOUT_S = 3.0
_ANSWER = re.compile(r"\[ANSWER\](.*?)(?:\[/ANSWER\]|$)", re.DOTALL)


def extract_answer(completion: str) -> str:
    """The predicted output in a completion: inside ``[ANSWER] ... [/ANSWER]`` (the last such block,
    or an unterminated one cut by a stop string), the text after the first ``==`` if there is one, up
    to the end of that line.
    Without the tags, the text after ``==`` on the last ``assert`` line, else the last non-empty line."""
    blocks = _ANSWER.findall(completion)
    if blocks:
        answer = blocks[-1].strip()
    else:
        lines = [line.strip() for line in completion.strip().splitlines() if line.strip()]
        asserts = [line for line in lines if line.startswith("assert") and "==" in line]
        answer = asserts[-1] if asserts else (lines[-1] if lines else "")
    if "==" in answer:
        answer = answer.split("==", 1)[1]
    lines = answer.strip().splitlines()  # an assertion is one line; what follows is not the answer
    return lines[0].strip().strip("`").strip() if lines else ""


def answer_found(completion: str) -> bool:
    """Whether a completion states an answer at all: an ``[ANSWER]`` block or an ``assert ... ==``
    line with a value after the ``==`` other than the question's ``??`` placeholder. False is a parse
    failure (``extract_answer`` would fall back to the last line of free text)."""
    if _ANSWER.findall(completion):
        answer = extract_answer(completion)
    else:
        lines = [line.strip() for line in completion.splitlines()]
        asserts = [line for line in lines if line.startswith("assert") and "==" in line]
        answer = asserts[-1].split("==", 1)[1].strip() if asserts else ""
    return bool(answer) and answer.replace(" ", "").strip("?") != ""


def cruxeval_passes(code: str, call_input: str, gold: str, answer: str, timeout_s: float = TIMEOUT_S) -> bool:
    """CRUXEval-O: does ``answer`` equal ``f(call_input)``'s gold output (by Python value)?"""
    reward = OutputPredictionReward(kind="call", timeout_s=timeout_s)
    completion = f"[ANSWER]\nassert f({call_input}) == {answer}\n[/ANSWER]"
    return reward([completion], output=[gold], code=[code], input=[call_input]) == [1.0]


def prediction_passes(code: str, call: str, gold: str, answer: str, timeout_s: float = TIMEOUT_S) -> bool:
    """The same rule for any expression ``call`` (e.g. an MBPP assert's left side)."""
    if not answer.strip() or call in answer:
        return False
    return run_check(code, [f"assert {gold} == {answer}"], timeout_s)


def run_check(code: str, tests: list[str], timeout_s: float = TIMEOUT_S) -> bool:
    """True when ``code`` followed by the assert statements ``tests`` runs cleanly in the sandbox."""
    return sandbox_run(Program(code=code, tests=tuple(tests), timeout_s=timeout_s)).status == "ok"
