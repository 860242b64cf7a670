"""Export: a merged folder with a manifest; evaluation results must carry n and an interval."""

from __future__ import annotations

import json

import pytest

from training.export.checkpoint import ExportError, check_eval_results, export


def test_a_full_model_exports_with_a_manifest(tiny_model_dir, tmp_path):
    from transformers import AutoModelForCausalLM

    summary = {"stage": "sft", "steps": 7, "seconds": 1.5, "data": None, "log_history": [{"loss": 1}]}
    results = [
        {"benchmark": "cruxeval-dev", "metric": "pass@1", "value": 0.1, "n": 200, "low": 0.07, "high": 0.15}
    ]
    manifest = export(tiny_model_dir, tmp_path / "out", summaries=[summary], eval_results=results)
    assert manifest["adapter"] is None and manifest["steps"] == 7 and manifest["train_seconds"] == 1.5
    assert "log_history" not in manifest["stages"][0]
    assert manifest["evaluation"] == results
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["base_model"] == str(tiny_model_dir)
    AutoModelForCausalLM.from_pretrained(tmp_path / "out" / "merged")  # loads: servable


def test_an_adapter_without_a_base_is_refused(tmp_path):
    (tmp_path / "adapter").mkdir()
    (tmp_path / "adapter" / "adapter_config.json").write_text("{}")
    with pytest.raises(ExportError, match="--base"):
        export(tmp_path / "adapter", tmp_path / "out")


def test_a_training_runs_folder_names_the_adapter_inside_it(tmp_path):
    """`train sft --out R` writes R/config.json (the run's, not a model's) beside R/adapter/."""
    (tmp_path / "run" / "adapter").mkdir(parents=True)
    (tmp_path / "run" / "adapter" / "adapter_config.json").write_text("{}")
    (tmp_path / "run" / "config.json").write_text('{"max_steps": 100}')
    with pytest.raises(ExportError, match="a training run's folder: pass --checkpoint .*run/adapter"):
        export(tmp_path / "run", tmp_path / "out")


def test_evaluation_results_need_n_and_an_interval():
    with pytest.raises(ExportError, match="n, low, high"):
        check_eval_results([{"benchmark": "b", "metric": "pass@1", "value": 0.5}])
