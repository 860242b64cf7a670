"""What the ``execsim train`` stage commands share: the configuration log, the progress bar, and the
arguments and checks of the two trainers (``train sft``, ``train rl``).

Each stage keeps its own arguments beside its code (``training/<stage>/command.py``,
``training/evaluate_command.py``, ``training/promote_command.py``); ``training/cli.py`` only gathers
them. Heavy imports stay inside the handlers, so building the ``execsim`` parser stays cheap.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from simulator.cli import UsageError


def log_config(name: str, config: dict[str, Any], out: Path) -> None:
    """Print a stage's full configuration (JSON, stderr) and keep it as ``<out>/<name>-config.json``;
    under ``accelerate launch`` the main process alone does (``training.distributed``)."""
    from training.distributed import is_main_process

    if not is_main_process():
        return
    config = {k: v for k, v in config.items() if not callable(v)}
    text = json.dumps(config, indent=2, default=str)
    print(f"execsim train {name}: configuration\n{text}", file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}-config.json").write_text(text + "\n")


class Bar:
    """A rich progress bar over named steps (stderr), called as ``bar(step, done, total)``."""

    def __init__(self) -> None:
        from rich.progress import Progress

        self.progress = Progress(transient=False, console=None)
        self.tasks: dict[str, Any] = {}

    def __enter__(self) -> Bar:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage not in self.tasks:
            self.tasks[stage] = self.progress.add_task(stage, total=max(total, 1))
        self.progress.update(self.tasks[stage], completed=done, total=max(total, 1))


def model_args(parser: argparse.ArgumentParser) -> None:
    """The arguments ``train sft`` and ``train rl`` share: model, data, output, LoRA, batch, time, resume."""
    add = parser.add_argument
    add(
        "--model",
        required=True,
        help="the HF model folder to train (e.g. .data/models/smollm2-135m-instruct)",
    )
    add("--data", type=Path, required=True, help="the examples JSONL written by `execsim train data`")
    add("--out", type=Path, required=True, help="the output folder for the adapter or model and its summary")
    add("--full", action="store_true", help="fine-tune every weight instead of a LoRA adapter")
    add("--lora-r", type=int, default=16, help="the rank of the LoRA adapter (default %(default)s)")
    add("--batch-size", type=int, default=2, help="examples per device step (default %(default)s)")
    add(
        "--grad-accum",
        type=int,
        help="device steps per optimizer step (default: 1 for sft, --num-generations for rl)",
    )
    add("--threads", type=int, help="how many CPU threads torch may use")
    add(
        "--cpu-bf16",
        action="store_true",
        help="train under bf16 autocast on a CPU that has bf16 instructions",
    )
    add(
        "--seed", type=int, default=0, help="the seed for data order and initialisation (default %(default)s)"
    )
    add(
        "--resume",
        type=Path,
        help="continue a run, optimizer and step count included, from its folder or a checkpoint",
    )
    add(
        "--init-adapter",
        type=Path,
        help="continue training this LoRA adapter of --model (e.g. a checkpoint's)",
    )
    add(
        "--max-minutes",
        type=float,
        help="stop after this many minutes, saving a checkpoint --resume continues",
    )
    add(
        "--save-steps",
        type=int,
        default=50,
        help="save a resumable checkpoint every N optimizer steps (default %(default)s)",
    )


def check_model(args: argparse.Namespace) -> None:
    """Refuse, before anything loads, a model, data file, checkpoint or number a trainer cannot use; set
    ``args.lora_alpha`` (and the rank of a continued adapter)."""
    from training.runs import ResumeError, adapter_config

    if not (Path(args.model) / "config.json").is_file():
        raise UsageError(
            f"--model {args.model} is not an HF model folder (no config.json); see `execsim model prepare`"
        )
    if not args.data.is_file():
        raise UsageError(f"--data {args.data} does not exist")
    if args.resume is not None and not args.resume.is_dir():
        raise UsageError(f"--resume {args.resume} is not a folder")
    counts = ("max_steps", "save_steps", "lora_r", "batch_size", "grad_accum", "threads", "max_length")
    for name in (*counts, "num_generations", "max_completion_length"):
        value = getattr(args, name, None)
        if value is not None and value < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be >= 1, not {value}")
    for name in ("lr", "max_minutes", "temperature"):
        value = getattr(args, name, None)
        if value is not None and not value > 0:  # nan too
            raise UsageError(f"--{name.replace('_', '-')} must be > 0, not {value}")
    if args.init_adapter is not None:
        if args.full:
            raise UsageError("--init-adapter continues a LoRA adapter: it does not go with --full")
        try:
            adapter = adapter_config(args.init_adapter)
        except ResumeError as exc:
            raise UsageError(f"--init-adapter: {exc}") from None
        base = adapter.get("base_model_name_or_path")
        if base and Path(base).is_dir() and Path(base).resolve() != Path(args.model).resolve():
            raise UsageError(f"--init-adapter {args.init_adapter} is an adapter of {base}, not of --model")
        args.lora_r, args.lora_alpha = int(adapter["r"]), int(adapter["lora_alpha"])
    else:
        args.lora_alpha = 2 * args.lora_r


def run_trainer(train: Callable[[Any], dict[str, Any]], config: Any) -> int:
    """Run a trainer and print its summary (the main process only, under ``accelerate launch``); a
    checkpoint that cannot be resumed, a data file that is not examples, or examples all too long, is a
    usage error."""
    from training.data.examples import BadExamples
    from training.distributed import RanksDisagree, is_main_process
    from training.runs import ResumeError
    from training.sft.train import ExamplesTooLong

    try:
        summary = train(config)
    except (ResumeError, ExamplesTooLong, BadExamples, RanksDisagree) as exc:
        raise UsageError(str(exc)) from None
    if is_main_process():
        print(json.dumps({k: v for k, v in summary.items() if k not in ("log_history", "config")}, indent=2))
    return 0
