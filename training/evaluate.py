"""Serve a checkpoint, evaluate it on the dev benchmarks, and compare it with a baseline item by item.

    execsim train evaluate --model runs/export/merged --variant sft --out runs/eval/sft \
        [--baseline runs/eval/base] [--tasks cruxeval-o,mbpp] [--limit N]

This is the step between training and export: it starts ``execsim model serve``'s server
(``simulator.llm.server.ModelServer``) on the folder, runs the same harness as ``execsim eval``
(CRUXEval-O with the app's simulate request as it sends it by default, MBPP pass@1 with its solve
request; greedy), stops the server, and writes ``eval-results.json``: one row per figure in the
shape the export manifest requires (``benchmark, metric, value, n, low, high`` and ``model``, the
variant measured). With ``--baseline``
(an earlier ``train evaluate`` output, e.g. of the base model) it adds the baseline's rows and the
paired difference per task (``simulator.evaluation.paired``). Each task's output folder keeps its
request cache, so a rerun sends nothing it already has.
"""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from simulator.evaluation import TASKS as TASK_MODULES
from simulator.evaluation import cruxeval
from simulator.evaluation.harness import EvalSettings, final_line, run
from simulator.evaluation.paired import compare
from simulator.llm.client import ChatClient
from simulator.llm.server import ModelServer
from training.paths import benchmarks_dir

# task -> (benchmark file under the benchmark folder, prompt, headline metric label)
TASKS = {
    "cruxeval-o": ("cruxeval/dev.jsonl", cruxeval.APP_PROMPT, f"pass@1 ({cruxeval.APP_PROMPT}, greedy)"),
    "mbpp": ("mbpp/sanitized-dev.jsonl", "direct", "pass@1 (greedy)"),
}
RESULTS_FILE = "eval-results.json"
Progress = Callable[[str, int, int], None]


@dataclass
class EvalRunConfig:
    model: str  # an HF folder to serve (ignored with ``url``)
    out: str
    variant: str = "checkpoint"  # what the rows call this model: base, sft, rl ...
    name: str | None = None  # served model name (default: the folder's name)
    tasks: tuple[str, ...] = ("cruxeval-o", "mbpp")
    limit: int | None = None
    baseline: str | None = None  # another evaluate output to compare with, item by item
    baseline_variant: str = "base"  # what the rows call the baseline (e.g. current: the committed checkpoint)
    concurrency: int = 16
    url: str | None = None  # evaluate a server that is already running instead of starting one
    max_model_len: int | None = None


class EvaluateError(RuntimeError):
    pass


def result_row(record: dict[str, Any], variant: str) -> dict[str, Any]:
    """The headline figure of one ``execsim eval`` results record as a manifest evaluation row."""
    label = TASKS[record["task"]][2]
    figure = record["metrics"]["pass@1"]
    return {
        "benchmark": record["task"],
        "metric": label,
        "model": variant,
        "value": figure["value"],
        "n": figure["n"],
        "low": figure["low"],
        "high": figure["high"],
        "method": figure["method"],
    }


def difference_row(
    base: dict[str, Any], new: dict[str, Any], variant: str, base_variant: str = "base"
) -> dict[str, Any]:
    diff = compare(base, new)
    return diff.row(TASKS[new["task"]][2], f"{variant} - {base_variant}")


def evaluate_task(task: str, url: str, name: str, config: EvalRunConfig, progress: Progress | None) -> dict:
    bench = benchmarks_dir()
    if bench is None:
        raise EvaluateError("no benchmark folder (set EXECSIM_BENCHMARKS_DIR or keep ../shared/benchmarks)")
    path, prompt, _ = TASKS[task]
    settings = EvalSettings(
        task=task,
        data=bench / path,
        out=Path(config.out) / task,
        limit=config.limit,
        prompt=prompt,
        concurrency=config.concurrency,
    )
    module = importlib.import_module(TASK_MODULES[task])

    async def go() -> dict[str, Any]:
        client = ChatClient(url, name, None, concurrency=config.concurrency, timeout_s=600.0)
        try:
            return await run(
                settings,
                (module.load, module.evaluate),
                client,
                (lambda done, total: progress(task, done, total)) if progress else None,
            )
        finally:
            await client.aclose()

    return asyncio.run(go())


def evaluate_model(config: EvalRunConfig, progress: Progress | None = None) -> list[dict[str, Any]]:
    """Serve (unless ``url``), evaluate every task, write ``eval-results.json``; returns its rows."""
    unknown = [t for t in config.tasks if t not in TASKS]
    if unknown:
        raise EvaluateError(f"unknown task(s) {', '.join(unknown)}: choose from {', '.join(TASKS)}")
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "evaluate-config.json").write_text(json.dumps(asdict(config), indent=2) + "\n")
    name = config.name or Path(config.model).resolve().name
    records: dict[str, dict[str, Any]] = {}
    if config.url:
        for task in config.tasks:
            records[task] = evaluate_task(task, config.url, name, config, progress)
    else:
        extra = {"max_model_len": config.max_model_len} if config.max_model_len else {}
        with ModelServer(Path(config.model), model_name=name, enforce_eager=True, **extra) as server:
            for task in config.tasks:
                records[task] = evaluate_task(task, server.url, name, config, progress)
    rows = []
    for task, record in records.items():
        print(final_line(record), flush=True)
        rows.append(result_row(record, config.variant))
        if config.baseline:
            base_file = Path(config.baseline) / task / "results.json"
            if not base_file.is_file():
                raise EvaluateError(f"--baseline {config.baseline} has no {task}/results.json")
            base = json.loads(base_file.read_text())
            rows.insert(-1, result_row(base, config.baseline_variant))
            rows.append(difference_row(base, record, config.variant, config.baseline_variant))
    (out / RESULTS_FILE).write_text(json.dumps(rows, indent=2) + "\n")
    return rows
