"""A prepared model folder: an ordinary HF folder plus ``weights.sha256`` (the marker), which records
the hash of each weights file so that provenance can name the weights served and ``verify`` can tell
a complete folder from a half-written one. Built in a staged sibling and renamed into place.

Shared by the default model (``default_model``), the LoRA merge (``merge``), provenance, the
evaluation harness and training's export: one definition of the folder, no import circle.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from simulator import config

MARKER = "weights.sha256"


class PrepareError(RuntimeError):
    """A model folder could not be located, converted, merged or verified."""


def weights_sha256(model_dir: Path) -> str | None:
    """The recorded hash of a prepared folder's weights (provenance), or None if it is not prepared."""
    marker = model_dir / MARKER
    if not marker.is_file():
        return None
    first = marker.read_text().split()
    return first[0] if first else None


def served_weights_sha256(model: str, root: str | None = None) -> str | None:
    """The weights hash of the model served as ``model`` (provenance): the marker of the folder the
    server reports as its root when that folder is on this machine, else of ``models/<model>`` in the
    data dir, where ``prepare_default`` puts the default model under its served name."""
    folders = [Path(root)] if root else []
    folders.append(config.data_dir() / "models" / model)
    for folder in folders:
        digest = weights_sha256(folder) if folder.is_dir() else None
        if digest:
            return digest
    return None


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


@contextmanager
def staged_folder(dest: Path) -> Iterator[Path]:
    """A temporary sibling of ``dest`` to build a model folder in: renamed over ``dest`` when the block
    ends without error, removed otherwise, so an interrupted run leaves nothing half-done."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    work.chmod(0o755)  # mkdtemp makes it private; the served folder is an ordinary one
    try:
        yield work
        if dest.exists():
            shutil.rmtree(dest)
        work.rename(dest)
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)


def write_marker(folder: Path, weights: list[Path]) -> dict[str, str]:
    """Hash ``weights`` into ``folder``'s ``weights.sha256`` (what ``verify`` checks); returns the hashes."""
    digests = {w.name: file_sha256(w) for w in weights}
    (folder / MARKER).write_text("".join(f"{d}  {name}\n" for name, d in digests.items()))
    return digests


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
