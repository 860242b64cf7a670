"""The default model: which checkpoint (EXECSIM_CHECKPOINT, the committed one, or the base), its name
everywhere a name is needed, and ``prepare_default`` / ``execsim model prepare`` merging it once.

The base is converted by a test double (a two-tensor safetensors file, no GGUF), so no test here
touches the real model; ``config.REPO_ROOT`` points at a temporary checkout.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from safetensors.torch import save_file  # noqa: E402

from simulator import config  # noqa: E402
from simulator.cli import main  # noqa: E402
from simulator.evaluation.harness import provenance  # noqa: E402
from simulator.llm import default_model, model_folder  # noqa: E402
from simulator.llm.server import free_port  # noqa: E402
from simulator.pipeline.provenance import weights_hash  # noqa: E402

HERE = Path(__file__).resolve().parent  # fake_vllm_server.py lives here
NLEX = config.DEFAULT_CHECKPOINT
BASE = config.BASE_MODEL_NAME
Q = "model.layers.0.self_attn.q_proj"


def tiny_convert(gguf: Path, out: Path) -> None:
    """Test double for the GGUF conversion: a config, a tokenizer file and two bf16 weights."""
    (out / "config.json").write_text(json.dumps({"model_type": "llama"}))
    (out / "tokenizer.json").write_text("{}")
    generator = torch.Generator().manual_seed(0)
    weights = {f"{Q}.weight": torch.randn(8, 8, generator=generator).to(torch.bfloat16)}
    weights["model.norm.weight"] = torch.ones(8, dtype=torch.bfloat16)
    save_file(weights, str(out / "model.safetensors"), metadata={"format": "pt"})


def write_checkpoint(folder: Path, seed: int = 1) -> Path:
    """A checkpoint folder as committed: manifest.json and adapter/ (a rank-2 LoRA on q_proj)."""
    adapter = folder / "adapter"
    adapter.mkdir(parents=True, exist_ok=True)
    config_ = {"peft_type": "LORA", "r": 2, "lora_alpha": 4, "target_modules": ["q_proj"], "bias": "none"}
    (adapter / "adapter_config.json").write_text(json.dumps(config_))
    generator = torch.Generator().manual_seed(seed)
    save_file(
        {
            f"base_model.model.{Q}.lora_A.weight": torch.randn(2, 8, generator=generator),
            f"base_model.model.{Q}.lora_B.weight": torch.randn(8, 2, generator=generator),
        },
        str(adapter / "adapter_model.safetensors"),
    )
    (folder / "manifest.json").write_text(json.dumps({"schema_version": 1, "base_model": BASE}))
    return folder


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout without checkpoints yet, a data dir, and no EXECSIM_* variables from outside."""
    root = tmp_path / "repo"
    root.mkdir()
    monkeypatch.setattr(config, "REPO_ROOT", root)
    monkeypatch.setenv("EXECSIM_DATA_DIR", str(tmp_path / "data"))
    for name in ("EXECSIM_CHECKPOINT", "EXECSIM_MODEL_NAME"):
        monkeypatch.delenv(name, raising=False)
    return root


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF")
    return path


def test_without_a_committed_checkpoint_the_default_is_the_base(repo: Path) -> None:
    choice = config.checkpoint_choice()

    assert choice.name == BASE and choice.folder is None
    assert choice.reason == f"no folder {repo / 'checkpoints' / NLEX}"
    assert config.default_model_name() == config.model_name() == BASE
    assert default_model.default_model_dir() == config.data_dir() / "models" / BASE


def test_a_committed_checkpoint_becomes_the_default_and_names_it(repo: Path) -> None:
    folder = write_checkpoint(repo / "checkpoints" / NLEX)

    choice = config.checkpoint_choice()

    assert (choice.name, choice.folder) == (NLEX, folder)
    assert config.default_model_name() == config.model_name() == NLEX
    assert default_model.default_model_dir() == config.data_dir() / "models" / NLEX
    assert default_model.base_model_dir() == config.data_dir() / "models" / BASE


def test_execsim_checkpoint_base_a_name_or_a_path(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_checkpoint(repo / "checkpoints" / NLEX)
    monkeypatch.setenv("EXECSIM_CHECKPOINT", "base")
    assert config.checkpoint_choice().folder is None and config.model_name() == BASE

    monkeypatch.setenv("EXECSIM_CHECKPOINT", "other")
    choice = config.checkpoint_choice()
    assert (choice.name, choice.folder) == ("other", repo / "checkpoints" / "other")

    monkeypatch.setenv("EXECSIM_CHECKPOINT", str(tmp_path / "elsewhere" / "mine"))
    choice = config.checkpoint_choice()
    assert (choice.name, choice.folder) == ("mine", tmp_path / "elsewhere" / "mine")

    monkeypatch.setenv("EXECSIM_MODEL_NAME", "asked-for")
    assert config.model_name() == "asked-for" and config.default_model_name() == "mine"


def test_prepare_default_serves_the_base_when_there_is_no_checkpoint(repo: Path, gguf: Path) -> None:
    model = default_model.prepare_default(gguf=gguf, convert=tiny_convert)

    assert model.merged is None and model.name == BASE
    assert model.path == default_model.base_model_dir() and model.sha256 == model.base.sha256
    assert not (config.data_dir() / "models" / NLEX).exists()


def test_prepare_default_merges_the_checkpoint_once_under_its_name(repo: Path, gguf: Path) -> None:
    write_checkpoint(repo / "checkpoints" / NLEX)
    said: list[str] = []

    first = default_model.prepare_default(gguf=gguf, convert=tiny_convert, progress=said.append)
    second = default_model.prepare_default(gguf=gguf, convert=tiny_convert)

    assert first.name == NLEX and first.path == config.data_dir() / "models" / NLEX
    assert first.created and first.merged is not None and first.merged.modules == 1
    assert not second.created and second.sha256 == first.sha256 != first.base.sha256
    assert model_folder.verify(first.path) and (first.path / "tokenizer.json").is_file()
    assert any("merging 1 adapted layers" in line for line in said)
    # provenance names the merged weights, by served name and by the root the server reports
    assert model_folder.served_weights_sha256(NLEX) == first.sha256
    assert weights_hash(NLEX) == weights_hash("any-name", str(first.path)) == first.sha256

    write_checkpoint(repo / "checkpoints" / NLEX, seed=2)  # a retrained adapter is merged again
    third = default_model.prepare_default(gguf=gguf, convert=tiny_convert)
    assert third.merged is not None and third.merged.created and third.sha256 != first.sha256
    assert not third.base.created


def test_a_chosen_checkpoint_that_is_missing_fails_before_converting(
    repo: Path, gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    converted: list[Path] = []
    monkeypatch.setenv("EXECSIM_CHECKPOINT", "gone")

    missing = "EXECSIM_CHECKPOINT=gone: no folder .*checkpoints/gone"
    with pytest.raises(default_model.PrepareError, match=missing):
        default_model.prepare_default(gguf=gguf, convert=lambda src, out: converted.append(src))

    (repo / "checkpoints" / "gone").mkdir(parents=True)  # a folder without adapter/
    with pytest.raises(default_model.PrepareError, match=r"no adapter/adapter_config\.json"):
        default_model.prepare_default(gguf=gguf, convert=lambda src, out: converted.append(src))
    assert converted == []


def test_execsim_model_prepare_says_what_it_did(
    repo: Path, gguf: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(default_model, "convert_gguf", tiny_convert)

    assert main(["model", "prepare", "--gguf", str(gguf)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"prepared path={config.data_dir() / 'models' / BASE} sha256=")
    folder = repo / "checkpoints" / NLEX
    assert lines[1] == f"no checkpoint merged (no folder {folder}): the default model is {BASE}"

    write_checkpoint(repo / "checkpoints" / NLEX)
    assert main(["model", "prepare", "--gguf", str(gguf)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("already prepared ")
    assert lines[1].startswith(f"merged checkpoint={NLEX} adapter={repo / 'checkpoints' / NLEX}/adapter ")

    assert main(["model", "prepare", "--gguf", str(gguf)]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith(f"already merged checkpoint={NLEX} ")

    monkeypatch.setenv("EXECSIM_CHECKPOINT", "gone")
    assert main(["model", "prepare", "--gguf", str(gguf)]) == 1


def test_the_evaluation_provenance_names_the_served_weights(repo: Path, gguf: Path, tmp_path: Path) -> None:
    from datetime import UTC, datetime
    from types import SimpleNamespace

    write_checkpoint(repo / "checkpoints" / NLEX)
    model = default_model.prepare_default(gguf=gguf, convert=tiny_convert)
    data = tmp_path / "d.jsonl"
    data.write_text("{}\n")
    settings = SimpleNamespace(data=data, to_dict=dict)

    for name, expected in ((NLEX, model.sha256), (BASE, model.base.sha256), ("elsewhere", None)):
        client = SimpleNamespace(model=name, base_url="http://x/v1")
        record = provenance(settings, client, datetime.now(UTC))  # type: ignore[arg-type]
        assert record["weights_sha256"] == expected, name


def _serve_ready_line(env: dict[str, str], *args: str) -> str:
    """Run ``execsim model serve`` against the fake vLLM entrypoint; its READY line, then SIGTERM."""
    script = (
        "import sys, simulator.llm.server as s; s.ENTRYPOINT = 'fake_vllm_server'; "
        "from simulator.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    port = str(free_port())
    command = [sys.executable, "-c", script, "model", "serve", "--port", port, *args]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline().strip()  # type: ignore[union-attr]
        if not line:
            proc.wait(timeout=30)
            return proc.stderr.read()  # type: ignore[union-attr]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        return line.replace(f":{port}/", ":PORT/")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_execsim_model_serve_serves_the_merged_checkpoint_under_its_name(repo: Path, gguf: Path) -> None:
    checkpoint = write_checkpoint(repo.parent / "elsewhere" / "my-nlex")
    env = {
        **os.environ,
        "EXECSIM_DATA_DIR": str(config.data_dir()),
        "EXECSIM_CHECKPOINT": str(checkpoint),  # a path: the child process has the real REPO_ROOT
        "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parents[2])]),
    }
    choice = config.CheckpointChoice("my-nlex", checkpoint, "test")
    merged = default_model.prepare_default(choice=choice, gguf=gguf, convert=tiny_convert)

    line = _serve_ready_line(env)
    assert line == "READY url=http://127.0.0.1:PORT/v1 model=my-nlex", line
    assert merged.path == config.data_dir() / "models" / "my-nlex"

    lora = _serve_ready_line(env, "--lora", f"mine={checkpoint / 'adapter'}")  # adapters go on the base
    assert lora == f"READY url=http://127.0.0.1:PORT/v1 model={BASE}", lora
