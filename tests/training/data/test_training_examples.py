"""Traces -> SFT/RL/code-generation examples; annotator exports; never benchmark files."""

from __future__ import annotations

import json

import pytest

from training.data.examples import (
    BenchmarkDataRefused,
    annotation_examples,
    codegen_examples,
    read_jsonl,
    rl_examples,
    sft_examples,
)
from training.paths import benchmarks_dir
from training.synth.records import IOPair, SynthRecord

CODE = (
    "def f(nums):\n    total = 0\n    for v in nums:\n        if v % 2 == 0:\n"
    "            total += v * 2\n    return total"
)


def program() -> SynthRecord:
    constraint = {
        "level": 3,
        "type": "builtin",
        "method": "sum",
        "control": ["for"],
        "extra_methods": 2,
        "helper": False,
    }
    return SynthRecord("p1", "rules", 3, constraint, CODE, io=[IOPair("[1, 2, 4]", "original", "12", "int")])


def test_sft_examples_narrate_real_traces_in_both_styles():
    examples = sft_examples([program()])
    by_style = {e["style"]: e for e in examples}
    assert set(by_style) == {"call", "stdin"}
    call = by_style["call"]
    assert "assert f([1, 2, 4]) == ??" in call["prompt"] and call["messages"][-1]["content"] == call["prompt"]
    assert "[THOUGHT]" in call["completion"] and "assert f([1, 2, 4]) == 12" in call["completion"]
    stdin = by_style["stdin"]
    assert "<input>\n[1, 2, 4]\n</input>" in stdin["prompt"]
    assert "<output>\n12\n</output>" in stdin["completion"]


def test_cruxeval_style_uses_the_evaluation_prompt_and_shares_the_call_trace():
    from simulator.evaluation import cruxeval
    from training.execution import trace_programs

    traced: list = []

    def counting_tracer(programs):
        traced.extend(programs)
        return trace_programs(programs)

    examples = sft_examples([program()], styles=("call", "cruxeval"), tracer=counting_tracer)
    by_style = {e["style"]: e for e in examples}
    assert by_style["cruxeval"]["messages"] == cruxeval.messages(CODE, "f([1, 2, 4])", "nlex")
    assert by_style["cruxeval"]["completion"] == by_style["call"]["completion"]
    assert len(traced) == 1  # one program, one trace, two prompts


def test_overlong_narrations_are_dropped_not_truncated():
    assert sft_examples([program()], styles=("call",), max_completion_chars=50) == []


def test_rl_examples_carry_the_white_box_reward_columns():
    from training.rl.train import resolve_reward

    [row] = rl_examples([program()])
    assert row["output"] == "12" and row["input"] == "[1, 2, 4]" and "Question1" in row["prompt"]
    questions = json.loads(row["questions"])["questions"]
    assert questions  # the program has a loop: ExecVerify's filter lets it be asked about
    reward = resolve_reward("white_box")  # decodes the JSON column for simulator.rewards
    columns = {k: [row[k]] * 2 for k in ("code", "entry_point", "input", "output", "questions", "task")}
    right_io = "<answer>\nassert f([1, 2, 4]) == 12\n" + "\n".join("x" for _ in questions) + "\n</answer>"
    wrong_io = "<answer>\nassert f([1, 2, 4]) == 13\n</answer>"
    got = reward([right_io, wrong_io], **columns)
    assert 1.0 <= got[0] < 2.0 and got[1] == 0.0  # gated: a wrong assertion earns nothing


def test_codegen_examples_turn_io_pairs_into_unit_tests():
    [row] = codegen_examples([program()])
    assert json.loads(row["tests"]) == ["assert f([1, 2, 4]) == 12"]
    assert "assert f([1, 2, 4]) == 12" in row["prompt"]


def test_annotation_exports_keep_verified_unique_records(tmp_path):
    path = tmp_path / "export.jsonl"
    base = {"prompt": "p", "completion": "c", "source_run": "run-1", "model": "m", "annotator": "ann"}
    lines = [
        {**base, "verification": {"verified": True}},
        {**base, "verification": {"verified": True}},  # duplicate
        {**base, "completion": "c2", "verification": {"verified": False}},
        {**base, "completion": "c3", "verification": {"verified": True}},
        {**base, "completion": "c4", "verification": {"passed": True}},  # the old verifier: not trusted
        {"prompt": 1},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n")
    examples, counts = annotation_examples(path)
    assert [e["completion"] for e in examples] == ["c", "c3"]
    assert counts == {"kept": 2, "malformed": 2, "unverified": 2, "duplicate": 1}
    assert examples[0]["source"] == "annotation:ann:m"


def test_benchmark_files_are_refused_as_training_data():
    bench = benchmarks_dir()
    if bench is None:
        pytest.skip("no benchmark folder next to the repo")
    with pytest.raises(BenchmarkDataRefused):
        read_jsonl(bench / "cruxeval" / "dev.jsonl")
    with pytest.raises(BenchmarkDataRefused):
        annotation_examples(bench / "mbpp" / "sanitized-dev.jsonl")


def test_rl_examples_at_once_are_the_apps_default_request_scored_from_its_prefill():
    from simulator.prompts import simulate
    from training.rl.train import resolve_reward

    [row] = rl_examples([program()], at_once=True)
    prefill = simulate.answer_prefill("f([1, 2, 4])")
    assert row["prompt"] == [
        *simulate.call_messages(CODE, "f([1, 2, 4])"),
        {"role": "assistant", "content": prefill},
    ]
    assert row["prefill"] == prefill and row["output"] == "12"
    reward = resolve_reward("output_prediction")
    columns = {k: [row[k]] for k in ("code", "entry_point", "input", "output", "prefill", "kind")}
    # the completions go on from the prefill; read up to the request's stop string, as the app would
    # get them from vLLM (a second answer after it never counts; one before it does, as in the app)
    right, wrong, call = " 12\n[/ANSWER]", " 13\n", " f([1, 2, 4])"
    after_stop = " 13\n[/ANSWER]\n[ANSWER]\nassert f([1, 2, 4]) == 12\n[/ANSWER]"
    again = " 13\n[/THOUGHT]\n[ANSWER]\nassert f([1, 2, 4]) == 12\n[/ANSWER] and so on"
    columns = {k: [v[0]] * 5 for k, v in columns.items()}
    assert reward([right, wrong, call, after_stop, again], **columns) == [1.0, -1.0, -1.0, -1.0, 1.0]
