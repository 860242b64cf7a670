"""`execsim train data --narration full|compact`: the style reaches the SFT simulate completions and
the data card records it (real sandbox)."""

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


def test_an_unknown_narration_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        build(tmp_path, "--narration", "terse")
