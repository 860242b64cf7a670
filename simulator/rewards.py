"""Rewards with TRL's signature, ``reward(completions, **kwargs) -> list[float | None]``.

``completions`` are strings or chat message lists (``[{"role": "assistant", "content": ...}]``); the
dataset's other columns arrive as keyword lists, one value per completion. ``None`` marks an item the
reward does not apply to (TRL then ignores it for that reward).

- ``OutputPredictionReward``: Self-Exec's output prediction, +1 / -1 (arXiv 2604.03253; CRUXEval for
  call-style items).
- ``WhiteBoxReward``: ExecVerify's gated white-box reward in [0, 2] (arXiv 2603.11226).
- ``UnitTestReward``: the fraction of a generated program's tests that pass, in [0, 1].

Each is a small class (picklable, unlike a closure) whose only state is its settings. Whatever runs
model text goes through the sandbox, ``simulator.execution.run_many``; a test may pass another
``executor`` of its shape (``simulator.execution.RunPrograms``). Comparisons of two Python literals are
done here with ``ast.literal_eval``, which evaluates nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from simulator.compare import DEFAULT_TOLERANCE, NOT_LITERAL, literal, outputs_match, same_value
from simulator.execution import RunPrograms, run_many
from simulator.execution.program import Program
from simulator.prompts import simulate
from simulator.prompts.parsing import extract_code as parse_code
from simulator.prompts.parsing import final_text_start, parse_answer_block, predicted_output
from simulator.questions import QuestionSet, score_answers
from simulator.source import parse_python

WHITE_BOX_ALPHA = 0.5
CRUXEVAL_TIMEOUT_S = 3.0
WHITE_BOX_TIMEOUT_S = 0.5  # ExecVerify's check of the assertion


# --- shared pieces ---------------------------------------------------------------------------------


def completion_text(completion: Any) -> str:
    """The text of a completion: the string itself, or the last assistant message's content.

    >>> completion_text("plain")
    'plain'
    >>> completion_text([{"role": "assistant", "content": "chat"}])
    'chat'
    >>> completion_text(None)
    ''
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        for message in reversed(completion):
            if isinstance(message, dict) and message.get("role", "assistant") == "assistant":
                content = message.get("content")
                return content if isinstance(content, str) else ""
    return ""


def final_text(text: str) -> str | None:
    """What follows the reasoning: the text after the last ``</think>``; None when a ``<think>`` was
    opened and never closed (the model ran out of tokens while thinking)."""
    begin = final_text_start(text)
    return None if begin is None else text[begin:]


def _as_returned(text: str, prefill: str | None) -> str:
    """A completion of a prompt whose answer was begun (``prefill``, the app's answer-at-once request)
    as the app reads it: the prefill, then the completion up to the request's stop string, where
    vLLM would have cut it (GRPO's generation has no stop strings)."""
    if not prefill:
        return text
    for stop in (*simulate.CALL_STOP, *simulate.STDIN_STOP):
        text = text.split(stop, 1)[0]
    return prefill + text


def _columns(kwargs: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """Per-item rows from TRL's column lists (a scalar applies to every item)."""
    rows: list[dict[str, Any]] = [{} for _ in range(count)]
    for name, values in kwargs.items():
        if isinstance(values, list | tuple) and len(values) == count:
            for row, value in zip(rows, values, strict=True):
                row[name] = value
        else:
            for row in rows:
                row[name] = values
    return rows


# --- output prediction (Self-Exec) -----------------------------------------------------------------


def extract_predicted_output(text: str) -> str | None:
    """The predicted output: the last ``<output>...</output>`` after ``</think>``, or the value after
    ``==`` of a CRUXEval ``[ANSWER] assert f(..) == X [/ANSWER]`` (closing tags optional: vLLM cuts
    the stop string); None when there is none (``simulator.prompts.parsing.predicted_output``).

    >>> extract_predicted_output("<think>maybe <output>1</output></think>so <output>\\n2\\n</output>")
    '2\\n'
    >>> extract_predicted_output("[ANSWER] assert f([1, 2]) == [2, 1]")
    '[2, 1]'
    >>> extract_predicted_output("<think>never closed <output>1</output>") is None
    True
    """
    return predicted_output(text)


@dataclass(frozen=True)
class OutputPredictionReward:
    """+1 when the predicted output is right, -1 otherwise (no answer, wrong answer, cheating).

    Columns: ``output`` (the expected stdout, or for call items the gold literal), ``kind``
    ("stdin" or "call"; default ``self.kind``), ``float_tolerance`` (stdin; default 1e-5), for
    call items ``code``, ``input`` (the argument source) and ``entry_point`` (default "f"), and
    ``prefill`` (the start of the answer the prompt gave, read before the completion). Items
    without ``output`` get None.

    stdin items: the prediction is compared with the expected stdout token by token, floats within
    the tolerance (``simulator.compare.outputs_match``). call items are scored as CRUXEval does: pass
    when ``<code>\\nassert <gold> == <answer>`` runs cleanly (the sandbox; two literals are compared
    directly, which is the same test); an answer containing ``f(<input>)`` never counts.

    >>> reward = OutputPredictionReward()
    >>> reward(["<output>3 0.3333333</output>", "<output>3 0.34</output>", "no tag"],
    ...        output=["3 0.333333333\\n"] * 3)
    [1.0, -1.0, -1.0]
    >>> reward(["[ANSWER] assert f(2) == [2,2] [/ANSWER]",  # equal as a value
    ...         "[ANSWER] assert f(2) == f(2) [/ANSWER]"],  # the call itself: never counts
    ...        kind="call", code=["def f(x):\\n    return [x, x]"] * 2, input=["2"] * 2,
    ...        output=["[2, 2]"] * 2)
    [1.0, -1.0]
    """

    kind: str = "stdin"
    default_entry_point: str = "f"
    executor: RunPrograms | None = None
    timeout_s: float = CRUXEVAL_TIMEOUT_S

    @property
    def __name__(self) -> str:  # TRL logs rewards by name
        return "output_prediction"

    def __call__(self, completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
        rows = _columns(kwargs, len(completions))
        rewards: list[float | None] = [None] * len(completions)
        to_run: list[tuple[int, Program]] = []
        for i, (completion, row) in enumerate(zip(completions, rows, strict=True)):
            expected = row.get("output")
            if not isinstance(expected, str):
                continue
            predicted = extract_predicted_output(
                _as_returned(completion_text(completion), row.get("prefill"))
            )
            if predicted is None:
                rewards[i] = -1.0
                continue
            if (row.get("kind") or self.kind) != "call":
                tolerance = row.get("float_tolerance")
                tolerance = DEFAULT_TOLERANCE if tolerance is None else float(tolerance)
                rewards[i] = 1.0 if outputs_match(predicted, expected, tolerance) else -1.0
                continue
            verdict, program = self._judge_call(predicted.strip(), expected, row)
            if program is None:
                rewards[i] = verdict
            else:
                to_run.append((i, program))
        self._run(to_run, rewards)
        return rewards

    def _judge_call(self, answer: str, gold: str, row: dict[str, Any]) -> tuple[float, Program | None]:
        entry = row.get("entry_point") or self.default_entry_point
        args = row.get("input")
        code = row.get("code")
        if not answer or not isinstance(code, str) or not isinstance(args, str):
            return -1.0, None
        call = f"{entry}({args})"
        if call in answer or _squash(call) in _squash(answer):
            return -1.0, None  # CRUXEval's anti-cheat: the answer may not be the call itself
        gold_value, value = literal(gold), literal(answer)
        if gold_value is not NOT_LITERAL and value is not NOT_LITERAL:
            return (1.0 if same_value(gold_value, value) else -1.0), None
        test = f"assert {gold} == {answer}"
        return -1.0, Program(code=code, tests=(test,), timeout_s=self.timeout_s)

    def _run(self, to_run: list[tuple[int, Program]], rewards: list[float | None]) -> None:
        if not to_run:
            return
        results = (self.executor or run_many)([program for _, program in to_run])
        for (i, _), result in zip(to_run, results, strict=True):
            rewards[i] = 1.0 if result.status == "ok" else -1.0


def _squash(text: str) -> str:
    return "".join(text.split())


# --- ExecVerify's gated white-box reward -----------------------------------------------------------


@dataclass(frozen=True)
class WhiteBoxReward:
    """ExecVerify's reward: 0 unless the filled assertion holds; then ``2((1-a) + a * accuracy)``.

    Columns: ``task`` ("io", the default, or "oi"), ``code``, ``entry_point``, ``input`` (argument
    source), ``output`` (the gold return value as a literal) and, for io items, ``questions`` (a
    ``QuestionSet``, its ``to_dict()``, or None for no questions). Items without ``code`` get None.

    io: the first ``<answer>`` line must start with ``assert`` and contain the arguments, and must hold
    when run after the code (sandboxed; ``assert f(<args>) == <literal>`` is checked against the gold
    literal directly, the same test). Then: no questions -> 2.0; a number of answer lines other than
    the number of questions -> 1.0; else ``2 * ((1 - alpha) + alpha * accuracy)``.

    oi: 2.0 if the predicted input gives the output, else 0. The input is taken from the answer's
    ``assert f(<input>) == ...`` (inside a fenced block or not) and checked as
    ``assert f(<input>) == <gold output>`` with the task's own code (ExecVerify runs the model's whole
    test case, which a model could rewrite to pass anything).

    >>> from simulator.questions import Question
    >>> qs = QuestionSet("def f(x):\\n    y = x + 1\\n    return y", "f", "1",
    ...                  (Question("state", 2, 1, "    y = x + 1", ("2; int",), "y"),))
    >>> reward = WhiteBoxReward()
    >>> row = dict(code=[qs.code] * 4, entry_point=["f"] * 4, input=["1"] * 4, output=["2"] * 4,
    ...            questions=[qs.to_dict()] * 4)
    >>> reward(["<answer>\\nassert f(1) == 2\\n2; int\\n</answer>",  # all right: 2.0
    ...         "<answer>\\nassert f(1) == 2\\n3; int\\n</answer>",  # assertion only: 2(0.5 + 0)
    ...         "<answer>\\nassert f(1) == 2\\n</answer>",  # missing answer line: 1.0
    ...         "<answer>\\nassert f(1) == 3\\n2; int\\n</answer>"],  # wrong assertion: gated to 0
    ...        **row)
    [2.0, 1.0, 1.0, 0.0]
    """

    alpha: float = WHITE_BOX_ALPHA
    default_entry_point: str = "f"
    executor: RunPrograms | None = None
    timeout_s: float = WHITE_BOX_TIMEOUT_S

    @property
    def __name__(self) -> str:
        return "white_box"

    def __call__(self, completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
        rows = _columns(kwargs, len(completions))
        rewards: list[float | None] = [None] * len(completions)
        # for each item either a final reward, or a program whose success decides the pass/fail gate
        pending: list[tuple[int, Program, float]] = []
        for i, (completion, row) in enumerate(zip(completions, rows, strict=True)):
            code = row.get("code")
            if not isinstance(code, str):
                continue
            text = completion_text(completion)
            if row.get("task", "io") == "oi":
                outcome = self._input_prediction(text, code, row)
            else:
                outcome = self._io_mixed(text, code, row)
            if isinstance(outcome, float):
                rewards[i] = outcome
            else:
                pending.append((i, *outcome))
        if pending:
            results = (self.executor or run_many)([program for _, program, _ in pending])
            for (i, _, on_pass), result in zip(pending, results, strict=True):
                rewards[i] = on_pass if result.status == "ok" else 0.0
        return rewards

    def _io_mixed(self, text: str, code: str, row: dict[str, Any]) -> float | tuple[Program, float]:
        block = parse_answer_block(text)
        args = row.get("input")
        if not block.ok or not isinstance(args, str):
            return 0.0
        assertion = block.assertion
        if not assertion.startswith("assert") or args not in assertion:
            return 0.0
        on_pass = self._question_reward(row.get("questions"), block)
        entry = row.get("entry_point") or self.default_entry_point
        known = _assertion_holds(assertion, f"{entry}({args})", row.get("output"))
        if known is not None:
            return on_pass if known else 0.0
        return Program(code=code, tests=(assertion,), timeout_s=self.timeout_s), on_pass

    def _question_reward(self, questions: Any, block: Any) -> float:
        qset = _question_set(questions)
        if qset is None or not qset.questions:
            return 2.0
        score = score_answers(qset, block)
        if not score.line_count_ok:
            return 1.0
        return 2.0 * ((1.0 - self.alpha) * 1.0 + self.alpha * score.accuracy)

    def _input_prediction(self, text: str, code: str, row: dict[str, Any]) -> float | tuple[Program, float]:
        gold = row.get("output")
        entry = row.get("entry_point") or self.default_entry_point
        final = final_text(text)
        if final is None or not isinstance(gold, str):
            return 0.0
        if "<answer>" in final:
            final = final.rsplit("<answer>", 1)[1].split("</answer>", 1)[0]
        source = parse_code(final).code or final
        args = _predicted_arguments(source, entry)
        if args is None:
            return 0.0
        test = f"assert {entry}({args}) == {gold}"
        return Program(code=code, tests=(test,), timeout_s=self.timeout_s), 2.0


def _question_set(value: Any) -> QuestionSet | None:
    if isinstance(value, QuestionSet):
        return value
    if isinstance(value, dict) and "questions" in value:
        try:
            return QuestionSet.from_dict(value)
        except (KeyError, TypeError):
            return None
    return None


def _assertion_holds(assertion: str, call: str, gold: Any) -> bool | None:
    """Decide ``assert <call> == <literal>`` against the gold literal without running anything; None
    when the assertion has another shape (then the sandbox decides)."""
    if not isinstance(gold, str):
        return None
    try:
        node = parse_python(assertion).body[0]
    except (SyntaxError, IndexError, ValueError, RecursionError, MemoryError):
        return None
    if not (isinstance(node, ast.Assert) and node.msg is None and isinstance(node.test, ast.Compare)):
        return None
    test = node.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return None
    left = ast.unparse(test.left)
    try:
        wanted = ast.unparse(parse_python(call, mode="eval").body)
    except SyntaxError:
        return None
    gold_value = literal(gold)
    value = literal(ast.unparse(test.comparators[0]))
    if left != wanted or gold_value is NOT_LITERAL or value is NOT_LITERAL:
        return None
    return same_value(value, gold_value)


def _predicted_arguments(source: str, entry: str) -> str | None:
    """The argument source of the first ``assert <entry>(...) == ...`` in ``source``."""
    for line in source.split("\n"):
        line = line.strip()
        if not line.startswith("assert"):
            continue
        try:
            node = parse_python(line).body[0]
        except (SyntaxError, IndexError, ValueError, RecursionError, MemoryError):
            continue
        test = node.test if isinstance(node, ast.Assert) else None
        if isinstance(test, ast.Compare):
            call = test.left
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == entry:
                parts = [ast.unparse(a) for a in call.args]
                parts += [ast.unparse(k) for k in call.keywords]
                return ", ".join(parts)
    return None


# --- unit tests (code generation) ------------------------------------------------------------------


def extract_code(text: str) -> str | None:
    """The program in a completion, read as the app reads a candidate
    (``simulator.prompts.parsing.extract_code``: the first Python block after ``</think>``, inside
    ``<answer>`` when there is one); None when there is none.

    >>> extract_code("Here:\\n```python\\ndef f():\\n    return 1\\n```\\n")
    'def f():\\n    return 1\\n'
    >>> extract_code("def f(): return 1") is None
    True
    """
    return parse_code(text).code


@dataclass(frozen=True)
class UnitTestReward:
    """The fraction of tests the generated program passes, in [0, 1] (0 without a fenced code block).

    Columns: ``tests``, either assert statements (``["assert f(1) == 2", ...]``, each run on its own
    after the code, with ``test_imports`` prepended when given) or stdin/stdout pairs
    (``[{"input": ..., "output": ...}]``, stdout judged by ``outputs_match`` with the item's
    ``float_tolerance``). Items without ``tests`` get None.
    """

    executor: RunPrograms | None = None
    timeout_s: float = 3.0

    @property
    def __name__(self) -> str:
        return "unit_tests"

    def __call__(self, completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
        rows = _columns(kwargs, len(completions))
        rewards: list[float | None] = [None] * len(completions)
        jobs: list[tuple[int, Program, str | None, float]] = []
        counts: dict[int, int] = {}
        for i, (completion, row) in enumerate(zip(completions, rows, strict=True)):
            tests = row.get("tests")
            if not isinstance(tests, list | tuple) or not tests:
                continue
            code = extract_code(completion_text(completion))
            if code is None:
                rewards[i] = 0.0
                continue
            imports = row.get("test_imports") or []
            prefix = "\n".join(imports) + "\n" if isinstance(imports, list | tuple) and imports else ""
            tolerance = row.get("float_tolerance")
            tolerance = DEFAULT_TOLERANCE if tolerance is None else float(tolerance)
            counts[i] = len(tests)
            for test in tests:
                if isinstance(test, dict):
                    program = Program(code=code, stdin=str(test.get("input", "")), timeout_s=self.timeout_s)
                    jobs.append((i, program, str(test.get("output", "")), tolerance))
                else:
                    program = Program(code=prefix + code, tests=(str(test),), timeout_s=self.timeout_s)
                    jobs.append((i, program, None, tolerance))
        if jobs:
            results = (self.executor or run_many)([program for _, program, _, _ in jobs])
            passed = dict.fromkeys(counts, 0)
            for (i, _, expected, tolerance), result in zip(jobs, results, strict=True):
                if result.status != "ok":
                    continue
                if expected is None or outputs_match(result.stdout, expected, tolerance):
                    passed[i] += 1
            for i, total in counts.items():
                rewards[i] = passed[i] / total
        return rewards
