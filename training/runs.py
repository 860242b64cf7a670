"""What every training run shares (SFT and GRPO): its output folder, the machine's trainer arguments,
the time budget, resumable checkpoints, and the history of the runs a model accumulated.

Training accumulates over several runs: each run saves a full Trainer checkpoint (weights or adapter,
optimizer, scheduler, RNG states, step count) under ``<out>/checkpoints/checkpoint-<step>`` every
``save_steps`` optimizer steps, when its time budget ends it, and at its last step; ``--resume FOLDER``
(a run's output folder or one of its checkpoints) continues from the latest one with TRL/transformers'
``resume_from_checkpoint``, so the optimizer's moments, the scheduler and the global step carry on.
``max_steps`` counts from the first run: a resumed run trains up to it, not that many more.

Each checkpoint also holds ``execsim-runs.json``: every run so far (its data's sha256, example count
and kinds, the steps it covered, its time), which the next run extends and the export manifest sums.
When a resumed run's data is the data of the run before (same sha256), the Trainer skips the batches
already seen and continues the same order; with new data it starts that data from its beginning.

Under ``accelerate launch`` (``training.distributed``) every rank trains and the main process alone
writes the configuration and the history; the ranks check that they hold the same rows, share the main
process's run record, and stop together when the time budget ends.
"""

from __future__ import annotations

import datetime
import json
import time
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any

from simulator.llm.merge import ADAPTER_CONFIG
from simulator.llm.model_folder import file_sha256
from simulator.llm.server import cpu_has_bf16
from training.data.examples import read_jsonl
from training.distributed import any_rank, check_same_rows, from_main, is_main_process, rows_digest

RUNS_FILE = "execsim-runs.json"
CHECKPOINTS = "checkpoints"
# Settings a resumed run must share with the run it continues (the weights and optimizer state fit them)
RESUME_MUST_MATCH = ("model", "lora", "lora_r", "lora_alpha", "stage", "init_adapter")


class ResumeError(ValueError):
    """The folder holds no checkpoint to resume, or one trained with incompatible settings."""


def begin_run(config: Any, fields: tuple[str, ...]) -> tuple[Path, list[dict[str, Any]]]:
    """What every training run does first: the examples read, each holding ``fields`` (a file that
    is not, or holds none, is ``BadExamples`` before anything is written), the output folder with the
    full configuration in it (written by the main process only), torch seeded and its threads set."""
    import torch

    examples = read_jsonl(Path(config.data), fields)
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    if is_main_process():
        (out / "config.json").write_text(json.dumps(asdict(config), indent=2) + "\n")
    torch.manual_seed(config.seed)
    if config.threads:
        torch.set_num_threads(config.threads)
    return out, examples


def adapter_config(folder: Path) -> dict[str, Any]:
    """The LoRA adapter's own config in ``folder`` (a run that starts from it keeps its rank and alpha)."""
    path = Path(folder) / ADAPTER_CONFIG
    if not path.is_file():
        raise ResumeError(f"{folder} is not a LoRA adapter folder (no {ADAPTER_CONFIG})")
    return json.loads(path.read_text())


def trainable(model: Any, config: Any) -> tuple[Any, Any]:
    """The model a trainer takes and its ``peft_config``: a new LoRA (``config.lora``), or the adapter
    ``config.init_adapter`` loaded trainable onto the base model, so training continues a committed
    checkpoint and its result is still an adapter of that base (``train promote`` can take it), or
    the model itself (full fine-tuning)."""
    if config.init_adapter:
        from peft import PeftModel

        return PeftModel.from_pretrained(model, config.init_adapter, is_trainable=True), None
    if not config.lora:
        return model, None
    from peft import LoraConfig

    return model, LoraConfig(
        r=config.lora_r,
        lora_alpha=config.lora_alpha,
        lora_dropout=0.0,
        target_modules="all-linear",
        task_type="CAUSAL_LM",
    )


def device_kwargs(cpu_bf16: bool = False) -> dict[str, Any]:
    """Trainer arguments for this machine: bf16 on CUDA; on CPU fp32, or bf16 autocast (fp32 weights)
    with ``cpu_bf16`` where the CPU has bf16 instructions (AVX512-BF16 or AMX: a step 1.9x faster on
    this project's machines, bench/train_precision.py). Under DDP every weight gets a gradient, so the
    search for unused ones is off (on, DDP with LoRA's wrapped model and gradient checkpointing fails)."""
    import torch

    ddp = {"ddp_find_unused_parameters": False}
    if torch.cuda.is_available():
        return {"use_cpu": False, "bf16": True, **ddp}
    bf16 = cpu_bf16 and cpu_has_bf16()
    return {"use_cpu": True, "bf16": bf16, "fp16": False, **ddp}


def time_budget(minutes: float) -> Any:
    """A trainer callback that ends training after ``minutes`` (checked after each optimizer step) and
    saves a resumable checkpoint there, so a CPU recipe keeps its time limit whatever the machine's
    speed and the next run continues where this one stopped. Ranks stop together: when one's clock
    says stop, all do (``any_rank``)."""
    from transformers import TrainerCallback

    class TimeBudget(TrainerCallback):
        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.deadline = time.monotonic() + 60 * minutes

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if any_rank(time.monotonic() >= self.deadline):
                control.should_training_stop = True
                control.should_save = True

    return TimeBudget()


def save_trained(trainer: Any, target: Path) -> None:
    """Write the trained adapter or model and its tokenizer to ``target``: through the Trainer, so every
    rank takes part when the weights are sharded (FSDP, ZeRO-3) and the main process alone writes; the
    Trainer's ``training_args.bin`` is left out, so the folder holds what ``train export`` copies."""
    trainer.save_model(str(target))
    if trainer.args.should_save:
        (Path(target) / "training_args.bin").unlink(missing_ok=True)


def write_summary(trainer: Any, out: Path, summary: dict[str, Any]) -> None:
    """``out/summary.json``, written by the main process only (every rank returns the summary)."""
    if trainer.args.should_save:
        (Path(out) / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")


def resume_point(folder: Path) -> Path:
    """The checkpoint to resume from: ``folder`` itself when it is one, else the latest
    ``checkpoint-<step>`` in ``folder/checkpoints`` (a run's output folder) or in ``folder``."""
    from transformers.trainer_utils import get_last_checkpoint

    folder = Path(folder)
    if (folder / "trainer_state.json").is_file():
        return folder
    for parent in (folder / CHECKPOINTS, folder):
        if parent.is_dir():
            last = get_last_checkpoint(str(parent))
            if last is not None:
                return Path(last)
    raise ResumeError(f"--resume {folder}: no checkpoint-<step> folder with a trainer_state.json in it")


def previous_runs(checkpoint: Path, config: Any) -> list[dict[str, Any]]:
    """The runs recorded in ``checkpoint``, after checking that ``config`` can continue them."""
    path = Path(checkpoint) / RUNS_FILE
    if not path.is_file():
        raise ResumeError(f"{checkpoint} has no {RUNS_FILE}: it was not written by `execsim train`")
    runs = json.loads(path.read_text())
    last = runs[-1]["config"] if runs else {}
    current = asdict(config)
    differ = [k for k in RESUME_MUST_MATCH if k in last and k in current and last[k] != current[k]]
    if differ:
        pairs = ", ".join(f"{k} {last[k]!r} -> {current[k]!r}" for k in differ)
        raise ResumeError(f"cannot resume {checkpoint} with other settings: {pairs}")
    return runs


def data_record(path: Path, examples: list[dict[str, Any]], kinds: dict[str, int] | None) -> dict[str, Any]:
    """What a run trained on: the file, its sha256, its examples and their kinds (SFT: per prompt kind)."""
    return {"path": str(path), "sha256": file_sha256(Path(path)), "examples": len(examples), "kinds": kinds}


class RunHistory:
    """This run's record (appended to the runs it resumes) and the callback that writes the history
    into every checkpoint the Trainer saves."""

    def __init__(
        self,
        stage: str,
        config: Any,
        examples: list[dict[str, Any]],
        resume: Path | None,
        kinds: dict[str, int] | None = None,
    ) -> None:
        self.checkpoint = resume_point(resume) if resume is not None else None
        self.earlier = previous_runs(self.checkpoint, config) if self.checkpoint else []
        self.record: dict[str, Any] = {
            "run_id": uuid.uuid4().hex[:12],
            "stage": stage,
            "out": str(config.out),
            "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "resumed_from": str(self.checkpoint) if self.checkpoint else None,
            "data": data_record(Path(config.data), examples, kinds),
            "steps_from": self._steps_from(),
            "steps_to": None,
            "steps": 0,
            "seconds": 0.0,
            "stopped_by_time_budget": False,
            "config": asdict(config),
        }
        self.digest = rows_digest(examples)  # the rows as this rank holds them (training.distributed)
        self._started = time.perf_counter()

    def _steps_from(self) -> int:
        if self.checkpoint is None:
            return 0
        return int(json.loads((self.checkpoint / "trainer_state.json").read_text())["global_step"])

    @property
    def same_data(self) -> bool:
        """Whether this run trains on the data the resumed run last trained on."""
        return bool(self.earlier) and self.earlier[-1]["data"]["sha256"] == self.record["data"]["sha256"]

    def trainer_args(self, config: Any) -> dict[str, Any]:
        """Trainer arguments for checkpoints that resume (optimizer state included, the latest kept)."""
        return {
            "output_dir": str(Path(config.out) / CHECKPOINTS),
            "save_strategy": "steps",
            "save_steps": config.save_steps,
            "save_total_limit": 1,
            "save_only_model": False,
            "ignore_data_skip": self.checkpoint is not None and not self.same_data,
        }

    def update(self, global_step: int, stopped_early: bool) -> list[dict[str, Any]]:
        """Every run so far, this one up to ``global_step`` (``stopped_early``: its time budget ended it
        before ``max_steps``)."""
        self.record.update(
            steps_to=global_step,
            steps=global_step - self.record["steps_from"],
            seconds=round(time.perf_counter() - self._started, 2),
            stopped_by_time_budget=stopped_early,
        )
        return [*self.earlier, dict(self.record)]

    def share(self, processes: int) -> None:
        """Once the ranks can talk (training begun): refuse ranks that hold other rows, and take the
        main process's record (its run id and start), with how many processes trained."""
        check_same_rows(self.digest)
        self.record = {**from_main(self.record), "processes": processes}

    def callback(self) -> Any:
        """Shares the record across ranks when training begins; the main process (each node's with
        ``save_on_each_node``) writes the history into every checkpoint."""
        from transformers import TrainerCallback

        history = self

        class WriteRuns(TrainerCallback):
            def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                history.share(args.world_size)
                history._started = time.perf_counter()  # the run's seconds are training time

            def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
                if args.should_save and folder.is_dir():
                    early = control.should_training_stop and state.global_step < state.max_steps
                    runs = history.update(state.global_step, early)
                    (folder / RUNS_FILE).write_text(json.dumps(runs, indent=2, default=str) + "\n")

        return WriteRuns()

    def resume_arg(self) -> str | None:
        return str(self.checkpoint) if self.checkpoint else None


def unique_runs(summaries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs behind a list of stage summaries, each once (a resumed run's summary repeats the
    runs it continued), in order."""
    seen: set[str] = set()
    runs = []
    for summary in summaries:
        for run in summary.get("runs") or []:
            if run["run_id"] not in seen:
                seen.add(run["run_id"])
                runs.append(run)
    return runs
