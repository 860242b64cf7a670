"""Where the Checkpoints pages look: the Django setting when defined, else the environment variable
(docs/webapp.md), else the defaults here.

- ``EXECSIM_CHECKPOINT_DIRS``: folders, each either a checkpoint (it holds manifest.json) or a parent
  of checkpoint folders; comma-separated in the environment. Default: ``checkpoints/`` at the
  repository root (committed checkpoints) and ``<EXECSIM_DATA_DIR>/checkpoints/``.

Which checkpoint is the app's default is not decided here: the pages ask
``simulator.config.checkpoint_choice()`` (environment variable ``EXECSIM_CHECKPOINT``), the same answer
``execsim model prepare`` merges and ``execsim model serve`` / ``execsim up`` serve.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from webapp.checkpoints.manifests import COMMITTED, CONFIGURED, DATA_DIR, Root
from webapp.env import envlist


def committed_dir() -> Path:
    return Path(settings.BASE_DIR) / "checkpoints"


def data_checkpoints_dir() -> Path:
    return Path(settings.DATA_DIR) / "checkpoints"


def checkpoint_dirs() -> list[Path]:
    value = getattr(settings, "EXECSIM_CHECKPOINT_DIRS", None)
    if value is None:
        value = envlist("EXECSIM_CHECKPOINT_DIRS", [str(committed_dir()), str(data_checkpoints_dir())])
    return [Path(p).expanduser() for p in value]


def roots() -> list[Root]:
    """The folders to look in, each labelled committed, data dir or configured by where it is."""
    labels = {committed_dir().resolve(): COMMITTED, data_checkpoints_dir().resolve(): DATA_DIR}
    return [Root(path, labels.get(path.resolve(), CONFIGURED)) for path in checkpoint_dirs()]
