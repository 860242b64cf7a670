"""Provenance of a run: which model (and which weights), which prompts, which sampling, which seed,
which code. Recorded in ``run_started`` so any result can be traced back to what produced it."""

from __future__ import annotations

import functools
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from simulator import SCHEMA_VERSION
from simulator.llm.client import ModelInfo
from simulator.llm.model_folder import served_weights_sha256
from simulator.prompts import VERSIONS

UNKNOWN = "unknown"


def weights_hash(model: str, root: str | None = None) -> str:
    """The served weights' hash from their ``weights.sha256`` marker (written by ``execsim model
    prepare`` and the export): the folder the server names as its root if it is on this machine, else
    ``<data_dir>/models/<model>``; "unknown" without a marker."""
    return served_weights_sha256(model, root) or UNKNOWN


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
        "weights_sha256": weights_hash(model, info.root if info else None),
        "server": server,
        "prompts": dict(VERSIONS),
        "sampling": sampling,
        "seed": seed,
        "code_version": code_version(),
    }
