"""The explorer's and the annotation queue's limits: Django settings when defined, else environment
variables (documented in docs/explorer.md and docs/annotation.md), else the defaults here."""

from __future__ import annotations

from django.conf import settings

from webapp.env import envint


def _setting(name: str, default: int, minimum: int) -> int:
    value = getattr(settings, name, None)
    if value is None:
        return envint(name, default, minimum=minimum)
    return int(value)


def explorer_max_steps() -> int:
    """Step cap of a trace recorded for the explorer; longer executions show a partial trace."""
    return _setting("EXECSIM_EXPLORER_MAX_STEPS", 2000, 1)


def claim_seconds() -> int:
    """How long an annotator holds a claimed queue item before it goes back to the queue."""
    return _setting("EXECSIM_ANNOTATION_CLAIM_SECONDS", 600, 1)


def annotations_per_item() -> int:
    """How many annotators review each item (agreement is computed when more than one)."""
    return _setting("EXECSIM_ANNOTATIONS_PER_ITEM", 1, 1)
