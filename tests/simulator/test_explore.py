"""The explorer's narration sentences are tied to the steps they describe."""

from __future__ import annotations

import pytest

from simulator.execution import Program, SandboxError, run
from simulator.explore import explorer_payload, narration_sentences, sentence_at

CODE = "def f(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n"


@pytest.fixture(scope="module")
def traced():
    program = Program(code=CODE, call="f([1, 2, 3, 4])")
    try:
        result = run(program, trace=True)
    except SandboxError as exc:
        pytest.skip(f"the sandbox is not available: {exc}")
    return program, result.trace


def test_each_sentence_sits_on_the_step_where_its_line_runs(traced):
    program, trace = traced
    sentences = narration_sentences(trace, program)
    assert sentences[0].step == 0 and "f is called" in sentences[0].text
    for sentence in sentences:
        if sentence.text.startswith("Line "):
            line = int(sentence.text.split(":")[0].split()[1])
            assert trace.steps[sentence.step].line == line
    steps = [s.step for s in sentences]
    assert steps == sorted(steps)
    assert not any(s.text in ("[THOUGHT]", "[/THOUGHT]", "[ANSWER]") for s in sentences)
    answer = next(s for s in sentences if s.text.startswith("assert "))
    assert answer.step == len(trace.steps) - 1  # the answer belongs to the end, not the last line


def test_sentence_at_gives_the_last_sentence_placed_at_or_before(traced):
    program, trace = traced
    sentences = narration_sentences(trace, program)
    assert sentence_at(sentences, 0) is sentences[0]
    repeat = next(s for s in sentences if "repeat" in s.text)
    assert sentence_at(sentences, repeat.step) is repeat


def test_payload_is_the_trace_the_lines_and_the_sentences(traced):
    program, trace = traced
    payload = explorer_payload(trace, program)
    assert payload["trace"]["steps"][0]["event"] == "call"
    assert payload["lines"][0] == "def f(xs):" and payload["shape"] == "call"
    assert payload["sentences"] and all("step" in s for s in payload["sentences"])
