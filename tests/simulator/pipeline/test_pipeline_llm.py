"""End to end against a real model server (marked ``llm``): the default model goes through every
stage and the stream stays well formed, whatever the quality of its answers.

Runs when EXECSIM_TEST_MODEL_URL (and optionally EXECSIM_TEST_MODEL_NAME) points at a server, e.g.
one started by ``execsim model serve``; skipped otherwise.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from tests.simulator.pipeline.pipeline_doubles import ExecutorDouble, collect

from simulator import config
from simulator.llm.client import ChatClient
from simulator.pipeline import Settings, run
from simulator.problem import Problem

pytestmark = pytest.mark.llm
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_the_default_model_runs_through_every_stage(tmp_path, monkeypatch) -> None:
    url = os.environ.get("EXECSIM_TEST_MODEL_URL")
    if not url:
        pytest.skip("set EXECSIM_TEST_MODEL_URL to a running model server to run this test")
    monkeypatch.setenv("EXECSIM_DATA_DIR", str(tmp_path))
    model = os.environ.get("EXECSIM_TEST_MODEL_NAME", config.DEFAULT_MODEL_NAME)
    problem = Problem.from_dict(json.loads((EXAMPLES / "reverse-string.json").read_text()))

    async def main():
        async with ChatClient(url, model) as client:
            settings = Settings(k=2, turns=1, seed=0, max_tokens=128)
            return await collect(run(problem, settings, client, executor=ExecutorDouble()))

    events = asyncio.run(main())
    assert [e.seq for e in events] == list(range(len(events)))
    assert events[-1].type == "run_finished", events[-1].payload
    types = {e.type for e in events}
    assert {
        "candidate_delta",
        "candidate_done",
        "simulation_done",
        "verdict",
        "selected",
        "repair_turn",
    } <= types
    assert events[0].payload["provenance"]["max_model_len"]
