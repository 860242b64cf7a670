"""Where the Checkpoints pages look: the folders of the setting ``EXECSIM_CHECKPOINT_DIRS``
(webapp/settings.py, docs/webapp.md), each labelled by where it is.

Which checkpoint is the app's default is not decided here: the pages ask
``simulator.config.checkpoint_choice()`` (environment variable ``EXECSIM_CHECKPOINT``), the same answer
``execsim model prepare`` merges and ``execsim model serve`` / ``execsim up`` serve.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from webapp.checkpoints.manifests import COMMITTED, CONFIGURED, DATA_DIR, Root


def roots() -> list[Root]:
    """The folders to look in, each labelled committed (the repository's ``checkpoints/``), data dir
    (``<EXECSIM_DATA_DIR>/checkpoints/``) or configured (any other)."""
    labels = {
        (Path(settings.BASE_DIR) / "checkpoints").resolve(): COMMITTED,
        (Path(settings.DATA_DIR) / "checkpoints").resolve(): DATA_DIR,
    }
    folders = [Path(p).expanduser() for p in settings.EXECSIM_CHECKPOINT_DIRS]
    return [Root(path, labels.get(path.resolve(), CONFIGURED)) for path in folders]
