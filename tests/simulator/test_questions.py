"""White-box questions: hand-checked questions on known programs, selection, prompt, parsing, scoring."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest

import simulator.execution as execution
import simulator.questions as questions_module
from simulator.execution.trace import Step, Trace, Value
from simulator.execution.tracer import trace_in_process
from simulator.prompts.parsing import AnswerBlock, parse_answer_block
from simulator.questions import (
    NEVER,
    Question,
    QuestionSet,
    check_path,
    check_state,
    is_eligible,
    numbered_code,
    path_questions,
    render_prompt,
    score_answers,
    select_questions,
    state_questions,
)

BENCHMARKS = Path(__file__).resolve().parents[2].parent / "shared" / "benchmarks"

# -- a hand-built trace (no tracer involved) -------------------------------------------------------

HELPER = """def g(x):
    return x * 2

def f(a):
    b = g(a)
    if b > 3:
        b = b - 1
    return b"""


def helper_trace(frame_numbers: bool) -> Trace:
    """f(1) on HELPER, written out by hand; ``frame_numbers`` False mimics a trace without them."""

    def step(i, event, function, line, depth, frame, changed=None, value=None):
        changed = {k: Value(repr(v), type(v).__name__) for k, v in (changed or {}).items()}
        return Step(i, event, function, line, depth, changed, "", value, frame if frame_numbers else 0)

    return Trace(
        steps=[
            step(0, "call", "f", 4, 0, 1, {"a": 1}),
            step(1, "line", "f", 5, 0, 1),
            step(2, "call", "g", 1, 1, 2, {"x": 1}),
            step(3, "line", "g", 2, 1, 2),
            step(4, "return", "g", 2, 1, 2, value=Value("2", "int")),
            step(5, "line", "f", 6, 0, 1, {"b": 2}),
            step(6, "line", "f", 8, 0, 1),
            step(7, "return", "f", 8, 0, 1, value=Value("2", "int")),
        ],
        source=HELPER,
    )


@pytest.mark.parametrize("frame_numbers", [True, False])
def test_path_questions_on_a_hand_built_trace(frame_numbers):
    found = [(q.line, q.occurrence, q.answers) for q in path_questions(HELPER, helper_trace(frame_numbers))]
    assert found == [
        # line 5 calls g, but the next line *of f* is 6 = N+1 and 5 is no branch: not asked
        (6, 1, ("    return b",)),  # an if whose body is skipped
        (7, 1, (NEVER,)),  # never runs
    ]


@pytest.mark.parametrize("frame_numbers", [True, False])
def test_state_questions_on_a_hand_built_trace(frame_numbers):
    found = [
        (q.line, q.occurrence, q.variable, q.answers)
        for q in state_questions(HELPER, helper_trace(frame_numbers))
    ]
    assert found == [(5, 1, "b", ("2; int",))]  # b's value shows on f's next step, after g's frame


def test_a_truncated_trace_gets_no_never_run_questions():
    trace = helper_trace(True)
    trace.truncated = True
    assert [q.answers for q in path_questions(HELPER, trace)] == [("    return b",)]


# -- real traces (the project's tracer, in process) ------------------------------------------------

LOOP = """def f(nums):
    output = []
    for n in nums:
        if n % 2 == 0:
            output.append(n)
        else:
            output.append(-n)
    total = sum(output,
                0)
    return total"""


def test_path_questions_on_a_real_loop_trace():
    trace = trace_in_process(LOOP, "f([1, 2, 3])").trace
    found = [(q.line, q.occurrence, q.answers[0].strip()) for q in path_questions(LOOP, trace)]
    assert found == [
        (3, 1, "if n % 2 == 0:"),
        (4, 1, "output.append(-n)"),  # jumps over line 5 (and the skipped else line 6)
        (7, 1, "for n in nums:"),  # back to the loop header
        (3, 2, "if n % 2 == 0:"),
        (4, 2, "output.append(n)"),
        (5, 1, "for n in nums:"),
        (3, 3, "if n % 2 == 0:"),
        (4, 3, "output.append(-n)"),
        (7, 2, "for n in nums:"),
        (3, 4, "total = sum(output,"),  # the loop ends
        (8, 1, "return total"),  # lines 8-9 are one statement: its next line is 10
    ]


def test_state_questions_on_a_real_loop_trace():
    trace = trace_in_process(LOOP, "f([1, 2, 3])").trace
    found = [(q.line, q.occurrence, q.variable, q.answers[0]) for q in state_questions(LOOP, trace)]
    assert found == [
        (2, 1, "output", "[]; list"),
        (3, 1, "n", "1; int"),
        (7, 1, "output", "[-1]; list"),
        (3, 2, "n", "2; int"),
        (5, 1, "output", "[-1, 2]; list"),
        (3, 3, "n", "3; int"),
        (7, 2, "output", "[-1, 2, -3]; list"),
        (8, 1, "total", "-2; int"),  # the multi-line statement counts once
    ]


def test_recursion_counts_executions_over_all_frames():
    code = "def f(n):\n    if n == 0:\n        return 0\n    r = f(n - 1) + 1\n    return r"
    trace = trace_in_process(code, "f(2)").trace
    paths = [(q.line, q.occurrence, q.answers[0].strip()) for q in path_questions(code, trace)]
    assert paths == [(2, 1, "r = f(n - 1) + 1"), (2, 2, "r = f(n - 1) + 1"), (2, 3, "return 0")]
    states = [(q.line, q.occurrence, q.variable, q.answers[0]) for q in state_questions(code, trace)]
    # executions are counted as they start: the outer call's line 4 is the 1st, though it ends last
    assert states == [(4, 1, "r", "2; int"), (4, 2, "r", "1; int")]


NESTED = """def f(xs):
    ys = []
    for x in xs:
        ys = [y + x for y in ys] + [x]
        key = sorted(ys, key=lambda v: -v)
        total = sum(v for v in ys)
    return total"""


def test_comprehension_genexpr_and_lambda_frames_are_part_of_their_line():
    trace = trace_in_process(NESTED, "f([1, 2])").trace
    assert {"<listcomp>", "<lambda>", "<genexpr>"} <= {s.function for s in trace.steps}
    states = [(q.line, q.occurrence, q.variable, q.answers[0]) for q in state_questions(NESTED, trace)]
    # a reader counts line 4 twice (once per x): the comprehension's own iterations do not count,
    # and its variable y, the lambda's v and the generator's v are no locals of f
    assert states == [
        (2, 1, "ys", "[]; list"),
        (3, 1, "x", "1; int"),
        (4, 1, "ys", "[1]; list"),
        (5, 1, "key", "[1]; list"),
        (6, 1, "total", "1; int"),
        (3, 2, "x", "2; int"),
        (4, 2, "ys", "[3, 2]; list"),
        (5, 2, "key", "[3, 2]; list"),
        (6, 2, "total", "5; int"),
    ]
    paths = [(q.line, q.occurrence, q.answers[0].strip()) for q in path_questions(NESTED, trace)]
    assert paths == [
        (3, 1, "ys = [y + x for y in ys] + [x]"),
        (6, 1, "for x in xs:"),
        (3, 2, "ys = [y + x for y in ys] + [x]"),
        (6, 2, "for x in xs:"),
        (3, 3, "return total"),
    ]


def test_object_and_none_values():
    code = "class Box:\n    pass\n\ndef f(x):\n    b = Box()\n    c = None\n    d = (x, 1.5)\n    return d"
    trace = trace_in_process(code, "f(True)").trace
    found = [(q.variable, q.answers[0]) for q in state_questions(code, trace)]
    # Box() has no literal repr, so no literal can equal it: not asked
    assert found == [("c", "None; object"), ("d", "(True, 1.5); tuple")]


def test_truncated_reprs_are_not_asked():
    code = "def f(n):\n    s = 'x' * n\n    return s"
    trace = trace_in_process(code, "f(5000)", max_repr=100).trace
    assert state_questions(code, trace) == []


def test_script_traces_need_include_module():
    code = "n = int(input())\nt = 0\nfor i in range(n):\n    t += i\nprint(t)"
    trace = trace_in_process(code, stdin="3\n").trace
    assert path_questions(code, trace) == [] and state_questions(code, trace) == []  # module code: skipped
    paths = [(q.line, q.occurrence, q.answers[0]) for q in path_questions(code, trace, include_module=True)]
    assert paths == [
        (3, 1, "    t += i"),
        (4, 1, "for i in range(n):"),  # not a branch, but the next line is not N+1
        (3, 2, "    t += i"),
        (4, 2, "for i in range(n):"),
        (3, 3, "    t += i"),
        (4, 3, "for i in range(n):"),
        (3, 4, "print(t)"),
    ]
    states = [(q.line, q.occurrence, q.variable) for q in state_questions(code, trace, include_module=True)]
    # t += 0 leaves t as it was: nothing changed, nothing asked for (4, 1)
    assert states == [
        (1, 1, "n"),
        (2, 1, "t"),
        (3, 1, "i"),
        (3, 2, "i"),
        (4, 2, "t"),
        (3, 3, "i"),
        (4, 3, "t"),
    ]


@pytest.mark.skipif(
    not hasattr(execution, "run"), reason="simulator.execution.run (the sandbox) is not available"
)
def test_a_sandboxed_trace_gives_the_same_questions():
    sandboxed = execution.run(execution.Program(code=LOOP, call="f([1, 2, 3])"), trace=True)
    assert sandboxed.status == "ok"
    local = trace_in_process(LOOP, "f([1, 2, 3])").trace
    assert path_questions(LOOP, sandboxed.trace) == path_questions(LOOP, local)
    assert state_questions(LOOP, sandboxed.trace) == state_questions(LOOP, local)
    assert select_questions(LOOP, "f", "[1, 2, 3]", sandboxed.trace, seed=5) == select_questions(
        LOOP, "f", "[1, 2, 3]", local, seed=5
    )


# -- selection --------------------------------------------------------------------------------------


def test_the_program_filter():
    assert is_eligible(LOOP, "f", "[1, 2, 3]")
    assert is_eligible("def f(a):\n    b = a\n    c = b\n    d = c\n    return d", "f", "1")  # 5 lines
    assert not is_eligible("def f(a):\n    b = a\n    return b", "f", "1")  # short, no loop
    assert not is_eligible(LOOP, "f", "[len('f')]")  # the args mention the function
    assert not is_eligible("def f(:", "f", "1")


def test_selection_is_capped_and_deterministic():
    code = "def f(n):\n    t = 0\n    for i in range(n):\n        t += i\n"
    code += "        if t > 100:\n            break\n    return t"
    trace = trace_in_process(code, "f(8)").trace
    first = select_questions(code, "f", "8", trace, seed=7)
    assert first is not None
    assert len(first.path) == 5 and len(first.state) == 5
    assert first.questions == first.path + first.state  # path questions come first
    assert select_questions(code, "f", "8", trace, seed=7) == first
    others = {select_questions(code, "f", "8", trace, seed=s).questions for s in range(5)}
    assert len(others) > 1  # the seed matters
    everything = path_questions(code, trace) + state_questions(code, trace)
    assert set(first.questions) <= set(everything)


def test_selection_returns_none_when_the_filter_refuses():
    code = "def f(a):\n    return a"
    assert select_questions(code, "f", "1", trace_in_process(code, "f(1)").trace) is None


def test_question_sets_survive_json():
    trace = trace_in_process(LOOP, "f([1, 2, 3])").trace
    qset = select_questions(LOOP, "f", "[1, 2, 3]", trace, seed=3)
    assert QuestionSet.from_dict(json.loads(json.dumps(qset.to_dict()))) == qset


# -- prompt -----------------------------------------------------------------------------------------


def test_prompt_layout():
    qset = QuestionSet(
        HELPER,
        "f",
        "1",
        (
            Question("path", 6, 1, "    if b > 3:", ("    return b",)),
            Question("state", 5, 1, "    b = g(a)", ("2; int",), "b"),
        ),
    )
    prompt = render_prompt(qset)
    code = numbered_code(HELPER, "f", "1")
    assert code.split("\n")[0] == "1\tdef g(x):"
    assert code.split("\n")[2] == ""  # a blank line keeps its number, shows none
    assert code.endswith("10\tassert f(1) == ????")
    assert code in prompt
    assert "Question1: Fill the assertion statement." in prompt
    assert (
        "Question2: While executing f(1), which line of code is executed immediately after line 6: "
        "`if b > 3:` has been executed for the 1st time?"
    ) in prompt
    assert (
        "Question3: Is line 5: `b = g(a)` executed when f(1) is called? If so, what are the value " in prompt
    )
    assert "variable 'b' after line 5 has been executed for the 1st time?" in prompt
    assert "<reasoning>" in prompt and "<answer>" in prompt and "</answer>" in prompt


# -- parsing and scoring ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "<answer>\nassert f(1) == 2\n  x = 1 \n\n2; int\n</answer>",
            ("assert f(1) == 2", ("x = 1", "2; int")),
        ),
        ("<think><answer>no</answer></think><answer>assert a</answer>", ("assert a", ())),  # after </think>
        ("<answer>old</answer> then <answer>new\n1; int</answer>", ("new", ("1; int",))),  # the last block
    ],
)
def test_parse_answer_block(text, expected):
    block = parse_answer_block(text)
    assert block.ok and (block.assertion, block.answers) == expected


@pytest.mark.parametrize(
    "garbage",
    [
        None,
        42,
        "",
        "no tags at all",
        "<answer>never closed",
        "</answer><answer>",
        "<answer>\n \n</answer>",
        "<answer>" * 1000,
        "\x00<answer>\x00</answer",
    ],
)
def test_parse_answer_block_turns_garbage_into_a_failure(garbage):
    block = parse_answer_block(garbage)
    assert isinstance(block, AnswerBlock)
    assert not block.ok and block.error


@pytest.mark.parametrize(
    "answer, gold, right",
    [
        ("[1, 2]; list", "[1,2]; list", True),  # equal as literals, not as strings
        ("{'b': 2, 'a': 1}; dict", "{'a': 1, 'b': 2}; dict", True),
        ("{3, 1}; set", "{1, 3}; set", True),
        ("(1, 2); tuple", "[1, 2]; list", False),  # type name must match
        ("[1, 2]; tuple", "[1, 2]; list", False),
        ("'abc'; str", "'abc'; str", True),
        ("abc; str", "'abc'; str", True),  # an unquoted string, as ExecVerify accepts
        ("'a;b'; str", "'a;b'; str", True),  # a semicolon inside the value
        ("abc; object", "'abc'; str", False),
        ("None; object", "None; object", True),
        ("0.30000000000000004; float", "0.30000000000000004; float", True),
        ("0.3; float", "0.30000000000000004; float", False),  # literal equality, no tolerance
        ("2", "2; int", False),  # no type
        ("x; int", "2; int", False),
        ("; int", "2; int", False),
    ],
)
def test_check_state(answer, gold, right):
    assert check_state(answer, (gold,)) is right


def test_check_state_tolerates_a_malformed_gold():
    assert check_state("2; int", ("2", "2; int")) is True
    assert check_state("2; int", ("garbage",)) is False


@pytest.mark.parametrize(
    "answer, acceptable, right",
    [
        ("return b", ("    return b",), True),
        ("    return b  ", ("    return b",), True),
        ("return  b", ("    return b",), False),  # exact after strip
        ("8\treturn b", ("    return b",), False),  # with its line number
        ("-1", (NEVER,), True),
        ("b = 1", ("    c = 2", "    b = 1"), True),  # any acceptable answer
    ],
)
def test_check_path(answer, acceptable, right):
    assert check_path(answer, acceptable) is right


def test_score_answers():
    qset = QuestionSet(
        HELPER,
        "f",
        "1",
        (
            Question("path", 6, 1, "    if b > 3:", ("    return b",)),
            Question("path", 7, 1, "        b = b - 1", (NEVER,)),
            Question("state", 5, 1, "    b = g(a)", ("2; int",), "b"),
        ),
    )
    score = score_answers(qset, parse_answer_block("<answer>assert f(1) == 2\nreturn b\n-1\n3; int</answer>"))
    assert (score.correct, score.total, score.line_count_ok) == (2, 3, True)
    assert score.per_question == (True, True, False)
    assert score.accuracy == pytest.approx(2 / 3)
    short = score_answers(qset, parse_answer_block("<answer>assert f(1) == 2\nreturn b</answer>"))
    assert (short.correct, short.line_count_ok) == (0, False)


def test_doctests():
    result = doctest.testmod(questions_module)
    assert result.attempted > 0 and result.failed == 0


# -- on the CRUXEval dev split: every program, real traces ----------------------------------------


def test_questions_on_cruxeval_dev_answer_themselves():
    path = BENCHMARKS / "cruxeval" / "dev.jsonl"
    if not path.exists():
        pytest.skip(f"benchmarks not found at {path} (shared/ is expected next to the repository)")
    items = [json.loads(line) for line in path.read_text().splitlines()]
    asked = 0
    for item in items:
        run = trace_in_process(item["code"], f"f({item['input']})")
        qset = select_questions(item["code"], "f", item["input"], run.trace, seed=0)
        if qset is None:
            continue
        asked += 1
        assert len(qset.path) <= 5 and len(qset.state) <= 5
        gold = "\n".join(q.answers[0] for q in qset.questions)
        block = parse_answer_block(
            f"<answer>assert f({item['input']}) == {item['output']}\n{gold}\n</answer>"
        )
        score = score_answers(qset, block)
        assert score.line_count_ok and score.correct == score.total, item["id"]
    assert asked > 100  # most CRUXEval programs pass ExecVerify's filter
