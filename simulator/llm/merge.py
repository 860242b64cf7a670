"""Merge a LoRA adapter into its base model's weights, without peft.

Why: the default checkpoint's adapter is served merged (vLLM cannot serve it as a LoRA here, issue 6;
and a merged model serves as fast as the base), and serving installs must not need the ``train`` extra
(peft, TRL).
A LoRA adapter is small (two low-rank matrices per adapted linear layer), so merging is a few lines of
torch: for every adapted layer ``W += scale * B @ A`` with ``scale = lora_alpha / r`` (``lora_alpha /
sqrt(r)`` with rsLoRA), computed in fp32 and stored in the base's dtype (one rounding; peft rounds the
delta to the base dtype before adding it, which can differ in the last bit; for a real SFT adapter on
the bf16 SmolLM2 base all 134.5M merged weights came out identical to peft's ``merge_and_unload``).

    merge_lora(base_dir, adapter_dir, out_dir)   # -> MergedModel(path, sha256, created, ...)

The adapter folder is what peft's ``save_pretrained`` writes: ``adapter_config.json`` and
``adapter_model.safetensors`` with keys like ``base_model.model.model.layers.0.self_attn.q_proj.lora_A
.weight`` (``[r, in]``) and ``...lora_B.weight`` (``[out, r]``). Options that this merge does not
implement (DoRA, trained biases, modules_to_save, per-module rank or alpha patterns, fan_in_fan_out
layers, initialisations that change the base such as PiSSA or LoftQ, ...) are refused by name, as is
any key of the config this module does not know with a non-empty value: merging it wrongly would serve
a silently different model.

The output is an ordinary HF folder like the prepared base (same config, tokenizer and generation files,
safetensors in the same files as the base), with the same ``weights.sha256`` marker and a ``merge.json``
record of what was merged: the hashes of every source file. A folder is reused only when it verifies and
its sources still hash the same, so a changed base or adapter is merged again, and an unchanged one costs
only the hashing. It is built in a temporary sibling and renamed into place.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simulator.llm.model_folder import (
    MARKER,
    PrepareError,
    file_sha256,
    staged_folder,
    verify,
    weights_sha256,
    write_marker,
)

ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
RECORD = "merge.json"
RECORD_VERSION = 1
_KEY = re.compile(r"base_model\.model\.(?P<module>.+)\.lora_(?P<part>[AB])\.weight")

# adapter_config.json keys that do not change what a merge computes (training-time, bookkeeping, or
# checked below). Every other key must be empty (None, False, {}, [], ""), else the merge is refused.
_HARMLESS = frozenset(
    {
        "base_model_name_or_path",
        "revision",
        "task_type",
        "peft_version",
        "inference_mode",
        "lora_dropout",
        "auto_mapping",
        "megatron_core",
        "qalora_group_size",  # used only with use_qalora, which must be off
        "exclude_modules",  # which modules were left out: the tensor keys say which were adapted
        "layers_to_transform",  # likewise
        "layers_pattern",
    }
)
_CHECKED = frozenset(
    {"peft_type", "r", "lora_alpha", "use_rslora", "target_modules", "init_lora_weights", "bias"}
)
_PLAIN_INITS = (True, False, "gaussian")  # initialisations that leave the base weights as they are

Progress = Callable[[str], None]


class MergeError(PrepareError):
    """The adapter cannot be merged into this base: a missing file, an unsupported option, a key that
    matches no base weight, a shape that does not fit."""


@dataclass(frozen=True)
class LoraConfig:
    r: int
    lora_alpha: float
    use_rslora: bool
    target_modules: tuple[str, ...] | str  # a list of module names, or a regex (peft: full match)

    @property
    def scale(self) -> float:
        return self.lora_alpha / (math.sqrt(self.r) if self.use_rslora else self.r)

    def targets(self, module: str) -> bool:
        """Whether peft would have adapted ``module`` (a dotted path) under ``target_modules``."""
        if isinstance(self.target_modules, str):
            if self.target_modules == "all-linear":
                return True
            return re.fullmatch(self.target_modules, module) is not None
        return any(module == t or module.endswith(f".{t}") for t in self.target_modules)


@dataclass(frozen=True)
class MergedModel:
    path: Path
    sha256: str  # of the merged weights (the first line of weights.sha256)
    created: bool  # False when an existing folder verified and its sources had not changed
    seconds: float
    modules: int  # adapted layers merged (0 when reused)


def read_adapter_config(adapter_dir: Path) -> LoraConfig:
    """``adapter_config.json`` checked: a plain LoRA with options this merge implements."""
    path = Path(adapter_dir) / ADAPTER_CONFIG
    if not path.is_file():
        raise MergeError(f"{path}: no such file (a LoRA adapter folder holds {ADAPTER_CONFIG})")
    try:
        raw = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise MergeError(f"{path}: not readable JSON ({exc})") from exc
    if not isinstance(raw, dict):
        raise MergeError(f"{path}: not a JSON object")
    if raw.get("peft_type", "LORA") != "LORA":
        raise MergeError(f"{path}: peft_type={raw['peft_type']!r}; only LORA adapters can be merged")
    unsupported = [
        f"{key}={value!r}"
        for key, value in raw.items()
        if key not in _HARMLESS and key not in _CHECKED and value not in (None, False, {}, [], "")
    ]
    if raw.get("bias", "none") != "none":
        unsupported.append(f"bias={raw['bias']!r}")
    if raw.get("init_lora_weights", True) not in _PLAIN_INITS:
        unsupported.append(f"init_lora_weights={raw['init_lora_weights']!r} (it changes the base weights)")
    if unsupported:
        raise MergeError(f"{path}: not supported by this merge: {', '.join(unsupported)}")
    r, alpha, targets = raw.get("r"), raw.get("lora_alpha"), raw.get("target_modules")
    if not isinstance(r, int) or isinstance(r, bool) or r <= 0:
        raise MergeError(f"{path}: r={r!r} is not a positive integer")
    if not isinstance(alpha, int | float) or isinstance(alpha, bool):
        raise MergeError(f"{path}: lora_alpha={alpha!r} is not a number")
    if isinstance(targets, list) and targets and all(isinstance(t, str) for t in targets):
        target_modules: tuple[str, ...] | str = tuple(targets)
    elif isinstance(targets, str) and targets:
        target_modules = targets
    else:
        raise MergeError(f"{path}: target_modules={targets!r} is neither a list of names nor a pattern")
    return LoraConfig(r, float(alpha), bool(raw.get("use_rslora", False)), target_modules)


def sources(base_dir: Path, adapter_dir: Path) -> dict[str, str]:
    """sha256 of every file the merge reads: the base folder's files and the adapter's two files."""
    found = {
        f"base/{p.name}": file_sha256(p)
        for p in sorted(Path(base_dir).iterdir())
        if p.is_file() and p.name not in (MARKER, RECORD)
    }
    for name in (ADAPTER_CONFIG, ADAPTER_WEIGHTS):
        found[f"adapter/{name}"] = file_sha256(Path(adapter_dir) / name)
    return found


def merge_lora(
    base_dir: Path,
    adapter_dir: Path,
    out_dir: Path,
    *,
    force: bool = False,
    progress: Progress | None = None,
) -> MergedModel:
    """Make ``out_dir`` the base with the adapter merged in; reuse it when it verifies and its sources
    (``merge.json``) hash as they do now, so only a changed base or adapter is merged again.

    Raises MergeError before writing anything when a file is missing, the config asks for something
    unsupported, an adapter tensor matches no base weight or its shape does not fit."""
    say = progress or (lambda _msg: None)
    base_dir, adapter_dir, out_dir = Path(base_dir), Path(adapter_dir), Path(out_dir)
    start = time.monotonic()
    _check_files(base_dir, adapter_dir)
    config = read_adapter_config(adapter_dir)
    if base_dir.resolve() == out_dir.resolve():
        raise MergeError(f"{out_dir}: the merged folder cannot be the base folder")
    say(f"hashing the base {base_dir} and the adapter {adapter_dir}")
    inputs = sources(base_dir, adapter_dir)
    if not force and out_dir.exists():
        record = _read_record(out_dir)
        if record is not None and record.get("sources") == inputs and verify(out_dir):
            return MergedModel(out_dir, weights_sha256(out_dir) or "", False, time.monotonic() - start, 0)
        say(f"{out_dir} is not a current merge of these files; merging again")

    import torch
    from safetensors import safe_open
    from safetensors.torch import load_file, save_file

    pairs = _adapter_pairs(adapter_dir, config)
    weight_files = sorted(base_dir.glob("*.safetensors"))
    located: dict[str, Path] = {}
    for file in weight_files:
        with safe_open(str(file), "pt") as handle:
            located.update((key, file) for key in handle.keys())  # noqa: SIM118 (not a dict)
    missing = sorted(f"{module}.weight" for module in pairs if f"{module}.weight" not in located)
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise MergeError(
            f"{adapter_dir}: {len(missing)} adapted layer(s) match no weight of {base_dir}: {shown}"
        )
    for module, (a, b) in pairs.items():
        key = f"{module}.weight"
        with safe_open(str(located[key]), "pt") as handle:
            shape = tuple(handle.get_slice(key).get_shape())
        if shape != (b.shape[0], a.shape[1]):
            raise MergeError(
                f"{module}: the adapter's B @ A is {b.shape[0]}x{a.shape[1]} but the base weight {key} "
                f"is {'x'.join(str(d) for d in shape)}"
            )

    with staged_folder(out_dir) as work:
        say(f"merging {len(pairs)} adapted layers (r={config.r}, scale={config.scale:g})")
        for file in weight_files:
            with safe_open(str(file), "pt") as handle:
                metadata = handle.metadata()
            tensors = load_file(str(file))
            for module, (a, b) in pairs.items():
                key = f"{module}.weight"
                if located[key] != file:
                    continue
                weight = tensors[key]
                delta = (b.to(torch.float32) @ a.to(torch.float32)) * config.scale
                tensors[key] = (weight.to(torch.float32) + delta).to(weight.dtype).contiguous()
            save_file(tensors, str(work / file.name), metadata=metadata)
        for item in sorted(base_dir.iterdir()):
            if item.is_file() and item.suffix != ".safetensors" and item.name not in (MARKER, RECORD):
                shutil.copy2(item, work / item.name)
        say("hashing the merged weights")
        digests = write_marker(work, [work / f.name for f in weight_files])
        record = {
            "version": RECORD_VERSION,
            "base": str(base_dir.resolve()),
            "adapter": str(adapter_dir.resolve()),
            "r": config.r,
            "lora_alpha": config.lora_alpha,
            "use_rslora": config.use_rslora,
            "scale": config.scale,
            "modules": len(pairs),
            "sources": inputs,
            "weights_sha256": digests,
        }
        (work / RECORD).write_text(json.dumps(record, indent=2) + "\n")
    if not verify(out_dir):
        raise MergeError(f"{out_dir} does not verify right after merging")
    return MergedModel(out_dir, weights_sha256(out_dir) or "", True, time.monotonic() - start, len(pairs))


def _check_files(base_dir: Path, adapter_dir: Path) -> None:
    if not (base_dir / "config.json").is_file():
        raise MergeError(f"{base_dir}: not an HF model folder (no config.json)")
    if not any(base_dir.glob("*.safetensors")):
        raise MergeError(f"{base_dir}: no .safetensors weights")
    for name in (ADAPTER_CONFIG, ADAPTER_WEIGHTS):
        if not (adapter_dir / name).is_file():
            raise MergeError(f"{adapter_dir / name}: no such file (a LoRA adapter folder holds {name})")


def _adapter_pairs(adapter_dir: Path, config: LoraConfig) -> dict[str, tuple[Any, Any]]:
    """``{module path in the base: (A, B)}`` from the adapter's tensors, each checked against the config."""
    from safetensors.torch import load_file

    parts: dict[str, dict[str, Any]] = {}
    for key, tensor in load_file(str(adapter_dir / ADAPTER_WEIGHTS)).items():
        match = _KEY.fullmatch(key)
        if match is None:
            raise MergeError(
                f"{adapter_dir / ADAPTER_WEIGHTS}: tensor {key} is not a LoRA A or B matrix of a linear "
                "layer (embedding adapters, biases and saved modules are not supported)"
            )
        parts.setdefault(match["module"], {})[match["part"]] = tensor
    if not parts:
        raise MergeError(f"{adapter_dir / ADAPTER_WEIGHTS}: holds no LoRA tensors")
    pairs = {}
    for module, found in sorted(parts.items()):
        if set(found) != {"A", "B"}:
            lacking = ({"A", "B"} - set(found)).pop()
            raise MergeError(f"{adapter_dir}: {module} has no lora_{lacking} matrix")
        a, b = found["A"], found["B"]
        if a.ndim != 2 or b.ndim != 2 or a.shape[0] != config.r or b.shape[1] != config.r:
            raise MergeError(
                f"{module}: lora_A is {tuple(a.shape)} and lora_B is {tuple(b.shape)}; "
                f"expected [r, in] and [out, r] with r={config.r}"
            )
        if not config.targets(module):
            raise MergeError(
                f"{module} is adapted but target_modules={config.target_modules!r} does not name it"
            )
        pairs[module] = (a, b)
    return pairs


def _read_record(out_dir: Path) -> dict[str, Any] | None:
    try:
        record = json.loads((Path(out_dir) / RECORD).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None
