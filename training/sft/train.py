"""Supervised fine-tuning on NLEX examples with TRL's SFTTrainer (loss on completions only).

    execsim train sft --model MODEL_DIR --data runs/data/sft.jsonl --out runs/sft [--full] [--max-steps N]

Prompt-completion datasets: ``completion_only_loss=True`` masks the prompt, so the model learns to
write the trace and the answer, not to repeat the code. ``--format chat`` trains on the exact chat
prompt the pipeline sends (``messages``; needs a chat template), ``text`` on the plain user turn.
LoRA (default) or full fine-tuning; bf16 and CUDA where present, fp32 on CPU.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from training.data.examples import read_jsonl


@dataclass
class SFTRunConfig:
    model: str
    data: str
    out: str
    format: str = "text"  # "text" (prompt/completion strings) or "chat" (messages + chat template)
    lora: bool = True
    lora_r: int = 16
    lora_alpha: int = 32
    max_steps: int = 100
    learning_rate: float = 2e-4
    batch_size: int = 2
    grad_accum: int = 1
    max_length: int = 256
    seed: int = 0
    eval_examples: int = 8  # fixed examples whose completion loss is measured before and after
    gradient_checkpointing: bool = False
    logging_steps: int = 1
    threads: int | None = None  # torch CPU threads (1 is fastest for tiny models on a busy machine)
    max_minutes: float | None = None  # stop after this much training time (then save as usual)


def device_kwargs() -> dict[str, Any]:
    """Trainer arguments for this machine: bf16 on CUDA, fp32 on CPU."""
    import torch

    if torch.cuda.is_available():
        return {"use_cpu": False, "bf16": True}
    return {"use_cpu": True, "bf16": False, "fp16": False}


def to_dataset_rows(examples: list[dict[str, Any]], format: str) -> list[dict[str, Any]]:
    if format == "chat":
        return [
            {
                "prompt": e["messages"],
                "completion": [{"role": "assistant", "content": e["completion"].strip()}],
            }
            for e in examples
        ]
    return [{"prompt": e["prompt"], "completion": e["completion"]} for e in examples]


def completion_loss(model: Any, tokenizer: Any, examples: list[dict[str, Any]], max_length: int) -> float:
    """Mean per-token NLL of the completions given their prompts (text format), prompt tokens masked."""
    import torch

    model.eval()
    total, count = 0.0, 0
    device = next(model.parameters()).device
    with torch.no_grad():
        for example in examples:
            prompt_ids = tokenizer(example["prompt"], add_special_tokens=False)["input_ids"]
            full = tokenizer(example["prompt"] + example["completion"], add_special_tokens=False)["input_ids"]
            full = full[:max_length]
            labels = [-100] * min(len(prompt_ids), len(full)) + full[len(prompt_ids) :]
            if all(label == -100 for label in labels[1:]):
                continue
            ids = torch.tensor([full], device=device)
            out = model(input_ids=ids, labels=torch.tensor([labels], device=device))
            n = sum(1 for label in labels[1:] if label != -100)
            total += float(out.loss) * n
            count += n
    model.train()
    return total / max(count, 1)


def lora_config(config: SFTRunConfig) -> Any:
    from peft import LoraConfig

    return LoraConfig(
        r=config.lora_r,
        lora_alpha=config.lora_alpha,
        lora_dropout=0.0,
        target_modules="all-linear",
        task_type="CAUSAL_LM",
    )


def begin_run(config: Any) -> tuple[Path, list[dict[str, Any]]]:
    """What every training run does first (SFT and RL): the output folder with the full configuration
    in it, torch seeded and its threads set, and the examples read (none is an error)."""
    import torch

    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(asdict(config), indent=2) + "\n")
    torch.manual_seed(config.seed)
    if config.threads:
        torch.set_num_threads(config.threads)
    examples = read_jsonl(Path(config.data))
    if not examples:
        raise ValueError(f"{config.data} holds no examples")
    return out, examples


def time_budget(minutes: float) -> Any:
    """A trainer callback that ends training after ``minutes`` (checked after each optimizer step), so a
    CPU recipe keeps its time limit whatever the machine's speed; the model is saved as usual."""
    from transformers import TrainerCallback

    class TimeBudget(TrainerCallback):
        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.deadline = time.monotonic() + 60 * minutes

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if time.monotonic() >= self.deadline:
                control.should_training_stop = True

    return TimeBudget()


def run_sft(config: SFTRunConfig, callbacks: list | None = None) -> dict[str, Any]:
    """Train; writes the adapter (LoRA) or the model (full) and ``summary.json`` under ``config.out``."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    out, examples = begin_run(config)
    tokenizer = AutoTokenizer.from_pretrained(config.model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    dtype = torch.bfloat16 if torch.cuda.is_available() else torch.float32
    model = AutoModelForCausalLM.from_pretrained(config.model, dtype=dtype)
    fixed = examples[: config.eval_examples]
    loss_before = completion_loss(model, tokenizer, fixed, config.max_length)
    args = SFTConfig(
        output_dir=str(out / "checkpoints"),
        max_steps=config.max_steps,
        per_device_train_batch_size=config.batch_size,
        gradient_accumulation_steps=config.grad_accum,
        learning_rate=config.learning_rate,
        max_length=config.max_length,
        completion_only_loss=True,
        logging_steps=config.logging_steps,
        save_strategy="no",
        report_to="none",
        seed=config.seed,
        gradient_checkpointing=config.gradient_checkpointing,
        lr_scheduler_type="constant",
        warmup_steps=0,
        **device_kwargs(),
    )
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=Dataset.from_list(to_dataset_rows(examples, config.format)),
        processing_class=tokenizer,
        peft_config=lora_config(config) if config.lora else None,
        callbacks=[*(callbacks or []), *([time_budget(config.max_minutes)] if config.max_minutes else [])],
    )
    started = time.perf_counter()
    result = trainer.train()
    seconds = time.perf_counter() - started
    loss_after = completion_loss(trainer.model, tokenizer, fixed, config.max_length)
    target = out / ("adapter" if config.lora else "model")
    trainer.model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    summary = {
        "stage": "sft",
        "base_model": config.model,
        "data": config.data,
        "examples": len(examples),
        "steps": result.global_step,
        "stopped_by_time_budget": result.global_step < config.max_steps,
        "seconds": round(seconds, 2),
        "steps_per_s": round(result.global_step / seconds, 4) if seconds else None,
        "train_loss": result.training_loss,
        "fixed_examples": len(fixed),
        "completion_loss_before": loss_before,
        "completion_loss_after": loss_after,
        "lora": config.lora,
        "output": str(target),
        "log_history": trainer.state.log_history,
        "config": asdict(config),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    return summary
