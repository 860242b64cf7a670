"""Runs of the pipeline: models, the task that drives it, event recording, the live consumer, pages."""

from __future__ import annotations
