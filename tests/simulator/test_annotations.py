"""The export record of annotators' corrections, its status filter, and what training reads of it."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from simulator.annotations import EXPORT_FIELDS, ExportFilter, ExportRecord, keep, prompt_for

CODE = "def add_one(x):\n    y = x + 1\n    return y\n"


def test_prompt_is_the_simulate_prompts_user_turn():
    prompt = prompt_for(CODE, call="add_one(5)")
    assert "assert add_one(5) == ??" in prompt and CODE.strip() in prompt
    assert "<input>\n3\n</input>" in prompt_for("print(int(input()))", stdin="3")


def _record(passed: bool, model: str = "m", decided_at: str | None = None) -> ExportRecord:
    return ExportRecord(
        prompt="p",
        completion="c",
        source_run="r",
        model=model,
        annotator="ann",
        verification={"verified": passed},
        item=1,
        candidate=0,
        test=0,
        decided_at=decided_at,
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


def test_the_export_filter_keeps_by_status_queue_and_day():
    """Issue 52: the export page offers what Argilla and Label Studio filter by; the page, its download
    and the command read one filter."""
    jan = _record(True, "m", "2026-01-31T23:30:00+01:00")  # the site's day: the 31st
    feb = _record(False, "other", "2026-02-01T00:10:00+01:00")
    undated = _record(True, "m")
    assert ExportFilter().keeps(jan) and not ExportFilter().keeps(feb)  # verified by default
    assert ExportFilter("all", model="other").keeps(feb) and not ExportFilter("all", model="other").keeps(jan)
    january = ExportFilter.parse("all", "", "2026-01-01", "2026-01-31")
    assert january.keeps(jan) and not january.keeps(feb) and not january.keeps(undated)
    assert ExportFilter.parse("all", since="2026-02-01").keeps(feb)
    assert ExportFilter.parse(until="2026-01-31").keeps(jan) and ExportFilter().keeps(undated)
    assert ExportFilter.from_query({"status": "", "since": " "}) == ExportFilter()


def test_the_export_filter_refuses_what_it_cannot_read():
    for bad in ({"status": "bogus"}, {"since": "31/01/2026"}, {"since": "2026-02-02", "until": "2026-02-01"}):
        with pytest.raises(ValueError):
            ExportFilter.from_query(bad)


def test_the_export_filter_in_words_in_a_query_and_as_a_command():
    keep = ExportFilter("unverified", "my model", date(2026, 1, 1), None)
    assert keep.describe() == "unverified, queue my model, decided from 2026-01-01"
    assert keep.query() == {"status": "unverified", "model": "my model", "since": "2026-01-01"}
    assert keep.command().endswith("--status unverified --model 'my model' --since 2026-01-01")
    assert ExportFilter().query() == {} and ExportFilter().describe() == "verified, every queue"
