"""A program known to fail without simulating it (``simulator.pipeline.static.cannot_pass``) is judged
so: it is never simulated, never selected over a program that may pass, never kept as a fix."""

from __future__ import annotations

import asyncio

import pytest

from simulator.llm.testing import FakeModelServer, PipelineScript
from simulator.pipeline.executor import LocalExecutor, program_for, real_output
from simulator.pipeline.matching import problem_matches
from simulator.pipeline.static import cannot_pass, known_failure
from simulator.problem import Problem
from simulator.prompts import kind_of
from tests.simulator.pipeline.pipeline_doubles import (
    DOUBLE_PROBLEM,
    ExecutorDouble,
    fence,
    of_type,
    run_script,
)
from tests.simulator.pipeline.test_pipeline_run import CALL_PROBLEM

CALL = Problem.from_dict(CALL_PROBLEM)  # its tests call twice(...)
STDIN = Problem.from_dict(DOUBLE_PROBLEM)
ASSERT_ONLY = "assert twice(1) == 2\n"  # what the default model wrote as a "fix" (docs/results.md)
RIGHT = "def twice(x):\n    return 2 * x\n"


@pytest.mark.parametrize(
    "code",
    [
        RIGHT,
        "async def twice(x):\n    return x\n",
        "class twice:\n    pass\n",
        "twice = lambda x: 2 * x\n",
        "def make():\n    return lambda x: 2 * x\ntwice = make()\n",
        "if True:\n    def twice(x):\n        return 2 * x\n",
        "try:\n    from m import twice\nexcept ImportError:\n    pass\n",
        "from operator import mul as twice\n",
        "def setup():\n    global twice\n    twice = abs\nsetup()\n",
        "from helpers import *\n",  # may bind anything
        "exec('def twice(x): return 2 * x')\n",  # binds a name the check cannot see
        "globals()['twice'] = abs\n",
        "for twice in [abs]:\n    pass\n",
        "(twice := abs)\n",
        "def helper():\n    def twice(x):\n        return x\n",  # nested: the check errs towards may pass
    ],
)
def test_a_program_that_may_define_the_function_may_pass(code: str) -> None:
    assert cannot_pass(CALL, code) is None


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (ASSERT_ONLY, "the program does not define twice, which the tests call"),
        ("def double(x):\n    return 2 * x\n", "the program does not define twice, which the tests call"),
        ("def twice(x:\n    return x\n", "the program does not parse: the parenthesis ( opened at line 1"),
        ("", "the program does not define twice, which the tests call"),
    ],
)
def test_a_program_that_cannot_pass_says_why(code: str, reason: str) -> None:
    assert (cannot_pass(CALL, code) or "").startswith(reason)


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (  # what the default model writes after its function, the example's value beside the crash
            RIGHT + "expected = [2]\nactual = twice(value)\n",
            "value is never defined (line 4): the program raises NameError as it loads",
        ),
        (RIGHT + "assert twice(data) == 2\n", "data is never defined (line 3): the program raises"),
        (RIGHT + "print(twice(1)) == values\n", "values is never defined (line 3)"),
        (
            "def twice(x):\n    return [y]\n",
            "y is never defined (line 2): twice raises NameError on every call",
        ),
        ("def twice(x):\n    n = x\n    return math.floor(n)\n", "math is never defined (line 3): twice"),
        ("@cache\ndef twice(x):\n    return 2 * x\n", "cache is never defined (line 1): the program raises"),
    ],
)
def test_a_name_loaded_for_certain_but_bound_nowhere_cannot_pass(code: str, reason: str) -> None:
    assert (cannot_pass(CALL, code) or "").startswith(reason)


@pytest.mark.parametrize(
    "code",
    [
        RIGHT + "if __name__ == '__main__':\n    print(twice(x))\n",  # may not run
        RIGHT + "try:\n    twice(x)\nexcept NameError:\n    pass\n",
        RIGHT + "for v in []:\n    twice(x)\n",
        RIGHT + "print(__name__, [v for v in range(2)])\n",  # dunders and comprehension variables
        RIGHT + "later = lambda: twice(x)\ngen = (twice(v) for v in x_values)\n",  # run later, if at all
        RIGHT + "twice(n)\nn = 1\n",  # bound somewhere: the check errs towards "may pass"
        "def twice(x):\n    if x:\n        return x * 2\n    return y\n",  # after a branch
        "def twice(x):\n    return x * 2\n    return y\n",  # after the return
        "def twice(x):\n    yield y\n",  # a generator's body runs only when iterated
        "@staticmethod\ndef twice(x):\n    return y\n",  # decorated: it may not be this body that runs
        "def twice(x):\n    return y\ntwice = abs\n",  # rebound
        "def twice(x):\n    try:\n        return x\n    except ValueError as e:\n        return e\n",
        "def twice(x):\n    class C:\n        v = y\n    return C\n",  # class bodies are not looked into
        "def twice(x):\n    global y\n    return y\n",
        "def twice(x):\n    y: Undefined = x\n    return 2 * y\n",  # a local's annotation never runs
        "from __future__ import annotations\nv: Undefined = 1\n" + RIGHT,  # nor, so, a global's
        "from helpers import *\ndef twice(x):\n    return y\n",  # may bind anything
    ],
)
def test_a_name_that_may_be_bound_or_may_not_be_loaded_may_pass(code: str) -> None:
    assert cannot_pass(CALL, code) is None


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("def twice(x):\n    return 0\n", "twice returns 0 on every call, which no public test expects"),
        ('def twice(x):\n    """Twice x."""\n    return [2]\n', "twice returns [2] on every call"),
        ("def twice(x):\n    return -1\n\nassert twice(1) == 2\n", "twice returns -1 on every call"),
        (
            "def twice(x):\n    return '" + "a" * 50 + "'\n",
            "twice returns 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\u2026 on",
        ),
    ],
)
def test_a_function_that_returns_a_literal_no_public_test_expects_cannot_pass(code: str, reason: str) -> None:
    assert (cannot_pass(CALL, code) or "").startswith(reason)


@pytest.mark.parametrize(
    "code",
    [
        "def twice(x):\n    return x\n",  # not a literal
        "def twice(x):\n    if x:\n        return 0\n    return 1\n",  # not at once, nor one value
        "def twice(x):\n    return 2 if x == 1 else 8\n",
        "def twice(x):\n    if x:\n        return 2\n",  # or None
        "def f():\n    return 2\ndef twice(x):\n    return f()\n",
        "@staticmethod\ndef twice(x):\n    return 0\n",  # decorated: another function may run
        "def twice(x):\n    return 0\ntwice = abs\n",  # rebound
        "def twice(x):\n    yield 0\n    return 0\n",
    ],
)
def test_a_function_whose_result_may_be_expected_may_pass(code: str) -> None:
    assert cannot_pass(CALL, code) is None


@pytest.mark.parametrize(
    ("code", "value"),
    [  # the default model's guided "fixes": told that the test expects a value, it returns it
        ("def twice(x):\n    return 2\n", "2"),  # right for twice(1) == 2, and for nothing else
        ("def twice(x):\n    return 8.0\n", "8.0"),  # right for twice(4) == 8 by the app's rule
        ("def twice(x):\n    return 2 if x == 'a' else 2\n", "2"),
        ("def twice(x):\n    if x < 0:\n        return 2\n    return 2\n", "2"),
        ("def twice(*args):\n    return 2\n\nassert twice(1) == 2\n", "2"),
    ],
)
def test_a_function_that_returns_one_literal_whatever_its_arguments_is_hard_coded(
    code: str, value: str
) -> None:
    failure = known_failure(CALL, code)
    assert failure is not None and failure.output == value
    assert failure.reason == f"twice returns {value} whatever its arguments: written in, not computed"


TWO_ARGS = Problem.from_dict({**CALL_PROBLEM, "tests": [{"input": "1, k=2", "output": "2", "public": True}]})


@pytest.mark.parametrize(
    ("problem", "code", "reason"),
    [  # the default model's guided fix for MBPP 558: one parameter, called with two arguments
        (CALL, "def twice():\n    return 2\n", "twice takes (), so twice(1) raises TypeError: too many"),
        (TWO_ARGS, "def twice(x):\n    return x\n", "twice takes (x), so twice(1, k=2) raises TypeError"),
        (TWO_ARGS, "def twice(x, k, /):\n    return 2\n", "twice takes (x, k, /), so"),
        (TWO_ARGS, "def twice(x, k, *, m):\n    return 2\n", "twice takes (x, k, *, m), so"),
        (TWO_ARGS, "def twice(x, *, m=1):\n    return 2\n", "twice takes (x, *, m=...), so"),
    ],
)
def test_a_function_no_public_test_can_call_cannot_pass(problem: Problem, code: str, reason: str) -> None:
    assert (cannot_pass(problem, code) or "").startswith(reason)


@pytest.mark.parametrize(
    "code",
    [
        "def twice(x, k):\n    return 2 * x\n",
        "def twice(x, k=1, *rest):\n    return 2 * x\n",
        "def twice(*args, **kwargs):\n    return 2 * args[0]\n",
        "def twice(x, **options):\n    return 2 * x\n",
        "def twice(x, *, k):\n    return 2 * x\n",
    ],
)
def test_a_function_some_public_test_can_call_may_pass(code: str) -> None:
    assert cannot_pass(TWO_ARGS, code) is None


@pytest.mark.parametrize(
    "code",
    [  # the default model's guided fix for MBPP 801: an assert and no return
        'def twice(x):\n    assert x == 1, "Test"\n\ntwice(1)\n',
        "def twice(x):\n    print(2 * x)\n",
        "def twice(x):\n    if x:\n        return\n    return None\n",
        # inner's return is not twice's
        "def twice(x):\n    def inner():\n        return 2 * x\n    inner()\n",
    ],
)
def test_a_function_without_a_return_value_cannot_pass_a_test_expecting_one(code: str) -> None:
    assert cannot_pass(CALL, code) == (
        "twice has no return with a value (it returns None), which no public test expects"
    )


def test_a_function_without_a_return_value_may_pass_a_test_expecting_none() -> None:
    expects_none = Problem.from_dict(
        {**CALL_PROBLEM, "tests": [{"input": "1", "output": "None", "public": True}]}
    )
    assert cannot_pass(expects_none, "def twice(x):\n    print(x)\n") is None
    assert cannot_pass(CALL, "def twice(x):\n    raise_or = lambda: 2\n    return raise_or()\n") is None


PAIR = Problem.from_dict(  # its public test expects a tuple
    {**CALL_PROBLEM, "tests": [{"input": "[1, 2]", "output": "(1, 2)", "public": True}]}
)


@pytest.mark.parametrize(
    ("problem", "code", "returned", "expected"),
    [  # the default model wrote the like of each for MBPP dev problems (docs/results.md, section 26)
        (CALL, "def twice(x):\n    return [2 * x]\n", "a list", "an int"),
        (CALL, "def twice(x):\n    return f'{2 * x}'\n", "a str", "an int"),
        (CALL, "def twice(x):\n    return str(2 * x) if x else ''.join([])\n", "a str", "an int"),
        (CALL, "def twice(x):\n    return map(lambda y: 2 * y, [x])\n", "a map object", "an int"),
        (CALL, "def twice(x):\n    return (2 * y for y in [x])\n", "a generator", "an int"),
        (PAIR, "def twice(xs):\n    return sorted(xs)\n", "a list", "a tuple"),
        (PAIR, "def twice(xs):\n    return len(xs) == 2\n", "a bool", "a tuple"),
        (PAIR, "def twice(xs):\n    return sum(xs)\n", "a number", "a tuple"),
        (PAIR, "def twice(xs):\n    if xs:\n        return [xs[0], xs[1]]\n", "a list or None", "a tuple"),
        (PAIR, "def twice(xs):\n    return zip(xs, xs)\n", "a zip object", "a tuple"),
    ],
)
def test_a_function_that_returns_a_type_no_public_test_expects_cannot_pass(
    problem: Problem, code: str, returned: str, expected: str
) -> None:
    """Its value is not known, but no value of its type is ever equal to the expected one: the repair
    prompt is told the type, as what the attempt returned."""
    failure = known_failure(problem, code)
    assert failure is not None
    assert (
        failure.reason
        == f"twice returns {returned}, never equal to {expected}, which the public tests expect"
    )
    assert failure.output == returned
    test = problem.public_tests[0]
    result = asyncio.run(LocalExecutor().execute(program_for(problem, code, test), trace=False))
    assert not problem_matches(problem, test.output, real_output(problem.kind, result))  # a real run agrees


@pytest.mark.parametrize(
    ("problem", "code"),
    [
        (CALL, "def twice(x):\n    return x == 1\n"),  # a bool may equal an int: True == 1
        (CALL, "def twice(x):\n    return float(2 * x)\n"),  # 2.0 == 2
        (CALL, "def twice(x):\n    return sum([x, x])\n"),
        (CALL, "def twice(x):\n    return sum([[x]], [])\n"),  # a start value: any type
        (CALL, "def twice(x):\n    return round(x * 2.0, 1)\n"),
        (CALL, "def twice(x):\n    return x.double()\n"),  # a method: its type is not known
        (CALL, "def twice(x):\n    return [x] if x < 0 else 2 * x\n"),  # one branch may be right
        (CALL, "def len(s):\n    return 2\ndef twice(x):\n    return str(x) + len(x)\n"),
        (CALL, "str = int\ndef twice(x):\n    return str(2 * x)\n"),  # a builtin rebound
        (CALL, "class V(int):\n    pass\ndef twice(x):\n    return [V(2 * x)]\n"),  # may compare otherwise
        (CALL, "import numpy as np\ndef twice(x):\n    return np.int64(x) < 3\n"),
        (CALL, "from numpy import array\ndef twice(x):\n    return x == array([2])\n"),
        (PAIR, "import builtins\nbuiltins.len = tuple\ndef twice(xs):\n    return len(xs)\n"),  # passes
        (PAIR, "def twice(xs):\n    return tuple(sorted(xs))\n"),
        (
            PAIR,
            "def twice(xs):\n    try:\n        return sorted(xs)\n    except TypeError:\n        return xs\n",
        ),
        (
            Problem.from_dict({**CALL_PROBLEM, "tests": [{"input": "1", "output": "{1}", "public": True}]}),
            "def twice(x):\n    return frozenset([x])\n",
        ),  # fmt: skip
    ],
)
def test_a_function_whose_type_may_be_expected_or_is_not_known_may_pass(problem: Problem, code: str) -> None:
    assert cannot_pass(problem, code) is None


@pytest.mark.parametrize(
    ("problem", "code", "reason"),
    [  # the default model wrote the first for MBPP 720: Python refuses it before running a line
        (CALL, "def twice(x, x):\n    return 2 * x\n", "duplicate argument 'x' in function definition"),
        (CALL, "def twice(x):\n    return 2 * x\nreturn 1\n", "'return' outside function at line 3"),
        (STDIN, "print(int(input()) * 2)\nreturn\n", "'return' outside function at line 2"),
    ],
)
def test_a_program_that_parses_but_does_not_compile_cannot_pass(
    problem: Problem, code: str, reason: str
) -> None:
    assert (cannot_pass(problem, code) or "").startswith(f"the program does not compile: {reason}")


def test_stdin_programs_get_no_name_check() -> None:
    # one may print its answer and exit() before a failing line
    assert cannot_pass(STDIN, "print(int(input()) * 2)\nexit()\nundefined_name\n") is None


SILENT = ("the program never writes to standard output", "")  # what a run shows: nothing
BLIND = ("the program never reads its input", "the same output whatever the input")


@pytest.mark.parametrize(
    ("code", "judged"),
    [
        ("def twice(n):\n    return 2 * n\n", SILENT),  # defined, never called: what the default model writes
        ("n = int(input())\nresult = 2 * n\n", SILENT),
        (
            "import math, sys\nfrom collections import Counter\nx = math.sqrt(int(sys.stdin.readline()))\n",
            SILENT,
        ),
        ("n = 3\nprint(n * n)\n", BLIND),  # the default model's "Square" candidate
        ("print(4)\n", BLIND),
        ("import math\nprint(math.factorial(3))\n", BLIND),
        ("def solve(n):\n    return 2 * n\n\nprint(solve(2))\n", BLIND),
    ],
)
def test_a_stdin_program_that_never_writes_or_never_reads_is_judged_unsimulated(
    code: str, judged: tuple[str, str]
) -> None:
    failure = known_failure(STDIN, code)
    assert failure is not None
    assert failure.reason.startswith(judged[0])
    assert failure.output == judged[1]


@pytest.mark.parametrize(
    "code",
    [
        "print(2 * int(input()))\n",
        "show = print\nshow(2 * int(input()))\n",
        "import sys\nsys.stdout.write(str(2 * int(input())))\n",
        "from sys import stdout\nstdout.write('4')\n",
        "import os\nos.write(1, b'4')\n",  # os is not a quiet module
        "from pprint import pprint as p\np(4)\n",
        "import this\n",  # prints as it loads
        "exec('pr' + 'int(4)')\n",
        "getattr(__builtins__, 'pr' + 'int')(4)\n",
        "from math import *\n",
        "exit(4)\n",
        "import sys\nsys.displayhook(4)\n",
        "import sys\nsys.modules['builtins'].__dict__['pr' + 'int'](4)\n",
        "import operator\nimport sys\noperator.methodcaller('wr' + 'ite', '4')(sys.__stdout__)\n",
    ],
)
def test_a_stdin_program_that_may_write_may_pass(code: str) -> None:
    assert known_failure(STDIN, "n = int(input())\n" + code) is None  # it reads: only writing is asked


@pytest.mark.parametrize(
    "code",
    [
        "import sys\nprint(2 * int(sys.stdin.read()))\n",
        "from sys import stdin\nprint(2 * int(stdin.readline()))\n",
        "print(2 * int(open(0).read()))\n",
        "import fileinput\nprint(2 * int(next(fileinput.input())))\n",
        "import os\nprint(2 * int(os.read(0, 9)))\n",
        "import sys\nprint(2 * int(sys.__stdin__.buffer.read()))\n",
        "print(2 * int(eval('in' + 'put()')))\n",
        "print(2 * int(getattr(__builtins__, 'in' + 'put')()))\n",
        "import sys\nprint(2 * int(sys.modules['builtins'].__dict__['in' + 'put']()))\n",
    ],
)
def test_a_stdin_program_that_may_read_its_input_may_pass(code: str) -> None:
    assert known_failure(STDIN, code) is None


def test_a_program_may_read_nothing_where_no_public_test_gives_input() -> None:
    constant = Problem.from_dict({**DOUBLE_PROBLEM, "tests": [{"input": "", "output": "4\n"}]})
    assert known_failure(constant, "print(4)\n") is None


def test_a_silent_program_may_pass_a_test_that_expects_no_output() -> None:
    quiet = Problem.from_dict({**DOUBLE_PROBLEM, "tests": [{**DOUBLE_PROBLEM["tests"][0], "output": "\n"}]})
    assert known_failure(quiet, "n = int(input())\n") is None


def test_a_builtin_entry_point_and_stdin_programs_need_no_definition() -> None:
    builtin = Problem.from_dict({**CALL_PROBLEM, "entry_point": "sorted"})
    assert cannot_pass(builtin, "x = 1\n") is None
    assert cannot_pass(STDIN, "print(int(input()) * 2)\n") is None
    assert cannot_pass(STDIN, "print(int(input()) * 2\n").startswith("the program does not parse")


def claims_the_expected_value(code: str, call: str) -> str:
    """Simulation replies that always claim the expected value, whatever the code (a model that
    believes every program is right, as the default model did of its assert-only "fixes")."""
    value = {"twice(1)": "2", "twice(4)": "8"}[call]
    return f"[THOUGHT] t [/THOUGHT] [ANSWER] assert {call} == {value} [/ANSWER]"


def simulated_codes(server: FakeModelServer) -> list[str]:
    return [
        m["content"]
        for body in server.requests
        if (kind_of(body["messages"]) or "").startswith("simulate")
        for m in body["messages"]
        if m["role"] == "user"
    ]


def test_a_candidate_that_cannot_pass_is_not_simulated_nor_selected() -> None:
    script = PipelineScript(solve=[fence(ASSERT_ONLY), fence(RIGHT)], simulate=claims_the_expected_value)
    server = FakeModelServer(script)
    events = run_script(script, problem=CALL_PROBLEM, k=2, turns=0, seed=0, server=server)
    assert not any(ASSERT_ONLY.strip() in prompt for prompt in simulated_codes(server))
    assert {e.payload["candidate"] for e in of_type(events, "simulation_done")} == {1}
    checked = [e.payload for e in of_type(events, "verdict") if e.payload["candidate"] == 0]
    assert [(v["source"], v["match"], v["simulated"]) for v in checked] == [("checked", False, None)] * 2
    assert checked[0]["reason"] == "the program does not define twice, which the tests call"
    selected = of_type(events, "selected")[0].payload
    assert selected["candidate"] == 1 and selected["scores"] == [0, 2] and selected["tied"] == [1]


def test_with_real_the_checked_verdict_still_shows_the_real_run() -> None:
    script = PipelineScript(solve=fence(ASSERT_ONLY), simulate=claims_the_expected_value)
    events = run_script(script, problem=CALL_PROBLEM, k=1, turns=0, seed=0, real=True)
    (first, _) = [e.payload for e in of_type(events, "verdict")]
    assert first["source"] == "checked" and first["real"]["passed"] is False
    assert "NameError" in first["real"]["output"]  # the check said what really happens


def test_a_fix_that_cannot_pass_is_not_kept_however_its_simulation_reads() -> None:
    wrong = "def twice(x):\n    return x + 1\n"  # twice(1) == 2 right, twice(4) == 5 wrong

    def simulator(code: str, call: str) -> str:
        value = (
            {"twice(1)": "2", "twice(4)": "5"}[call]
            if "x + 1" in code
            else {"twice(1)": "2", "twice(4)": "8"}[call]
        )
        return f"[THOUGHT] t [/THOUGHT] [ANSWER] assert {call} == {value} [/ANSWER]"

    script = PipelineScript(solve=fence(wrong), simulate=simulator, repair=[fence(ASSERT_ONLY)])
    executor = ExecutorDouble()
    events = run_script(script, problem=CALL_PROBLEM, k=1, turns=1, seed=0, executor=executor)
    fix = [e.payload for e in of_type(events, "verdict") if e.payload["turn"] == 1]
    assert [v["source"] for v in fix] == ["checked", "checked"]
    (rejected,) = [e.payload for e in of_type(events, "repair_rejected")]
    assert (rejected["matched"], rejected["attempt_matched"]) == (0, 1)
    assert events[-1].payload["code"] == wrong


def test_the_repair_feedback_of_a_program_that_cannot_pass_shows_what_a_run_shows() -> None:
    script = PipelineScript(
        solve=fence(ASSERT_ONLY), simulate=claims_the_expected_value, repair=[fence(RIGHT)]
    )
    server = FakeModelServer(script)
    events = run_script(script, problem=CALL_PROBLEM, k=1, turns=1, seed=0, server=server)
    (turn,) = [e.payload for e in of_type(events, "repair_turn")]
    shown = "[runtime_error] NameError: name 'twice' is not defined (line 1)"
    assert [f["output"] for f in turn["feedback"]] == [shown, shown]
    (request,) = [b for b in server.requests if kind_of(b["messages"]) == "repair"]
    asked = request["messages"][-2]["content"]  # the user turn, before the prefilled fence
    assert f"returned {shown} for twice(1)" in asked and "not simulated" not in asked
    assert events[-1].payload["code"] == RIGHT and events[-1].payload["passed_public_simulated"] == 2


def test_the_fix_request_for_a_wrong_type_says_what_was_returned() -> None:
    script = PipelineScript(
        solve=fence("def twice(x):\n    return [2 * x]\n"),
        simulate=claims_the_expected_value,
        repair=[fence(RIGHT)],
    )
    server = FakeModelServer(script)
    events = run_script(script, problem=CALL_PROBLEM, k=1, turns=1, seed=0, server=server)
    (turn,) = [e.payload for e in of_type(events, "repair_turn")]
    assert [f["output"] for f in turn["feedback"]] == ["a list", "a list"]
    (request,) = [b for b in server.requests if kind_of(b["messages"]) == "repair"]
    assert (
        "A first attempt returned a list for twice(1), but the test expects 2."
        in request["messages"][-2]["content"]
    )
    assert events[-1].payload["code"] == RIGHT


@pytest.mark.parametrize(
    "code",
    [
        ASSERT_ONLY,
        "def twice(x):\n    return 0\n",
        "def twice(x):\n    return 2\n",
        "def twice(x):\n    return 'two'\n",
        "def twice(x):\n    print(2 * x)\n",
        "def twice(x):\n    return [y]\n",
        RIGHT + "assert twice(data) == 2\n",
        "def twice(x:\n    return x\n",
        "def twice(x, x):\n    return 2 * x\n",
    ],
)
def test_a_known_failure_shows_the_output_a_real_run_shows(code: str) -> None:
    """What the repair prompt is told in place of a simulation is what the sandbox really prints."""
    failure = known_failure(CALL, code)
    test = CALL.public_tests[0]
    result = asyncio.run(LocalExecutor().execute(program_for(CALL, code, test), trace=False))
    assert failure is not None and failure.output == real_output(CALL.kind, result)


def test_a_refused_call_shows_its_type_error() -> None:
    failure = known_failure(CALL, "def twice():\n    return 2\n")
    assert failure is not None
    assert failure.output == "[runtime_error] TypeError: too many positional arguments"


HARD_CODED = "def twice(x):\n    return 2\n"  # right for twice(1) == 2, wrong for twice(4) == 8


def test_a_hard_coded_candidate_is_not_selected_over_one_that_computes() -> None:
    script = PipelineScript(solve=[fence(HARD_CODED), fence(RIGHT)], simulate=claims_the_expected_value)
    events = run_script(script, problem=CALL_PROBLEM, k=2, turns=0, seed=0)
    hard = [e.payload for e in of_type(events, "verdict") if e.payload["candidate"] == 0]
    assert [v["reason"] for v in hard] == [
        "twice returns 2 whatever its arguments: written in, not computed"
    ] * 2
    assert of_type(events, "selected")[0].payload["scores"] == [0, 2]


def test_the_fix_request_for_a_hard_coded_attempt_says_so() -> None:
    script = PipelineScript(
        solve=fence(HARD_CODED), simulate=claims_the_expected_value, repair=[fence(RIGHT)]
    )
    server = FakeModelServer(script)
    events = run_script(script, problem=CALL_PROBLEM, k=1, turns=1, seed=0, server=server)
    (request,) = [b for b in server.requests if kind_of(b["messages"]) == "repair"]
    asked = request["messages"][-2]["content"]
    assert "returned 2 for twice(1), as the test expects, but it returns 2 whatever its arguments." in asked
    assert "returned 2 for twice(4), but the test expects 8." in asked
    assert events[-1].payload["code"] == RIGHT


def test_no_reference_solution_of_the_dev_splits_is_judged_unable_to_pass() -> None:
    """The check's false positives on real programs: every MBPP reference solution passes its asserts
    (tests/simulator/execution/test_benchmarks.py), so none may be flagged (with the test's imports,
    as the MBPP evaluation checks); nor any CRUXEval program, as a call problem of ``f``."""
    import json

    from simulator.benchmarks import from_mbpp
    from simulator.evaluation.mbpp import with_imports
    from simulator.problem import ProblemError
    from tests.simulator.execution.sandbox_support import benchmark_file

    flagged, checked = [], 0
    for line in benchmark_file("mbpp", "sanitized-dev.jsonl").read_text().splitlines():
        item = json.loads(line)
        try:
            problem = from_mbpp(item)
        except ProblemError:  # an assert no test can state (tasks 2 and 7: set(...) of the call)
            continue
        checked += 1
        if why := cannot_pass(problem, with_imports(item, item["code"])):
            flagged.append((item["task_id"], why))
    for line in benchmark_file("cruxeval", "dev.jsonl").read_text().splitlines():
        item = json.loads(line)
        tests = [{"input": item["input"], "output": item["output"], "public": True}]
        problem = Problem.from_dict(
            {"title": "t", "statement": "s", "kind": "call", "entry_point": "f", "tests": tests}
        )
        checked += 1
        if why := cannot_pass(problem, item["code"]):
            flagged.append((item["id"], why))
    assert checked == 162 + 200
    assert flagged == []
