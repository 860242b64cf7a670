"""The whole training chain on CPU at toy size: synthesise -> SFT -> GRPO -> export -> serve -> evaluate.

A randomly initialised 2-layer Llama with a ~320-token tokenizer stands in for SmolLM2 (no download);
batch 2, at most 256 tokens. Programs run in the real sandbox; the exported folder is served by a real
vLLM server and scored on 5 CRUXEval-O dev items (so the test needs the serve extra and the benchmarks).
"""

from __future__ import annotations

import json

import pytest

from simulator.llm.server import vllm_installed
from training.data.examples import sft_examples, write_jsonl
from training.paths import benchmarks_dir
from training.synth.pipeline import SynthConfig, synthesize

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not vllm_installed(), reason="vLLM is not installed (the serve extra)"),
    pytest.mark.skipif(benchmarks_dir() is None, reason="no benchmark folder (../shared/benchmarks)"),
]


class SpaceFractionRewardDouble:
    """A scripted reward (test double): the fraction of spaces in the completion. A random model has
    few; GRPO should raise it within a few steps."""

    __name__ = "space_fraction"

    def __call__(self, completions, **kwargs):
        return [sum(c == " " for c in text) / max(len(text), 1) for text in completions]


def _state(model_dir):
    from safetensors.torch import load_file

    return load_file(str(model_dir / "model.safetensors"))


def test_the_whole_chain_runs_on_cpu_at_toy_size(tiny_model_dir, tmp_path):
    import torch

    from training.evaluate import EvalRunConfig, evaluate_model
    from training.export.checkpoint import export
    from training.rl.train import RLRunConfig, run_grpo
    from training.sft.train import SFTRunConfig, run_sft

    # 1. synthesise 50 programs (real sandbox; no benchmark index needed for this check)
    kept, card = synthesize(SynthConfig(programs=50, seed=0), benchmark_index={})
    assert sum(card.generated_per_level.values()) == 50 and len(kept) >= 10
    examples = sft_examples(kept[:8], styles=("call",))[:8]
    assert len(examples) == 8 and all("[ANSWER]" in e["completion"] for e in examples)
    data = tmp_path / "sft.jsonl"
    write_jsonl(data, examples)

    # 2. SFT (full fine-tuning) until the completion loss on the 8 fixed examples falls by half
    sft = run_sft(
        SFTRunConfig(
            model=str(tiny_model_dir),
            data=str(data),
            out=str(tmp_path / "sft"),
            lora=False,
            max_steps=60,
            learning_rate=3e-3,
            batch_size=2,
            max_length=256,
            threads=1,
        )
    )
    assert sft["completion_loss_after"] <= 0.5 * sft["completion_loss_before"], sft

    # 3. LoRA: the loss falls, the adapter changes, the base weights on disk and in memory do not
    before = _state(tiny_model_dir)
    lora = run_sft(
        SFTRunConfig(
            model=str(tiny_model_dir),
            data=str(data),
            out=str(tmp_path / "lora"),
            lora=True,
            max_steps=30,
            learning_rate=1e-2,
            threads=1,
        )
    )
    assert lora["completion_loss_after"] < lora["completion_loss_before"]
    after = _state(tiny_model_dir)
    assert before.keys() == after.keys() and all(torch.equal(before[k], after[k]) for k in before)
    adapter = tmp_path / "lora" / "adapter"
    assert (adapter / "adapter_config.json").is_file()

    # 4. a few GRPO steps on the SFT model: the mean scripted reward rises
    rl_data = tmp_path / "rl.jsonl"
    write_jsonl(rl_data, [{"prompt": e["prompt"]} for e in examples] * 2)
    rl = run_grpo(
        RLRunConfig(
            model=str(tmp_path / "sft" / "model"),
            data=str(rl_data),
            out=str(tmp_path / "rl"),
            lora=False,
            max_steps=12,
            learning_rate=1e-2,
            batch_size=2,
            grad_accum=4,
            num_generations=4,
            max_completion_length=24,
            threads=1,
        ),
        reward_funcs=[SpaceFractionRewardDouble()],
    )
    rewards = rl["mean_reward_per_step"]
    assert len(rewards) == 12
    assert sum(rewards[-4:]) / 4 > sum(rewards[:4]) / 4, rewards

    # 5. export, serve, evaluate: the LoRA adapter merged into a servable folder; the export's hook
    # serves that folder with vLLM and evaluates 5 CRUXEval-O items through the real harness
    def serve_and_evaluate(merged_dir):
        return evaluate_model(
            EvalRunConfig(
                model=str(merged_dir),
                out=str(tmp_path / "eval"),
                variant="sft",
                tasks=("cruxeval-o",),
                limit=5,
            )
        )

    card_path = tmp_path / "card.json"
    card_path.write_text(json.dumps(card.to_dict()))
    manifest = export(
        adapter, tmp_path / "export", summaries=[lora], card=card_path, evaluate=serve_and_evaluate
    )
    merged = tmp_path / "export" / "merged"
    assert manifest["base_model"] == str(tiny_model_dir)
    assert manifest["adapter"] and (tmp_path / "export" / "adapter" / "adapter_config.json").is_file()
    assert manifest["steps"] == 30
    [row] = manifest["evaluation"]
    assert (row["benchmark"], row["model"], row["n"]) == ("cruxeval-o", "sft", 5)
    assert 0 <= row["low"] <= row["value"] <= row["high"] <= 1
    served = json.loads((tmp_path / "eval" / "cruxeval-o" / "results.json").read_text())
    # the app's simulate request, narrated: a narration that ends without its answer gets it asked for
    assert 5 <= served["requests"]["sent"] <= 10 and len(served["items"]) == 5
    assert served["provenance"]["model"] == "merged"
    assert manifest["data"][0]["examples"] == 8 and manifest["card"]["seed"] == 0
    assert json.loads((tmp_path / "export" / "manifest.json").read_text()) == json.loads(
        json.dumps(manifest, default=str)
    )
    assert (merged / "weights.sha256").read_text().split()[1] == "model.safetensors"

    # the merged model computes what base + adapter computes
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    ids = torch.tensor([[5, 6, 7, 8]])
    with torch.no_grad():
        merged_logits = AutoModelForCausalLM.from_pretrained(merged)(ids).logits
        peft_model = PeftModel.from_pretrained(
            AutoModelForCausalLM.from_pretrained(tiny_model_dir), str(adapter)
        )
        adapter_logits = peft_model(ids).logits
    assert torch.allclose(merged_logits, adapter_logits, atol=1e-4)
