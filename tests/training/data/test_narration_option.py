"""`execsim train data --narration full|compact|none`: the style reaches the SFT simulate completions
and the data card records it (real sandbox)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from training.synth.records import IOPair, SynthRecord

CODE = "def f(nums):\n    total = 0\n    for v in nums:\n        total += v\n    return total"


def build(tmp_path: Path, *options: str) -> tuple[list[dict], dict]:
    """Run `train data` on one program with ``options``; (sft rows, data card)."""
    from simulator.cli import main

    record = SynthRecord(
        "p1", "rules", 1, {"level": 1}, CODE, io=[IOPair("[1, 2, 3]", "original", "6", "int")]
    )
    programs = tmp_path / "programs.jsonl"
    programs.write_text(json.dumps(record.to_dict()) + "\n")
    out = tmp_path / "data"
    argv = ["train", "data", "--programs", str(programs), "--out", str(out), "--kinds", "simulate"]
    assert main([*argv, "--styles", "call", *options]) == 0
    rows = [json.loads(line) for line in (out / "sft.jsonl").read_text().splitlines()]
    return rows, json.loads((out / "data-card.json").read_text())


def test_compact_narration_reaches_the_simulate_examples_and_the_card(tmp_path: Path) -> None:
    rows, card = build(tmp_path, "--narration", "compact")
    (row,) = rows
    assert row["kind"] == "simulate" and card["narration"] == "compact"
    thought = row["completion"].split("[/THOUGHT]")[0]
    assert "`" not in thought and "Line 3: starts the loop; v = 1." in thought
    assert "Lines 3-4 repeat 2 more times." in thought
    assert "assert f([1, 2, 3]) == 6" in row["completion"]


def test_full_narration_is_the_default(tmp_path: Path) -> None:
    rows, card = build(tmp_path)
    (row,) = rows
    assert card["narration"] == "full"
    assert "Line 3: `for v in nums:` starts the loop; now v = 1." in row["completion"]


def test_no_narration_answers_at_once_as_the_default_request_asks(tmp_path: Path) -> None:
    from simulator.prompts import simulate

    rows, card = build(tmp_path, "--narration", "none", "--styles", "call,stdin")
    by_style = {row["style"]: row for row in rows}
    assert card["narration"] == "none"
    call, stdin = by_style["call"]["completion"].strip(), by_style["stdin"]["completion"].strip()
    assert call == simulate.answer_prefill("f([1, 2, 3])") + " 6\n[/ANSWER]"
    assert stdin == simulate.answer_prefill(None) + "6\n</output>"
    assert "Line" not in call + stdin


def test_no_narration_leaves_out_a_call_that_raises(tmp_path: Path) -> None:
    from training.data.examples import answer_at_once, call_program
    from training.execution import trace_programs

    record = SynthRecord("p2", "rules", 1, {"level": 1}, "def f(x):\n    return 1 // x", io=[])
    program = call_program(record, "0")
    (result,) = trace_programs([program])
    assert result.trace is not None and answer_at_once(result.trace, program) == ""


def test_an_unknown_narration_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        build(tmp_path, "--narration", "terse")


def test_no_narration_examples_are_the_prefilled_request(tmp_path: Path) -> None:
    from simulator.prompts import simulate

    rows, _ = build(tmp_path, "--narration", "none")
    (row,) = rows
    assert row["messages"][-1] == {"role": "assistant", "content": simulate.answer_prefill("f([1, 2, 3])")}
    assert row["messages"][:-1] == simulate.call_messages(CODE, "f([1, 2, 3])")
    assert row["prompt"] == row["messages"][-2]["content"]  # the user turn (the text format's prompt)


def test_no_narration_makes_the_rl_prompts_the_default_request_too(tmp_path: Path) -> None:
    from simulator.prompts import simulate

    build(tmp_path, "--narration", "none")
    (row,) = [json.loads(line) for line in (tmp_path / "data" / "rl.jsonl").read_text().splitlines()]
    assert row["prompt"][-1] == {"role": "assistant", "content": simulate.answer_prefill("f([1, 2, 3])")}
    assert row["prefill"] == simulate.answer_prefill("f([1, 2, 3])")
