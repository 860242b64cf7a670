"""The promotion gate: a candidate checkpoint replaces the committed one only when it is better on dev.

    execsim train promote --candidate runs/r/export --current checkpoints/smollm2-135m-nlex \
        --candidate-results runs/r/eval/sft --current-results runs/r/eval/current \
        [--target cruxeval-o] [--dry-run]

The two results folders are ``execsim train evaluate --out`` folders (``<task>/results.json``), the
candidate's and the current checkpoint's, on the same dev data; an ``execsim eval self-rlef`` output
copied in as ``self-rlef/results.json`` adds two tasks, ``self-rlef`` (every test, public and
private, passes after repair) and ``repair-replies`` (the share of repair replies that are a new
program). Every task both hold is compared item by item with ``simulator.evaluation.paired.compare``
(candidate minus current, percentile bootstrap 95% interval over items). The candidate is promoted when

- the target task's interval lies above zero (``low > 0``), and
- no other task's interval lies below zero (``high < 0``: a significant loss),

and refused otherwise, as it is when the results are not both on the same dev file (sha256 and a
``dev`` file name) or name served weights that are not the two checkpoints' (``weights_sha256`` in
the results' provenance against the manifests). Promoting replaces ``<current>/adapter`` with the
candidate's adapter and writes the candidate's manifest there, with the comparison, the rule and what
it replaced under ``promotion`` and the paired rows added to ``evaluation``; ``--dry-run`` only prints.

``--beside checkpoints/<name>`` keeps a candidate that gains something users need without being
promoted: whatever the verdict, its adapter and manifest are written to a new checkpoint folder beside
the current one (which is left as it is), laid out as a promoted one is, its ``serve`` lines naming
it (``EXECSIM_CHECKPOINT=<name>``) and the comparison and verdict recorded under ``kept_beside``.
"""

from __future__ import annotations

import datetime
import json
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from simulator.config import checkpoints_dir
from simulator.evaluation.paired import REPAIR_REPLIES, PairedDifference, compare
from simulator.llm.merge import ADAPTER_CONFIG

RULE = (
    "promote when the target task's paired 95% interval (candidate - current) is above zero and no "
    "other task's is below zero"
)


class PromoteError(ValueError):
    """The inputs cannot be compared (missing files, different data, not the dev split)."""


@dataclass
class Decision:
    target: str
    differences: dict[str, PairedDifference]
    reasons: list[str] = field(default_factory=list)  # why it is refused; empty: promote

    @property
    def promote(self) -> bool:
        return not self.reasons

    def lines(self) -> list[str]:
        out = [
            diff.line() + ("  (target)" if task == self.target else "")
            for task, diff in self.differences.items()
        ]
        out.append("PROMOTE" if self.promote else "REFUSED: " + "; ".join(self.reasons))
        return out


def read_results(folder: Path) -> dict[str, dict[str, Any]]:
    """``task -> results.json record`` of a ``train evaluate`` output folder, the task named by its
    folder: ``train evaluate`` writes ``<task>/results.json``, and a second run of a task copied in
    under another name (``mbpp-n8/``: sampled, n=8) is a task of its own, not a silent replacement."""
    records = {}
    for path in sorted(Path(folder).glob("*/results.json")):
        record = json.loads(path.read_text())
        records[path.parent.name] = record
        if record.get("task") == "self-rlef":
            records[REPAIR_REPLIES] = record
    if not records:
        raise PromoteError(
            f"{folder} holds no <task>/results.json (an `execsim train evaluate --out` folder)"
        )
    return records


def decide(
    candidate: dict[str, dict[str, Any]],
    current: dict[str, dict[str, Any]],
    target: str,
    *,
    candidate_weights: dict[str, str] | None = None,
    current_weights: dict[str, str] | None = None,
) -> Decision:
    """The gate's verdict on two evaluations (``task -> results record``)."""
    shared = [task for task in current if task in candidate]
    if target not in shared:
        raise PromoteError(f"the target task {target!r} is not in both results (they share: {shared})")
    decision = Decision(target, {})
    for task in [target, *[t for t in shared if t != target]]:
        a, b = current[task], candidate[task]
        problem = _data_problem(task, a, b)
        if problem:
            raise PromoteError(problem)
        diff = compare(a, b, measure=task if task == REPAIR_REPLIES else None)
        decision.differences[task] = replace(diff, task=task)
        for name, record, weights in (("candidate", b, candidate_weights), ("current", a, current_weights)):
            served = (record.get("provenance") or {}).get("weights_sha256")
            if served and weights and served not in weights.values():
                decision.reasons.append(f"the {task} results of the {name} were measured on other weights")
    diff = decision.differences[target]
    if not diff.low > 0:
        decision.reasons.append(
            f"{target}: the interval [{diff.low:+.3f}, {diff.high:+.3f}] is not above zero"
        )
    for task, other in decision.differences.items():
        if task != target and other.high < 0:
            decision.reasons.append(f"{task}: a significant loss [{other.low:+.3f}, {other.high:+.3f}]")
    return decision


def _data_problem(task: str, a: dict[str, Any], b: dict[str, Any]) -> str | None:
    data_a = (a.get("provenance") or {}).get("data") or {}
    data_b = (b.get("provenance") or {}).get("data") or {}
    if not data_a.get("sha256") or data_a.get("sha256") != data_b.get("sha256"):
        paths = f"{data_a.get('path')} vs {data_b.get('path')}"
        return f"{task}: the two results are not on the same data file ({paths})"
    if "dev" not in Path(str(data_a.get("path", ""))).name:
        return f"{task}: {data_a.get('path')} is not a dev split: promotion is decided on dev only"
    return None


def promote(
    candidate: Path,
    current: Path,
    candidate_results: Path,
    current_results: Path,
    target: str,
    *,
    dry_run: bool = False,
    beside: Path | None = None,
) -> Decision:
    """Compare, and replace ``current`` with ``candidate`` when the gate accepts, or write it to the
    folder ``beside`` whatever the verdict (neither when ``dry_run``)."""
    candidate, current = Path(candidate), Path(current)
    beside = Path(beside) if beside is not None else None
    if beside is not None and beside.resolve() == current.resolve():
        raise PromoteError(f"--beside names the current checkpoint {current}: leave it out to replace it")
    if beside is not None and beside.resolve() == candidate.resolve():
        raise PromoteError(f"--beside names the candidate {candidate} itself: give a new folder")
    new_manifest = _manifest(candidate)
    old_manifest = _manifest(current)
    if not (candidate / "adapter" / ADAPTER_CONFIG).is_file():
        raise PromoteError(f"{candidate} has no adapter/ (only LoRA checkpoints are committed)")
    new_base, old_base = (
        Path(str(new_manifest.get("base_model"))).name,
        Path(str(old_manifest.get("base_model"))).name,
    )
    if new_base != old_base:
        raise PromoteError(f"the candidate's base model {new_base} is not the current one's ({old_base})")
    decision = decide(
        read_results(candidate_results),
        read_results(current_results),
        target,
        candidate_weights=new_manifest.get("weights_sha256"),
        current_weights=old_manifest.get("weights_sha256"),
    )
    if dry_run:
        return decision
    if beside is not None:
        _write(
            candidate, beside, _kept_beside(candidate, current, beside, new_manifest, old_manifest, decision)
        )
    elif decision.promote:
        _write(candidate, current, _promoted(candidate, new_manifest, old_manifest, decision))
    return decision


def _manifest(folder: Path) -> dict[str, Any]:
    path = folder / "manifest.json"
    if not path.is_file():
        raise PromoteError(f"{folder} has no manifest.json (an `execsim train export --out` folder)")
    return json.loads(path.read_text())


def _promoted(
    candidate: Path, manifest: dict[str, Any], old: dict[str, Any], decision: Decision
) -> dict[str, Any]:
    """The manifest of a candidate that replaces the current checkpoint: its serve lines are kept."""
    return {
        **_committed(manifest, decision, "promoted - previous"),
        "serve": old.get("serve", manifest.get("serve")),
        "promotion": {
            **_record(candidate, decision),
            "replaced": {k: old.get(k) for k in ("created", "steps", "weights_sha256")},
        },
    }


def _kept_beside(
    candidate: Path,
    current: Path,
    folder: Path,
    manifest: dict[str, Any],
    old: dict[str, Any],
    decision: Decision,
) -> dict[str, Any]:
    """The manifest of a candidate committed beside the current checkpoint under its own name."""
    name, choice = folder.name, chosen_by(folder)
    return {
        **_committed(manifest, decision, f"{name} - {current.name}"),
        "serve": {
            "merged": f"EXECSIM_CHECKPOINT={choice} execsim model prepare && EXECSIM_CHECKPOINT={choice} "
            f"execsim model serve  (merges adapter/ into the base once, serves it as {name})",
            "lora": f"execsim model serve --lora {name}={folder}/adapter",
        },
        "kept_beside": {
            **_record(candidate, decision),
            "verdict": decision.lines()[-1],
            "default": {
                "path": str(current),
                **{k: old.get(k) for k in ("created", "steps", "weights_sha256")},
            },
        },
    }


def chosen_by(folder: Path) -> str:
    """What ``EXECSIM_CHECKPOINT`` says to serve ``folder``: its name in checkpoints/, else its path."""
    folder = Path(folder)
    return folder.name if folder.resolve().parent == checkpoints_dir().resolve() else str(folder.resolve())


def _committed(manifest: dict[str, Any], decision: Decision, label: str) -> dict[str, Any]:
    """The export's manifest as a committed checkpoint holds it: the adapter only, the paired rows
    (labelled ``label``) added to its evaluation."""
    rows = [diff.row(_metric(task), label) for task, diff in decision.differences.items()]
    return {
        **manifest,
        "merged": None,
        "adapter": "adapter",
        "exported_to": {"adapter": manifest.get("adapter"), "merged": manifest.get("merged")},
        "evaluation": [*manifest.get("evaluation", []), *rows],
    }


def _record(candidate: Path, decision: Decision) -> dict[str, Any]:
    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "candidate": str(candidate),
        "rule": RULE,
        "target": decision.target,
        "comparison": {task: diff.to_dict() for task, diff in decision.differences.items()},
    }


def _write(candidate: Path, folder: Path, manifest: dict[str, Any]) -> None:
    """Write the candidate's adapter and ``manifest`` into ``folder`` (the adapter staged beside it and
    renamed into place, so an interrupted copy never leaves half an adapter)."""
    folder.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=".adapter-", dir=folder))

    # the adapter alone (adapter_config.json, adapter_model.*): the export's tokenizer files and README
    # are the base model's, which `execsim model prepare` takes from the base
    def adapter_only(_folder: str, names: list[str]) -> list[str]:
        return [name for name in names if not name.startswith("adapter_")]

    shutil.copytree(candidate / "adapter", staged, dirs_exist_ok=True, ignore=adapter_only)
    if (folder / "adapter").exists():
        shutil.rmtree(folder / "adapter")
    staged.rename(folder / "adapter")
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2, default=str) + "\n")


def _metric(task: str) -> str:
    """The headline metric's label, as ``train evaluate`` writes its rows."""
    from training.evaluate import TASKS

    labels = {"self-rlef": "every test passes after repair", REPAIR_REPLIES: "repair replies: a new program"}
    return TASKS[task][2] if task in TASKS else labels.get(task, "pass@1")
