"""The verifier on what the default model really writes (tests/simulator/nlex/real: 70 replies exactly
as vLLM returned them, stop strings cut, each labelled by hand against its real trace). The targets
of issue 10 hold, and no text with a false statement is ever shown as verified."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.evaluation.verifier import load, score, verify_record

REAL = Path(__file__).parent / "real"
TEXTS, LABELS = load(REAL)
HELD_TEXTS, HELD_LABELS = load(
    REAL / "heldout"
)  # labelled after the verifier was tuned, never used to tune it


def test_the_replies_are_as_vllm_returns_them() -> None:
    assert len(TEXTS) >= 70
    assert not any("[/ANSWER]" in r["text"] or "</output>" in r["text"] for r in TEXTS)


def test_the_verifier_meets_the_targets_on_real_replies() -> None:
    result = score(TEXTS, LABELS)
    assert result.falsely_verified == []
    assert result.answers_agreed / result.texts >= 0.97
    assert result.first_on_line / result.labelled_first >= 0.85
    assert result.matched_claims / result.found_claims >= 0.9  # precision
    assert result.matched_claims / result.gold_claims >= 0.9  # recall


@pytest.mark.parametrize("record", TEXTS, ids=[r["id"] for r in TEXTS])
def test_no_text_with_a_false_statement_is_verified(record: dict) -> None:
    label = LABELS[record["id"]]
    v = verify_record(record)
    if label["first_false"] is not None or label["answer"] != "true":
        assert not v.verified, v.summary
    if label["answer"] == "false":  # a wrong final answer, its closing tag cut, is a divergence
        assert v.answer.verdict == "false" and v.divergent


@pytest.mark.parametrize("record", HELD_TEXTS, ids=[r["id"] for r in HELD_TEXTS])
def test_held_out_texts_with_a_false_statement_are_never_verified(record: dict) -> None:
    label = HELD_LABELS[record["id"]]
    v = verify_record(record)
    if label["first_false"] is not None or label["answer"] != "true":
        assert not v.verified, v.summary


def test_on_held_out_texts_the_first_divergence_is_on_the_labelled_line() -> None:
    result = score(HELD_TEXTS, HELD_LABELS)
    assert result.falsely_verified == [] and result.first_on_line / result.labelled_first >= 0.85
