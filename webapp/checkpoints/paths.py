"""What the Checkpoints pages show of where things are (issue 51, item 4).

The pages are for every signed-up account, and the folders they read lie on the server: the
repository's ``checkpoints/``, the data directory's (which also holds the database, the secret key
and the model weights), or any folder ``EXECSIM_CHECKPOINT_DIRS`` names. A user needs a checkpoint's
name and where it sits among the checkpoints, not the server's layout: to anyone but staff every
absolute path is shown relative to the checkpoints folder that holds it (``checkpoints/sft-small/
merged``), and a path outside them (one a manifest recorded at export, a folder named by
``EXECSIM_CHECKPOINT``) by its last part only (``…/smollm2-135m-instruct``). Staff, who run the
server, see the paths as they are.

``hide_paths`` rewrites a whole record (a ``Checkpoint`` with its rows, the default's
``CheckpointChoice``, the roots): every string and path in it, so that a field added later is
covered too.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import Any

from webapp.checkpoints.manifests import Root

# An absolute path in free text (an error, a warning, a serve command, a reason): a slash that does not
# follow a word, a dot, another slash or a "<" (so not "1/2", "a/b", a URL's or a closing tag), then
# one part or more.
_ABSOLUTE = re.compile(r"(?<![\w.:/~<-])/(?:[\w.+@-]+/)*[\w.+@-]+/?")
OUTSIDE = "…/"  # what stands for the folders above a path outside every checkpoints folder


def _within(path: PurePath, root: Path) -> PurePath | None:
    """``path`` relative to ``root`` (compared as given, then resolved), or None when outside it."""
    for base in (root, _resolved(root)):
        try:
            return path.relative_to(base)
        except ValueError:
            continue
    return None


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path


def path_shown(path: str | PurePath, roots: Sequence[Root]) -> str:
    """``path`` as a user who is not staff reads it: relative to the checkpoints folder that holds it,
    under that folder's own name; else its last part after ``…/``; a relative path as it is."""
    pure = PurePath(path)
    if not pure.is_absolute():
        return str(path)
    for root in roots:
        inside = _within(pure, Path(root.path))
        if inside is not None:
            return str(PurePath(Path(root.path).name) / inside)
    return f"{OUTSIDE}{pure.name}" if pure.name else OUTSIDE


def text_shown(text: str, roots: Sequence[Root]) -> str:
    """Free text with each absolute path in it as ``path_shown`` shows it."""
    return _ABSOLUTE.sub(lambda m: path_shown(m.group(0).rstrip("/") or "/", roots), text)


def hide_paths(value: Any, roots: Sequence[Root]) -> Any:
    """``value`` (a record, a list of them, a string, a path) with every absolute path shown as
    ``path_shown`` shows it; a dataclass is copied, never changed in place."""
    if isinstance(value, str):
        return text_shown(value, roots)
    if isinstance(value, PurePath):
        return Path(path_shown(value, roots))
    if isinstance(value, list | tuple):
        return type(value)(hide_paths(v, roots) for v in value)
    if isinstance(value, dict):
        return {k: hide_paths(v, roots) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: hide_paths(getattr(value, f.name), roots) for f in dataclasses.fields(value) if f.init
        }
        return dataclasses.replace(value, **changes)
    return value
