"""Supervised fine-tuning on NLEX examples with TRL's SFTTrainer (loss on completions only).

    execsim train sft --model MODEL_DIR --data runs/data/sft.jsonl --out runs/sft [--full] [--max-steps N]
        [--max-minutes M] [--resume runs/sft-earlier] [--init-adapter checkpoints/smollm2-135m-nlex/adapter]

Prompt-completion datasets: ``completion_only_loss=True`` masks the prompt, so the model learns to
write the trace and the answer, not to repeat the code. ``--format chat`` trains on the exact chat
prompt the pipeline sends (``messages``; needs a chat template), ``text`` on the plain user turn.
LoRA (default) or full fine-tuning; bf16 and CUDA where present, fp32 on CPU. Runs save resumable
checkpoints and continue one with ``--resume`` (optimizer, scheduler and step count included;
``training.runs``), so training accumulates over several time-limited runs.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from training.data.mix import kind_counts
from training.runs import (
    RunHistory,
    begin_run,
    device_kwargs,
    save_trained,
    time_budget,
    trainable,
    write_summary,
)


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
    max_length: int = 1024  # room for the app's simulate request and its answer (docs/results.md#training)
    seed: int = 0
    eval_examples: int = 8  # fixed examples whose completion loss is measured before and after
    gradient_checkpointing: bool = False
    logging_steps: int = 1
    threads: int | None = None  # torch CPU threads (1 is fastest for tiny models on a busy machine)
    cpu_bf16: bool = False  # bf16 autocast on a CPU with bf16 instructions (training.runs.device_kwargs)
    max_minutes: float | None = None  # stop after this much training time (then save, resumable)
    save_steps: int = 50  # a resumable checkpoint every this many optimizer steps (and at the end)
    resume: str | None = None  # a run folder or checkpoint to continue (training.runs)
    init_adapter: str | None = None  # a LoRA adapter of ``model`` to continue training (training.runs)


def to_dataset_rows(
    examples: list[dict[str, Any]], format: str, tokenizer: Any = None
) -> list[dict[str, Any]]:
    """TRL rows. Text format: prompt/completion strings. Chat format: ``input_ids`` rendered by
    ``tokenizer``'s chat template, exactly the tokens the served request and its reply make, and a
    ``completion_mask`` on what the model writes. A prompt that ends with a prefilled assistant turn
    (the solve request's opening fence, the answer asked for at once) is the request as sent: the
    prefill is the prompt's, so the loss is on the rest of the turn only, and a model taught to answer
    at once after the prefill is not taught to skip its narration when nothing is prefilled."""
    if format != "chat":
        return [{"prompt": e["prompt"], "completion": e["completion"]} for e in examples]
    rows = []
    for e in examples:
        prompt, completion = e["messages"], e["completion"].strip()
        prefilled = prompt[-1]["role"] == "assistant"
        if prefilled and not completion.startswith(prompt[-1]["content"].strip()):
            raise ValueError(f"an example's completion does not continue its prefill: {completion[:60]!r}")
        asked = _render(
            tokenizer, prompt, add_generation_prompt=not prefilled, continue_final_message=prefilled
        )
        turns = [*(prompt[:-1] if prefilled else prompt), {"role": "assistant", "content": completion}]
        ids = _render(tokenizer, turns)
        start = len(os.path.commonprefix([asked, ids]))  # where the two renderings part: the reply
        rows.append({"input_ids": ids, "completion_mask": [0] * start + [1] * (len(ids) - start)})
    return rows


class ExamplesTooLong(ValueError):
    """``--max-length`` would leave every example of a kind without a completion token."""


def dropped_by_length(
    examples: list[dict[str, Any]], rows: list[dict[str, Any]], max_length: int, tokenizer: Any
) -> dict[str, list[int]]:
    """Per kind, [examples whose completion starts at or past ``max_length``, examples]. TRL keeps the
    start of a longer example and then drops each one left without a completion token, silently: a
    256-token limit once dropped every simulate request (docs/results.md#training)."""
    counts: dict[str, list[int]] = {}
    for example, row in zip(examples, rows, strict=True):
        if "completion_mask" in row:
            start = row["completion_mask"].index(1) if 1 in row["completion_mask"] else len(row["input_ids"])
        else:
            start = len(tokenizer(row["prompt"], add_special_tokens=False)["input_ids"])
        cell = counts.setdefault(str(example.get("kind", "simulate")), [0, 0])
        cell[0] += start >= max_length
        cell[1] += 1
    return counts


def check_lengths(counts: dict[str, list[int]], max_length: int) -> None:
    """Refuse a run that would train on no example of a kind; say what a partial loss is."""
    lost = [f"all {total} {kind} examples" for kind, (dropped, total) in counts.items() if dropped == total]
    if lost:
        raise ExamplesTooLong(
            f"--max-length {max_length} leaves no completion token in {' and '.join(lost)}: their prompts "
            "alone are that long, so training would drop them and learn nothing of them; raise --max-length"
        )
    for kind, (dropped, total) in counts.items():
        if dropped:
            which = f"{dropped} of {total} {kind} examples"
            print(f"note: --max-length {max_length} drops {which}, whose prompts alone reach it")


def _render(tokenizer: Any, messages: list[dict[str, str]], **options: bool) -> list[int]:
    text = tokenizer.apply_chat_template(messages, tokenize=False, **options)
    return tokenizer(text, add_special_tokens=False)["input_ids"]


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


def loss_at_start(tokenizer: Any, examples: list[dict[str, Any]], max_length: int) -> Any:
    """A trainer callback that measures the completion loss on ``examples`` when training begins, once
    a resumed run's weights are loaded (so "before" is this run's start, not the base model)."""
    from transformers import TrainerCallback

    class LossAtStart(TrainerCallback):
        value: float | None = None

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.value = completion_loss(kwargs["model"], tokenizer, examples, max_length)

    return LossAtStart()


def run_sft(config: SFTRunConfig, callbacks: list | None = None) -> dict[str, Any]:
    """Train (or continue ``config.resume``); writes the adapter (LoRA) or the model (full),
    resumable checkpoints and ``summary.json`` (with every run so far) under ``config.out``."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    fields = ("messages", "completion") if config.format == "chat" else ("prompt", "completion")
    out, examples = begin_run(config, fields)
    resume = Path(config.resume) if config.resume else None
    history = RunHistory("sft", config, examples, resume, kinds=kind_counts(examples))
    tokenizer = AutoTokenizer.from_pretrained(config.model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    rows = to_dataset_rows(examples, config.format, tokenizer)
    dropped = dropped_by_length(examples, rows, config.max_length, tokenizer)
    check_lengths(dropped, config.max_length)
    dtype = torch.bfloat16 if torch.cuda.is_available() else torch.float32
    model, peft_config = trainable(AutoModelForCausalLM.from_pretrained(config.model, dtype=dtype), config)
    fixed = examples[: config.eval_examples]
    before = loss_at_start(tokenizer, fixed, config.max_length)
    args = SFTConfig(
        max_steps=config.max_steps,
        per_device_train_batch_size=config.batch_size,
        gradient_accumulation_steps=config.grad_accum,
        learning_rate=config.learning_rate,
        max_length=config.max_length,
        completion_only_loss=True,
        logging_steps=config.logging_steps,
        report_to="none",
        seed=config.seed,
        gradient_checkpointing=config.gradient_checkpointing,
        lr_scheduler_type="constant",
        warmup_steps=0,
        **history.trainer_args(config),
        **device_kwargs(config.cpu_bf16),
    )
    budget = [time_budget(config.max_minutes)] if config.max_minutes else []
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        peft_config=peft_config,
        callbacks=[*(callbacks or []), before, *budget, history.callback()],
    )
    started = time.perf_counter()
    result = trainer.train(resume_from_checkpoint=history.resume_arg())
    seconds = time.perf_counter() - started
    loss_after = completion_loss(trainer.model, tokenizer, fixed, config.max_length)
    target = out / ("adapter" if config.lora else "model")
    save_trained(trainer, target)
    runs = history.update(result.global_step, result.global_step < config.max_steps)
    run_steps = runs[-1]["steps"]
    summary = {
        "stage": "sft",
        "base_model": config.model,
        "data": config.data,
        "examples": len(examples),
        "kinds": runs[-1]["data"]["kinds"],
        "dropped_by_length": {kind: n for kind, (n, _) in dropped.items() if n},  # never trained on
        "steps": result.global_step,  # cumulative over the runs resumed
        "run_steps": run_steps,
        "resumed_from": runs[-1]["resumed_from"],
        "stopped_by_time_budget": result.global_step < config.max_steps,
        "seconds": round(seconds, 2),
        "steps_per_s": round(run_steps / seconds, 4) if seconds else None,
        "device": str(trainer.args.device),  # where it trained: cuda:0 or cpu
        "processes": trainer.args.world_size,  # accelerate launch: one per GPU, each with this batch
        "bf16": trainer.args.bf16,
        "train_loss": result.training_loss,
        "fixed_examples": len(fixed),
        "completion_loss_before": before.value,
        "completion_loss_after": loss_after,
        "lora": config.lora,
        "output": str(target),
        "runs": runs,
        "log_history": trainer.state.log_history,
        "config": asdict(config),
    }
    write_summary(trainer, out, summary)
    return summary
