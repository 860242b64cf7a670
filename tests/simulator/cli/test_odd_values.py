"""Values Python cannot take as they are, on the command line (issue 51, item 14): a problem file with a
lone surrogate in a call test or a 5,000-digit ``float_tolerance`` is a malformed problem (one line
naming the field, exit 2, never a traceback); a model reply holding a lone surrogate prints as JSON
escapes under ``--json`` (never a ``UnicodeEncodeError``); a reply holding NUL is read as what it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simulator.cli import main
from simulator.llm.testing import FakeModelServer, PipelineScript
from tests.simulator.cli.test_hostile_input import no_model, one_line  # noqa: F401
from tests.simulator.cli.test_solve import RIGHT, SQUARE, json_lines, predict, serving

HUGE = "1" * 5000


def _call_problem(**test: str) -> dict:
    return {
        "title": "T", "statement": "s", "kind": "call", "entry_point": "f",
        "tests": [{"input": "1", "output": "2", **test}],
    }  # fmt: skip


def _tolerance(value: str) -> str:
    return json.dumps(_call_problem())[:-1] + f', "float_tolerance": {value}}}'


FINITE = "float_tolerance: must be a finite"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (json.dumps(_call_problem(output="'a\udc80'")), "tests[0].output: is not a Python literal: it holds"),
        (json.dumps(_call_problem(input="'\ud800'")), "tests[0].input: is not an argument list: it holds"),
        (_tolerance(HUGE), FINITE),
        (_tolerance(f"{HUGE}.5"), FINITE),
        (_tolerance("NaN"), FINITE),
    ],
    ids=["surrogate-output", "surrogate-input", "huge-int", "huge-float", "nan"],
)
def test_solve_exits_2_in_one_line_on_a_value_python_cannot_take(
    content: str,
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    no_model: None,  # noqa: F811
) -> None:
    path = tmp_path / "problem.json"
    path.write_text(content, encoding="utf-8")
    assert main(["solve", str(path)]) == 2
    line = one_line(capsys.readouterr().err)
    assert message in line and "\udc80" not in line and "\ud800" not in line
    assert "lone surrogate (\\u" in line or "tolerance" in message


def odd_simulation(code: str, stdin: str) -> str:
    """A right simulation whose narration holds a lone surrogate."""
    return predict(code, stdin).replace("[THOUGHT] n is", "[THOUGHT] \udc80 n is")


ODD_CODE = "```python\nn = int(input())\nprint(n * n)  # \udc80\n```"


def test_solve_json_prints_replies_holding_a_lone_surrogate_as_json_escapes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = FakeModelServer(PipelineScript(solve=[RIGHT], simulate=odd_simulation))
    with serving(server, monkeypatch, tmp_path):
        code = main(["solve", str(SQUARE), "--k", "1", "--turns", "0", "--seed", "1", "--json"])
    events = json_lines(capsys.readouterr().out)  # every line is JSON
    assert code == 0 and events[-1]["type"] == "run_finished"
    done = next(e for e in events if e["type"] == "simulation_done")
    assert "\udc80 n is" in done["payload"]["text"]  # the escape reads back as the reply's own character

    server = FakeModelServer(PipelineScript(solve=[ODD_CODE], simulate=predict))
    with serving(server, monkeypatch, tmp_path):
        code = main(["solve", str(SQUARE), "--k", "1", "--turns", "0", "--seed", "1", "--json"])
    events = json_lines(capsys.readouterr().out)
    done = next(e for e in events if e["type"] == "candidate_done")
    assert code == 1 and "\udc80" in done["payload"]["text"]
    assert "the code holds a lone surrogate (\\udc80) on line 2" in done["payload"]["parse_error"]


def test_simulate_prints_a_narration_holding_a_lone_surrogate_for_a_person(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program, given = tmp_path / "square.py", tmp_path / "in.txt"
    program.write_text("n = int(input())\nprint(n * n)\n")
    given.write_text("3\n")
    server = FakeModelServer(PipelineScript(solve=[RIGHT], simulate=odd_simulation))
    with serving(server, monkeypatch, tmp_path):
        assert main(["simulate", str(program), "--stdin", str(given)]) == 0
    assert "\\udc80 n is" in capsys.readouterr().out  # streamed as the web app shows it


@pytest.mark.parametrize(
    "reply",
    [
        "n = int(input())\nprint(n * n)\x00\n",  # continuing the prefilled fence, as vLLM replies
        "```python\nn = int(input())\nprint(n * n)\x00\n```",  # a fence of its own
    ],
)
def test_a_reply_holding_nul_in_its_code_is_reported_as_such(
    reply: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = FakeModelServer(PipelineScript(solve=[reply], simulate=predict))
    with serving(server, monkeypatch, tmp_path):
        main(["solve", str(SQUARE), "--k", "1", "--turns", "0", "--seed", "1", "--json"])
    done = next(e for e in json_lines(capsys.readouterr().out) if e["type"] == "candidate_done")
    assert done["payload"]["code"] is None
    assert "NUL character (\\x00) on line 2" in done["payload"]["parse_error"]
