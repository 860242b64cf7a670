"""Django system checks of ExecSim's own settings (``manage.py check``, and every start-up).

webapp/env.py already refuses a bad environment variable; these checks catch a bad value that reaches
the settings another way (a settings module of one's own, ``override_settings``), each with an id a
deployer can look up or silence:

- ``execsim.E001``: a count that is not an integer.
- ``execsim.E002``: a count below its minimum.
- ``execsim.E003``: ``EXECSIM_CHECKPOINT_DIRS`` is not a list of folder paths.
"""

from __future__ import annotations

from os import PathLike
from typing import Any

from django.conf import settings
from django.core.checks import Error

# Counts and their minimums: the explorer's step cap, the claim timeout, annotators per item.
COUNTS = {
    "EXECSIM_EXPLORER_MAX_STEPS": 1,
    "EXECSIM_ANNOTATION_CLAIM_SECONDS": 1,
    "EXECSIM_ANNOTATIONS_PER_ITEM": 1,
}


def check_settings(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    """One Error per bad value, naming the setting and what it must be."""
    errors = []
    for name, minimum in COUNTS.items():
        value = getattr(settings, name)
        if not isinstance(value, int) or isinstance(value, bool):
            errors.append(Error(f"{name}={value!r} is not an integer", id="execsim.E001"))
        elif value < minimum:
            errors.append(Error(f"{name}={value} must be at least {minimum}", id="execsim.E002"))
    folders = settings.EXECSIM_CHECKPOINT_DIRS
    if not isinstance(folders, list | tuple) or not all(isinstance(f, str | PathLike) for f in folders):
        errors.append(
            Error(
                f"EXECSIM_CHECKPOINT_DIRS={folders!r} is not a list of folder paths",
                hint='e.g. ["checkpoints", "/srv/execsim/checkpoints"]; in the environment, comma-separated',
                id="execsim.E003",
            )
        )
    return errors
