"""Synthesised programs -> training examples: SFT (prompt/completion NLEX) and RL (gold + questions).

    execsim train data --programs runs/synth/programs.jsonl --out runs/data [--annotations export.jsonl]

SFT examples, from real traces narrated by ``simulator.nlex.narrator``:

- CRUXEval style: ``[PYTHON] code + assert f(args) == ?? [/PYTHON]`` -> ``[THOUGHT]..[ANSWER] assert ..``;
- stdin/stdout style: the same function wrapped in a script that reads its arguments from stdin and
  prints the result -> ``[THOUGHT]..`` then ``<output>..</output>``;
- cruxeval style: the call style's narration under the prompt ``execsim eval cruxeval-o --prompt nlex``
  sends (``simulator.evaluation.cruxeval.messages``), so a model trained on it is measured in the
  format it learned. Only the prompt's wording differs; the programs are still synthesised ones.

Each example carries ``kind`` (``simulate`` here; ``training.data.repair`` and ``training.data.solve``
build the ``repair`` and ``solve`` kinds, ``training.data.mix`` mixes them), ``prompt`` and
``completion`` (plain text: the user turn of the inference prompt and the narration) and ``messages``
(the full chat prompt ``simulator.prompts.simulate`` sends at inference), so SFT trains on exactly what
the pipeline later asks.

RL examples (stage 1, ExecVerify's white-box task): the white-box prompt from ``simulator.questions``
and the columns ``simulator.rewards.WhiteBoxReward`` and ``OutputPredictionReward`` read (``code``,
``entry_point``, ``input``, ``output``, ``questions``, ``kind``, ``task``).

Nothing here reads a benchmark file: inputs must come from synthesis or annotation exports, and a
path inside the benchmark folder is refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from simulator.execution.program import Program
from simulator.execution.result import ExecutionResult
from simulator.execution.trace import Trace
from simulator.source import load_json
from training.execution import trace_programs
from training.paths import is_benchmark_path
from training.synth.records import SynthRecord

Tracer = Callable[[list[Program]], list[ExecutionResult]]

MAX_COMPLETION_CHARS = 6000  # about 2k tokens: longer narrations are dropped, not truncated
STYLES = ("call", "stdin", "cruxeval")
STDIN_WRAPPER = "\n\nimport ast\nargs = ast.literal_eval('(' + input() + ',)')\nprint({entry}(*args))\n"


class BenchmarkDataRefused(ValueError):
    """Training data must never be drawn from the benchmark files."""


def refuse_benchmarks(path: Path) -> None:
    if is_benchmark_path(path):
        raise BenchmarkDataRefused(
            f"{path} is a benchmark file: benchmarks are for evaluation only, never training data"
        )


def stdin_program(record: SynthRecord, args: str) -> Program:
    """The record's function as a stdin/stdout script: reads the argument list, prints the result."""
    code = record.code.rstrip() + STDIN_WRAPPER.format(entry=record.entry_point)
    return Program(code=code, stdin=args + "\n")


def call_program(record: SynthRecord, args: str) -> Program:
    return Program(code=record.code, call=f"{record.entry_point}({args})")


def answer_at_once(trace: Trace, program: Program) -> str:
    """The reply to the app's default simulate request (``RunSettings.narrate`` off): an empty thought
    and the answer, which begins with the request's prefill (``simulate.answer_prefill``). Empty when
    the run's answer does not take that form (a call that raises: the prefill asserts a value)."""
    from simulator.nlex.narrator import answer
    from simulator.prompts import simulate

    reply = simulate.EMPTY_THOUGHT + answer(trace, program)
    return reply if reply.startswith(simulate.answer_prefill(program.call)) else ""


def sft_examples(
    records: Iterable[SynthRecord],
    *,
    styles: tuple[str, ...] = ("call", "stdin"),
    tracer: Tracer = trace_programs,
    narrate: Callable[..., str] | None = None,
    max_completion_chars: int = MAX_COMPLETION_CHARS,
) -> list[dict[str, Any]]:
    """One example per (program, input, style) whose traced run is ``ok`` and not truncated, and whose
    narration is at most ``max_completion_chars`` long."""
    from simulator.evaluation import cruxeval
    from simulator.prompts import simulate

    if narrate is None:
        from simulator.nlex.narrator import narrate as narrate  # noqa: PLC0414
    jobs: list[tuple[SynthRecord, str, str, Program]] = []
    for record in records:
        for pair in record.io:
            for style in styles:
                make = stdin_program if style == "stdin" else call_program
                jobs.append((record, pair.input, style, make(record, pair.input)))
    unique = list(dict.fromkeys(program for *_, program in jobs))  # the call styles share one trace
    traced = dict(zip(unique, tracer(unique), strict=True))
    results = [traced[program] for *_, program in jobs]
    examples = []
    for (record, _args, style, program), result in zip(jobs, results, strict=True):
        if result.status != "ok" or result.trace is None or result.trace.truncated:
            continue
        if style == "call":
            messages = simulate.call_messages(program.code, program.call)
        elif style == "cruxeval":
            messages = cruxeval.messages(program.code, program.call, "nlex")
        else:
            messages = simulate.stdin_messages(program.code, program.stdin or "")
        completion = " " + narrate(result.trace, program).strip()
        if not completion.strip() or len(completion) > max_completion_chars:
            continue
        prompt = messages[-1]["content"]
        if completion.startswith(" " + simulate.EMPTY_THOUGHT):  # answered at once: prefilled, as sent
            messages = [*messages, {"role": "assistant", "content": simulate.answer_prefill(program.call)}]
        examples.append(
            {
                "kind": "simulate",
                "prompt": prompt,
                "completion": completion,
                "messages": messages,
                "style": style,
                "program_id": record.id,
                "level": record.level,
                "source": f"synth:{record.source}",
            }
        )
    return examples


def rl_examples(
    records: Iterable[SynthRecord],
    *,
    tracer: Tracer = trace_programs,
    seed: int = 0,
    max_prompt_chars: int | None = None,
    at_once: bool = False,
) -> list[dict[str, Any]]:
    """Stage-1 examples: the white-box prompt (questions from the real trace) and the reward columns.
    Programs that fail ExecVerify's question filter get the output-prediction question alone. Prompts
    longer than ``max_prompt_chars`` are left out (CPU runs: GRPO time grows with prompt length).

    ``at_once``: the prompt is instead the app's default simulate request, the chat messages with the
    answer begun (``simulate.answer_prefill``, also in the ``prefill`` column, which the
    ``output_prediction`` reward reads before the completion): a completion is a literal of a few
    tokens, short enough for GRPO on a CPU."""
    from simulator.prompts import simulate
    from simulator.questions import QuestionSet, render_prompt, select_questions

    jobs = [(record, pair) for record in records for pair in record.io]
    results = tracer([call_program(record, pair.input) for record, pair in jobs])
    examples = []
    for i, ((record, pair), result) in enumerate(zip(jobs, results, strict=True)):
        if result.status != "ok" or result.trace is None:
            continue
        qset = select_questions(record.code, record.entry_point, pair.input, result.trace, seed=seed + i)
        if qset is None:
            qset = QuestionSet(
                code=record.code, entry_point=record.entry_point, args=pair.input, questions=(), seed=seed + i
            )
        if at_once:
            program = call_program(record, pair.input)
            prefill = simulate.answer_prefill(program.call)
            messages = simulate.call_messages(program.code, program.call)
            asked: dict[str, Any] = {"prompt": [*messages, {"role": "assistant", "content": prefill}]}
            asked["prefill"], length = prefill, len(messages[-1]["content"])
        else:
            asked = {"prompt": render_prompt(qset)}
            length = len(asked["prompt"])
        if max_prompt_chars is not None and length > max_prompt_chars:
            continue
        examples.append(
            {
                **asked,
                "code": record.code,
                "entry_point": record.entry_point,
                "input": pair.input,
                "output": pair.output,
                "questions": json.dumps(qset.to_dict()),
                "kind": "call",
                "task": "io",
                "program_id": record.id,
                "level": record.level,
            }
        )
    return examples


ANNOTATION_FIELDS = ("prompt", "completion", "source_run", "model", "annotator", "verification")


def annotation_examples(path: Path) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Annotator exports (JSONL: prompt, completion, source_run, model, annotator, verification) as SFT
    examples. Kept: ``verification.verified`` is true (``simulator.nlex.verify``: the answer checked
    true, no claim false). Older exports said ``passed`` with a verifier that missed answers cut of
    their closing tag; they count as unverified: run ``manage.py reverify`` and export again.
    Returns (examples, counts by outcome)."""
    refuse_benchmarks(path)
    counts = {"kept": 0, "malformed": 0, "unverified": 0, "duplicate": 0}
    seen: set[tuple[str, str]] = set()
    examples = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            counts["malformed"] += 1
            continue
        if not isinstance(record, dict) or not all(
            isinstance(record.get(k), str) for k in ("prompt", "completion")
        ):
            counts["malformed"] += 1
            continue
        verification = record.get("verification")
        if not (isinstance(verification, dict) and verification.get("verified") is True):
            counts["unverified"] += 1
            continue
        key = (record["prompt"], record["completion"])
        if key in seen:
            counts["duplicate"] += 1
            continue
        seen.add(key)
        counts["kept"] += 1
        examples.append(
            {
                "kind": "simulate",
                "prompt": record["prompt"],
                "completion": record["completion"],
                "messages": [{"role": "user", "content": record["prompt"]}],
                "style": "annotation",
                "program_id": str(record.get("source_run", "")),
                "level": 0,
                "source": f"annotation:{record.get('annotator', 'unknown')}:{record.get('model', 'unknown')}",
            }
        )
    return examples, counts


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    return count


class BadExamples(ValueError):
    """A training data file that cannot be trained on, said with the line at fault."""


def read_jsonl(path: Path, fields: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The examples of a training JSONL file; a line that is not a JSON object holding ``fields`` is a
    ``BadExamples`` that names it, and so is a file with no example."""
    refuse_benchmarks(path)
    examples = []
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                example = load_json(line)
            except json.JSONDecodeError as exc:
                raise BadExamples(f"{path}:{number}: not JSON ({exc.msg})") from None
            if not isinstance(example, dict) or any(name not in example for name in fields):
                has = ", ".join(sorted(example)) if isinstance(example, dict) else type(example).__name__
                raise BadExamples(f"{path}:{number}: an example holds {', '.join(fields)}; this one: {has}")
            examples.append(example)
    if not examples:
        raise BadExamples(f"{path} holds no examples")
    return examples


def codegen_examples(records: Iterable[SynthRecord]) -> list[dict[str, Any]]:
    """Stage-2 examples (code generation, unit-test reward): write ``f`` from its input/output asserts.
    The program's own pairs are the tests (``simulator.rewards.UnitTestReward`` reads ``tests``)."""
    examples = []
    for record in records:
        tests = [
            f"assert {record.entry_point}({p.input}) == {p.output}" for p in record.io if p.output is not None
        ]
        if not tests:
            continue
        prompt = (
            f"Write a Python function `{record.entry_point}` that passes these tests. "
            "Answer with the code in one ```python fenced block.\n\n" + "\n".join(tests)
        )
        examples.append(
            {"prompt": prompt, "tests": json.dumps(tests), "program_id": record.id, "level": record.level}
        )
    return examples
