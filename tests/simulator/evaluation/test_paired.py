"""Paired comparison of two evaluations (``execsim eval-diff``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simulator.cli import main
from simulator.evaluation.paired import compare, paired_bootstrap


def record(task: str, outcomes: dict[str, int], n: int = 1) -> dict:
    return {
        "task": task,
        "items": [{"id": key, "n": n, "correct": correct} for key, correct in outcomes.items()],
    }


def test_a_consistent_gain_excludes_zero() -> None:
    base = record("cruxeval-o", {str(i): int(i < 5) for i in range(100)})
    new = record("cruxeval-o", {str(i): int(i < 25) for i in range(100)})
    result = compare(base, new)
    assert (result.a_mean, result.b_mean) == (0.05, 0.25)
    assert result.value == pytest.approx(0.20)
    assert 0 < result.low < 0.20 < result.high
    assert result.excludes_zero
    assert (result.better, result.worse, result.n) == (20, 0, 100)


def test_a_difference_as_a_manifest_row() -> None:
    diff = compare(record("mbpp", {"a": 0, "b": 1}), record("mbpp", {"a": 1, "b": 1}))
    row = diff.row("pass@1", "sft - base")
    assert row["benchmark"] == "mbpp" and row["metric"] == "pass@1" and row["model"] == "sft - base"
    assert (row["value"], row["n"], row["better"], row["worse"]) == (0.5, 2, 1, 0)
    assert row["method"] == "paired bootstrap" and row["low"] <= row["value"] <= row["high"]


def test_swapped_items_with_equal_means_do_not_exclude_zero() -> None:
    base = record("mbpp", {str(i): int(i < 10) for i in range(40)})
    new = record("mbpp", {str(i): int(i >= 30) for i in range(40)})
    result = compare(base, new)
    assert result.value == 0
    assert result.low < 0 < result.high
    assert not result.excludes_zero
    assert (result.better, result.worse) == (10, 10)


def test_pairing_is_by_item_id_and_unpaired_items_are_counted() -> None:
    base = record("cruxeval-o", {"a": 1, "b": 0, "c": 0})
    new = record("cruxeval-o", {"c": 1, "b": 0, "d": 1})  # another order, one item each side alone
    result = compare(base, new)
    assert result.n == 2
    assert result.unpaired == 2
    assert (result.better, result.worse) == (1, 0)


def test_per_item_pass_at_1_uses_all_samples() -> None:
    base = record("cruxeval-o", {"a": 1, "b": 2}, n=4)
    new = record("cruxeval-o", {"a": 3, "b": 2}, n=4)
    assert compare(base, new).value == pytest.approx(0.25)


def test_self_rlef_runs_compare_whether_the_submitted_program_passes_its_public_tests() -> None:
    def rlef(passes: dict[str, bool]) -> dict:
        items = [{"id": key, "final": {"public": ok, "private": None}} for key, ok in passes.items()]
        return {"task": "self-rlef", "items": items}

    result = compare(rlef({"a": False, "b": True, "c": False}), rlef({"a": True, "b": True, "c": False}))
    assert (result.a_mean, result.b_mean, result.better, result.worse, result.n) == (1 / 3, 2 / 3, 1, 0, 3)


def test_different_tasks_are_refused() -> None:
    with pytest.raises(ValueError, match="different tasks"):
        compare(record("mbpp", {"a": 1}), record("cruxeval-o", {"a": 1}))


def test_bootstrap_is_seeded() -> None:
    pairs = [(0, 1), (1, 0), (0, 0), (0, 1)] * 10
    assert paired_bootstrap(pairs, seed=3) == paired_bootstrap(pairs, seed=3)


def test_cli_prints_one_line_and_refuses_missing_files(tmp_path: Path, capsys) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(record("cruxeval-o", {str(i): 0 for i in range(30)})))
    b.write_text(json.dumps(record("cruxeval-o", {str(i): int(i < 15) for i in range(30)})))
    assert main(["eval-diff", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cruxeval-o n=30 a=0.000 b=0.500 diff=+0.500[")
    assert "excludes-zero=yes" in out
    assert main(["eval-diff", str(a), str(b), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["excludes_zero"] is True
    assert main(["eval-diff", str(a), str(tmp_path / "none.json")]) == 2
    assert "no such file" in capsys.readouterr().err
