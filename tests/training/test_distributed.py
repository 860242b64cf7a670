"""Training past one process: SFT and GRPO under ``accelerate launch`` with two CPU processes (gloo,
training/recipes/accelerate/ddp.yaml) on the tiny random Llama, against the single-process run at the
same global batch (1 example x 2 processes against 2 x 1): the same losses and weights, the same
prompts scored, a checkpoint that resumes, an export, and no file written by the second rank.

Run as a script, this file is what each launched process runs: ``execsim`` with, on ranks other
than 0, an audit hook that records every file it opens for writing under ``EXECSIM_TEST_WATCH``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from training.data.examples import write_jsonl

ROOT = Path(__file__).resolve().parents[2]
DDP_CONFIG = ROOT / "training/recipes/accelerate/ddp.yaml"
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
# A stand-in for SLURM's srun: runs the command once per task (--ntasks), SLURM_PROCID set, in parallel
SRUN_STAND_IN = """#!/usr/bin/env bash
n=1
while [[ "$1" == --* ]]; do case "$1" in --ntasks=*) n=${1#--ntasks=};; esac; shift; done
pids=()
for ((i = 0; i < n; i++)); do SLURM_PROCID=$i "$@" & pids+=($!); done
rc=0; for p in "${pids[@]}"; do wait "$p" || rc=$?; done; exit $rc
"""


class PromptScoreRewardDouble:
    """A scripted reward (test double): the row's ``score`` plus 1e-4 x the completion's length,
    the length counted by a program run in this rank's sandbox pool (``training.execution``). Each call
    appends its rank, its prompts and its pool's size to ``EXECSIM_TEST_REWARDS``."""

    __name__ = "prompt_score_double"

    def __call__(self, completions: list[str], prompts: list[str], score: list[int], **_: object) -> list:
        from simulator.execution import run_many
        from simulator.execution.program import Program
        from training.distributed import rank, sandbox_workers
        from training.execution import reward_executor

        run = reward_executor() or run_many
        results = run([Program(code="", call=f"len({text!r})") for text in completions])
        lengths = [int(result.value) for result in results]
        record = {
            "rank": rank(),
            "prompts": prompts,
            "executor": getattr(reward_executor(), "__name__", None),
            "workers": sandbox_workers(),
        }
        with open(os.environ["EXECSIM_TEST_REWARDS"], "a") as log:
            log.write(json.dumps(record) + "\n")
        return [s + 1e-4 * n for s, n in zip(score, lengths, strict=True)]


def _cuda_here() -> bool:
    """Whether torch sees a GPU: the runs compared below are fp32 CPU runs (gloo), and with CUDA the
    trainers would train in bf16 on the GPUs instead."""
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


cpu_runs = pytest.mark.skipif(_cuda_here(), reason="compares CPU runs; gpu-smoke.sh has a 2-GPU stage")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch(argv: list[str], watch: Path, rewards: Path | None = None) -> None:
    """``accelerate launch`` two processes of this file running ``execsim argv``, on the CPU."""
    accelerate = Path(sys.executable).parent / "accelerate"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "EXECSIM_TEST_WATCH": str(watch)}
    if rewards is not None:
        env["EXECSIM_TEST_REWARDS"] = str(rewards)
    command = [
        str(accelerate), "launch", "--config_file", str(DDP_CONFIG), "--num_processes", "2",
        "--main_process_port", str(_free_port()), __file__, *argv,
    ]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]


def _writes_by_other_ranks(watch: Path) -> list[str]:
    return [p for f in sorted(watch.glob("writes-rank*.json")) for p in json.loads(f.read_text())]


def _sft_argv(model: Path, data: Path, out: Path, batch_size: int, *more: str) -> list[str]:
    return [
        "train", "sft", "--model", str(model), "--data", str(data), "--out", str(out), "--lr", "1e-2",
        "--max-length", "64", "--threads", "1", "--batch-size", str(batch_size), "--max-steps", "4", *more,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def single_sft(tiny_model_dir, sft_data, tmp_path_factory):
    """The reference: 4 SFT steps of batch 2 in one process (this one)."""
    from simulator.cli import main

    out = tmp_path_factory.mktemp("single") / "sft"
    assert main(_sft_argv(tiny_model_dir, sft_data, out, 2)) == 0
    return out


def _losses(summary: dict) -> list[float]:
    return [e["loss"] for e in summary["log_history"] if "loss" in e]


def _adapter(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(folder / "adapter" / "adapter_model.safetensors"))


@pytest.mark.slow
@cpu_runs
def test_distributed_sft_equals_one_process_resumes_and_exports(
    tiny_model_dir, sft_data, single_sft, tmp_path
):
    import torch

    from training.export.checkpoint import export

    watch = tmp_path / "watch"
    single, ddp = single_sft, watch / "ddp"
    # two processes of batch 1: the time budget stops them together after one step, with a checkpoint
    _launch(_sft_argv(tiny_model_dir, sft_data, ddp, 1, "--max-minutes", "1e-6"), watch)
    stopped = json.loads((ddp / "summary.json").read_text())
    assert (stopped["steps"], stopped["stopped_by_time_budget"], stopped["processes"]) == (1, True, 2)
    checkpoint = ddp / "checkpoints" / "checkpoint-1"
    saved = {p.name for p in checkpoint.iterdir()}
    assert {"rng_state_0.pth", "rng_state_1.pth", "execsim-runs.json"} <= saved
    # ... and a second launch resumes that checkpoint to step 4
    _launch(_sft_argv(tiny_model_dir, sft_data, ddp, 1, "--resume", str(ddp)), watch)
    assert _writes_by_other_ranks(watch) == []  # the main process alone wrote the run's files

    one, two = (json.loads((folder / "summary.json").read_text()) for folder in (single, ddp))
    assert (two["steps"], two["run_steps"], two["processes"], one["processes"]) == (4, 3, 2, 1)
    assert [(r["steps_from"], r["steps_to"], r["processes"]) for r in two["runs"]] == [(0, 1, 2), (1, 4, 2)]
    assert two["resumed_from"] == str(checkpoint)
    assert _losses(two) == pytest.approx(_losses(one), abs=1e-4)  # the same global batches, in order
    a, b = _adapter(single), _adapter(ddp)
    assert a.keys() == b.keys() and all(torch.allclose(a[k], b[k], atol=1e-4) for k in a)
    state = torch.load(ddp / "checkpoints" / "checkpoint-4" / "optimizer.pt", weights_only=True)
    assert {int(s["step"]) for s in state["state"].values()} == {4}  # Adam carried on across the launches
    assert not (ddp / "adapter" / "training_args.bin").exists()
    manifest = export(ddp / "adapter", tmp_path / "export", base=str(tiny_model_dir), summaries=[two])
    assert manifest["steps"] == 4 and len(manifest["runs"]) == 2
    assert (tmp_path / "export" / "merged" / "config.json").is_file()


def _same_training(reference: Path, out: Path) -> None:
    import torch

    one, two = (json.loads((folder / "summary.json").read_text()) for folder in (reference, out))
    assert (two["steps"], two["processes"]) == (4, 2)
    assert _losses(two) == pytest.approx(_losses(one), abs=1e-4)
    a, b = _adapter(reference), _adapter(out)
    assert a.keys() == b.keys() and all(torch.allclose(a[k], b[k], atol=1e-4) for k in a)


@pytest.mark.slow
@cpu_runs
def test_the_multi_node_recipes_run_two_nodes_on_one_machine(tiny_model_dir, sft_data, single_sft, tmp_path):
    """multi-node.sh on two "nodes" of one process each (both this machine, gloo, rendezvous on
    127.0.0.1), started by hand and by slurm.sbatch under stand-ins for SLURM's srun and scontrol."""
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "GPUS_PER_NODE": "1",
        "NUM_NODES": "2",
        "PYTHON": sys.executable,
    }
    env["EXECSIM"] = str(Path(sys.executable).parent / "execsim")
    argv = _sft_argv(tiny_model_dir, sft_data, tmp_path / "by-hand", 1)[1:]
    port = str(_free_port())
    nodes = [
        subprocess.Popen(
            ["bash", str(ROOT / "training/recipes/multi-node.sh"), *argv],
            env={**env, "NODE_RANK": str(rank), "MAIN_IP": "127.0.0.1", "MAIN_PORT": port},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank in (0, 1)
    ]
    outputs = [node.communicate(timeout=300) for node in nodes]
    assert [node.returncode for node in nodes] == [0, 0], outputs[0][1][-3000:] + outputs[1][1][-3000:]
    assert outputs[1][0] == ""  # node 1 prints no summary
    _same_training(single_sft, tmp_path / "by-hand")

    fake = tmp_path / "bin"  # srun runs each task here, SLURM_PROCID set; scontrol lists two localhosts
    fake.mkdir()
    (fake / "scontrol").write_text("#!/usr/bin/env bash\nprintf 'localhost\\nlocalhost\\n'\n")
    (fake / "srun").write_text(SRUN_STAND_IN)
    for tool in ("scontrol", "srun"):
        (fake / tool).chmod(0o755)
    slurm = {
        **env,
        "PATH": f"{fake}:{env['PATH']}",
        "SLURM_JOB_NODELIST": "two",
        "SLURM_SUBMIT_DIR": str(ROOT),
    }
    argv = _sft_argv(tiny_model_dir, sft_data, tmp_path / "slurm", 1)[1:]
    done = subprocess.run(
        ["bash", str(ROOT / "training/recipes/slurm.sbatch"), *argv],
        env={**slurm, "MAIN_PORT": str(_free_port())},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    _same_training(single_sft, tmp_path / "slurm")


@pytest.mark.slow
@cpu_runs
def test_distributed_grpo_scores_the_same_prompts_per_rank(tiny_model_dir, tmp_path, monkeypatch):
    from simulator.cli import main

    data = tmp_path / "rl.jsonl"
    write_jsonl(data, [{"prompt": f"[PYTHON] f({i}) [/PYTHON]", "score": i} for i in range(8)])
    watch = tmp_path / "watch"

    def argv(out: Path, batch_size: int) -> list[str]:
        return [
            "train", "rl", "--model", str(tiny_model_dir), "--data", str(data), "--out", str(out),
            "--reward", "test_distributed:PromptScoreRewardDouble", "--max-steps", "1", "--lr", "1e-3",
            "--num-generations", "2", "--max-completion-length", "8", "--grad-accum", "1",
            "--threads", "1", "--batch-size", str(batch_size),
        ]  # fmt: skip

    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    monkeypatch.setenv("EXECSIM_TEST_REWARDS", str(tmp_path / "single.jsonl"))
    assert main(argv(watch / "single", 4)) == 0
    _launch(argv(watch / "ddp", 2), watch, rewards=tmp_path / "ddp.jsonl")
    assert _writes_by_other_ranks(watch) == []

    single = [json.loads(line) for line in (tmp_path / "single.jsonl").read_text().splitlines()]
    ddp = [json.loads(line) for line in (tmp_path / "ddp.jsonl").read_text().splitlines()]
    assert sorted(r["rank"] for r in ddp) == [0, 1]  # each rank scored its own completions
    assert sorted(p for r in ddp for p in r["prompts"]) == sorted(p for r in single for p in r["prompts"])
    share = max(1, (os.cpu_count() or 1) // 2)  # two ranks on this machine: half its cores each
    assert {(r["executor"], r["workers"]) for r in ddp} == {("rank_run_many", share)}
    one, two = (json.loads((watch / name / "summary.json").read_text()) for name in ("single", "ddp"))
    assert (one["steps"], two["steps"], one["processes"], two["processes"]) == (1, 1, 1, 2)
    # gathered over the ranks, the mean reward is the same prompts' scores plus 1e-4 x the sampled
    # lengths (8 tokens of at most 13 characters: under 0.011 whatever was sampled)
    assert two["mean_reward_per_step"] == pytest.approx(one["mean_reward_per_step"], abs=0.011)
    assert (watch / "ddp" / "adapter" / "adapter_model.safetensors").is_file()


def test_sandbox_workers_share_the_cores_between_ranks(monkeypatch):
    from training.distributed import sandbox_workers
    from training.execution import rank_run_many, reward_executor

    assert (sandbox_workers(16, 4), sandbox_workers(2, 2), sandbox_workers(2, 8), sandbox_workers(8, 1)) == (
        4, 1, 1, 8,
    )  # fmt: skip
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "1")
    assert reward_executor() is None  # one process: the default pool
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    assert reward_executor() is rank_run_many


def test_ranks_holding_other_rows_are_refused(monkeypatch):
    import training.distributed as distributed

    monkeypatch.setattr(distributed, "gather", lambda value: [value, "0" * 64])
    with pytest.raises(distributed.RanksDisagree, match="same --data"):
        distributed.check_same_rows(distributed.rows_digest([{"prompt": "a"}]))
    distributed.check_same_rows("0" * 64)


def test_grpo_vllm_server_mode_reaches_trl(tmp_path, capsys):
    pytest.importorskip("trl", reason="the train extra is not installed")
    from simulator.cli import EXIT_USAGE, main
    from training.rl.train import RLRunConfig, vllm_args

    config = RLRunConfig(model="m", data="d", out="o", vllm_mode="server", vllm_server_host="10.0.0.5")
    args = vllm_args(config)
    assert args == {
        "use_vllm": True, "vllm_mode": "server", "vllm_server_host": "10.0.0.5", "vllm_server_port": 8000,
    }  # fmt: skip
    from trl import GRPOConfig

    GRPOConfig(output_dir=str(tmp_path), use_cpu=True, **args)  # TRL takes them as they are
    assert vllm_args(RLRunConfig(model="m", data="d", out="o", vllm="off"))["use_vllm"] is False
    data = tmp_path / "rl.jsonl"
    write_jsonl(data, [{"prompt": "p"}])
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    argv = ["train", "rl", "--model", str(model), "--data", str(data), "--out", str(tmp_path / "o")]
    assert main([*argv, "--vllm-mode", "server", "--vllm", "off"]) == EXIT_USAGE
    assert "--vllm-mode server" in capsys.readouterr().err


def _record_writes(watch: Path) -> None:
    """On a rank other than 0: remember each file under ``watch`` opened for writing; at exit, write
    the list to ``watch/writes-rank<R>-<pid>.json`` (the test asserts it is empty)."""
    import atexit

    written: list[str] = []

    def hook(event: str, args: tuple) -> None:
        if event != "open" or not isinstance(args[0], str | Path):
            return
        mode, flags = args[1], args[2] if len(args) > 2 else 0
        writing = any(c in mode for c in "wax+") if isinstance(mode, str) else bool(flags & WRITE_FLAGS)
        path = Path(os.fsdecode(args[0])).absolute()
        if writing and path.is_relative_to(watch) and not path.name.startswith("writes-rank"):
            written.append(str(path))

    sys.addaudithook(hook)
    rank = os.environ["RANK"]
    atexit.register(lambda: (watch / f"writes-rank{rank}-{os.getpid()}.json").write_text(json.dumps(written)))


if __name__ == "__main__":
    if os.environ.get("RANK", "0") != "0":
        _record_writes(Path(os.environ["EXECSIM_TEST_WATCH"]).absolute())
    from simulator.cli import main as execsim

    sys.exit(execsim(sys.argv[1:]))
