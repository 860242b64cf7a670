"""Rewards: known cases (TRL style, one comment per item), the TRL calling conventions, pickling."""

from __future__ import annotations

import contextlib
import doctest
import io
import json
import pickle
import sys
from pathlib import Path

import pytest

import simulator.compare as compare_module
import simulator.execution as execution
import simulator.rewards as rewards_module
from simulator.execution.program import Program
from simulator.execution.result import ExecutionResult
from simulator.execution.tracer import trace_in_process
from simulator.questions import Question, QuestionSet, select_questions
from simulator.rewards import (
    OutputPredictionReward,
    UnitTestReward,
    WhiteBoxReward,
    completion_text,
    extract_code,
    extract_predicted_output,
)

BENCHMARKS = Path(__file__).resolve().parents[2].parent / "shared" / "benchmarks"


class InProcessExecutorDouble:
    """Test double for ``simulator.execution.run_many``: runs the (trusted, test-written) programs in
    this process and records them, so tests can check what a reward would send to the sandbox."""

    def __init__(self) -> None:
        self.programs: list[Program] = []

    def __call__(self, programs: list[Program]) -> list[ExecutionResult]:
        self.programs.extend(programs)
        return [self._run(program) for program in programs]

    @staticmethod
    def _run(program: Program) -> ExecutionResult:
        namespace: dict = {"__name__": "__main__"}
        out = io.StringIO()
        saved = sys.stdin
        sys.stdin = io.StringIO(program.stdin or "")
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(program.code, "<program>", "exec"), namespace)
                for test in program.tests or ():
                    exec(compile(test, "<test>", "exec"), namespace)
        except AssertionError:
            return ExecutionResult(status="wrong_answer", stdout=out.getvalue())
        except SyntaxError:
            return ExecutionResult(status="syntax_error")
        except Exception:
            return ExecutionResult(status="runtime_error", stdout=out.getvalue())
        finally:
            sys.stdin = saved
        return ExecutionResult(status="ok", stdout=out.getvalue())


def chat(text: str) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": text}]


# -- shared extraction ----------------------------------------------------------------------------


def test_completion_text_and_extraction():
    assert completion_text([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]) == "a"
    assert completion_text([{"role": "assistant", "content": None}]) == ""
    assert extract_predicted_output("<output>1</output> later <output>2</output>") == "2"  # the last one
    assert extract_predicted_output("<think>x</think>no answer") is None
    assert extract_predicted_output("[ANSWER] assert f(1) == 'a==b' [/ANSWER]") == "'a==b'"  # first ==
    assert extract_predicted_output("[ANSWER] 3 [/ANSWER]") == "3"
    assert (
        extract_code("```py\nprint(1)\n```\n```python\nprint(2)\n```") == "print(1)\n"
    )  # as the app reads it
    assert extract_code("<think>```python\nx = 1\n```") is None  # still thinking
    assert extract_code("<answer>\n```python\ny = 2\n```\n</answer>") == "y = 2\n"


# -- output prediction (Self-Exec) ----------------------------------------------------------------


def test_output_prediction_stdin_items():
    reward = OutputPredictionReward()
    completions = [
        "<output>1 2 3</output>",  # exact
        "<output>\n1  2\n3\n</output>",  # whitespace differs, tokens equal
        "<think>it prints 1 2 4</think><output>1 2 3</output>",  # the answer after </think> counts
        "<think><output>1 2 3</output>",  # never closed its thinking: no answer
        "<output>1 2 4</output>",  # wrong
        "The output is 1 2 3",  # no tag
        chat("<output>1 2 3</output>"),  # chat format
    ]
    assert reward(completions, output=["1 2 3\n"] * 7) == [1.0, 1.0, 1.0, -1.0, -1.0, -1.0, 1.0]


def test_output_prediction_float_tolerance():
    reward = OutputPredictionReward()
    completions = [
        "<output>0.333334</output>",  # within the default 1e-5
        "<output>0.3334</output>",  # outside it
        "<output>0.3334</output>",  # inside this item's 1e-3
        "<output>3</output>",  # integers compare exactly whatever the tolerance
    ]
    outputs = ["0.3333333", "0.3333333", "0.3333333", "4"]
    tolerances = [None, None, 1e-3, 1.0]
    assert reward(completions, output=outputs, float_tolerance=tolerances) == [1.0, -1.0, 1.0, -1.0]


def test_output_prediction_does_not_apply_without_an_expected_output():
    reward = OutputPredictionReward()
    assert reward(["<output>1</output>", "<output>1</output>"], output=["1", None]) == [1.0, None]
    assert reward(["<output>1</output>"], prompts=["p"]) == [None]


CODE = "def f(xs):\n    return sorted(xs)"


def test_output_prediction_call_items_as_cruxeval_scores_them():
    executor = InProcessExecutorDouble()
    reward = OutputPredictionReward(kind="call", executor=executor)
    completions = [
        "[ANSWER] assert f([3, 1]) == [1, 3] [/ANSWER]",  # right
        "[ANSWER] assert f([3, 1]) == [1,3] [/ANSWER]",  # right: value equality, not string equality
        "<output>[1, 3]</output>",  # the <output> form works for call items too
        "[ANSWER] assert f([3, 1]) == [3, 1] [/ANSWER]",  # wrong
        "[ANSWER] assert f([3, 1]) == f([3, 1]) [/ANSWER]",  # the call itself: never counts
        "[ANSWER] assert f([3, 1]) == sorted([3, 1]) [/ANSWER]",  # not a literal: the sandbox decides
        "[ANSWER] assert f([3, 1]) == [1, 3][::-1] [/ANSWER]",  # not a literal, and wrong
        "[ANSWER] assert f([3, 1]) == [/ANSWER]",  # nothing after ==
    ]
    n = len(completions)
    got = reward(completions, code=[CODE] * n, input=["[3, 1]"] * n, output=["[1, 3]"] * n)
    assert got == [1.0, 1.0, 1.0, -1.0, -1.0, 1.0, -1.0, -1.0]
    # only the two non-literal answers went to the sandbox, as CRUXEval's own check
    assert [p.tests for p in executor.programs] == [
        ("assert [1, 3] == sorted([3, 1])",),
        ("assert [1, 3] == [1, 3][::-1]",),
    ]
    assert all(p.code == CODE for p in executor.programs)


def test_output_prediction_on_cruxeval_dev_gold_answers():
    path = BENCHMARKS / "cruxeval" / "dev.jsonl"
    if not path.exists():
        pytest.skip(f"benchmarks not found at {path} (shared/ is expected next to the repository)")
    items = [json.loads(line) for line in path.read_text().splitlines()]
    executor = InProcessExecutorDouble()  # gold outputs are literals: it should never be needed
    reward = OutputPredictionReward(kind="call", executor=executor)
    columns = {k: [item[k] for item in items] for k in ("code", "input", "output")}
    gold = [f"[ANSWER] assert f({i['input']}) == {i['output']} [/ANSWER]" for i in items]
    assert reward(gold, **columns) == [1.0] * len(items)
    shifted = columns["output"][1:] + columns["output"][:1]  # each item gets another item's output
    wrong = [f"[ANSWER] assert f({i['input']}) == {o} [/ANSWER]" for i, o in zip(items, shifted, strict=True)]
    scores = reward(wrong, **columns)
    assert scores.count(-1.0) >= len(items) - 5  # a few outputs coincide (e.g. two items returning '')
    assert executor.programs == []


# -- ExecVerify's gated white-box reward ----------------------------------------------------------

WB_CODE = "def f(a):\n    b = a * 2\n    if b > 3:\n        b = b - 1\n    return b"
WB_QUESTIONS = QuestionSet(
    WB_CODE,
    "f",
    "1",
    (
        Question("path", 3, 1, "    if b > 3:", ("    return b",)),
        Question("state", 2, 1, "    b = a * 2", ("2; int",), "b"),
    ),
)


def wb_columns(n: int, **extra) -> dict:
    columns = {"code": WB_CODE, "entry_point": "f", "input": "1", "output": "2"}
    columns["questions"] = WB_QUESTIONS.to_dict()
    columns.update(extra)
    return {k: [v] * n for k, v in columns.items()}


def test_white_box_io_items():
    reward = WhiteBoxReward(executor=InProcessExecutorDouble())
    completions = [
        "<reasoning>..</reasoning><answer>\nassert f(1) == 2\nreturn b\n2; int\n</answer>",  # all right: 2.0
        "<answer>\nassert f(1) == 2\nreturn b\n3; int\n</answer>",  # half the questions: 2(0.5 + 0.25)
        "<answer>\nassert f(1) == 2\n    b = b - 1\n3; int\n</answer>",  # assertion only: 2(0.5 + 0)
        "<answer>\nassert f(1) == 2\nreturn b\n</answer>",  # wrong number of answer lines: 1.0
        "<answer>\nassert f(1) == 3\nreturn b\n2; int\n</answer>",  # the assertion fails: gated to 0
        "<answer>\nf(1) == 2\nreturn b\n2; int\n</answer>",  # not an assert statement: 0
        "<answer>\nassert f(2) == 3\nreturn b\n2; int\n</answer>",  # not the task's arguments: 0
        "assert f(1) == 2",  # no answer block: 0
        chat("<answer>assert f(1) == 2\nreturn b\n2; int</answer>"),  # chat format: 2.0
    ]
    assert reward(completions, **wb_columns(len(completions))) == [
        2.0,
        1.5,
        1.0,
        1.0,
        0.0,
        0.0,
        0.0,
        0.0,
        2.0,
    ]


def test_white_box_special_cases():
    reward = WhiteBoxReward(executor=InProcessExecutorDouble())
    # no questions: a right assertion is worth 2.0
    no_questions = wb_columns(2, questions=None)
    assert reward(
        ["<answer>assert f(1) == 2</answer>", "<answer>assert f(1) == 1</answer>"], **no_questions
    ) == [
        2.0,
        0.0,
    ]
    # items without code are not white-box items
    assert reward(["<answer>assert f(1) == 2</answer>"], output=["2"]) == [None]
    # alpha is a setting: alpha = 1 makes the question accuracy the whole reward past the gate
    half = "<answer>\nassert f(1) == 2\nreturn b\n3; int\n</answer>"
    assert WhiteBoxReward(alpha=1.0)([half], **wb_columns(1)) == [1.0]


def test_white_box_assertions_of_another_shape_go_to_the_sandbox():
    executor = InProcessExecutorDouble()
    reward = WhiteBoxReward(executor=executor)
    completions = [
        "<answer>\nassert f(1) == 1 + 1\nreturn b\n2; int\n</answer>",  # holds: 2.0
        "<answer>\nassert 2 == f(1)\nreturn b\n2; int\n</answer>",  # holds: 2.0
        "<answer>\nassert f(1) == 2 and False\nreturn b\n2; int\n</answer>",  # fails: 0
    ]
    assert reward(completions, **wb_columns(3)) == [2.0, 2.0, 0.0]
    assert [p.tests for p in executor.programs] == [
        ("assert f(1) == 1 + 1",),
        ("assert 2 == f(1)",),
        ("assert f(1) == 2 and False",),
    ]
    assert all(p.code == WB_CODE and p.timeout_s == 0.5 for p in executor.programs)


def test_white_box_output_to_input_items():
    executor = InProcessExecutorDouble()
    reward = WhiteBoxReward(executor=executor)
    completions = [
        "<answer>\n```python\ndef f(a):\n    ...\n\nassert f(1) == 2\n```\n</answer>",  # f(1) gives 2: 2.0
        "<answer>assert f(a=1) == 2</answer>",  # keyword arguments, no fence: 2.0
        "<answer>assert f(5) == 2</answer>",  # f(5) gives 9: 0
        # a rewritten f is ignored, the task's f gives 13 for 7: 0
        "<answer>\n```python\ndef f(a):\n    return 2\nassert f(7) == 2\n```\n</answer>",
        "<answer>assert True</answer>",  # no call of f: 0
    ]
    got = reward(completions, **wb_columns(5, task="oi", questions=None))
    assert got == [2.0, 2.0, 0.0, 0.0, 0.0]
    assert [p.tests for p in executor.programs] == [
        ("assert f(1) == 2",),
        ("assert f(a=1) == 2",),
        ("assert f(5) == 2",),
        ("assert f(7) == 2",),
    ]


def test_white_box_end_to_end_on_a_real_trace():
    code = "def f(s):\n    out = ''\n    for ch in s:\n        if ch.isdigit():\n"
    code += "            out += ch\n    return out"
    qset = select_questions(code, "f", "'a1b2'", trace_in_process(code, "f('a1b2')").trace, seed=0)
    assert qset is not None and qset.questions
    gold = "\n".join(q.answers[0] for q in qset.questions)
    wrong = "\n".join("-1" for _ in qset.questions)
    columns = {"code": [code] * 2, "input": ["'a1b2'"] * 2, "output": ["'12'"] * 2, "questions": [qset] * 2}
    completions = [
        f"<answer>assert f('a1b2') == '12'\n{gold}</answer>",
        f"<answer>assert f('a1b2') == '12'\n{wrong}</answer>",
    ]
    right, low = WhiteBoxReward(executor=InProcessExecutorDouble())(completions, **columns)
    assert right == 2.0
    assert 1.0 <= low < 2.0


# -- unit-test pass rate --------------------------------------------------------------------------


def test_unit_test_pass_rate_with_asserts():
    executor = InProcessExecutorDouble()
    reward = UnitTestReward(executor=executor)
    tests = ["assert add(1, 2) == 3", "assert add(0, 0) == 0", "assert add(-1, 1) == 0"]
    completions = [
        "```python\ndef add(a, b):\n    return a + b\n```",  # passes all: 1.0
        "```python\ndef add(a, b):\n    return a * b + 2 if a else 0\n```",  # passes 1 of 3
        "def add(a, b):\n    return a + b",  # no fenced block: 0.0
        "```python\ndef add(a, b) return\n```",  # a syntax error passes nothing
        chat("```python\nadd = lambda a, b: a + b\n```"),  # chat format: 1.0
    ]
    got = reward(completions, tests=[tests] * 5)
    assert got == [1.0, pytest.approx(1 / 3), 0.0, 0.0, 1.0]
    assert len(executor.programs) == 4 * 3  # each assert runs on its own


def test_unit_test_pass_rate_with_stdin_tests_and_imports():
    reward = UnitTestReward(executor=InProcessExecutorDouble())
    tests = [{"input": "3\n", "output": "1.5"}, {"input": "4\n", "output": "2"}]
    completions = [
        "```python\nprint(int(input()) / 2)\n```",  # prints 1.5 and 2.0: "2.0" matches "2" as floats
        "```python\nprint(int(input()) // 2)\n```",  # prints 1 and 2
    ]
    assert reward(completions, tests=[tests] * 2) == [1.0, 0.5]
    with_imports = reward(
        ["```python\ndef root(x):\n    return math.sqrt(x)\n```"],
        tests=[["assert root(4) == 2"]],
        test_imports=[["import math"]],
    )
    assert with_imports == [1.0]
    assert reward(["```python\nx = 1\n```"], tests=[None]) == [None]  # no tests: does not apply


# -- conventions ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reward", [OutputPredictionReward(kind="call"), WhiteBoxReward(alpha=0.25), UnitTestReward(timeout_s=2.0)]
)
def test_rewards_are_picklable_and_named(reward):
    clone = pickle.loads(pickle.dumps(reward))
    assert clone == reward
    assert isinstance(reward.__name__, str) and reward.__name__


def test_doctests():
    for module in (rewards_module, compare_module):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


# -- with the real sandbox ------------------------------------------------------------------------

needs_sandbox = pytest.mark.skipif(
    not hasattr(execution, "run_many"),
    reason="simulator.execution.run_many (the sandbox) is not available yet",
)


@needs_sandbox
def test_rewards_with_the_real_sandbox():
    call = OutputPredictionReward(kind="call")
    completions = ["<output>sorted([3, 1])</output>", "<output>[1, 3][::-1]</output>"]
    assert call(completions, code=[CODE] * 2, input=["[3, 1]"] * 2, output=["[1, 3]"] * 2) == [1.0, -1.0]
    white_box = WhiteBoxReward()
    completions = [
        "<answer>\nassert f(1) == 1 + 1\nreturn b\n2; int\n</answer>",
        "<answer>assert f(5) == 2</answer>",
    ]
    assert white_box(completions[:1], **wb_columns(1)) == [2.0]
    assert white_box(completions[1:], **wb_columns(1, task="oi")) == [0.0]
    unit = UnitTestReward()
    tests = ["assert add(1, 2) == 3", "assert add(2, 2) == 5"]
    assert unit(["```python\ndef add(a, b):\n    return a + b\n```"], tests=[tests]) == [0.5]
    hang = unit(["```python\ndef add(a, b):\n    while True:\n        pass\n```"], tests=[tests[:1]])
    assert hang == [0.0]
