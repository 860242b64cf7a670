"""Stdin solve examples: stated tasks asked as stdin problems, answered by programs that read every
line they are given, print, and pass the problem's tests in the sandbox."""

from __future__ import annotations

import json

import pytest

from simulator.pipeline.static import known_failure
from simulator.problem import Problem
from simulator.prompts import solve
from training.data.problems import passing, run_tests
from training.data.stdin_solve import APP_EXAMPLE_EVERY, stdin_form, stdin_solve_examples
from training.synth.pipeline import SynthConfig, synthesize
from training.synth.records import IOPair, SynthRecord


@pytest.fixture(scope="module")
def tasks():
    kept, _ = synthesize(SynthConfig(rules=False, tasks=True, seed=3))
    checked, _ = passing(kept)
    return checked


def test_every_answer_reads_its_lines_prints_and_passes_its_tests(tasks):
    examples, counts = stdin_solve_examples(tasks)
    assert counts["examples"] == len(examples) > 0.5 * counts["stated_tasks"]
    assert counts["stated_tasks"] == counts["no_stdin_form"] + counts["answer_failed"] + counts["examples"]
    by_id = {item.record.id: item for item in tasks}
    for example in examples:
        assert example["kind"] == "solve" and example["style"] == "stdin"
        assert example["completion"].startswith(solve.PREFILL) and example["completion"].endswith(
            solve.STOP[0]
        )
        code = solve.parse(example["completion"][len(solve.PREFILL) : -len(solve.STOP[0])]).code
        form = stdin_form(by_id[example["program_id"]])
        assert form is not None and code == form.code
        assert "The first line of standard input holds" in example["prompt"]
        assert example["messages"][-1] == {"role": "assistant", "content": solve.PREFILL}
    # rebuilt from the prompt's own example: the answer passes every test, and the app's static
    # check does not take it for a program that never reads or never writes
    for example in examples[:12]:
        form = stdin_form(by_id[example["program_id"]])
        shown = example["prompt"].split("Example input:\n", 1)[1]
        first_input, first_output = shown.split("Example output:\n", 1)
        assert first_input == form.inputs[0]
        outputs = [first_output, *[""] * (len(form.inputs) - 1)]
        problem = form.problem(outputs, "t")
        assert known_failure(problem, form.code) is None
        ((runs,),) = run_tests([(problem, [form.code])])
        assert runs[0].passed, (form.code, runs[0])


def test_the_one_shot_example_is_the_apps_one_time_in_three_else_another_tasks_answer(tasks):
    examples, _ = stdin_solve_examples(tasks)
    app = solve.messages(solve_problem_stub())[1:3]
    for i, example in enumerate(examples):
        shown_request, shown_answer = example["messages"][1:3]
        if i % APP_EXAMPLE_EVERY == 0:
            assert [shown_request, shown_answer] == app
            continue
        previous = examples[i - 1]
        assert shown_request["content"] == previous["messages"][3]["content"]
        assert shown_answer["content"] == previous["completion"] != example["completion"]


def solve_problem_stub():
    return Problem.from_dict(
        {"title": "t", "statement": "s", "kind": "stdin", "tests": [{"input": "1\n", "output": "1\n"}]}
    )


def test_arguments_without_a_line_form_leave_the_task_out():
    def task(code: str, *inputs: str) -> object:
        record = SynthRecord(
            "t", "tasks", 1, {}, code, entry_point="f", statement="Write a function `f`.",
            io=[IOPair(x, "original", "0") for x in inputs],
        )  # fmt: skip
        return type("Item", (), {"record": record})()

    assert stdin_form(task("def f(d):\n    return len(d)\n", "{'a': 1}")) is None  # a dictionary
    assert stdin_form(task("def f(s):\n    return s\n", "' padded'")) is None  # its space unseen
    assert stdin_form(task("def f(xs):\n    return xs\n", "[]")) is None  # an empty line reads as []
    assert stdin_form(task("def f(xs):\n    return xs\n", "['a b']")) is None  # a word with a space
    form = stdin_form(task("def f(n, xs, w):\n    return n\n", "3, [1, -2], ['x', 'y']"))
    assert form is not None and form.inputs == ["3\n1 -2\nx y\n"]
    assert form.code.endswith(
        "n = int(input())\nxs = list(map(int, input().split()))\nw = input().split()\nprint(f(n, xs, w))\n"
    )
    assert "The third line of standard input holds the words of the list `w`" in form.statement


def test_train_data_writes_stdin_solve_examples_with_the_stdin_style_and_says_where_from(tmp_path):
    from simulator.cli import main
    from training.synth.pipeline import write

    kept, card = synthesize(SynthConfig(rules=False, tasks=True, seed=4))
    write(tmp_path / "synth", kept, card)
    argv = ["train", "data", "--programs", str(tmp_path / "synth" / "programs.jsonl"), "--kinds", "solve"]
    for styles, out in (("call,stdin", "both"), ("call", "call"), ("stdin", "stdin")):
        assert main([*argv, "--styles", styles, "--out", str(tmp_path / out)]) == 0
    both, call, stdin = (
        json.loads((tmp_path / out / "data-card.json").read_text()) for out in ("both", "call", "stdin")
    )
    assert stdin["kinds"]["solve"]["styles"] == {"stdin": both["solve_stdin"]["examples"]}
    assert both["kinds"]["solve"]["styles"]["stdin"] == both["solve_stdin"]["examples"] > 0
    assert both["kinds"]["solve"]["styles"]["call"] == call["kinds"]["solve"]["styles"]["call"]
    assert "stdin" not in call["kinds"]["solve"]["styles"] and "solve_stdin" not in call
    assert "training.data.stdin_solve" in both["kinds"]["solve"]["source"]
    assert "Solve (stdin): " in (tmp_path / "both" / "data-card.md").read_text()
