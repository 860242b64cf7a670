"""``execsim train sft``: supervised fine-tuning on the examples of ``train data`` (TRL SFTTrainer, the
loss on the completions only; LoRA unless ``--full``), in ``training.sft.train``."""

from __future__ import annotations

import argparse

from training.command_line import check_model, log_config, model_args, run_trainer


def register(stages: argparse._SubParsersAction) -> None:
    """Add ``train sft`` and its arguments."""
    sft = stages.add_parser(
        "sft", help="supervised fine-tuning on NLEX (TRL SFTTrainer, loss on completions)"
    )
    model_args(sft)
    add = sft.add_argument
    add("--format", choices=("text", "chat"), default="text", help="train on plain text or on chat messages")
    add(
        "--max-steps",
        type=int,
        default=100,
        help="optimizer steps in all, a resumed run's earlier steps included (default %(default)s)",
    )
    add("--lr", type=float, default=2e-4, help="the learning rate (default %(default)s)")
    add(
        "--max-length",
        type=int,
        default=1024,
        help="tokens an example is cut to; one whose prompt is longer is left out (default %(default)s)",
    )
    add("--gradient-checkpointing", action="store_true", help="save memory by recomputing activations")
    sft.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Check the arguments, log the configuration, train, print the summary."""
    from training.sft.train import SFTRunConfig, run_sft

    check_model(args)
    config = SFTRunConfig(
        model=args.model,
        data=str(args.data),
        out=str(args.out),
        format=args.format,
        lora=not args.full,
        lora_r=args.lora_r,
        lora_alpha=args.lora_alpha,
        max_steps=args.max_steps,
        learning_rate=args.lr,
        batch_size=args.batch_size,
        grad_accum=args.grad_accum or 1,
        max_length=args.max_length,
        seed=args.seed,
        gradient_checkpointing=args.gradient_checkpointing,
        threads=args.threads,
        cpu_bf16=args.cpu_bf16,
        max_minutes=args.max_minutes,
        save_steps=args.save_steps,
        resume=str(args.resume) if args.resume else None,
        init_adapter=str(args.init_adapter) if args.init_adapter else None,
    )
    log_config("sft", config.__dict__, args.out)
    return run_trainer(run_sft, config)
