"""Stdin solve examples: stated tasks asked as stdin/stdout problems, answered by a program that reads
its input line by line, calls the task's function and prints the result.

The default model was trained on solve examples of call problems only, and it lost what the base
model could do with a stdin problem: read the input and print the answer (``bench/stdin_solve.py``,
docs/results.md#training). These examples keep that shape in the solve data. A stated task
(``training.synth.tasks``) has a statement, a reference function and drawn arguments; its stdin form
gives each argument a line (an integer, a string, or a list of integers or of words separated by
spaces) and says which, and its expected outputs are what the answer prints in the sandbox. Tasks
with other arguments (dictionaries, empty lists, strings that begin or end with a space, ...) are
left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from simulator.execution import RunPrograms
from simulator.execution.program import Program
from simulator.problem import Problem
from simulator.prompts import solve
from training.data.problems import Checked, argument_values, parameters
from training.data.solve import solve_example
from training.execution import run_programs

SOURCE = "synth:tasks as stdin"
# One example in this many shows the app's one-shot example (``solve.messages``, a sum) before its
# request; the others show the previous task and its answer instead. A model trained on the app's
# example alone learned the answer's shape and wrote the example's sum into it, whatever the problem
# asked (docs/results.md#training).
APP_EXAMPLE_EVERY = 3
# An argument's line: how it is written, how the answer reads it, and how the statement says it.
_LINES = {
    "int": (str, "{name} = int(input())", "the integer `{name}`"),
    "str": (str, "{name} = input()", "the string `{name}`"),
    "ints": (
        lambda v: " ".join(map(str, v)),
        "{name} = list(map(int, input().split()))",
        "the integers of the list `{name}`, separated by spaces",
    ),  # fmt: skip
    "words": (" ".join, "{name} = input().split()", "the words of the list `{name}`, separated by spaces"),
}
_ORDINALS = ("first", "second", "third", "fourth")


@dataclass(frozen=True)
class StdinForm:
    """A stated task as a stdin problem: its statement, each test's standard input, and the program
    that answers it (the task's function, a line read per argument, the result printed)."""

    statement: str
    inputs: list[str]
    code: str

    def problem(self, outputs: Sequence[str], title: str) -> Problem:
        """The problem, its tests' outputs those given (what ``code`` prints); the first is public."""
        tests = [
            {"input": text, "output": out, "public": i == 0}
            for i, (text, out) in enumerate(zip(self.inputs, outputs, strict=True))
        ]
        return Problem.from_dict(
            {"title": title, "statement": self.statement, "kind": "stdin", "tests": tests}
        )


def stdin_form(item: Checked) -> StdinForm | None:
    """The stated task's stdin form, or None when it has none (no statement, or an argument with no
    line form)."""
    record = item.record
    params = parameters(record.code, record.entry_point)
    if not record.statement or not params or len(params) > len(_ORDINALS):
        return None
    arguments = [argument_values(pair.input) for pair in record.io if pair.output is not None]
    if not arguments or any(a is None or len(a) != len(params) for a in arguments):
        return None
    kinds = [_kind([a[i] for a in arguments]) for i in range(len(params))]  # type: ignore[index]
    if None in kinds:
        return None
    lines = [_LINES[k] for k in kinds]  # type: ignore[index]
    inputs = ["".join(line[0](a[i]) + "\n" for i, line in enumerate(lines)) for a in arguments]  # type: ignore[index]
    said = " ".join(
        f"The {_ORDINALS[i]} line of standard input holds {line[2].format(name=p)}."
        for i, (p, line) in enumerate(zip(params, lines, strict=True))
    )
    reads = [line[1].format(name=p) for p, line in zip(params, lines, strict=True)]
    call = f"print({record.entry_point}({', '.join(params)}))"
    return StdinForm(
        statement=f"{record.statement} {said} Print what `{record.entry_point}` returns.",
        inputs=inputs,
        code=record.code.rstrip() + "\n\n\n" + "\n".join([*reads, call]) + "\n",
    )


def stdin_solve_examples(
    checked: Sequence[Checked], *, executor: RunPrograms = run_programs
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """One solve example per stated task that has a stdin form whose answer prints something on
    every test in the sandbox (its one-shot example varied: ``APP_EXAMPLE_EVERY``), and counts:
    stated tasks, without a stdin form, whose answer failed, examples."""
    stated = [item for item in checked if item.record.statement]
    formed = [(item, form) for item in stated if (form := stdin_form(item)) is not None]
    programs = [Program(code=form.code, stdin=text) for _, form in formed for text in form.inputs]
    results = iter(executor(programs))
    made, failed = [], 0
    for item, form in formed:
        ran = [next(results) for _ in form.inputs]
        if any(r.status != "ok" or not r.stdout.strip() for r in ran):
            failed += 1
            continue
        made.append(
            (item, form.problem([r.stdout for r in ran], f"synth {item.record.id} (stdin)"), form.code)
        )
    examples = []
    for i, (item, problem, code) in enumerate(made):
        example = None  # the app's
        if i % APP_EXAMPLE_EVERY:
            _, shown, shown_code = made[i - 1]
            example = (solve.stdin_request(shown), shown_code)
        examples.append(
            solve_example(replace(item, problem=problem), solve.messages(problem, example), code, SOURCE)
        )
    counts = {
        "stated_tasks": len(stated),
        "no_stdin_form": len(stated) - len(formed),
        "answer_failed": failed,
    }
    return examples, {**counts, "examples": len(examples)}


def _kind(values: list[Any]) -> str | None:
    """The one line form every value of an argument has, or None."""

    def word(v: Any) -> bool:
        return isinstance(v, str) and bool(v) and not any(c.isspace() for c in v)

    if all(type(v) is int for v in values):
        return "int"
    if all(isinstance(v, str) and v and v == v.strip() and "\n" not in v for v in values):
        return "str"
    if all(isinstance(v, list) and v and all(type(x) is int for x in v) for v in values):
        return "ints"
    if all(isinstance(v, list) and v and all(word(x) for x in v) for v in values):
        return "words"
    return None
