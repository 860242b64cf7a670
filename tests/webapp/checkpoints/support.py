"""Manifests for the Checkpoints tests, written into tmp_path: a good one shaped like
``training.export.checkpoint.export()``'s (with base, SFT and a paired difference row), and helpers
to write partial or malformed ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

GOOD_EVALUATION = [
    {"benchmark": "cruxeval-o", "metric": "pass@1 (nlex, greedy)", "model": "base",
     "value": 0.02, "n": 200, "low": 0.005, "high": 0.05, "method": "wilson"},
    {"benchmark": "cruxeval-o", "metric": "pass@1 (nlex, greedy)", "model": "SFT",
     "value": 0.12, "n": 200, "low": 0.08, "high": 0.17, "method": "wilson"},
    {"benchmark": "cruxeval-o", "metric": "pass@1 (nlex, greedy)", "model": "sft-base",
     "value": 0.1, "n": 200, "low": 0.06, "high": 0.145, "method": "bootstrap"},
    # no "model": the checkpoint itself, an SFT checkpoint by its last stage
    {"benchmark": "mbpp", "metric": "best@4", "value": 0.25, "n": 100, "low": 0.175, "high": 0.343},
]  # fmt: skip


def good_manifest(**overrides: Any) -> dict[str, Any]:
    manifest: dict[str, Any] = {
        "schema_version": 1,
        "created": "2025-01-02T03:04:05Z",
        "base_model": "/data/models/smollm2-135m-instruct",
        "merged": "/tmp/export/merged",
        "adapter": "/tmp/export/adapter",
        "weights_sha256": {"model.safetensors": "ab" * 32},
        "data": [
            {"path": "/tmp/data/sft.jsonl", "sha256": "cd" * 32, "examples": 422},
        ],
        "card": {
            "seed": 7,
            "sources": {"generator": "model-free templates"},
            "generated_per_level": {"1": 20, "2": 20, "3": 80},
            "kept_per_level": {"1": 10, "2": 12, "3": 40},
            "rejected": {"constant_output": 40, "duplicate": 12, "too_long": 6},
            "inputs_per_mutation": {"reference": 62},
            "pass_rate_histogram": None,
            "reference_model": None,
            "settings": {},
        },
        "stages": [
            {
                "stage": "sft",
                "examples": 422,
                "steps": 150,
                "seconds": 5400.5,
                "train_loss": 1.234,
                "completion_loss_before": 1.36,
                "completion_loss_after": 1.1,
            }
        ],
        "steps": 150,
        "train_seconds": 5400.5,
        "export_seconds": 12.0,
        "evaluation": GOOD_EVALUATION,
        "serve": {
            "merged": "vllm serve /tmp/export/merged",
            "lora": "vllm serve /data/models/smollm2-135m-instruct --enable-lora --lora-modules "
            "execsim=/tmp/export/adapter",
        },
    }
    manifest.update(overrides)
    return manifest


def write_checkpoint(root: Path, name: str, manifest: Any) -> Path:
    """``root/name/manifest.json`` holding ``manifest`` (JSON-encoded unless it is str or bytes)."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "manifest.json"
    if isinstance(manifest, bytes):
        path.write_bytes(manifest)
    elif isinstance(manifest, str):
        path.write_text(manifest)
    else:
        path.write_text(json.dumps(manifest, indent=2))
    return folder
