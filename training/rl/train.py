"""GRPO with TRL's GRPOTrainer and the rewards of ``simulator.rewards``.

    execsim train rl --stage 1 --model MODEL_OR_MERGED_SFT --data runs/data/rl.jsonl --out runs/rl1
    execsim train rl --stage 2 --model runs/rl1/merged --data runs/data/codegen.jsonl --out runs/rl2

- stage 1: output prediction with ExecVerify's gated white-box reward (``white_box``), on the white-box
  prompts of ``training.data`` (columns code, entry_point, input, output, questions);
- stage 2: code generation with the unit-test pass rate (``unit_tests``; columns tests[, test_imports]).

Rewards are named (see ``REWARDS``) or given as dotted paths ``package.module:attribute`` (a callable
or a class to instantiate). ExecVerify's settings are the defaults where they fit a CPU: no KL
(beta 0), group size ``num_generations``. Rollouts use vLLM when CUDA and vllm are present, plain
``generate`` otherwise: colocated in each training process (``--vllm-mode colocate``), or asked of a
``trl vllm-serve`` server on other GPUs or another node (``--vllm-mode server``, TRL's server mode).
``--max-minutes`` and ``--resume`` work as for SFT (``training.runs``). Under ``accelerate launch`` each
rank scores its own completions, its sandbox given its share of the node's cores
(``training.execution.rank_run_many``).
"""

from __future__ import annotations

import importlib
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from training.runs import (
    RunHistory,
    begin_run,
    device_kwargs,
    save_trained,
    time_budget,
    trainable,
    write_summary,
)

STAGE_REWARDS = {1: ["white_box"], 2: ["unit_tests"]}
JSON_COLUMNS = ("questions", "tests", "test_imports")


def _named_rewards() -> dict[str, Any]:
    from simulator.rewards import OutputPredictionReward, UnitTestReward, WhiteBoxReward
    from training.execution import reward_executor

    executor = reward_executor()  # the default sandbox pool, or this rank's share of the cores
    return {
        "white_box": WhiteBoxReward(executor=executor),
        "output_prediction": OutputPredictionReward(kind="call", executor=executor),
        "unit_tests": UnitTestReward(executor=executor),
    }


@dataclass
class DecodedColumns:
    """Wraps a reward so JSON-encoded columns (``questions``, ``tests``: stored as strings so every row
    has the same Arrow type) arrive decoded. A class, not a closure, so it pickles."""

    reward: Any

    @property
    def __name__(self) -> str:
        return getattr(self.reward, "__name__", type(self.reward).__name__)

    def __call__(self, completions: list[Any], **kwargs: Any) -> list[float | None]:
        for name in JSON_COLUMNS:
            if name in kwargs:
                kwargs[name] = [json.loads(v) if isinstance(v, str) else v for v in kwargs[name]]
        return self.reward(completions, **kwargs)


def resolve_reward(spec: str) -> Any:
    """A reward by name (``white_box``, ``output_prediction``, ``unit_tests``) or dotted path."""
    named = _named_rewards()
    if spec in named:
        return DecodedColumns(named[spec])
    module_name, _, attr = spec.partition(":") if ":" in spec else spec.rpartition(".")
    try:
        target = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ValueError(
            f"unknown reward {spec!r}: not one of {sorted(named)} nor an importable path ({exc})"
        ) from None
    return DecodedColumns(target() if isinstance(target, type) else target)


def use_vllm() -> bool:
    """Whether colocated vLLM rollouts can run here: CUDA and the vllm package."""
    import torch

    if not torch.cuda.is_available():
        return False
    try:
        importlib.import_module("vllm")
    except ImportError:
        return False
    return True


@dataclass
class RLRunConfig:
    model: str
    data: str
    out: str
    stage: int = 1
    rewards: list[str] = field(default_factory=list)  # empty: the stage's default
    lora: bool = True
    lora_r: int = 16
    lora_alpha: int = 32
    max_steps: int = 10
    learning_rate: float = 1e-6  # ExecVerify's; raise it for toy runs
    batch_size: int = 2
    grad_accum: int = 4
    num_generations: int = 4  # ExecVerify: 8
    max_completion_length: int = 128
    temperature: float = 1.0
    beta: float = 0.0  # no KL, as ExecVerify
    seed: int = 0
    vllm: str = "auto"  # "auto" (on with CUDA and vllm, or with a server), "on", "off"
    vllm_mode: str = "colocate"  # "colocate" (in each training process) or "server" (`trl vllm-serve`)
    vllm_server_host: str = "0.0.0.0"  # server mode: where `trl vllm-serve` listens (TRL's defaults)
    vllm_server_port: int = 8000
    format: str = "text"  # "text": prompts as strings; "chat": one user message (the model's chat template)
    logging_steps: int = 1
    threads: int | None = None  # torch CPU threads (1 is fastest for tiny models on a busy machine)
    cpu_bf16: bool = False  # bf16 autocast on a CPU with bf16 instructions (training.runs.device_kwargs)
    max_minutes: float | None = None  # stop after this much training time (then save, resumable)
    save_steps: int = 50  # a resumable checkpoint every this many optimizer steps (and at the end)
    resume: str | None = None  # a run folder or checkpoint to continue (training.runs)
    init_adapter: str | None = None  # a LoRA adapter of ``model`` to continue training (training.runs)


def vllm_args(config: RLRunConfig) -> dict[str, Any]:
    """GRPOConfig's vLLM arguments. vLLM samples with ``--vllm on``, and with ``auto`` when there is a
    server to ask or colocated vLLM can run here; the server is TRL's ``trl vllm-serve`` at
    host:port, which receives the new weights after every optimizer step."""
    wanted = config.vllm == "on" or (config.vllm == "auto" and (config.vllm_mode == "server" or use_vllm()))
    return {
        "use_vllm": wanted,
        "vllm_mode": config.vllm_mode,
        "vllm_server_host": config.vllm_server_host,
        "vllm_server_port": config.vllm_server_port,
    }


def run_grpo(
    config: RLRunConfig, reward_funcs: list[Any] | None = None, callbacks: list | None = None
) -> dict[str, Any]:
    """Train; writes the adapter (LoRA) or model and ``summary.json`` (mean reward per step)."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    out, rows = begin_run(config, ("prompt",))
    history = RunHistory(f"rl{config.stage}", config, rows, Path(config.resume) if config.resume else None)
    for row in rows:  # one Arrow type per column: nested values travel as JSON text
        for name in JSON_COLUMNS:
            if name in row and not isinstance(row[name], str):
                row[name] = json.dumps(row[name])
    if config.format == "chat":
        for row in rows:
            if isinstance(row["prompt"], str):  # a list is already the chat (train data --narration none)
                row["prompt"] = [{"role": "user", "content": row["prompt"]}]
    if reward_funcs is None:
        reward_funcs = [resolve_reward(spec) for spec in (config.rewards or STAGE_REWARDS[config.stage])]
    tokenizer = AutoTokenizer.from_pretrained(config.model, padding_side="left")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    dtype = torch.bfloat16 if torch.cuda.is_available() else torch.float32
    model, peft_config = trainable(AutoModelForCausalLM.from_pretrained(config.model, dtype=dtype), config)
    vllm = vllm_args(config)
    args = GRPOConfig(
        max_steps=config.max_steps,
        per_device_train_batch_size=config.batch_size,
        gradient_accumulation_steps=config.grad_accum,
        num_generations=config.num_generations,
        max_completion_length=config.max_completion_length,
        learning_rate=config.learning_rate,
        temperature=config.temperature,
        beta=config.beta,
        logging_steps=config.logging_steps,
        report_to="none",
        seed=config.seed,
        **vllm,
        lr_scheduler_type="constant",
        warmup_steps=0,
        **history.trainer_args(config),
        **device_kwargs(config.cpu_bf16),
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=reward_funcs,
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        peft_config=peft_config,
        callbacks=[
            *(callbacks or []),
            *([time_budget(config.max_minutes)] if config.max_minutes else []),
            history.callback(),
        ],
    )
    started = time.perf_counter()
    result = trainer.train(resume_from_checkpoint=history.resume_arg())
    seconds = time.perf_counter() - started
    target = out / ("adapter" if config.lora else "model")
    save_trained(trainer, target)
    rewards = [entry["reward"] for entry in trainer.state.log_history if "reward" in entry]
    runs = history.update(result.global_step, result.global_step < config.max_steps)
    run_steps = runs[-1]["steps"]
    summary = {
        "stage": f"rl{config.stage}",
        "base_model": config.model,
        "data": config.data,
        "examples": len(rows),
        "steps": result.global_step,  # cumulative over the runs resumed
        "run_steps": run_steps,
        "resumed_from": runs[-1]["resumed_from"],
        "stopped_by_time_budget": result.global_step < config.max_steps,
        "seconds": round(seconds, 2),
        "steps_per_s": round(run_steps / seconds, 4) if seconds else None,
        "device": str(trainer.args.device),  # where it trained: cuda:0 or cpu
        "processes": trainer.args.world_size,  # accelerate launch: one per GPU, each with this batch
        "bf16": trainer.args.bf16,
        "rewards": [getattr(f, "__name__", type(f).__name__) for f in reward_funcs],
        "mean_reward_per_step": rewards,
        "vllm": vllm["use_vllm"],
        "vllm_mode": config.vllm_mode if vllm["use_vllm"] else None,
        "lora": config.lora,
        "output": str(target),
        "runs": runs,
        "log_history": trainer.state.log_history,
        "config": asdict(config),
    }
    write_summary(trainer, out, summary)
    return summary
