"""training.smoke and the GPU smoke recipe, run on the CPU: the tiny model serves, and the recipe runs
every stage (SFT and its resumption, full SFT, export, GRPO, serving) so it keeps working for the day a
GPU machine runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from simulator.llm.server import vllm_installed
from training import smoke
from training.paths import benchmarks_dir

ROOT = Path(__file__).resolve().parents[2]


def test_serve_check_without_vllm_generates_with_transformers(tiny_model_dir, monkeypatch):
    import simulator.llm.server

    monkeypatch.setattr(simulator.llm.server, "vllm_installed", lambda: False)
    report = smoke.serve_check(tiny_model_dir)
    assert report["served_by"].startswith("transformers generate on cpu")
    assert isinstance(report["reply"], str) and report["reply"]
    command = report["vllm_command"]
    assert command[command.index("--model") + 1] == str(tiny_model_dir)
    assert command[command.index("--served-model-name") + 1] == "smoke"


def test_answer_length_reward_double_scores_short_answers():
    reward = smoke.AnswerLengthRewardDouble()
    assert reward(["'AB'", "", "x" * 21, [{"role": "assistant", "content": "3"}]]) == [1.0, 0.0, 0.0, 1.0]


@pytest.mark.slow
@pytest.mark.skipif(not vllm_installed(), reason="vLLM is not installed (the serve extra)")
@pytest.mark.skipif(benchmarks_dir() is None, reason="no benchmark folder: the recipe's synth needs one")
def test_gpu_smoke_recipe_runs_every_stage_on_cpu(tmp_path):
    pytest.importorskip("trl", reason="the train extra is not installed")
    execsim = Path(sys.executable).parent / "execsim"
    env = {**os.environ, "EXECSIM": str(execsim), "PYTHON": sys.executable, "OMP_NUM_THREADS": "2"}
    done = subprocess.run(
        ["bash", str(ROOT / "training/recipes/gpu-smoke.sh"), str(tmp_path / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "the sandbox runs: GRPO uses the stage's own rewards" in done.stdout
    assert "gpu smoke: every stage ran" in done.stdout
    summary = json.loads((tmp_path / "out/summary.json").read_text())
    sft, full, rl = summary["sft"], summary["sft-full"], summary["rl1"]
    assert sft["steps"] == 10 and sft["resumed_from"].endswith("checkpoint-5")
    assert sft["completion_loss_after"] < sft["completion_loss_before"]
    assert full["steps"] == 5 and not full["lora"]
    assert rl["steps"] == 3 and rl["rewards"] == ["white_box"]
    assert {sft["device"], full["device"], rl["device"]} == {"cpu"}
    assert summary["serve"]["served_by"] == "vllm" and isinstance(summary["serve"]["reply"], str)
