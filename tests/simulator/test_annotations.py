"""The export record of annotators' corrections, its status filter, and what training reads of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simulator.annotations import EXPORT_FIELDS, ExportRecord, keep, prompt_for

CODE = "def add_one(x):\n    y = x + 1\n    return y\n"


def test_prompt_is_the_simulate_prompts_user_turn():
    prompt = prompt_for(CODE, call="add_one(5)")
    assert "assert add_one(5) == ??" in prompt and CODE.strip() in prompt
    assert "<input>\n3\n</input>" in prompt_for("print(int(input()))", stdin="3")


def _record(passed: bool) -> ExportRecord:
    return ExportRecord(
        prompt="p",
        completion="c",
        source_run="r",
        model="m",
        annotator="ann",
        verification={"verified": passed},
        item=1,
        candidate=0,
        test=0,
    )


def test_records_carry_the_fields_training_reads_and_filter_by_status():
    data = _record(True).to_dict()
    assert all(field in data for field in EXPORT_FIELDS)
    assert keep(_record(True), "verified") and not keep(_record(False), "verified")
    assert keep(_record(False), "unverified") and keep(_record(False), "all")
    with pytest.raises(ValueError):
        keep(_record(True), "bogus")


def test_training_reads_exported_records(tmp_path: Path):
    training = pytest.importorskip("training.data.examples")
    path = tmp_path / "export.jsonl"
    path.write_text("\n".join(json.dumps(_record(p).to_dict()) for p in (True, False)) + "\n")
    examples, counts = training.annotation_examples(path)
    assert counts["kept"] == 1 and counts["unverified"] == 1
    assert examples[0]["completion"] == "c" and examples[0]["source"] == "annotation:ann:m"
