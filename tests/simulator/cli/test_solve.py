"""``execsim solve`` / ``execsim simulate`` against a fake model server (a test double) reached through
EXECSIM_MODEL_URL, exactly as a user's server would be."""

from __future__ import annotations

import contextlib
import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from simulator.cli import main
from simulator.cli.solve import _SimulatePrinter, _SolvePrinter
from simulator.llm.testing import FakeModelServer, PipelineScript
from simulator.pipeline import EVENT_TYPES, FINAL_TYPES
from simulator.prompts import simulate

REPO = Path(__file__).resolve().parents[3]
SQUARE = REPO / "examples" / "square.json"
RIGHT = "```python\nn = int(input())\nprint(n * n)\n```"


def predict(code: str, stdin: str) -> str:
    """A model that simulates squaring correctly."""
    return f"[THOUGHT] n is {stdin.strip()} [/THOUGHT]\n<output>\n{int(stdin) ** 2}\n"


@contextlib.contextmanager
def serving(server: FakeModelServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """``server`` running, and the CLI pointed at it as a user's environment would point it."""
    with server.serve() as url:
        monkeypatch.setenv("EXECSIM_MODEL_URL", url)
        monkeypatch.setenv("EXECSIM_MODEL_NAME", server.model)
        monkeypatch.setenv("EXECSIM_DATA_DIR", str(tmp_path / "data"))
        yield


@pytest.fixture
def model_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeModelServer]:
    server = FakeModelServer(PipelineScript(solve=[RIGHT, "no idea"], simulate=predict))
    with serving(server, monkeypatch, tmp_path):
        yield server


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_solve_json_prints_one_event_per_line_and_exits_0(model_server, capsys) -> None:
    code = main(["solve", str(SQUARE), "--k", "2", "--turns", "1", "--seed", "5", "--json"])
    events = json_lines(capsys.readouterr().out)
    assert code == 0
    assert all(set(e) == {"schema_version", "run_id", "seq", "type", "payload"} for e in events)
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert events[0]["type"] == "run_started" and events[-1]["type"] == "run_finished"
    assert events[0]["payload"]["settings"]["k"] == 2 and events[0]["payload"]["settings"]["seed"] == 5
    assert events[-1]["payload"]["code"] == "n = int(input())\nprint(n * n)\n"
    assert model_server.requests[0]["n"] == 2


def test_solve_passes_the_sampling_options_to_the_server(model_server, capsys) -> None:
    main(
        [
            "solve",
            str(SQUARE),
            "--k",
            "3",
            "--turns",
            "0",
            "--temperature",
            "0.3",
            "--max-tokens",
            "99",
            "--json",
        ]
    )
    body = model_server.requests[0]
    assert (body["n"], body["temperature"], body["max_tokens"]) == (3, 0.3, 99)


def test_solve_prints_a_readable_report(model_server, capsys) -> None:
    assert main(["solve", str(SQUARE), "--k", "2", "--turns", "1", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "candidate 1 (" in out and "does not parse" in out  # the candidate without code, and why
    assert "selected candidate 0" in out and "matched 2 of 2 public tests" in out
    # guided repair (the default): every public simulation matches, so nothing is asked
    assert "submitted without asking the model (its simulation matches every public test)" in out
    assert "final program" in out and "print(n * n)" in out


def test_solve_says_why_a_program_that_cannot_pass_was_not_simulated(monkeypatch, tmp_path, capsys) -> None:
    problem = tmp_path / "square.json"
    tests = [{"input": "3", "output": "9"}]
    spec = {
        "title": "Square",
        "statement": "Return x * x.",
        "kind": "call",
        "entry_point": "square",
        "tests": tests,
    }
    problem.write_text(json.dumps(spec))
    misnamed = "```python\ndef sq(x):\n    return x * x\n```"

    def believes_all(code: str, call: str) -> str:
        return f"[THOUGHT] t [/THOUGHT] [ANSWER] assert {call} == 9 [/ANSWER]"

    server = FakeModelServer(
        PipelineScript(solve=[misnamed, misnamed.replace("sq(", "square(")], simulate=believes_all)
    )
    with serving(server, monkeypatch, tmp_path):
        assert main(["solve", str(problem), "--k", "2", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert (
        "candidate 0 · test 0: judged wrong (not simulated: the program does not define square, which the"
        in out
    )
    assert "selected candidate 1" in out
    assert not any("def sq(" in m["content"] for b in server.requests[1:] for m in b["messages"])


def test_solve_narrates_by_default_and_answers_at_once_when_asked(model_server, capsys) -> None:
    assert main(["solve", str(SQUARE), "--k", "2", "--seed", "1", "--json"]) == 0
    assert json_lines(capsys.readouterr().out)[0]["payload"]["settings"]["narrate"] is True
    narrated = [b for b in model_server.requests if b["messages"][0]["content"] == simulate.SYSTEM]
    assert narrated and all(b["messages"][-1]["role"] == "user" for b in narrated)  # nothing prefilled
    model_server.requests.clear()
    assert main(["solve", str(SQUARE), "--k", "2", "--seed", "1", "--answer-only", "--json"]) == 0
    assert json_lines(capsys.readouterr().out)[0]["payload"]["settings"]["narrate"] is False
    at_once = [b for b in model_server.requests if b["messages"][0]["content"] == simulate.SYSTEM]
    assert at_once and all(b["messages"][-1]["role"] == "assistant" for b in at_once)  # answer prefilled


def test_solve_prints_which_repair_reply_was_taken_and_why_not_the_others(
    monkeypatch, capsys, tmp_path
) -> None:
    wrong = "```python\nn = int(input())\nprint(n + n)\n```"  # 2 -> 4 right, 3 -> 6 wrong
    replies = [wrong, "I am not sure.", RIGHT, "I am not sure."]
    server = FakeModelServer(PipelineScript(solve=[wrong], simulate=predict_for_real, repair=[replies]))
    with serving(server, monkeypatch, tmp_path):
        args = ["solve", str(SQUARE), "--k", "1", "--turns", "1", "--seed", "1"]
        assert main(args) == 0
    out = capsys.readouterr().out
    assert "repair turn 1: new program" in out
    assert "reply 1 of 4: the reply repeats the attempted code" in out
    assert "reply 2 of 4: the reply (the inside of the prefilled code block) does not parse" in out
    assert "reply 3 of 4: taken: the only new program not known to fail" in out
    assert main(["solve", str(SQUARE), "--turns", "99"]) == 2  # out of range: a usage error naming it
    assert "--turns: must be an integer from 0 to 20, not 99" in capsys.readouterr().err


def predict_for_real(code: str, stdin: str) -> str:
    """A model that simulates a stdin program correctly (trusted test programs only)."""
    from tests.simulator.pipeline.pipeline_doubles import run_stdin

    return f"[THOUGHT] t [/THOUGHT]\n<output>\n{run_stdin(code, stdin)}"


def test_solve_exits_1_when_the_server_is_down(monkeypatch, capsys, tmp_path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("EXECSIM_MODEL_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("EXECSIM_DATA_DIR", str(tmp_path))
    assert main(["solve", str(SQUARE), "--json"]) == 1
    captured = capsys.readouterr()
    events = json_lines(captured.out)
    assert events[-1]["type"] == "run_failed" and events[-1]["payload"]["error"] == "model_unavailable"
    assert f"model server at http://127.0.0.1:{port}/v1 is not reachable" in events[-1]["payload"]["message"]
    assert main(["solve", str(SQUARE)]) == 1  # read by a person: what to do next
    assert "start the default model with `execsim model serve`" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"title": "x", "statement": "y", "tests": []}', "tests: must be a non-empty list"),
        (
            '{"title": "x", "statement": "y", "kind": "call", "tests": [{"input": "1", "output": "1"}]}',
            "entry_point",
        ),
        ('{"title": "x", "statement": "y", "tests": [{"input": 1, "output": "1"}]}', "tests[0].input"),
        ("{not json", "is not a JSON file"),
    ],
)
def test_solve_exits_2_naming_the_bad_field(tmp_path, capsys, content: str, message: str) -> None:
    path = tmp_path / "problem.json"
    path.write_text(content)
    assert main(["solve", str(path)]) == 2
    assert message in capsys.readouterr().err


def test_solve_exits_2_for_a_missing_file_or_a_bad_setting(tmp_path, capsys) -> None:
    assert main(["solve", str(tmp_path / "nope.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main(["solve", str(SQUARE), "--k", "0"]) == 2
    assert "--k: must be an integer from 1 to 64" in capsys.readouterr().err


def test_every_example_problem_is_valid(capsys) -> None:
    from simulator.problem import Problem

    examples = sorted((REPO / "examples").glob("*.json"))
    assert 4 <= len(examples) <= 6
    kinds = {Problem.from_dict(json.loads(p.read_text())).kind for p in examples}
    assert kinds == {"stdin", "call"}


def test_simulate_streams_the_nlex_and_checks_it_against_the_real_trace(
    tmp_path, monkeypatch, capsys
) -> None:
    program = tmp_path / "f.py"
    program.write_text("def f(x):\n    y = x * 2\n    return y\n")
    reply = (
        "[THOUGHT] Line 1: `def f(x):` - f is called with x = 3.\nLine 2: `y = x * 2`; now y = 7.\n"
        "[/THOUGHT] [ANSWER] assert f(3) == 7 [/ANSWER]"
    )
    server = FakeModelServer(lambda body: reply)
    with serving(server, monkeypatch, tmp_path):
        code = main(["simulate", str(program), "--call", "f(3)", "--json"])
    events = json_lines(capsys.readouterr().out)
    assert code == 0
    assert (
        "".join(e["payload"]["text"] for e in events if e["type"] == "simulation_delta")
        == reply.split("[/ANSWER]")[0]
    )
    execution = next(e["payload"] for e in events if e["type"] == "execution")
    if execution["status"] != "ok":
        pytest.skip(f"the sandbox cannot run here: {execution['message']}")
    assert execution["output"] == "6" and execution["predicted"] == "7"
    verification = execution["verification"]
    verdicts = {c["text"]: c["verdict"] for c in verification["claims"]}
    assert verdicts["x = 3"] == "true" and verdicts["y = 7"] == "false"
    assert (
        verification["first_divergence"]["claimed"] == "7"
        and verification["first_divergence"]["actual"] == "6"
    )
    assert verification["answer"]["verdict"] == "false" and verification["verified"] is False
    assert events[-1]["type"] == "run_finished" and events[-1]["payload"]["match"] is False


def test_simulate_needs_a_readable_program(tmp_path, capsys) -> None:
    assert main(["simulate", str(tmp_path / "missing.py"), "--call", "f()"]) == 2
    assert "cannot read" in capsys.readouterr().err
    program = tmp_path / "f.py"
    program.write_text("x = 1\n")
    assert main(["simulate", str(program), "--call", "f(("]) == 2
    assert "call is not a Python expression" in capsys.readouterr().err


@pytest.mark.parametrize("printer", [_SolvePrinter, _SimulatePrinter])
def test_the_printers_handle_only_real_event_types_and_say_how_a_run_ended(printer) -> None:
    assert set(printer.HANDLERS) <= set(EVENT_TYPES)  # a renamed event would never print
    assert set(printer.HANDLERS) >= FINAL_TYPES


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("POSIX only")


def test_simulate_a_script_that_reads_nothing_whose_narration_stops_before_its_answer(
    tmp_path, monkeypatch, capsys
) -> None:
    """``--stdin ''`` feeds nothing (a script that only prints); the model ends its narration without
    the <output> block, as the default model does on most such scripts, and the answer is asked for
    after it."""
    program = tmp_path / "p.py"
    program.write_text("print(2 + 3)\n")
    narration = "[THOUGHT]\nLine 1: `print(2 + 3)` prints 5.\n[/THOUGHT]\n"

    def reply(body: dict) -> str:
        last = body["messages"][-1]
        return "5\n</output>" if last["role"] == "assistant" else narration

    server = FakeModelServer(reply)
    with serving(server, monkeypatch, tmp_path):
        code = main(["simulate", str(program), "--stdin", "", "--json"])
    events = json_lines(capsys.readouterr().out)
    assert code == 0
    assert server.requests[-1]["messages"][-1]["content"] == narration + "<output>\n"
    (done,) = [e["payload"] for e in events if e["type"] == "simulation_done"]
    assert done["forced"] and not done["cut"] and done["predicted"] == "5\n" and not done["parse_error"]
    if events[-1]["payload"].get("status") == "ok":  # the sandbox ran it
        assert events[-1]["payload"]["match"] is True
