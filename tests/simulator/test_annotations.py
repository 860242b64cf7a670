"""Verifying an NLEX text against a real trace, the export record, and its status filter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simulator.annotations import EXPORT_FIELDS, ExportRecord, keep, prompt_for, verify
from simulator.execution.trace import Step, Trace, Value

CODE = "def add_one(x):\n    y = x + 1\n    return y\n"


def _trace(x: int) -> Trace:
    """The trace the tracer records for add_one(x) (written out: no sandbox needed)."""
    v = lambda n: Value(repr(n), "int")  # noqa: E731
    return Trace(
        steps=[
            Step(0, "call", "add_one", 1, 0, {"x": v(x)}, frame=1),
            Step(1, "line", "add_one", 2, 0, frame=1),
            Step(2, "line", "add_one", 3, 0, {"y": v(x + 1)}, frame=1),
            Step(3, "return", "add_one", 3, 0, value=v(x + 1), frame=1),
        ],
        source=CODE,
    )


RIGHT = (
    "[THOUGHT] add_one is called with x = 5. y becomes 6. It returns 6. [/THOUGHT]\n"
    "[ANSWER] assert add_one(5) == 6 [/ANSWER]"
)
WRONG = RIGHT.replace("y becomes 6", "y becomes 7")


def test_a_text_that_agrees_with_the_trace_passes():
    result = verify(RIGHT, _trace(5), CODE)
    assert result.passed and result.false == 0 and result.true >= 3
    assert result.first_false is None


def test_a_contradicting_claim_fails_and_is_located():
    result = verify(WRONG, _trace(5), CODE)
    assert not result.passed and result.false == 1
    assert result.first_false["text"] == "y becomes 7" and result.first_false["actual"] == "6"
    mark = next(m for m in result.marks if m.verdict == "false")
    assert WRONG[mark.start : mark.end] == "y becomes 7" and mark.step == 2


def test_a_text_without_checkable_claims_does_not_pass():
    assert not verify("It adds one.", _trace(5), CODE).passed


def test_summary_is_json_and_has_no_marks():
    summary = verify(WRONG, _trace(5), CODE).summary()
    assert "marks" not in summary and json.loads(json.dumps(summary))["passed"] is False


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
        verification={"passed": passed},
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
