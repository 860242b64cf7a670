"""self-rlef: the fix/break table from real pipeline runs against a scripted model server (a test
double behind the real ChatClient), ground truth by real execution, and resuming from the cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from simulator.evaluation import self_rlef
from simulator.evaluation.harness import EvalSettings, final_line, run
from simulator.llm.client import ChatClient
from simulator.llm.testing import FakeModelServer, parse_simulate_prompt
from simulator.pipeline import EVENT_TYPES
from simulator.prompts import kind_of, solve
from tests.simulator.evaluation.eval_doubles import fake_client, write_jsonl

BENCHMARKS = Path(__file__).resolve().parents[3].parent / "shared" / "benchmarks"


def _mbpp(task_id: int, name: str, tests: list[str]) -> dict[str, Any]:
    return {"task_id": task_id, "prompt": f"Write `{name}`.", "test_imports": [], "test_list": tests}


def _code(name: str, body: str) -> str:
    return f"```python\ndef {name}(x):\n    return {body}\n```"


ITEMS = [
    # wrong at first (x * 3), fixed by the first repair, then submitted as it is: fail -> pass everywhere
    _mbpp(1, "double", ["assert double(2) == 4", "assert double(5) == 10", "assert double(0) == 0"]),
    # right at first, but a lying simulation talks it into a program that only passes the public test
    _mbpp(2, "triple", ["assert triple(0) == 0", "assert triple(2) == 6", "assert triple(3) == 9"]),
    # no code at all: fail -> fail, a solve parse failure
    _mbpp(3, "neg", ["assert neg(1) == -1", "assert neg(2) == -2"]),
    # right, and simulated right: submitted without asking: pass -> pass
    _mbpp(4, "half", ["assert half(4) == 2", "assert half(6) == 3"]),
]
SOLVE = {
    "double": _code("double", "x * 3"),
    "triple": _code("triple", "x * 3"),
    "neg": "I cannot write that.",
    "half": _code("half", "x // 2"),
}
REPAIR = {"double": [_code("double", "x * 2")], "triple": [_code("triple", "x * 0")]}
# wrong at first (x + 2), and the fix (x + 3) matches the public test no better: not kept
INC = _mbpp(5, "inc", ["assert inc(1) == 2", "assert inc(2) == 3"])
SOLVE["inc"] = _code("inc", "x + 2")
REPAIR["inc"] = [_code("inc", "x + 3")]


class SelfRlefModel:
    """Test double of the model: solves from SOLVE, simulates honestly (by running the code here)
    except that it claims ``triple(0)`` of the right program is 1, and repairs from REPAIR in turn."""

    def __init__(self) -> None:
        self.repairs: dict[str, int] = {}

    def __call__(self, body: dict[str, Any]) -> list[str]:
        messages = body["messages"]
        kind = kind_of(messages)
        user = next(m["content"] for m in reversed(messages) if m["role"] == "user")
        name = next(n for n in SOLVE if f"`{n}`" in user or f"def {n}(" in user)
        if kind == "solve":
            return [SOLVE[name]]
        if kind == "repair":
            turn = self.repairs.get(name, 0)
            self.repairs[name] = turn + 1
            return [REPAIR[name][min(turn, len(REPAIR[name]) - 1)]]
        code, call = parse_simulate_prompt(user)
        namespace: dict[str, Any] = {}
        exec(code, namespace)  # the test's own scripted programs, not model output
        value = eval(call, namespace)
        if call == "triple(0)" and "x * 3" in code:
            value = 1
        return [f"[ANSWER]\nassert {call} == {value!r}\n[/ANSWER]"]


@pytest.mark.asyncio
async def test_self_rlef_counts_fixes_and_breaks_on_public_and_private_tests(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "mbpp.jsonl", ITEMS)
    server = FakeModelServer(SelfRlefModel())
    settings = EvalSettings(task="self-rlef", data=data, out=tmp_path / "out", turns=2)

    record = await run(settings, (self_rlef.load, self_rlef.evaluate), fake_client(server))

    assert record["extra"]["repair_by_simulation"] == 3  # half at turn 1, double and triple at turn 2
    by_id = {item["id"]: item for item in record["items"]}
    assert (by_id["1"]["initial"]["public"], by_id["1"]["final"]["public"]) == (False, True)
    assert (by_id["2"]["initial"]["private"], by_id["2"]["final"]["private"]) == (True, False)
    assert by_id["2"]["final"]["public"] is True
    assert by_id["3"]["initial"]["code"] is None and by_id["3"]["error"]["error"] == "no_code"
    assert by_id["4"]["changed"] is False and by_id["4"]["submitted"] is True
    assert by_id["1"]["turns_used"] == 1 and by_id["1"]["submitted"] is True
    metrics = {name: m["value"] for name, m in record["metrics"].items()}
    assert metrics["public-fail-pass"] == 0.25 and metrics["public-pass-fail"] == 0.0
    assert metrics["public-fail-fail"] == 0.25 and metrics["public-pass-pass"] == 0.5
    assert metrics["private-fail-pass"] == 0.25 and metrics["private-pass-fail"] == 0.25
    assert metrics["initial-private"] == 0.5 and metrics["final-private"] == 0.5
    assert metrics["initial-public"] == 0.5 and metrics["final-public"] == 0.75
    assert record["extra"]["fix_break"]["private"] == {
        "n": 4,
        "counts": {"fail-fail": 1, "fail-pass": 1, "pass-fail": 1, "pass-pass": 1},
    }
    failures = {stage: (p["failed"], p["total"]) for stage, p in record["parse_failures"].items()}
    assert failures == {
        "solve": (1, 4), "simulate": (0, 5), "repair": (0, 2),
        "repair_reply": (0, 2), "repair_program": (0, 2),
    }  # fmt: skip
    line = final_line(record)
    assert line.startswith("self-rlef n=4 public-fail-fail=0.250[")
    assert "parse-fail-repair=0.000[" in line
    report = (tmp_path / "out" / "report.md").read_text()
    assert "| private | 25.0% (1) | 25.0% (1) | 25.0% (1) | 25.0% (1) |" in report
    sent = len(server.requests)
    assert record["requests"]["sent"] == sent == 4 + 5 + 2  # solves, simulations, repairs

    again = await run(settings, (self_rlef.load, self_rlef.evaluate), fake_client(server))

    assert len(server.requests) == sent  # resumed from the cache: nothing sent twice
    assert again["requests"] == {"sent": 0, "cached": sent, "completion_tokens_sent": 0}
    assert again["metrics"] == record["metrics"]
    assert json.loads((tmp_path / "out" / "results.json").read_text())["task"] == "self-rlef"

    def unreachable(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    down = httpx.MockTransport(unreachable)
    offline = ChatClient("http://down/v1", server.model, "", retries=0, transport=down)
    cached_only = await run(settings, (self_rlef.load, self_rlef.evaluate), offline)

    assert cached_only["metrics"] == record["metrics"]  # a fully cached rerun needs no server
    assert cached_only["requests"]["cached"] == sent


@pytest.mark.asyncio
async def test_self_rlef_on_code_jam_judges_stdin_programs(tmp_path: Path) -> None:
    record = {
        "id": "cj/1",
        "name": "Double",
        "statement_text": "Print twice each number.",
        "public_tests": [{"input": "1\n2\n", "output": "Case #1: 4\n"}],
        "private_tests": [{"subtask": 1, "input": "1\n50\n", "output": "Case #1: 100\n"}],
        "output_validator_flags": "",
    }
    data = write_jsonl(tmp_path / "cj.jsonl", [record])
    # reads its input (a program that reads none is judged wrong unsimulated, simulator.pipeline.static)
    hardcoded = "```python\ninput()\nprint('Case #1: 4')\n```"

    def respond(body: dict[str, Any]) -> str:
        kind = kind_of(body["messages"])
        if kind == "solve":
            return hardcoded
        assert kind != "repair"  # its simulation matches: submitted without asking
        return "<output>\nCase #1: 4\n</output>"

    server = FakeModelServer(respond)
    settings = EvalSettings(task="self-rlef", data=data, out=tmp_path / "out", turns=1)

    result = await run(settings, (self_rlef.load, self_rlef.evaluate), fake_client(server))

    only = result["items"][0]
    assert only["initial"]["public"] is True and only["initial"]["private"] is False
    assert only["submitted"] is True and only["final"] == only["initial"]
    assert result["metrics"]["private-fail-fail"]["value"] == 1.0
    assert result["metrics"]["public-pass-pass"]["value"] == 1.0


@pytest.mark.asyncio
async def test_self_rlef_records_who_decided_each_turn_and_the_fixes_offered(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "mbpp.jsonl", [*ITEMS, INC])
    server = FakeModelServer(SelfRlefModel())
    settings = EvalSettings(task="self-rlef", data=data, out=tmp_path / "out", turns=2)

    record = await run(settings, (self_rlef.load, self_rlef.evaluate), fake_client(server))

    extra = record["extra"]
    # asked: double, triple (each fixed, then submitted by the simulation at turn 2), inc (not kept);
    # half matches its public test at once: submitted by the simulation, nothing asked
    assert (extra["repair_asked"], extra["repair_by_simulation"], extra["repair_not_kept"]) == (3, 3, 1)
    # offered: double's x * 2 and triple's x * 0 pass the public test for real, inc's x + 3 does not;
    # of the problems failing at first (double, inc), double was offered a passing fix
    assert extra["fixes"] == {"offered": 3, "pass_public": 2, "failing_with_a_passing_fix": 1}
    assert "| 3 | 2 | 1 |" in (tmp_path / "out" / "report.md").read_text()
    failures = {stage: (p["failed"], p["total"]) for stage, p in record["parse_failures"].items()}
    assert failures["repair"] == (0, 3)
    by_id = {item["id"]: item for item in record["items"]}
    assert by_id["4"]["submitted"] is True and by_id["4"]["turns_used"] == 0
    assert by_id["4"]["repair_by_simulation"] == 1
    assert by_id["5"]["repair_not_kept"] == 1 and by_id["5"]["changed"] is False
    assert by_id["1"]["final"]["public"] is True and by_id["1"]["turns_used"] == 1
    prefilled = {"role": "assistant", "content": solve.PREFILL}
    repairs = [body for body in server.requests if kind_of(body["messages"]) == "repair"]
    assert len(repairs) == 3 and all(body["messages"][-1] == prefilled for body in repairs)
    written = json.loads((tmp_path / "out" / "results.json").read_text())
    assert written["provenance"]["settings"]["turns"] == 2 and written["extra"]["fixes_per_turn"] == 1


def test_the_cli_runs_self_rlef_with_its_turns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from simulator.cli import main

    data = write_jsonl(tmp_path / "mbpp.jsonl", ITEMS)
    server = FakeModelServer(SelfRlefModel())
    args = ["eval", "self-rlef", "--data", str(data), "--limit", "1", "--turns", "1", "--out", str(tmp_path)]
    with server.serve() as url:
        monkeypatch.setenv("EXECSIM_MODEL_URL", url)
        monkeypatch.setenv("EXECSIM_MODEL_NAME", server.model)
        assert main(args) == 0
    written = json.loads((tmp_path / "results.json").read_text())
    assert written["provenance"]["settings"]["turns"] == 1 and written["extra"]["turns"] == 1
    with pytest.raises(SystemExit) as info:  # argparse: a usage error
        main([*args, "--repair", "model"])
    assert info.value.code == 2


def test_self_rlef_load_rejects_other_formats(tmp_path: Path) -> None:
    data = write_jsonl(
        tmp_path / "x.jsonl", [{"code": "def f(): pass", "input": "", "output": "None", "id": "a"}]
    )
    with pytest.raises(ValueError, match="not a record of MBPP or Code Jam"):
        self_rlef.load(data)


def test_real_server_runs_self_rlef_on_one_mbpp_problem_and_resumes(vllm_server: Any, tmp_path: Path) -> None:
    data = BENCHMARKS / "mbpp" / "sanitized-dev.jsonl"
    if not data.is_file():
        pytest.skip(f"benchmarks not found at {data} (shared/ next to the repository)")
    env = {**os.environ, "EXECSIM_MODEL_URL": vllm_server.url, "EXECSIM_MODEL_NAME": vllm_server.model_name}
    out = tmp_path / "out"
    cmd = [sys.executable, "-c", "import sys; from simulator.cli import main; sys.exit(main(sys.argv[1:]))"]
    # the first record (task 2) compares set(...) of the call, which no test can state: skipped
    args = ["eval", "self-rlef", "--data", str(data), "--limit", "2", "--turns", "1", "--out", str(out)]

    def cli() -> subprocess.CompletedProcess[str]:
        return subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, timeout=300)

    first = cli()

    assert first.returncode == 0, first.stderr
    last = first.stdout.strip().splitlines()[-1]
    assert last.startswith("self-rlef n=1 public-fail-fail=") and "parse-fail-solve=" in last
    record = json.loads((out / "results.json").read_text())
    sent = record["requests"]["sent"]
    assert sent >= 1 and record["parse_failures"]["solve"]["total"] == 1
    cells = [record["metrics"][f"public-{o}"]["value"] for o in self_rlef.OUTCOMES]
    assert sum(cells) == pytest.approx(1.0)

    second = cli()

    assert second.returncode == 0, second.stderr
    assert second.stdout.strip().splitlines()[-1] == last
    assert json.loads((out / "results.json").read_text())["requests"]["sent"] == 0


@pytest.mark.asyncio
async def test_self_rlef_skips_items_it_cannot_convert_counts_them_and_goes_on(tmp_path: Path) -> None:
    """An MBPP record none of whose asserts is ``assert f(args) == value`` cannot become a problem: it is
    skipped and counted (results.json and report.md), and the other items are evaluated (issue 11, 12)."""
    odd = _mbpp(5, "close", ["assert abs(close(2) - 4) < 1e-9", "assert close(3)"])
    data = write_jsonl(tmp_path / "mbpp.jsonl", [odd, *ITEMS])
    settings = EvalSettings(task="self-rlef", data=data, out=tmp_path / "out", turns=2)

    record = await run(
        settings, (self_rlef.load, self_rlef.evaluate), fake_client(FakeModelServer(SelfRlefModel()))
    )

    assert record["n_items"] == 4
    assert sorted(item["id"] for item in record["items"]) == ["1", "2", "3", "4"]
    reason = "test_list: no assert of the form `assert f(args) == value`"
    assert record["extra"]["unconverted"] == [{"id": "5", "reason": reason}]
    assert json.loads((tmp_path / "out" / "results.json").read_text())["extra"]["unconverted"][0]["id"] == "5"
    report = (tmp_path / "out" / "report.md").read_text()
    assert f"Skipped 1 item that could not be converted: 5 ({reason})" in report


def test_the_summary_handles_only_real_event_types() -> None:
    assert set(self_rlef.HANDLERS) <= set(EVENT_TYPES)  # a renamed event would silently count nothing


def test_a_turn_s_replies_are_counted_each_and_the_turn_fails_only_without_a_new_program() -> None:
    from simulator.prompts.parsing import REPEATED

    fix = "def f(x):\n    return 2 * x\n"
    replies = [
        {"fix": 0, "text": "", "code": None, "error": REPEATED},
        {"fix": 1, "text": "", "code": None, "error": "the reply does not parse"},
        {"fix": 2, "text": "", "code": fix, "error": None},
    ]
    turns = [
        {"submitted": False, "code": fix, "parse_error": None, "decided_by": "model",
         "fix": 2, "replies": replies},
        {"submitted": False, "code": None, "parse_error": "none of the 2 replies is a new program",
         "decided_by": "model", "fix": None, "replies": replies[:2]},
    ]  # fmt: skip
    summary = self_rlef.summarize_events([{"type": "repair_turn", "payload": t} for t in turns])
    assert summary["repair"] == [1, 2]  # per turn: the second gave no new program
    assert summary["repair_reply"] == [4, 5] and summary["repair_repeats"] == 2
    assert summary["repair_program"] == [2, 5]  # the attempt again is a program, a useless one
    assert summary["fixes"] == [fix]  # every new program offered, taken or not
