"""Provenance of a run: which model (and which weights), which prompts, which sampling, which seed,
which code. Recorded in ``run_started`` so any result can be traced back to what produced it."""

from __future__ import annotations

import functools
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from simulator import SCHEMA_VERSION, config
from simulator.llm.client import ModelInfo
from simulator.prompts import VERSIONS

UNKNOWN = "unknown"


def weights_hash(model: str) -> str:
    """``<data_dir>/models/<model>/weights.sha256`` (written by the serving code), else "unknown"."""
    path = config.data_dir() / "models" / model / "weights.sha256"
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return UNKNOWN
    return text.split()[0] if text else UNKNOWN


@functools.cache
def code_version() -> str:
    """``git describe`` of the checkout this package runs from, else the installed package version."""
    root = Path(__file__).resolve().parents[2]
    if (root / ".git").exists():
        try:
            out = subprocess.run(
                ["git", "describe", "--always", "--dirty", "--tags"],
                cwd=root,
                capture_output=True,
                text=True,
                timeout=5,
                check=True,
            )
            if out.stdout.strip():
                return f"git:{out.stdout.strip()}"
        except (OSError, subprocess.SubprocessError):
            pass
    try:
        return f"execsim {metadata.version('execsim')}"
    except metadata.PackageNotFoundError:
        return UNKNOWN


def collect(
    *, model: str, server: str, info: ModelInfo | None, sampling: dict[str, Any], seed: int
) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "model": model,
        "model_root": info.root if info else None,
        "max_model_len": info.max_model_len if info else None,
        "weights_sha256": weights_hash(model),
        "server": server,
        "prompts": dict(VERSIONS),
        "sampling": sampling,
        "seed": seed,
        "code_version": code_version(),
    }
