"""Reading exported checkpoints: the ``manifest.json`` that ``execsim train export``
(training/export/checkpoint.py) writes, turned into plain records the Checkpoints pages render.

Plain Python on purpose: no Django, and no import of ``training`` (which pulls in torch and TRL), so
the pages stay cheap and this module can be tested with files alone. It only reads.

Nothing here raises on a bad manifest. A file that cannot be read or is not a JSON object gives a
``Checkpoint`` with ``error`` set (the page shows it instead of a 500); a field of the wrong type is
left out with a line in ``warnings``; an evaluation row that lacks a field keeps what it has and lists
the rest in its ``problems``.

Evaluation rows may name the model they measure in ``model`` (or ``variant``): ``base``, ``sft``,
``rl``, or a paired difference such as ``sft - base``. Without it a row measures the checkpoint
itself, whose variant is taken from its last training stage (``sft``; ``rl1``/``rl2`` -> ``rl``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simulator.llm.merge import ADAPTER_CONFIG

MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 5_000_000  # export drops the trainers' log histories; a real manifest is a few kB
# Sources, by where the folder lives; the page labels each checkpoint with one.
COMMITTED, DATA_DIR, CONFIGURED = "committed", "data dir", "configured"
# Level variants in plotting order; others follow alphabetically, then paired differences.
VARIANT_ORDER = ("base", "sft", "rl")
OWN = "checkpoint"  # the variant of a row about a checkpoint whose stages say nothing


@dataclass(frozen=True)
class Root:
    """A folder to look in: either a checkpoint itself (it holds manifest.json) or a parent of them."""

    path: Path
    source: str


@dataclass
class EvalRow:
    """One evaluation result: a figure with its 95% interval, for one model variant."""

    index: int
    benchmark: str
    metric: str
    model: str
    value: float | None = None
    low: float | None = None
    high: float | None = None
    n: int | None = None
    method: str | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def is_difference(self) -> bool:
        return " - " in self.model

    @property
    def plotted(self) -> bool:
        return self.value is not None

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def interval(self) -> tuple[float, float] | None:
        """(low, high), in order even when the manifest swapped them (a problem says so)."""
        if self.low is None or self.high is None:
            return None
        return min(self.low, self.high), max(self.low, self.high)

    @property
    def value_text(self) -> str:
        return fmt(self.value)

    @property
    def interval_text(self) -> str:
        """``[low, high]`` as the table and the chart's description print it; empty without one."""
        return f"[{fmt(self.low)}, {fmt(self.high)}]" if self.has_interval else ""


@dataclass
class EvalGroup:
    """The rows of one benchmark and metric (one table block, one chart), base first."""

    benchmark: str
    metric: str
    rows: list[EvalRow]

    @property
    def plotted(self) -> list[EvalRow]:
        return [r for r in self.rows if r.plotted]


@dataclass
class Stage:
    name: str
    steps: int | None = None
    seconds: float | None = None
    examples: int | None = None
    notes: list[str] = field(default_factory=list)  # losses, rewards

    @property
    def time(self) -> str:
        return duration(self.seconds)


@dataclass
class DataFile:
    path: str
    sha256: str | None = None
    examples: int | None = None


@dataclass
class CardSummary:
    """The synthesis card's headline figures (training/synth/card.py)."""

    seed: Any = None
    generated: int | None = None
    kept: int | None = None
    kept_per_level: list[tuple[str, int]] = field(default_factory=list)
    rejected: list[tuple[str, int]] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    reference_model: str | None = None


@dataclass
class ServeCommand:
    label: str
    command: str


@dataclass
class Checkpoint:
    """One exported checkpoint as the pages show it; ``error`` set means its manifest was unusable."""

    name: str
    directory: Path
    source: str
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    base_model: str | None = None
    created: str | None = None
    schema_version: Any = None
    adapter: str | None = None
    weights: list[str] = field(default_factory=list)
    steps: int | None = None
    train_seconds: float | None = None
    data: list[DataFile] = field(default_factory=list)
    card: CardSummary | None = None
    stages: list[Stage] = field(default_factory=list)
    evaluation: list[EvalRow] = field(default_factory=list)
    serve: list[ServeCommand] = field(default_factory=list)
    kind: str = OWN

    @property
    def train_time(self) -> str:
        return duration(self.train_seconds)

    @property
    def manifest_path(self) -> Path:
        return self.directory / MANIFEST

    @property
    def data_examples(self) -> int | None:
        """Training examples over the data files (else over the stages), None when nothing says."""
        counts = [d.examples for d in self.data if d.examples is not None]
        if not counts:
            counts = [s.examples for s in self.stages if s.examples is not None]
        return sum(counts) if counts else None

    @property
    def groups(self) -> list[EvalGroup]:
        return evaluation_groups(self.evaluation)


def fmt(value: float | None) -> str:
    """A figure as the pages print it: three decimals for rates and differences, fewer for big ones."""
    if value is None:
        return "?"
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3f}"


def duration(seconds: float | None) -> str:
    """``47 s``, ``12 min 5 s``, ``1 h 52 min``; empty when unknown."""
    if seconds is None:
        return ""
    total = round(seconds)
    if total < 60:
        return f"{seconds:.3g} s" if seconds < 10 else f"{total} s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


# -- small typed readers: each returns None (and says why) instead of raising ----------------------


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _integer(value: Any) -> int | None:
    number = _number(value)
    return int(number) if number is not None and number == int(number) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


class _Fields:
    """Reads fields of one JSON object, collecting a warning per field of the wrong type."""

    def __init__(self, data: dict[str, Any], where: str, warnings: list[str]) -> None:
        self.data, self.where, self.warnings = data, where, warnings

    def _bad(self, key: str, expected: str) -> None:
        self.warnings.append(f"{self.where}{key}: expected {expected}, got {_show(self.data[key])}")

    def text(self, key: str) -> str | None:
        if self.data.get(key) is None:
            return None
        value = _text(self.data[key])
        if value is None:
            self._bad(key, "a non-empty string")
        return value

    def number(self, key: str) -> float | None:
        if self.data.get(key) is None:
            return None
        value = _number(self.data[key])
        if value is None:
            self._bad(key, "a number")
        return value

    def integer(self, key: str) -> int | None:
        if self.data.get(key) is None:
            return None
        value = _integer(self.data[key])
        if value is None:
            self._bad(key, "an integer")
        return value

    def obj(self, key: str) -> dict[str, Any] | None:
        if self.data.get(key) is None:
            return None
        if not isinstance(self.data[key], dict):
            self._bad(key, "an object")
            return None
        return self.data[key]

    def items(self, key: str) -> list[Any]:
        if self.data.get(key) is None:
            return []
        if not isinstance(self.data[key], list):
            self._bad(key, "a list")
            return []
        return self.data[key]


def _show(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


# -- the parts of a manifest --------------------------------------------------------------------------


def _known_variant(name: str) -> bool:
    return name in VARIANT_ORDER or name == OWN or re.fullmatch(r"rl\d*|sft\d*", name) is not None


def normalise_variant(raw: Any, own: str) -> str:
    """``"SFT"`` -> ``"sft"``; a difference -> ``"sft - base"`` (spelled ``sft - base``, ``sft -base``
    or, between known variants only, ``sft-base``: a model name such as ``smollm2-135m`` stays whole);
    absent -> the checkpoint's own variant."""
    if not isinstance(raw, str) or not raw.strip():
        return own
    name = " ".join(raw.lower().split())
    parts = re.split(r" -|- ", name)
    if len(parts) == 1 and all(_known_variant(p) for p in name.split("-")):
        parts = name.split("-")
    return " - ".join(p.strip() for p in parts)


def own_variant(stages: Sequence[Stage]) -> str:
    """What the checkpoint itself is, from its last stage: ``sft``, ``rl`` (any RL stage) or unknown."""
    if not stages:
        return OWN
    last = stages[-1].name.lower()
    if last.startswith("rl") or last == "grpo":
        return "rl"
    if last.startswith("sft"):
        return "sft"
    return OWN


def _stage(raw: Any, i: int, warnings: list[str]) -> Stage | None:
    if not isinstance(raw, dict):
        warnings.append(f"stages[{i}]: expected an object, got {_show(raw)}")
        return None
    f = _Fields(raw, f"stages[{i}].", warnings)
    stage = Stage(
        name=f.text("stage") or f.text("kind") or f.text("name") or f"stage {i + 1}",
        steps=f.integer("steps"),
        seconds=f.number("seconds"),
        examples=f.integer("examples"),
    )
    loss = f.number("train_loss")
    if loss is not None:
        stage.notes.append(f"train loss {loss:.4g}")
    before, after = f.number("completion_loss_before"), f.number("completion_loss_after")
    if before is not None and after is not None:
        stage.notes.append(f"completion loss {before:.4g} -> {after:.4g}")
    rewards = [r for r in f.items("rewards") if isinstance(r, str)]
    if rewards:
        stage.notes.append("rewards: " + ", ".join(rewards))
    means = [m for m in (_number(x) for x in f.items("mean_reward_per_step")) if m is not None]
    if means:
        stage.notes.append(f"mean reward {means[0]:.3g} -> {means[-1]:.3g} over {len(means)} steps")
    return stage


def _data_file(raw: Any, i: int, warnings: list[str]) -> DataFile | None:
    if isinstance(raw, str):
        return DataFile(path=raw)
    if not isinstance(raw, dict):
        warnings.append(f"data[{i}]: expected an object, got {_show(raw)}")
        return None
    f = _Fields(raw, f"data[{i}].", warnings)
    return DataFile(path=f.text("path") or "?", sha256=f.text("sha256"), examples=f.integer("examples"))


def _total(counts: Any) -> int | None:
    if not isinstance(counts, dict):
        return None
    values = [_integer(v) for v in counts.values()]
    return sum(v for v in values if v is not None) if values else None


def _pairs(counts: Any) -> list[tuple[str, int]]:
    if not isinstance(counts, dict):
        return []
    return [(str(k), v) for k, v in ((k, _integer(v)) for k, v in counts.items()) if v is not None]


def _card(raw: dict[str, Any], warnings: list[str]) -> CardSummary:
    f = _Fields(raw, "card.", warnings)
    sources = f.obj("sources") or {}
    return CardSummary(
        seed=raw.get("seed"),
        generated=_total(raw.get("generated_per_level")),
        kept=_total(raw.get("kept_per_level")),
        kept_per_level=_pairs(raw.get("kept_per_level")),
        rejected=sorted(_pairs(raw.get("rejected")), key=lambda p: -p[1]),
        sources=[f"{k}: {v}" for k, v in sources.items()],
        reference_model=f.text("reference_model"),
    )


def _eval_row(raw: Any, i: int, own: str) -> EvalRow:
    if not isinstance(raw, dict):
        return EvalRow(i, "?", "?", own, problems=[f"not an object: {_show(raw)}"])
    problems: list[str] = []
    f = _Fields(raw, "", problems)
    row = EvalRow(
        index=i,
        benchmark=f.text("benchmark") or "?",
        metric=f.text("metric") or "?",
        model=normalise_variant(raw.get("model", raw.get("variant")), own),
        value=f.number("value"),
        low=f.number("low"),
        high=f.number("high"),
        n=f.integer("n"),
        method=_text(raw.get("method")),
    )
    missing = [k for k in ("benchmark", "metric", "value", "n", "low", "high") if raw.get(k) is None]
    if missing:
        problems.insert(0, "lacks " + ", ".join(missing))
    if row.value is not None and row.low is not None and row.high is not None:
        if not row.low <= row.high:
            problems.append(f"low {row.low:g} is above high {row.high:g}")
        elif not row.low <= row.value <= row.high:
            problems.append(f"value {row.value:g} lies outside its interval [{row.low:g}, {row.high:g}]")
    row.problems = problems
    return row


def _serve(checkpoint: Checkpoint, raw: dict[str, Any] | None) -> list[ServeCommand]:
    """Commands that work from where the folder is now, then those the manifest recorded at export."""
    out: list[ServeCommand] = []
    folder = checkpoint.directory
    merged = folder / "merged"
    if (merged / "config.json").is_file():
        out.append(ServeCommand("merged model", f"execsim model serve --checkpoint {merged}"))
    for adapter in (folder / "adapter", folder):
        if (adapter / ADAPTER_CONFIG).is_file():
            out.append(
                ServeCommand(
                    "LoRA adapter on the default model (request it as model "
                    f"{checkpoint.name}; base model {checkpoint.base_model or 'unknown'})",
                    f"execsim model serve --lora {checkpoint.name}={adapter}",
                )
            )
            break
    for key, value in (raw or {}).items():
        if _text(value):
            out.append(ServeCommand(f"{key} (as recorded at export)", value))
    return out


def parse_manifest(data: Any, checkpoint: Checkpoint) -> Checkpoint:
    """Fill ``checkpoint`` from a decoded manifest; only a non-object sets ``error``."""
    if not isinstance(data, dict):
        checkpoint.error = f"{MANIFEST} holds {type(data).__name__}, not a JSON object"
        return checkpoint
    warnings = checkpoint.warnings
    f = _Fields(data, "", warnings)
    checkpoint.schema_version = data.get("schema_version")
    checkpoint.created = f.text("created")
    checkpoint.base_model = f.text("base_model")
    checkpoint.adapter = f.text("adapter")
    checkpoint.weights = sorted(str(k) for k in (f.obj("weights_sha256") or {}))
    checkpoint.stages = [s for i, r in enumerate(f.items("stages")) if (s := _stage(r, i, warnings))]
    checkpoint.kind = own_variant(checkpoint.stages)
    steps = f.integer("steps")
    checkpoint.steps = steps if steps is not None else _sum(s.steps for s in checkpoint.stages)
    seconds = f.number("train_seconds")
    checkpoint.train_seconds = seconds if seconds is not None else _sum(s.seconds for s in checkpoint.stages)
    checkpoint.data = [d for i, r in enumerate(f.items("data")) if (d := _data_file(r, i, warnings))]
    card = f.obj("card")
    checkpoint.card = _card(card, warnings) if card is not None else None
    checkpoint.evaluation = [_eval_row(r, i, checkpoint.kind) for i, r in enumerate(f.items("evaluation"))]
    checkpoint.serve = _serve(checkpoint, f.obj("serve"))
    for key, what in (("base_model", "base model"), ("stages", "training stages"), ("evaluation", "results")):
        if key not in data:
            warnings.append(f"the manifest has no {key} ({what} unknown)")
    return checkpoint


def _sum(values: Iterable[float | int | None]) -> Any:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def read_checkpoint(directory: Path, *, name: str | None = None, source: str = CONFIGURED) -> Checkpoint:
    """The checkpoint in ``directory`` (its ``manifest.json``); never raises for what the file holds."""
    directory = Path(directory)
    checkpoint = Checkpoint(name=name or directory.name, directory=directory, source=source)
    path = directory / MANIFEST
    try:
        size = path.stat().st_size
        if size > MAX_MANIFEST_BYTES:
            checkpoint.error = f"{MANIFEST} is {size} bytes, over the {MAX_MANIFEST_BYTES}-byte limit"
            return checkpoint
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        checkpoint.error = f"cannot read {MANIFEST}: {exc}"
        return checkpoint
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        checkpoint.error = f"{MANIFEST} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        return checkpoint
    return parse_manifest(data, checkpoint)


def discover(roots: Iterable[Root]) -> list[Checkpoint]:
    """Every checkpoint under ``roots``, in their order (then by folder name). A root that does not
    exist or cannot be listed is skipped; a folder reached twice counts once; a name already taken
    gets ``-2``, ``-3``..."""
    found: list[Checkpoint] = []
    seen: set[Path] = set()
    names: set[str] = set()
    for root in roots:
        path = Path(root.path)
        try:
            if (path / MANIFEST).exists():
                folders = [path]
            elif path.is_dir():
                folders = sorted(p for p in path.iterdir() if (p / MANIFEST).exists())
            else:
                continue
        except OSError:  # an unreadable folder holds nothing we can show
            continue
        for folder in folders:
            key = folder.resolve()
            if key in seen:
                continue
            seen.add(key)
            name, suffix = folder.name, 1
            while name in names:
                suffix += 1
                name = f"{folder.name}-{suffix}"
            names.add(name)
            checkpoint = read_checkpoint(folder, name=name, source=root.source)
            if name != folder.name:
                checkpoint.warnings.insert(0, f"renamed from {folder.name}: an earlier folder has that name")
            found.append(checkpoint)
    return found


def _resolved(path: Path) -> Path:
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):  # a symlink loop, an unreadable parent: compare as given
        return Path(path).absolute()


def find_default(checkpoints: Sequence[Checkpoint], folder: Path | None, name: str) -> Checkpoint | None:
    """The listed checkpoint that the app's default model is made of, given the ``folder`` and ``name``
    of ``simulator.config.checkpoint_choice()`` (which the pages' view passes in): the one in that folder
    (resolved paths compared), else the one listed under that name. None when the default is the plain
    base model (``folder`` None) or no listed checkpoint matches."""
    if folder is None:
        return None
    target = _resolved(folder)
    for checkpoint in checkpoints:
        if _resolved(checkpoint.directory) == target:
            return checkpoint
    return find(checkpoints, name)


def _variant_key(model: str) -> tuple[int, int, str]:
    if " - " in model:
        return (2, 0, model)
    for i, name in enumerate(VARIANT_ORDER):
        if model == name:
            return (0, i, model)
    if model.startswith("rl"):  # rl1, rl2 after rl
        return (0, len(VARIANT_ORDER), model)
    return (1, 0, model)


def evaluation_groups(rows: Iterable[EvalRow]) -> list[EvalGroup]:
    """Rows grouped by (benchmark, metric) in order of first appearance; in a group, base, sft, rl,
    other variants, then paired differences (a stable sort keeps the manifest's order among equals)."""
    groups: dict[tuple[str, str], EvalGroup] = {}
    for row in rows:
        key = (row.benchmark, row.metric)
        if key not in groups:
            groups[key] = EvalGroup(row.benchmark, row.metric, [])
        groups[key].rows.append(row)
    for group in groups.values():
        group.rows.sort(key=lambda r: _variant_key(r.model))
    return list(groups.values())


def find(checkpoints: Iterable[Checkpoint], name: str) -> Checkpoint | None:
    return next((c for c in checkpoints if c.name == name), None)
