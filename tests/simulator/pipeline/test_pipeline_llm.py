"""End to end against the real default model (marked ``llm``, one vLLM server for the test run): a user's
``execsim solve`` on two example problems streams every stage, whatever the quality of its answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
STAGES = {"candidate_delta", "candidate_done", "simulation_done", "verdict", "selected", "repair_turn"}


@pytest.mark.parametrize("example", ["reverse-string.json", "square.json"])
def test_execsim_solve_streams_every_stage_from_the_real_model(vllm_server, tmp_path, example) -> None:
    env = {
        **os.environ,
        "EXECSIM_MODEL_URL": vllm_server.url,
        "EXECSIM_MODEL_NAME": vllm_server.model_name,
        "EXECSIM_DATA_DIR": str(tmp_path),
    }
    execsim = str(Path(sys.executable).with_name("execsim"))
    command = [execsim, "solve", str(REPO / "examples" / example)]
    command += ["--k", "2", "--turns", "1", "--max-tokens", "160", "--seed", "0", "--json"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, cwd=REPO)
    events = [json.loads(line) for line in done.stdout.splitlines()]

    assert events, done.stderr
    assert [e["seq"] for e in events] == list(range(len(events)))
    finals = [e for e in events if e["type"] in ("run_finished", "run_failed", "run_cancelled")]
    assert finals == [events[-1]]
    types = {e["type"] for e in events}
    if events[-1]["type"] == "run_finished":
        assert done.returncode == 0
        # repair only runs when a simulated test fails; nothing is simulated when every program is
        # known to fail without it (a verdict with source "checked", simulator.pipeline.static)
        verdicts = [e["payload"] for e in events if e["type"] == "verdict"]
        unsimulated = set() if any(v["source"] != "checked" for v in verdicts) else {"simulation_done"}
        assert types >= STAGES - {"repair_turn"} - unsimulated
        assert events[0]["payload"]["provenance"]["model"] == vllm_server.model_name
    else:  # the tiny model may write no program at all: a clear, recorded failure
        assert done.returncode == 1
        assert events[-1]["payload"]["error"] == "no_code", events[-1]["payload"]
