"""Sign-up, log-in and roles (developer, educator, annotator, staff as groups)."""

from __future__ import annotations
