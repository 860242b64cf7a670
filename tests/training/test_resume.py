"""Training accumulates over runs: a stopped run resumes with its optimizer, scheduler and step count,
equals one straight run, and the export manifest counts every run's steps and data once."""

from __future__ import annotations

import json

import pytest

from simulator.cli import EXIT_USAGE, main
from training.data.examples import write_jsonl


def _sft(tiny_model_dir, sft_data, out, **overrides):
    from training.sft.train import SFTRunConfig, run_sft

    settings = {
        "model": str(tiny_model_dir),
        "data": str(sft_data),
        "out": str(out),
        "max_steps": 4,
        "learning_rate": 1e-2,
        "batch_size": 2,
        "max_length": 64,
        "threads": 1,
        "eval_examples": 2,
        **overrides,
    }
    return run_sft(SFTRunConfig(**settings))


def _adapter(folder):
    from safetensors.torch import load_file

    return load_file(str(folder / "adapter" / "adapter_model.safetensors"))


def _losses(summary):
    return [round(e["loss"], 5) for e in summary["log_history"] if "loss" in e]


def test_a_resumed_run_continues_the_optimizer_and_equals_a_straight_run(tiny_model_dir, sft_data, tmp_path):
    import torch

    straight = _sft(tiny_model_dir, sft_data, tmp_path / "straight", max_steps=4)
    first = _sft(tiny_model_dir, sft_data, tmp_path / "first", max_steps=2)
    second = _sft(tiny_model_dir, sft_data, tmp_path / "second", max_steps=4, resume=str(tmp_path / "first"))
    assert (first["steps"], second["steps"], second["run_steps"]) == (2, 4, 2)
    assert [(r["steps_from"], r["steps_to"]) for r in second["runs"]] == [(0, 2), (2, 4)]
    assert second["runs"][0]["data"]["sha256"] == second["runs"][1]["data"]["sha256"]
    assert second["runs"][1]["data"]["kinds"] == {"simulate": 12, "solve": 4}
    # the optimizer state travelled: Adam's step counter reads 4, and the moments made the same updates
    state = torch.load(
        tmp_path / "second" / "checkpoints" / "checkpoint-4" / "optimizer.pt", weights_only=True
    )
    assert {int(s["step"]) for s in state["state"].values()} == {4}
    assert _losses(second) == _losses(straight)  # the log history carries on from the first run
    a, b = _adapter(tmp_path / "straight"), _adapter(tmp_path / "second")
    assert a.keys() == b.keys() and all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)


def test_the_time_budget_stops_with_a_checkpoint_that_resumes(tiny_model_dir, sft_data, tmp_path):
    stopped = _sft(tiny_model_dir, sft_data, tmp_path / "a", max_steps=50, max_minutes=1e-6)
    assert stopped["steps"] == 1 and stopped["stopped_by_time_budget"]
    runs = json.loads((tmp_path / "a" / "checkpoints" / "checkpoint-1" / "execsim-runs.json").read_text())
    assert runs[0]["steps_to"] == 1 and runs[0]["stopped_by_time_budget"]
    resumed = _sft(tiny_model_dir, sft_data, tmp_path / "a", max_steps=3, resume=str(tmp_path / "a"))
    assert resumed["steps"] == 3 and not resumed["stopped_by_time_budget"]
    kept = [p.name for p in (tmp_path / "a" / "checkpoints").glob("checkpoint-*")]
    assert kept == ["checkpoint-3"]  # the latest only


def test_the_manifest_counts_each_run_once(tiny_model_dir, sft_data, tmp_path):
    from training.export.checkpoint import export

    first = _sft(tiny_model_dir, sft_data, tmp_path / "r1", max_steps=1)
    other = tmp_path / "more.jsonl"
    write_jsonl(other, [{"kind": "repair", "prompt": "p", "completion": " c"}] * 4)
    second = _sft(tiny_model_dir, other, tmp_path / "r2", max_steps=3, resume=str(tmp_path / "r1"))
    manifest = export(
        tmp_path / "r2" / "adapter", tmp_path / "export", base=str(tiny_model_dir), summaries=[first, second]
    )
    assert manifest["steps"] == 3 and len(manifest["runs"]) == 2
    assert [(d["examples"], d["kinds"], d["steps"]) for d in manifest["data"]] == [
        (16, {"simulate": 12, "solve": 4}, 1),
        (4, {"repair": 4}, 2),
    ]


def test_init_adapter_continues_a_checkpoint_and_its_manifest_counts_its_steps(
    tiny_model_dir, sft_data, tmp_path
):
    """A run that starts from a committed checkpoint's adapter begins at its weights (its loss at the
    start is the adapter's), stays an adapter of the base, and the export counts the checkpoint's steps."""
    import torch

    from training.export.checkpoint import export

    first = _sft(tiny_model_dir, sft_data, tmp_path / "r1", max_steps=3)
    committed = export(
        tmp_path / "r1" / "adapter", tmp_path / "committed", base=str(tiny_model_dir), summaries=[first]
    )
    start_from = str(tmp_path / "committed" / "adapter")
    more = _sft(tiny_model_dir, sft_data, tmp_path / "r2", max_steps=2, init_adapter=start_from)
    assert more["completion_loss_before"] == pytest.approx(first["completion_loss_after"], rel=1e-4)
    start, end = _adapter(tmp_path / "committed"), _adapter(tmp_path / "r2")
    assert start.keys() == end.keys() and not all(torch.allclose(start[k], end[k]) for k in start)
    manifest = export(
        tmp_path / "r2" / "adapter", tmp_path / "export", base=str(tiny_model_dir), summaries=[more]
    )
    assert (committed["steps"], manifest["steps"]) == (3, 5)
    assert [s["steps"] for s in manifest["stages"]] == [3, 2] and len(manifest["runs"]) == 2
    assert manifest["continued_from"]["path"] == str(tmp_path / "committed" / "manifest.json")
    assert [(d["runs"], d["steps"]) for d in manifest["data"]] == [(2, 5)]  # one file, both runs


def test_init_adapter_refuses_an_adapter_of_another_model_and_full_tuning(
    tiny_model_dir, sft_data, tmp_path, capsys
):
    _sft(tiny_model_dir, sft_data, tmp_path / "lora", max_steps=1)
    config = json.loads((tmp_path / "lora" / "adapter" / "adapter_config.json").read_text())
    config["base_model_name_or_path"] = str(tmp_path)  # a folder that is not --model
    (tmp_path / "lora" / "adapter" / "adapter_config.json").write_text(json.dumps(config))
    model, out = str(tiny_model_dir), str(tmp_path / "x")
    argv = ["train", "sft", "--model", model, "--data", str(sft_data), "--out", out]
    assert main([*argv, "--init-adapter", str(tmp_path / "lora" / "adapter")]) == EXIT_USAGE
    assert "is an adapter of" in capsys.readouterr().err
    assert main([*argv, "--init-adapter", str(tmp_path), "--full"]) == EXIT_USAGE
    assert "does not go with --full" in capsys.readouterr().err


def test_resume_refuses_other_settings_and_empty_folders(tiny_model_dir, sft_data, tmp_path, capsys):
    _sft(tiny_model_dir, sft_data, tmp_path / "lora", max_steps=1)
    model, out = str(tiny_model_dir), str(tmp_path / "x")
    argv = ["train", "sft", "--model", model, "--data", str(sft_data), "--out", out]
    assert main([*argv, "--resume", str(tmp_path / "lora"), "--lora-r", "4"]) == EXIT_USAGE
    assert "lora_r 16 -> 4" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main([*argv, "--resume", str(tmp_path / "empty")]) == EXIT_USAGE
    assert "no checkpoint-<step>" in capsys.readouterr().err.strip().splitlines()[-1]


class LengthRewardDouble:
    """A scripted reward (test double): the completion's length."""

    __name__ = "length"

    def __call__(self, completions, **kwargs):
        return [float(len(text)) for text in completions]


def test_grpo_resumes_too_and_continues_an_sft_adapter(tiny_model_dir, sft_data, tmp_path):
    import torch

    from training.rl.train import RLRunConfig, run_grpo

    rows = tmp_path / "rl.jsonl"
    write_jsonl(rows, [{"prompt": f"[PYTHON] f({i}) [/PYTHON]"} for i in range(8)])

    def grpo(out, max_steps, resume=None, init_adapter=None):
        config = RLRunConfig(
            model=str(tiny_model_dir),
            data=str(rows),
            out=str(out),
            max_steps=max_steps,
            learning_rate=1e-3,
            batch_size=2,
            grad_accum=1,
            num_generations=2,
            max_completion_length=8,
            threads=1,
            resume=resume,
            init_adapter=init_adapter,
        )
        return run_grpo(config, reward_funcs=[LengthRewardDouble()])

    grpo(tmp_path / "one", 1)
    resumed = grpo(tmp_path / "two", 2, resume=str(tmp_path / "one"))
    assert (resumed["steps"], resumed["run_steps"], len(resumed["runs"])) == (2, 1, 2)
    assert resumed["runs"][0]["stage"] == "rl1"
    state = torch.load(tmp_path / "two" / "checkpoints" / "checkpoint-2" / "optimizer.pt", weights_only=True)
    assert {int(s["step"]) for s in state["state"].values()} == {2}
    # GRPO continues an SFT adapter too: one Adam step at lr 1e-3 moves no weight by more than 1e-3,
    # so ending within that of the SFT adapter (whose lora_B moved ~1e-2 from a new LoRA's zeros)
    # shows it started there
    _sft(tiny_model_dir, sft_data, tmp_path / "sft", max_steps=1)
    grpo(tmp_path / "warm", 1, init_adapter=str(tmp_path / "sft" / "adapter"))
    start, end = _adapter(tmp_path / "sft"), _adapter(tmp_path / "warm")
    assert start.keys() == end.keys() and all(torch.allclose(start[k], end[k], atol=2e-3) for k in start)
    assert max(float(start[k].abs().max()) for k in start if "lora_B" in k) > 5e-3
