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


def test_the_real_model_finds_the_right_output_likelier_and_a_solve_run_breaks_ties_by_it(
    vllm_server, tmp_path
) -> None:
    import asyncio

    from simulator.llm.client import ChatClient
    from simulator.prompts import simulate

    call = "add(2, 3)"
    asked = [
        *simulate.call_messages("def add(a, b):\n    return a + b\n", call),
        {"role": "assistant", "content": simulate.answer_prefill(call)},
    ]

    async def score(expected: str) -> float:
        async with ChatClient(vllm_server.url, vllm_server.model_name) as client:
            return await client.score(asked, simulate.answer_ending(expected, call))

    right, wrong = asyncio.run(score("5")), asyncio.run(score("6"))
    assert wrong < right <= 0.0

    env = {
        **os.environ,
        "EXECSIM_MODEL_URL": vllm_server.url,
        "EXECSIM_MODEL_NAME": vllm_server.model_name,
        "EXECSIM_DATA_DIR": str(tmp_path),
    }
    execsim = str(Path(sys.executable).with_name("execsim"))
    command = [execsim, "solve", str(REPO / "examples" / "count-vowels.json"), "--k", "4", "--turns", "0"]
    command += ["--ties", "likelihood", "--seed", "0", "--json"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, cwd=REPO)
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events, done.stderr
    selected = [e["payload"] for e in events if e["type"] == "selected"]
    # a program known to fail unsimulated (simulator.pipeline.static) is never scored
    known = {
        e["payload"]["candidate"]
        for e in events
        if e["type"] == "verdict" and e["payload"]["source"] == "checked"
    }
    if events[-1]["type"] == "run_finished" and len(set(selected[0]["tied"]) - known) > 1:
        likelihoods = selected[0]["likelihoods"]  # whatever the model wrote, a tie was scored
        assert all(likelihoods[c] is None or likelihoods[c] <= 0.0 for c in selected[0]["tied"])
        assert events[0]["payload"]["settings"]["ties"] == "likelihood"
