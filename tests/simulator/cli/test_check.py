"""``execsim check``: the JSON contract, the human report, exit codes (0 checked whatever the verdict,
2 usage or unreadable input, 3 sandbox failure)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import simulator.execution as execution
from simulator.cli import main
from simulator.execution import SandboxError

PROGRAM = (
    "def sum_evens(xs):\n    total = 0\n    for x in xs:\n        if x % 2 == 0:\n"
    "            total += x\n    return total\n"
)
CALL = "sum_evens([1, 2, 3, 4])"
WRONG = "[THOUGHT] total = 0. Then total = 2. [/THOUGHT] [ANSWER] assert sum_evens([1, 2, 3, 4]) == 1"


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path]:
    program, text = tmp_path / "p.py", tmp_path / "nlex.txt"
    program.write_text(PROGRAM)
    text.write_text(WRONG)  # as vLLM returns it: no [/ANSWER]
    return program, text


def test_json_is_one_object_with_offsets_into_the_text(files, capsys: pytest.CaptureFixture[str]) -> None:
    program, text = files
    assert main(["check", str(program), "--call", CALL, "--nlex", str(text), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {
        "schema_version",
        "status",
        "verified",
        "accuracy",
        "answer",
        "claims",
        "first_divergence",
    } <= set(data)
    assert data["status"] == "checked" and data["verified"] is False
    assert (data["answer"]["verdict"], data["answer"]["claimed"], data["answer"]["actual"]) == (
        "false",
        "1",
        "6",
    )
    for claim in data["claims"]:
        assert WRONG[claim["start"] : claim["end"]] == claim["text"]
    first = data["first_divergence"]
    assert first["kind"] == "answer" and WRONG[first["start"] : first["end"]] == "1"
    assert "returns 6" in first["sentence"]


def test_stdin_programs_are_checked_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program, stdin, text = tmp_path / "s.py", tmp_path / "in.txt", tmp_path / "t.txt"
    program.write_text("n = int(input())\nprint(n * 2)\n")
    stdin.write_text("4\n")
    text.write_text("[THOUGHT] n is 4. [/THOUGHT]\n<output>\n8\n")
    assert main(["check", str(program), "--stdin", str(stdin), "--nlex", str(text), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verified"] is True and data["answer"]["verdict"] == "true"


def test_the_human_report_says_where_it_went_wrong(files, capsys: pytest.CaptureFixture[str]) -> None:
    program, text = files
    assert main(["check", str(program), "--call", CALL, "--nlex", str(text)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("first wrong: the simulation's answer is 1; the real call returns 6")
    assert "answer: false (claimed '1', actual '6')" in out and "✓ total = 2" in out


def test_an_unreadable_text_exits_2(files) -> None:
    program, _ = files
    assert main(["check", str(program), "--call", CALL, "--nlex", "missing.txt"]) == 2


@pytest.mark.parametrize("argv", [["--call", CALL], ["--nlex", "x.txt"]])
def test_missing_arguments_exit_2(files, argv: list[str]) -> None:
    program, _ = files
    with pytest.raises(SystemExit) as stop:
        main(["check", str(program), *argv])
    assert stop.value.code == 2


def test_code_that_does_not_parse_exits_2(tmp_path: Path, files) -> None:
    _, text = files
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n")
    assert main(["check", str(broken), "--call", "f()", "--nlex", str(text)]) == 2


def test_sandbox_failure_exits_3(files, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args, **kwargs):
        raise SandboxError("bwrap: no user namespaces")

    monkeypatch.setattr(execution, "run", broken)
    program, text = files
    assert main(["check", str(program), "--call", CALL, "--nlex", str(text)]) == 3
