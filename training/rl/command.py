"""``execsim train rl``: GRPO (TRL GRPOTrainer) with the rewards of ``simulator.rewards``: stage 1 output
prediction (white-box questions), stage 2 code generation (unit tests), in ``training.rl.train``."""

from __future__ import annotations

import argparse

from simulator.cli import UsageError
from training.command_line import check_model, log_config, model_args, run_trainer


def register(stages: argparse._SubParsersAction) -> None:
    """Add ``train rl`` and its arguments."""
    rl = stages.add_parser("rl", help="GRPO (TRL GRPOTrainer) with simulator.rewards")
    model_args(rl)
    add = rl.add_argument
    add(
        "--stage-number",
        "--stage",
        dest="rl_stage",
        type=int,
        choices=(1, 2),
        default=1,
        help="1: output prediction with the white-box reward; 2: code generation with unit tests",
    )
    add("--reward", action="append", default=[], help="a reward's name or dotted path (repeatable)")
    add(
        "--max-steps",
        type=int,
        default=10,
        help="optimizer steps in all, a resumed run's earlier steps included (default %(default)s)",
    )
    add("--lr", type=float, default=1e-6, help="the learning rate (default %(default)s)")
    add("--num-generations", type=int, default=4, help="completions sampled per prompt (default %(default)s)")
    add(
        "--max-completion-length", type=int, default=128, help="the most tokens a sampled completion may have"
    )
    add("--temperature", type=float, default=1.0, help="the sampling temperature (default %(default)s)")
    add("--beta", type=float, default=0.0, help="the KL coefficient (default %(default)s, as ExecVerify)")
    add(
        "--format",
        choices=("text", "chat"),
        default="text",
        help="send prompts as text or as one user message",
    )
    add(
        "--vllm",
        choices=("auto", "on", "off"),
        default="auto",
        help="sample with vLLM (auto: when CUDA and vllm are there, or with --vllm-mode server)",
    )
    add(
        "--vllm-mode",
        choices=("colocate", "server"),
        default="colocate",
        help="vLLM in each training process, or a `trl vllm-serve` server (default %(default)s)",
    )
    add("--vllm-server-host", default="0.0.0.0", help="server mode: the host `trl vllm-serve` runs on")
    add("--vllm-server-port", type=int, default=8000, help="server mode: its port (default %(default)s)")
    rl.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Check the arguments and rewards, log the configuration, train, print the summary."""
    from training.rl.train import RLRunConfig, resolve_reward, run_grpo

    check_model(args)
    for spec in args.reward:
        try:
            resolve_reward(spec)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    config = RLRunConfig(
        model=args.model,
        data=str(args.data),
        out=str(args.out),
        stage=args.rl_stage,
        rewards=args.reward,
        lora=not args.full,
        lora_r=args.lora_r,
        lora_alpha=args.lora_alpha,
        max_steps=args.max_steps,
        learning_rate=args.lr,
        batch_size=args.batch_size,
        grad_accum=args.grad_accum or args.num_generations,
        num_generations=args.num_generations,
        max_completion_length=args.max_completion_length,
        temperature=args.temperature,
        beta=args.beta,
        seed=args.seed,
        vllm=args.vllm,
        vllm_mode=args.vllm_mode,
        vllm_server_host=args.vllm_server_host,
        vllm_server_port=args.vllm_server_port,
        threads=args.threads,
        cpu_bf16=args.cpu_bf16,
        format=args.format,
        max_minutes=args.max_minutes,
        save_steps=args.save_steps,
        resume=str(args.resume) if args.resume else None,
        init_adapter=str(args.init_adapter) if args.init_adapter else None,
    )
    if config.vllm_mode == "server" and config.vllm == "off":
        raise UsageError("--vllm-mode server samples with vLLM: it does not go with --vllm off")
    if (config.batch_size * config.grad_accum) % config.num_generations:
        raise UsageError("--batch-size x --grad-accum must be a multiple of --num-generations")
    log_config("rl", config.__dict__, args.out)
    return run_trainer(run_grpo, config)
