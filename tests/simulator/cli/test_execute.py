"""``execsim run | trace | batch``: fields, exit codes and messages (the contract scripts rely on)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import simulator.execution as execution
from simulator.cli import main
from simulator.execution import SandboxError

PROGRAM = "def f(x):\n    y = x * 2\n    print(y)\n    return y + 1\n"
RECORD_FIELDS = {
    "schema_version",
    "id",
    "status",
    "value",
    "value_type",
    "stdout",
    "stderr",
    "exception",
    "duration_s",
}


@pytest.fixture()
def program(tmp_path: Path) -> Path:
    path = tmp_path / "p.py"
    path.write_text(PROGRAM)
    return path


def test_run_json_prints_one_record(program: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(program), "--call", "f(3)", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert set(record) >= RECORD_FIELDS
    assert (record["status"], record["value"], record["stdout"]) == ("ok", "7", "6\n")


def test_run_summary_and_stdin(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "s.py"
    script.write_text("print(input()[::-1])\n")
    data = tmp_path / "in.txt"
    data.write_text("abc\n")
    assert main(["run", str(script), "--stdin", str(data)]) == 0
    out = capsys.readouterr().out
    assert "status: ok" in out and "cba" in out


def test_empty_stdin_feeds_nothing_and_random_is_seeded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--stdin ''`` runs a script that reads nothing, as ``execsim simulate`` takes it (it used to be
    read as the folder '.'); ``random`` is seeded, so two runs print the same number (Python Tutor's
    deterministic randomness)."""
    script = tmp_path / "r.py"
    script.write_text("import random\nprint(random.random())\n")
    outputs = []
    for _ in range(2):
        assert main(["run", str(script), "--stdin", ""]) == 0
        outputs.append(capsys.readouterr().out)
    assert "status: ok" in outputs[0] and outputs[0].split("time:")[0] == outputs[1].split("time:")[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "missing.py", "--call", "f()"], "cannot read program"),
        (["run", "{program}", "--call", "f(("], "not a Python expression"),
        (["run", "{bad}", "--call", "f()"], "does not parse"),
        (["trace", "{program}", "--call", "f(1)", "--max-steps", "0"], "--max-steps"),
    ],
    ids=["missing-file", "bad-call", "bad-code", "bad-max-steps"],
)
def test_usage_errors_exit_2_with_one_line(
    args: list[str], message: str, program: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    args = [a.format(program=program, bad=bad) for a in args]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_trace_json_and_text(program: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", str(program), "--call", "f(3)", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert [s["event"] for s in record["trace"]["steps"]] == ["call", "line", "line", "line", "return"]
    assert main(["trace", str(program), "--call", "f(3)"]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert "f:2" in listing[1]
    # steps counted from 1, as the explorer shows them (the JSON's index counts from 0)
    assert [line.split()[0] for line in listing[:5]] == ["1", "2", "3", "4", "5"]


def test_trace_nlex_narrates(program: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("simulator.nlex.narrator")
    assert main(["trace", str(program), "--call", "f(3)", "--nlex"]) == 0
    assert "7" in capsys.readouterr().out


def test_batch_keeps_order_and_reports_malformed_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    lines = [
        {"id": "a", "code": "def f(x):\n    return x + 1", "input": "1"},
        "this is not json",
        {"id": "b", "code": "def g(x):\n    return x", "input": "[2]", "entry": "g"},
        {"id": "c", "code": "def h():\n    return 0", "tests": ["assert h() == 1"]},
        {"id": "d", "code": "print(input())", "stdin": "hi\n", "timeout_s": 2},
        {"id": "e", "code": "x", "call": "f(", "stdin": "x"},
        {"id": "f", "code": "def f():\n    return 1", "call": "f()"},
    ]
    tasks.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    assert main(["batch", str(tasks), "--workers", "2"]) == 0
    out, err = capsys.readouterr()
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in records] == ["a", None, "b", "c", "d", None, "f"]
    assert [r["status"] for r in records] == [
        "ok",
        "invalid_input",
        "ok",
        "wrong_answer",
        "ok",
        "invalid_input",
        "ok",
    ]
    assert records[1]["line"] == 2 and records[5]["line"] == 6
    assert records[2]["value"] == "[2]" and records[4]["stdout"] == "hi\n"
    assert err == ""  # no progress bar when stderr is not a terminal


def test_batch_trace_includes_traces(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": 1, "code": "def f(x):\n    return x", "input": "5"}) + "\n")
    assert main(["batch", str(tasks), "--trace"]) == 0
    assert json.loads(capsys.readouterr().out)["trace"]["steps"]


def test_sandbox_failure_exits_3(program: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args, **kwargs):
        raise SandboxError("bwrap: no user namespaces")

    monkeypatch.setattr(execution, "run", broken)
    assert main(["run", str(program), "--call", "f(1)"]) == 3
    monkeypatch.setattr("simulator.execution.pool.worker_command", broken)
    tasks = tmp_path / "t.jsonl"
    tasks.write_text(json.dumps({"id": 1, "code": "x = 1", "stdin": ""}) + "\n")
    assert main(["batch", str(tasks)]) == 3
