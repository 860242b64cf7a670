from __future__ import annotations

import pytest

from tests.webapp.explorer.support import ann1, sim_run  # noqa: F401 (fixtures shared with the explorer tests)


@pytest.fixture
def no_enqueue(monkeypatch: pytest.MonkeyPatch) -> list:
    """A test double for the task runner: records the runs (and real executions) it would queue."""
    queued: list = []
    monkeypatch.setattr("webapp.runs.runner.enqueue", queued.append)
    monkeypatch.setattr("webapp.runs.runner.enqueue_real", queued.append)
    return queued
