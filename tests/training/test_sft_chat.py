"""Chat-format SFT (`train sft --format chat`) trains on the requests the pipeline sends, prefilled
ones included (tiny random model, real TRL), under bf16 autocast where the CPU has it (--cpu-bf16)."""

from __future__ import annotations

import math

from simulator.prompts import simulate
from training.data.examples import write_jsonl


def _simulate_rows() -> list[dict]:
    """Six simulate requests prefilled to answer at once, six narrated: as `train data` writes them."""
    rows = []
    for i in range(6):
        call = f"f({i})"
        messages = simulate.call_messages("def f(x):\n    return x * 3", call)
        prefill = simulate.answer_prefill(call)
        rows.append(
            {
                "kind": "simulate",
                "prompt": messages[-1]["content"],
                "messages": [*messages, {"role": "assistant", "content": prefill}],
                "completion": f" {prefill} {i * 3}\n[/ANSWER]",
            }
        )
        rows.append(
            {
                "kind": "simulate",
                "prompt": messages[-1]["content"],
                "messages": messages,
                "completion": f" [THOUGHT] x = {i}. [/THOUGHT] [ANSWER]\nassert {call} == {i * 3}\n[/ANSWER]",
            }
        )
    return rows


def test_chat_sft_trains_on_prefilled_and_open_requests(tiny_model_dir, tmp_path):
    from training.sft.train import SFTRunConfig, run_sft

    data = tmp_path / "sft.jsonl"
    write_jsonl(data, _simulate_rows())
    summary = run_sft(
        SFTRunConfig(
            model=str(tiny_model_dir),
            data=str(data),
            out=str(tmp_path / "sft"),
            format="chat",
            max_steps=3,
            learning_rate=1e-2,
            batch_size=4,
            max_length=1024,
            threads=1,
            eval_examples=2,
            cpu_bf16=True,
        )
    )
    losses = [e["loss"] for e in summary["log_history"] if "loss" in e]
    assert summary["steps"] == 3 and losses and all(math.isfinite(x) and x > 0 for x in losses)
    assert summary["dropped_by_length"] == {}
    assert (tmp_path / "sft" / "adapter" / "adapter_model.safetensors").is_file()


def test_cpu_bf16_is_asked_for_and_needs_the_instructions():
    import pytest
    import torch

    from simulator.llm.server import cpu_has_bf16
    from training.runs import device_kwargs

    if torch.cuda.is_available():
        pytest.skip("a CUDA machine trains in bf16 whatever is asked")
    assert device_kwargs()["bf16"] is False  # fp32 unless asked
    assert device_kwargs(cpu_bf16=True)["bf16"] is cpu_has_bf16()


def test_a_max_length_that_leaves_a_kind_no_completion_is_refused_and_a_partial_loss_said(
    tiny_model_dir, tmp_path, capsys
):
    """TRL keeps the start of a long example and drops it when no completion token is left: a
    256-token limit once dropped every simulate request, silently (docs/results.md section 32)."""
    from transformers import AutoTokenizer

    from simulator.cli import EXIT_USAGE, main
    from training.sft.train import check_lengths, dropped_by_length, to_dataset_rows

    examples = _simulate_rows()
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    rows = to_dataset_rows(examples, "chat", tokenizer)
    starts = [r["completion_mask"].index(1) for r in rows]
    prefilled, narrated = starts[0::2], starts[1::2]  # a prefilled prompt is the longer one
    assert max(narrated) < min(prefilled)
    counts = dropped_by_length(examples, rows, min(prefilled), tokenizer)
    assert counts == {"simulate": [6, 12]}
    check_lengths(counts, min(prefilled))  # some left: said, not refused
    assert "drops 6 of 12 simulate examples" in capsys.readouterr().out

    data = tmp_path / "sft.jsonl"
    write_jsonl(data, examples)
    argv = ["train", "sft", "--model", str(tiny_model_dir), "--data", str(data), "--out", str(tmp_path / "o")]
    assert main([*argv, "--format", "chat", "--max-length", str(min(narrated))]) == EXIT_USAGE
    assert "leaves no completion token in all 12 simulate examples" in capsys.readouterr().err
    assert not (tmp_path / "o" / "adapter").exists()
