"""A servable checkpoint: a merged HF folder (and the LoRA adapter, when there is one) plus a manifest.

    execsim train export --checkpoint runs/sft/adapter --out runs/export [--base MODEL] \
        [--summary runs/sft/summary.json ...] [--card runs/synth/card.json] [--eval-results results.json]

Layout of ``--out``:

- ``merged/``: a full HF model folder (vLLM: ``--model <out>/merged``);
- ``adapter/``: the LoRA adapter, if the checkpoint was one (vLLM: ``--enable-lora --lora-modules
  execsim=<out>/adapter`` on top of the base model);
- ``manifest.json``: base model, data and its card, stages with steps and time, every training run
  behind them (``training.runs``: a resumed stage's summary carries the runs it continued; each is
  counted once, so ``steps`` and ``train_seconds`` are cumulative and ``data`` lists every file
  trained on with its sha256, examples, kinds, runs and steps), evaluation results (each with n and a
  95% interval); a checkpoint that continued another one's adapter (``--init-adapter``) also counts
  that one's stages, runs, steps, time and data, and names it in ``continued_from``.

Serving and evaluating the exported model is the integration step (``simulator.evaluation``): pass an
``evaluate(merged_dir) -> list[Estimate-like dict]`` hook, or merge results later with ``--eval-results``.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from simulator import SCHEMA_VERSION
from simulator.llm.merge import ADAPTER_CONFIG, MergeError, merge_lora
from simulator.llm.model_folder import file_sha256, write_marker
from training.runs import unique_runs

EvaluationHook = Callable[[Path], list[dict[str, Any]]]
REQUIRED_EVAL_FIELDS = ("benchmark", "metric", "value", "n", "low", "high")


class ExportError(ValueError):
    pass


def is_adapter(path: Path) -> bool:
    return (Path(path) / ADAPTER_CONFIG).is_file()


def check_eval_results(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every result names its benchmark and metric and carries n and its interval (``low``/``high``)."""
    for i, result in enumerate(results):
        missing = [k for k in REQUIRED_EVAL_FIELDS if k not in result]
        if missing:
            raise ExportError(
                f"evaluation result {i} lacks {', '.join(missing)} (n and a confidence interval are required)"
            )
    return results


def merge(checkpoint: Path, out: Path, base: str | None = None) -> tuple[Path, Path | None, str]:
    """Write ``out/merged`` (and ``out/adapter``); returns (merged dir, adapter dir or None, base model).
    An adapter is merged by the project's one LoRA merge, ``simulator.llm.merge.merge_lora`` (the one
    ``execsim model prepare`` uses), into the base's local HF folder."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    checkpoint, out = Path(checkpoint), Path(out)
    merged = out / "merged"
    if not is_adapter(checkpoint):
        inside = [checkpoint / name for name in ("adapter", "model") if (checkpoint / name).is_dir()]
        if inside:
            raise ExportError(f"{checkpoint} is a training run's folder: pass --checkpoint {inside[0]}")
        if not (checkpoint / "config.json").is_file():
            raise ExportError(
                f"{checkpoint} is neither a LoRA adapter (no {ADAPTER_CONFIG}) nor a model (no config.json)"
            )
    if is_adapter(checkpoint):
        adapter_config = json.loads((checkpoint / ADAPTER_CONFIG).read_text())
        base = base or adapter_config.get("base_model_name_or_path")
        if not base:
            raise ExportError(
                f"{checkpoint} is a LoRA adapter that does not name its base model: pass --base"
            )
        if not Path(base).is_dir():
            raise ExportError(f"the base model {base} is not a local folder (no model hub here): pass --base")
        try:
            merge_lora(Path(base), checkpoint, merged, force=True)
        except MergeError as exc:
            raise ExportError(f"cannot merge {checkpoint} into {base}: {exc}") from exc
        adapter_out = out / "adapter"
        if adapter_out.resolve() != checkpoint.resolve():
            shutil.copytree(checkpoint, adapter_out, dirs_exist_ok=True)
        return merged, adapter_out, str(base)
    else:
        model = AutoModelForCausalLM.from_pretrained(checkpoint)
        base = base or str(checkpoint)
        adapter_out = None
    tokenizer_source = checkpoint if (checkpoint / "tokenizer_config.json").is_file() else Path(base)
    model.save_pretrained(merged)
    AutoTokenizer.from_pretrained(tokenizer_source).save_pretrained(merged)
    return merged, adapter_out, str(base)


def export(
    checkpoint: Path,
    out: Path,
    *,
    base: str | None = None,
    summaries: list[dict[str, Any]] | None = None,
    card: Path | None = None,
    eval_results: list[dict[str, Any]] | None = None,
    evaluate: EvaluationHook | None = None,
) -> dict[str, Any]:
    """Merge, then write ``manifest.json``; returns the manifest."""
    started = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    merged, adapter, base_model = merge(Path(checkpoint), out, base)
    stages = [{k: v for k, v in s.items() if k not in ("log_history", "runs")} for s in (summaries or [])]
    runs = unique_runs(summaries or [])
    data = _data_records(stages, runs)
    earlier = continued_manifest(summaries or []) or {}
    if earlier:
        data = _merge_data(earlier["data"], data)
    runs_out = [{k: v for k, v in run.items() if k != "config"} for run in runs]
    results = list(eval_results or [])
    if evaluate is not None:
        results += evaluate(merged)
    weights = sorted(merged.glob("*.safetensors"))
    # the same marker ``execsim model prepare`` writes, so provenance and ``verify`` work on this folder
    digests = write_marker(merged, weights)
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "base_model": base_model,
        "merged": str(merged),
        "adapter": str(adapter) if adapter else None,
        "weights_sha256": digests,
        "data": data,
        "card": json.loads(Path(card).read_text()) if card else None,
        "stages": [*earlier.get("stages", []), *stages],
        "runs": [*earlier.get("runs", []), *runs_out],
        "steps": int(_total(stages, runs, "steps") + earlier.get("steps", 0)),
        "train_seconds": round(_total(stages, runs, "seconds") + earlier.get("train_seconds", 0), 2),
        "continued_from": {k: earlier[k] for k in ("path", "created", "steps", "card")} if earlier else None,
        "export_seconds": round(time.perf_counter() - started, 2),
        "evaluation": check_eval_results(results),
        "serve": {
            "merged": f"vllm serve {merged}",
            "lora": f"vllm serve {base_model} --enable-lora --lora-modules execsim={adapter}"
            if adapter
            else None,
        },
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, default=str) + "\n")
    return manifest


def continued_manifest(summaries: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The manifest of the checkpoint a stage continued (``--init-adapter``: the adapter's folder sits
    in a checkpoint folder beside its manifest), so the new manifest counts its steps, time and data."""
    for summary in summaries:
        adapter = (summary.get("config") or {}).get("init_adapter")
        path = Path(adapter).parent / "manifest.json" if adapter else None
        if path is not None and path.is_file():
            return {**json.loads(path.read_text()), "path": str(path)}
    return None


def _merge_data(earlier: list[dict[str, Any]], data: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The continued checkpoint's data records, then this one's; a file in both counts its runs and
    steps together."""
    merged = {record["sha256"]: dict(record) for record in earlier}
    for record in data:
        entry = merged.setdefault(record["sha256"], {**record, "runs": 0, "steps": 0})
        for field in ("runs", "steps"):
            entry[field] = int(entry.get(field) or 0) + int(record.get(field) or 0)
    return list(merged.values())


def _data_records(stages: list[dict[str, Any]], runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each data file trained on once (by sha256): from the runs' records (hashed when each run
    started, so a file rewritten later is still told apart), else from a stage's ``data`` path."""
    data: dict[str, dict[str, Any]] = {}
    for run in runs:
        record = run["data"]
        entry = data.setdefault(record["sha256"], {**record, "runs": 0, "steps": 0})
        entry["runs"] += 1
        entry["steps"] += int(run.get("steps") or 0)
    covered = {run["stage"] for run in runs}
    for stage in stages:
        path = stage.get("data")
        if stage.get("stage") in covered or not path or not Path(path).is_file():
            continue
        digest = file_sha256(Path(path))
        data.setdefault(digest, {"path": str(path), "sha256": digest, "examples": stage.get("examples")})
    return list(data.values())


def _total(stages: list[dict[str, Any]], runs: list[dict[str, Any]], field: str) -> float:
    """Steps or seconds over every run (a resumed stage's summary counts its earlier runs too), plus
    the stages whose summaries predate run records."""
    covered = {run["stage"] for run in runs}
    return sum(float(r.get(field) or 0) for r in runs) + sum(
        float(s.get(field) or 0) for s in stages if s.get("stage") not in covered
    )
