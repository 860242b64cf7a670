"""Fixtures shared by the pipeline's tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """EXECSIM_DATA_DIR in the test's own folder: runs record provenance and caches there, never in
    the developer's data directory."""
    monkeypatch.setenv("EXECSIM_DATA_DIR", str(tmp_path))
    return tmp_path
