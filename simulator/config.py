"""Settings read from the environment (never by editing code). Every variable is documented in README.

- ``EXECSIM_DATA_DIR``     where models, caches, sockets and the embedded database live (default: ./.data)
- ``EXECSIM_MODEL_URL``    base URL of an OpenAI-compatible server (default: http://127.0.0.1:8765/v1)
- ``EXECSIM_MODEL_NAME``   the model name to request (default: the served default model's name)
- ``EXECSIM_MODEL_API_KEY`` bearer token for that server, if it needs one
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_MODEL_PORT = 8765
DEFAULT_MODEL_NAME = "smollm2-135m-instruct"


def data_dir() -> Path:
    path = Path(os.environ.get("EXECSIM_DATA_DIR", Path.cwd() / ".data")).resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def model_url() -> str:
    return os.environ.get("EXECSIM_MODEL_URL", f"http://127.0.0.1:{DEFAULT_MODEL_PORT}/v1").rstrip("/")


def model_name() -> str:
    return os.environ.get("EXECSIM_MODEL_NAME", DEFAULT_MODEL_NAME)


def model_api_key() -> str | None:
    return os.environ.get("EXECSIM_MODEL_API_KEY") or None
