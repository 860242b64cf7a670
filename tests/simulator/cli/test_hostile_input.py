"""Input nested too deeply for Python's parser or for ``json`` (``[`` x 100000, ``1+`` x 5000) is a malformed
input like any other: every command answers one line naming it and exits 2 (issue 11, item 9); ``batch``
reports such a line as ``invalid_input`` and runs the rest, as it does any malformed line."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from simulator.cli import main

DEEP_JSON = "[" * 100_000
LONG_SUM = "1+" * 5000 + "1"


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text[-2000:]
    return lines[0]


@pytest.fixture
def no_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A model URL where nothing listens: a command that calls the model cannot exit 2 on that."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("EXECSIM_MODEL_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("EXECSIM_DATA_DIR", str(tmp_path / "data"))


@pytest.mark.parametrize("command", ["run", "trace", "simulate"])
def test_a_program_too_deeply_nested_to_parse_exits_2(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_model: None
) -> None:
    program = tmp_path / "deep.py"
    program.write_text(f"def f():\n    return {LONG_SUM}\n")
    assert main([command, str(program), "--call", "f()"]) == 2
    assert "too deeply nested" in one_line(capsys.readouterr().err)


@pytest.mark.parametrize("command", ["run", "trace", "simulate"])
def test_a_call_too_deeply_nested_to_parse_exits_2(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_model: None
) -> None:
    program = tmp_path / "f.py"
    program.write_text("def f(x):\n    return x\n")
    assert main([command, str(program), "--call", f"f({LONG_SUM})"]) == 2
    assert "call is not a Python expression: too deeply nested" in one_line(capsys.readouterr().err)


def test_simulate_refuses_a_program_that_does_not_parse_before_calling_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_model: None
) -> None:
    program = tmp_path / "broken.py"
    program.write_text("def f(:\n    return 1\n")
    assert main(["simulate", str(program), "--call", "f()"]) == 2
    assert "does not parse" in one_line(capsys.readouterr().err)


@pytest.mark.parametrize(
    "line", [DEEP_JSON, json.dumps({"code": "def f(x):\n    return x\n", "call": f"f({LONG_SUM})"})]
)
def test_batch_reports_a_too_deeply_nested_line_and_runs_the_rest(
    line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    good = json.dumps({"id": "ok", "code": "def f(x):\n    return x\n", "call": "f(1)"})
    tasks.write_text(f"{line}\n{good}\n")
    assert main(["batch", str(tasks)]) == 0
    first, second = (json.loads(out) for out in capsys.readouterr().out.splitlines())
    assert (first["status"], first["line"]) == ("invalid_input", 1)
    assert "too deeply nested" in first["message"]
    if second["status"] != "invalid_input":  # the sandbox may be unavailable; the line was accepted
        assert second["id"] == "ok"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (DEEP_JSON, "too deeply nested"),
        (
            json.dumps(
                {"title": "t", "statement": "s", "kind": "call", "entry_point": "f",
                 "tests": [{"input": LONG_SUM, "output": "1"}]}
            ),
            "tests[0].input: is not an argument list: too deeply nested",
        ),
        (
            json.dumps(
                {"title": "t", "statement": "s", "kind": "call", "entry_point": "f",
                 "tests": [{"input": "1", "output": LONG_SUM}]}
            ),
            "tests[0].output: is not a Python literal: too deeply nested",
        ),
    ],
    ids=["deep-json", "long-input", "long-output"],
)  # fmt: skip
def test_solve_exits_2_on_a_too_deeply_nested_problem(
    content: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_model: None
) -> None:
    path = tmp_path / "problem.json"
    path.write_text(content)
    assert main(["solve", str(path)]) == 2
    assert message in one_line(capsys.readouterr().err)
