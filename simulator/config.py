"""Settings read from the environment (never by editing code). Every variable is documented in README.

- ``EXECSIM_DATA_DIR``     where models, caches, sockets and the embedded database live (default: ./.data)
- ``EXECSIM_MODEL_URL``    base URL of an OpenAI-compatible server (default: http://127.0.0.1:8765/v1)
- ``EXECSIM_MODEL_NAME``   the model name to request (default: the default model's name, below)
- ``EXECSIM_MODEL_API_KEY`` bearer token for that server, if it needs one
- ``EXECSIM_MODEL_WAIT_S`` how long one request waits for the server to start answering, retries
  included, before it gives up (default: 120 s)
- ``EXECSIM_CHECKPOINT``   the checkpoint merged into the base to make the default model: a name under
  the repository's ``checkpoints/``, a path (it contains a ``/``) to a folder holding ``adapter/``, or
  ``base`` for the plain base model. Default: ``smollm2-135m-nlex`` when ``checkpoints/`` holds it,
  else the base model.

The default model is the one ``execsim model prepare`` builds and ``execsim model serve`` / ``execsim
up`` serve: the base (SmolLM2-135M-Instruct) with the default checkpoint's LoRA adapter merged in,
served under the checkpoint's name (``simulator.llm.default_model``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MODEL_PORT = 8765
BASE_MODEL_NAME = "smollm2-135m-instruct"
DEFAULT_CHECKPOINT = "smollm2-135m-nlex"
BASE = "base"  # EXECSIM_CHECKPOINT=base: serve the base model, merge nothing

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class CheckpointChoice:
    """Which checkpoint the default model is made of, and why (one line, for ``execsim model prepare``).

    ``folder`` is None for the plain base model; otherwise it is the checkpoint folder (it should hold
    ``adapter/``; ``simulator.llm.default_model`` checks and says what is missing). ``name`` is the
    served model name and the folder name under ``<data dir>/models/``."""

    name: str
    folder: Path | None
    reason: str


def data_dir() -> Path:
    path = Path(os.environ.get("EXECSIM_DATA_DIR", Path.cwd() / ".data")).resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def checkpoints_dir() -> Path:
    """The committed checkpoints: ``checkpoints/`` at the repository root."""
    return REPO_ROOT / "checkpoints"


def checkpoint_choice() -> CheckpointChoice:
    """EXECSIM_CHECKPOINT resolved. Unset: the committed ``smollm2-135m-nlex`` if this checkout has it,
    else the base (nothing breaks before a checkpoint is committed). Set explicitly: that checkpoint
    even if its folder is missing, so that preparing it fails loudly instead of serving the base."""
    value = os.environ.get("EXECSIM_CHECKPOINT", "").strip()
    if value == BASE:
        return CheckpointChoice(BASE_MODEL_NAME, None, f"EXECSIM_CHECKPOINT={BASE}")
    if not value:
        folder = checkpoints_dir() / DEFAULT_CHECKPOINT
        if folder.is_dir():
            return CheckpointChoice(DEFAULT_CHECKPOINT, folder, "the committed default checkpoint")
        return CheckpointChoice(BASE_MODEL_NAME, None, f"no folder {folder}")
    if "/" in value or value.startswith(("~", ".")):
        folder = Path(value).expanduser().resolve()
    else:
        folder = checkpoints_dir() / value
    return CheckpointChoice(folder.name, folder, f"EXECSIM_CHECKPOINT={value}")


def default_model_name() -> str:
    """The served name of the default model: the checkpoint's name, or the base model's."""
    return checkpoint_choice().name


def model_url() -> str:
    return os.environ.get("EXECSIM_MODEL_URL", f"http://127.0.0.1:{DEFAULT_MODEL_PORT}/v1").rstrip("/")


def model_name() -> str:
    return os.environ.get("EXECSIM_MODEL_NAME") or default_model_name()


def model_api_key() -> str | None:
    return os.environ.get("EXECSIM_MODEL_API_KEY") or None


DEFAULT_MODEL_WAIT_S = 120.0


def model_wait_s() -> float:
    """Seconds one request to the model waits for the reply to start, retries included
    (``EXECSIM_MODEL_WAIT_S``); raises ValueError naming the variable when it is not a positive number."""
    raw = os.environ.get("EXECSIM_MODEL_WAIT_S", "").strip()
    if not raw:
        return DEFAULT_MODEL_WAIT_S
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise ValueError(f"EXECSIM_MODEL_WAIT_S must be a number of seconds above 0, not {raw!r}")
    return value
