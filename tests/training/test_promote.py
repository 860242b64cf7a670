"""The promotion gate on synthetic result files: it replaces the checkpoint only for a paired gain on
the target task with no significant loss elsewhere, on the same dev data, and refuses otherwise."""

from __future__ import annotations

import json

import pytest

from simulator.cli import EXIT_FAILED, EXIT_USAGE, main

N = 40


def results(folder, task, correct, *, path=None, sha="d" * 64, weights=None, name=None):
    """A ``train evaluate`` task record: items 0..N-1, the first ``correct`` of them right; in the
    folder ``name`` (default: the task's)."""
    path = path or f"/bench/{task}/dev.jsonl"
    record = {
        "task": task,
        "items": [{"id": str(i), "correct": int(i < correct), "n": 1} for i in range(N)],
        "provenance": {"data": {"path": path, "sha256": sha}, "weights_sha256": weights},
    }
    (folder / (name or task)).mkdir(parents=True, exist_ok=True)
    (folder / (name or task) / "results.json").write_text(json.dumps(record))


def checkpoint(folder, weights, payload):
    (folder / "adapter").mkdir(parents=True)
    (folder / "adapter" / "adapter_config.json").write_text("{}")
    (folder / "adapter" / "adapter_model.safetensors").write_bytes(payload)
    manifest = {
        "base_model": "/models/smollm2-135m-instruct",
        "weights_sha256": {"model.safetensors": weights},
        "steps": 81,
        "created": "then",
        "evaluation": [],
        "serve": {"merged": "execsim model serve"},
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))


@pytest.fixture
def folders(tmp_path):
    checkpoint(tmp_path / "current", "a" * 64, b"old")
    checkpoint(tmp_path / "candidate", "b" * 64, b"new")
    return tmp_path


def promote(tmp_path, *extra):
    return main(
        [
            "train",
            "promote",
            "--candidate",
            str(tmp_path / "candidate"),
            "--current",
            str(tmp_path / "current"),
            "--candidate-results",
            str(tmp_path / "eval-new"),
            "--current-results",
            str(tmp_path / "eval-old"),
            *extra,
        ]
    )


def test_a_clear_gain_with_no_loss_is_promoted(folders, capsys):
    results(folders / "eval-old", "cruxeval-o", 6, weights="a" * 64)
    results(folders / "eval-new", "cruxeval-o", 16, weights="b" * 64)  # 10 items better, none worse
    results(folders / "eval-old", "mbpp", 3)
    results(folders / "eval-new", "mbpp", 2)  # one worse: not significant
    (folders / "candidate" / "adapter" / "tokenizer.json").write_text("{}")  # as export writes it
    assert promote(folders) == 0
    out = capsys.readouterr().out
    assert "cruxeval-o n=40" in out and "PROMOTE" in out
    assert (folders / "current" / "adapter" / "adapter_model.safetensors").read_bytes() == b"new"
    assert sorted(p.name for p in (folders / "current" / "adapter").iterdir()) == [
        "adapter_config.json",
        "adapter_model.safetensors",
    ]
    manifest = json.loads((folders / "current" / "manifest.json").read_text())
    assert manifest["weights_sha256"] == {"model.safetensors": "b" * 64} and manifest["adapter"] == "adapter"
    assert manifest["promotion"]["replaced"]["weights_sha256"] == {"model.safetensors": "a" * 64}
    assert manifest["promotion"]["comparison"]["cruxeval-o"]["low"] > 0
    rows = {r["benchmark"]: r for r in manifest["evaluation"] if r["model"] == "promoted - previous"}
    assert rows["cruxeval-o"]["value"] == pytest.approx(0.25) and rows["mbpp"]["excludes_zero"] is False
    assert manifest["serve"] == {"merged": "execsim model serve"}  # the committed name's serve line


@pytest.mark.parametrize(
    "old, new, other_old, other_new, reason",
    [
        (6, 7, 3, 3, "is not above zero"),  # one item better: the interval reaches zero
        (6, 16, 12, 2, "mbpp: a significant loss"),  # target better, the other task clearly worse
    ],
)
def test_refused_without_a_clear_gain_or_with_a_loss(folders, capsys, old, new, other_old, other_new, reason):
    results(folders / "eval-old", "cruxeval-o", old)
    results(folders / "eval-new", "cruxeval-o", new)
    results(folders / "eval-old", "mbpp", other_old)
    results(folders / "eval-new", "mbpp", other_new)
    assert promote(folders) == EXIT_FAILED
    assert reason in capsys.readouterr().out
    assert (folders / "current" / "adapter" / "adapter_model.safetensors").read_bytes() == b"old"


def test_results_of_other_weights_are_refused(folders, capsys):
    results(folders / "eval-old", "cruxeval-o", 6, weights="a" * 64)
    results(folders / "eval-new", "cruxeval-o", 30, weights="c" * 64)  # not the candidate's weights
    assert promote(folders) == EXIT_FAILED
    assert "measured on other weights" in capsys.readouterr().out


def test_a_dry_run_changes_nothing(folders, capsys):
    results(folders / "eval-old", "cruxeval-o", 6)
    results(folders / "eval-new", "cruxeval-o", 30)
    assert promote(folders, "--dry-run") == 0
    assert "would replace" in capsys.readouterr().out
    assert (folders / "current" / "adapter" / "adapter_model.safetensors").read_bytes() == b"old"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"sha": "e" * 64}, "not on the same data file"),
        ({"path": "/bench/cruxeval/test.jsonl"}, "is not a dev split"),
    ],
)
def test_other_data_or_a_non_dev_split_is_a_usage_error(folders, capsys, kwargs, message):
    results(folders / "eval-old", "cruxeval-o", 6, **({"path": kwargs["path"]} if "path" in kwargs else {}))
    results(folders / "eval-new", "cruxeval-o", 30, **kwargs)
    assert promote(folders) == EXIT_USAGE
    assert message in capsys.readouterr().err.strip().splitlines()[-1]


def repair_results(folder, replies_ok, public_after, *, private_after=None, weights=None):
    """An ``eval self-rlef`` record as ``self-rlef/results.json``: items 0..N-1, each with 4 repair
    replies of which ``replies_ok(i)`` are a new program, and passing its public test after repair
    when ``i < public_after``, its private tests when ``i < private_after`` (default: the same)."""
    private_after = public_after if private_after is None else private_after
    record = {
        "task": "self-rlef",
        "items": [
            {
                "id": str(i),
                "parse": {"repair_reply": [4 - replies_ok(i), 4]},
                "final": {"public": i < public_after, "private": i < private_after},
            }
            for i in range(N)
        ],
        "provenance": {"data": {"path": "/bench/mbpp/sanitized-dev.jsonl", "sha256": "f" * 64},
                       "weights_sha256": weights},
    }  # fmt: skip
    (folder / "self-rlef").mkdir(parents=True, exist_ok=True)
    (folder / "self-rlef" / "results.json").write_text(json.dumps(record))


@pytest.mark.parametrize("public_after, verdict", [(5, 0), (1, EXIT_FAILED)])
def test_repair_replies_can_be_the_target_and_repair_itself_must_not_get_worse(
    folders, capsys, public_after, verdict
):
    results(folders / "eval-old", "cruxeval-o", 6)
    results(folders / "eval-new", "cruxeval-o", 6)
    repair_results(folders / "eval-old", lambda i: 3 if i % 2 else 2, public_after=5)
    repair_results(folders / "eval-new", lambda i: 4 if i % 4 else 3, public_after=public_after)
    assert promote(folders, "--target", "repair-replies") == verdict
    out = capsys.readouterr().out
    assert "repair-replies n=40" in out and "self-rlef n=40" in out
    assert ("PROMOTE" in out) == (verdict == 0)
    if verdict:  # four fewer programs pass their tests after repair: a significant loss
        assert "self-rlef: a significant loss" in out
    else:
        manifest = json.loads((folders / "current" / "manifest.json").read_text())
        assert manifest["promotion"]["target"] == "repair-replies"
        assert manifest["promotion"]["comparison"]["repair-replies"]["low"] > 0


def test_repair_counts_programs_that_pass_every_test_not_the_public_one_alone(folders, capsys):
    """15 more programs pass their public test after repair, none their private ones: answers written
    in (``return 6`` for a test expecting 6), which the first own-fix checkpoint learned to write."""
    results(folders / "eval-old", "cruxeval-o", 6)
    results(folders / "eval-new", "cruxeval-o", 6)
    repair_results(folders / "eval-old", lambda i: 4, public_after=5)
    repair_results(folders / "eval-new", lambda i: 4, public_after=20, private_after=5)
    assert promote(folders, "--target", "self-rlef") == EXIT_FAILED
    assert "self-rlef n=40 a=0.125 b=0.125 diff=+0.000" in capsys.readouterr().out


def test_a_second_run_of_a_task_in_its_own_folder_is_a_task_of_its_own(folders, capsys):
    results(folders / "eval-old", "mbpp", 6)
    results(folders / "eval-new", "mbpp", 7)  # greedy: one better, not significant
    results(folders / "eval-old", "mbpp", 6, name="mbpp-n8")
    results(folders / "eval-new", "mbpp", 16, name="mbpp-n8")  # sampled, named as the target
    assert promote(folders, "--target", "mbpp-n8", "--dry-run") == 0
    out = capsys.readouterr().out
    assert "mbpp-n8 n=40" in out and "mbpp n=40" in out and "PROMOTE" in out


def test_a_candidate_kept_beside_is_written_whatever_the_verdict_and_the_default_stays(folders, capsys):
    results(folders / "eval-old", "cruxeval-o", 6)
    results(folders / "eval-new", "cruxeval-o", 7)  # not a clear gain: refused as the default
    beside = folders / "stdin"
    assert promote(folders, "--beside", str(beside)) == 0
    out = capsys.readouterr().out
    assert "REFUSED" in out and f"wrote {folders / 'candidate'}'s adapter" in out
    assert f"EXECSIM_CHECKPOINT={beside.resolve()}" in out  # outside checkpoints/: chosen by its path
    assert (folders / "current" / "adapter" / "adapter_model.safetensors").read_bytes() == b"old"
    assert (beside / "adapter" / "adapter_model.safetensors").read_bytes() == b"new"
    manifest = json.loads((beside / "manifest.json").read_text())
    assert manifest["adapter"] == "adapter" and manifest["merged"] is None and "promotion" not in manifest
    kept = manifest["kept_beside"]
    assert kept["verdict"].startswith("REFUSED") and kept["default"]["path"] == str(folders / "current")
    assert kept["default"]["weights_sha256"] == {"model.safetensors": "a" * 64}
    assert [r["model"] for r in manifest["evaluation"]] == ["stdin - current"]
    assert f"EXECSIM_CHECKPOINT={beside.resolve()} execsim model serve" in manifest["serve"]["merged"]
    assert manifest["serve"]["lora"] == f"execsim model serve --lora stdin={beside}/adapter"


def test_a_folder_in_checkpoints_is_served_by_its_name(folders, monkeypatch, capsys):
    monkeypatch.setattr("training.promote.checkpoints_dir", lambda: folders / "checkpoints")
    results(folders / "eval-old", "cruxeval-o", 6)
    results(folders / "eval-new", "cruxeval-o", 30)
    assert promote(folders, "--beside", str(folders / "checkpoints" / "kept")) == 0
    assert "serve it with EXECSIM_CHECKPOINT=kept" in capsys.readouterr().out
    manifest = json.loads((folders / "checkpoints" / "kept" / "manifest.json").read_text())
    assert manifest["serve"]["merged"].startswith("EXECSIM_CHECKPOINT=kept execsim model prepare")
    assert manifest["kept_beside"]["verdict"] == "PROMOTE"  # a gain, and still not the default
    assert (folders / "current" / "adapter" / "adapter_model.safetensors").read_bytes() == b"old"


def test_kept_beside_cannot_name_the_current_one_and_a_dry_run_writes_nothing(folders, capsys):
    results(folders / "eval-old", "cruxeval-o", 6)
    results(folders / "eval-new", "cruxeval-o", 30)
    assert promote(folders, "--beside", str(folders / "current")) == EXIT_USAGE
    assert "names the current checkpoint" in capsys.readouterr().err
    assert promote(folders, "--beside", str(folders / "candidate")) == EXIT_USAGE
    assert "names the candidate" in capsys.readouterr().err
    assert promote(folders, "--beside", str(folders / "kept"), "--dry-run") == 0
    assert "would write" in capsys.readouterr().out and not (folders / "kept").exists()


def test_the_default_current_checkpoint_is_this_checkouts_from_any_folder(tmp_path, monkeypatch, capsys):
    checkpoint(tmp_path / "candidate", "b" * 64, b"new")
    monkeypatch.chdir(tmp_path)  # no checkpoints/ here: the committed one is found all the same
    argv = ["train", "promote", "--candidate", "candidate", "--candidate-results", "eval-new"]
    assert main([*argv, "--current-results", "eval-old"]) == EXIT_USAGE
    assert "eval-new holds no <task>/results.json" in capsys.readouterr().err
