"""The harness end to end with a scripted model server (a test double behind the real ChatClient), and
against the real vLLM server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from simulator.evaluation import cruxeval
from simulator.evaluation.cache import RequestCache, request_key
from simulator.evaluation.harness import EvalSettings, final_line, run
from simulator.evaluation.scoring import answer_found, extract_answer
from simulator.llm.testing import FakeModelServer
from simulator.pipeline.settings import RunSettings
from simulator.prompts import simulate
from tests.simulator.evaluation.eval_doubles import fake_client, table_responder, write_jsonl

REPO = Path(__file__).resolve().parents[3]
BENCHMARKS = REPO.parent / "shared" / "benchmarks"

CRUX = [
    {"id": "a", "code": "def f(x):\n    return x * 2", "input": "3", "output": "6"},
    {"id": "b", "code": "def f(s):\n    return s[::-1]", "input": "'ab'", "output": "'ba'"},
    {"id": "c", "code": "def f(xs):\n    return sorted(xs)", "input": "[2, 1]", "output": "[1, 2]"},
]


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("[ANSWER]\nassert f(1) == [1, 2]\n[/ANSWER]", "[1, 2]"),
        ("[THOUGHT]x[/THOUGHT]\n[ANSWER]assert f('a') == 'b'", "'b'"),  # cut by the stop string
        ("[ANSWER]\nassert f(1) == 3\nassert f(2) == 4", "3"),  # the first line only
        ("blah\nassert f(1) == 'x'", "'x'"),  # no tags: the last assert line
        ("", ""),
    ],
)
def test_extract_answer(text: str, answer: str) -> None:
    assert extract_answer(text) == answer


def test_cache_key_changes_with_every_part_and_survives_a_torn_line(tmp_path: Path) -> None:
    base = request_key("m", [{"role": "user", "content": "q"}], {"n": 1}, "item")
    assert base != request_key("m2", [{"role": "user", "content": "q"}], {"n": 1}, "item")
    assert base != request_key("m", [{"role": "user", "content": "q2"}], {"n": 1}, "item")
    assert base != request_key("m", [{"role": "user", "content": "q"}], {"n": 2}, "item")
    assert base != request_key("m", [{"role": "user", "content": "q"}], {"n": 1}, "item2")
    cache = RequestCache(tmp_path / "c.jsonl")
    cache.put(base, {"texts": ["x"]})
    cache.close()
    with (tmp_path / "c.jsonl").open("a") as f:
        f.write('{"key": "torn", "tex')
    again = RequestCache(tmp_path / "c.jsonl")
    assert again.get(base)["texts"] == ["x"] and again.get("torn") is None


@pytest.mark.asyncio
async def test_provenance_names_the_weights_the_server_serves_not_the_default_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A candidate served under the default model's name (to reuse a run's request cache) is recorded
    with its own weights, so the promotion gate can tell the two apart."""
    monkeypatch.setenv("EXECSIM_DATA_DIR", str(tmp_path / "data"))
    default = tmp_path / "data" / "models" / "fake-model"
    candidate = tmp_path / "candidate"
    for folder, digest in ((default, "default111"), (candidate, "candidate222")):
        folder.mkdir(parents=True)
        (folder / "weights.sha256").write_text(f"{digest}  model.safetensors\n")
    data = write_jsonl(tmp_path / "crux.jsonl", CRUX[:1])
    for root, expected in ((str(candidate), "candidate222"), (None, "default111")):
        server = FakeModelServer(table_responder({}, "[ANSWER]\nassert f(3) == 6"), root=root)
        settings = EvalSettings(task="cruxeval-o", data=data, out=tmp_path / f"out-{expected}")
        record = await run(settings, (cruxeval.load, cruxeval.evaluate), fake_client(server))
        assert record["provenance"]["weights_sha256"] == expected


@pytest.mark.asyncio
async def test_cruxeval_scores_by_value_counts_pass_at_k_and_resumes_without_resending(
    tmp_path: Path,
) -> None:
    data = write_jsonl(tmp_path / "crux.jsonl", CRUX)
    server = FakeModelServer(
        table_responder(
            {
                "f(3)": ["[ANSWER]\nassert f(3) == 6\n[/ANSWER]", "[ANSWER]\nassert f(3) == 7\n[/ANSWER]"],
                "f('ab')": [
                    "[ANSWER]\nassert f('ab') == \"ba\"\n[/ANSWER]",
                    "[ANSWER]\nassert f('ab') == 'ba'",
                ],
                # cheating never counts; the second sample states no answer at all (a parse failure)
                "f([2, 1])": ["[ANSWER]\nassert f([2, 1]) == f([2, 1])\n[/ANSWER]", "I think it sorts."],
            },
            "[ANSWER]\nassert f() == None",
        )
    )
    settings = EvalSettings(task="cruxeval-o", data=data, out=tmp_path / "out", n=2, k=2)

    record = await run(settings, (cruxeval.load, cruxeval.evaluate), fake_client(server))

    assert [item["correct"] for item in record["items"]] == [1, 2, 0]
    assert record["metrics"]["pass@1"]["value"] == pytest.approx(0.5)
    assert record["metrics"]["pass@2"]["value"] == pytest.approx(2 / 3)
    assert record["requests"]["sent"] == 3 and record["requests"]["cached"] == 0
    assert record["requests"]["completion_tokens_sent"] > 0
    assert record["parse_failures"]["simulate"]["failed"] == 1
    assert record["parse_failures"]["simulate"]["total"] == 6
    line = final_line(record)
    assert line.startswith("cruxeval-o n=3 pass@1=0.500[") and " pass@2=0.667[" in line
    assert " parse-fail-simulate=0.167[" in line
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["provenance"]["data"]["sha256"] and saved["provenance"]["model"] == "fake-model"
    assert saved["provenance"]["model_url"] == "http://fake-model/v1"
    assert {"results.json", "report.md", "metrics.png", "requests.jsonl"} <= {
        p.name for p in (tmp_path / "out").iterdir()
    }
    assert "| simulate | 1 / 6 |" in (tmp_path / "out" / "report.md").read_text()

    again = await run(settings, (cruxeval.load, cruxeval.evaluate), fake_client(server))

    assert len(server.requests) == 3  # nothing sent twice
    assert again["requests"]["sent"] == 0 and again["requests"]["cached"] == 3
    assert again["metrics"] == record["metrics"]


@pytest.mark.asyncio
async def test_cruxeval_nlex_reports_how_often_the_narration_holds_up(tmp_path: Path) -> None:
    """With the NLEX prompt each narration gets the one verifier's label against the real run."""
    data = write_jsonl(tmp_path / "crux.jsonl", CRUX[:1])  # f(x) = x * 2 on 3
    server = FakeModelServer(
        table_responder(
            {
                "f(3)": [
                    "[THOUGHT] x = 3. [/THOUGHT]\n[ANSWER]\nassert f(3) == 6\n",  # as vLLM returns it
                    "[THOUGHT] x = 3. [/THOUGHT]\n[ANSWER]\nassert f(3) == 7\n",
                    "[THOUGHT] It doubles x. [/THOUGHT]",
                ]
            },
            "",
        )
    )
    settings = EvalSettings(task="cruxeval-o", data=data, out=tmp_path / "out", n=3, k=1, prompt="nlex")

    record = await run(settings, (cruxeval.load, cruxeval.evaluate), fake_client(server))

    labels = [s["verification"] for s in record["items"][0]["samples"]]
    assert labels == ["agrees", "diverges", "unverified"]
    for label in ("agrees", "diverges", "unverified"):
        assert record["metrics"][f"narration {label}"]["value"] == pytest.approx(1 / 3)


@pytest.mark.asyncio
async def test_cruxeval_simulate_sends_the_apps_simulate_request_with_its_budget(tmp_path: Path) -> None:
    """``--prompt simulate`` measures what the app asks: its simulate messages, its token budget, its
    stop string; the answer is scored and the narration verified as with ``nlex``."""
    data = write_jsonl(tmp_path / "crux.jsonl", CRUX[:1])
    bodies: list[dict[str, Any]] = []

    def respond(body: dict[str, Any]) -> list[str]:
        bodies.append(body)
        return ["[THOUGHT] x = 3, so f returns 6. [/THOUGHT] [ANSWER] assert f(3) == 6 "] * body["n"]

    settings = EvalSettings(task="cruxeval-o", data=data, out=tmp_path / "out", prompt="simulate")
    record = await run(settings, (cruxeval.load, cruxeval.evaluate), fake_client(FakeModelServer(respond)))

    (body,) = bodies
    assert body["messages"] == simulate.call_messages(CRUX[0]["code"], "f(3)")
    assert body["max_tokens"] == RunSettings().max_tokens and body["stop"] == list(simulate.CALL_STOP)
    assert record["items"][0]["correct"] == 1
    assert record["items"][0]["samples"][0]["verification"] == "agrees"


LOOPING = "[THOUGHT]\n" + "Line 2: the condition holds.\n" * 200  # past the 512-token budget
STOPPED = "[THOUGHT]\nLine 1: x is 3.\n[/THOUGHT]\n"  # the model ends it without an [ANSWER]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("narration", "cut", "asked"),
    [
        (LOOPING, 1.0, simulate.answer_prefill("f(3)")),  # at once, the looping narration left out
        (STOPPED, 0.0, STOPPED + "[ANSWER]\nassert f(3) =="),  # the reply goes on from the narration
    ],
)
async def test_cruxeval_simulate_asks_for_the_answer_a_narration_never_gave(
    tmp_path: Path, narration: str, cut: float, asked: str
) -> None:
    """As the app does: a narration that runs out of its budget, or stops, before its answer gets the
    answer asked for in a second request, at once without the narration when it was cut, after it
    when it stopped; the figures count both the cut and the forced replies."""
    data = write_jsonl(tmp_path / "crux.jsonl", CRUX[:1])
    bodies: list[dict[str, Any]] = []

    def respond(body: dict[str, Any]) -> str:
        bodies.append(body)
        return " 6\n[/ANSWER]" if body["messages"][-1]["role"] == "assistant" else narration

    settings = EvalSettings(task="cruxeval-o", data=data, out=tmp_path / "out", prompt="simulate")
    record = await run(settings, (cruxeval.load, cruxeval.evaluate), fake_client(FakeModelServer(respond)))

    first, forced = bodies
    assert forced["messages"] == [
        *first["messages"],
        {"role": "assistant", "content": asked},
    ]
    assert forced["continue_final_message"] is True and forced["max_tokens"] == simulate.ANSWER_TOKENS
    (sample,) = record["items"][0]["samples"]
    assert sample["cut"] == bool(cut) and sample["forced"] and sample["passed"] and sample["answer"] == "6"
    assert sample["text"].startswith(narration[:30]) and sample["text"].endswith("assert f(3) == 6\n")
    assert record["metrics"]["cut by the token budget"]["value"] == cut
    assert record["metrics"]["answer forced"]["value"] == 1.0
    assert record["metrics"]["pass@1"]["value"] == 1.0


@pytest.mark.asyncio
async def test_cruxeval_simulate_answer_sends_the_request_answered_at_once(tmp_path: Path) -> None:
    """``simulate-answer``, what the app sends by default: the simulate request with an empty thought
    and the answer begun, a short budget; the reply is read after its prefill."""
    data = write_jsonl(tmp_path / "crux.jsonl", CRUX[:2])
    bodies: list[dict[str, Any]] = []

    def respond(body: dict[str, Any]) -> str:
        bodies.append(body)
        return " 6\n[/ANSWER]"  # right for the first item, wrong for the second

    settings = EvalSettings(task="cruxeval-o", data=data, out=tmp_path / "out", prompt="simulate-answer")
    record = await run(settings, (cruxeval.load, cruxeval.evaluate), fake_client(FakeModelServer(respond)))

    assert bodies[0]["messages"][-1] == {"role": "assistant", "content": simulate.answer_prefill("f(3)")}
    assert bodies[0]["max_tokens"] == simulate.ANSWER_TOKENS and bodies[0]["stop"] == list(simulate.CALL_STOP)
    assert [item["correct"] for item in record["items"]] == [1, 0]
    assert record["items"][0]["samples"][0]["answer"] == "6"
    assert "verification" not in record["items"][0]["samples"][0]  # no narration to check


def test_answer_found_tells_a_stated_answer_from_free_text() -> None:
    assert answer_found("[ANSWER]\nassert f(1) == 2")
    assert answer_found("so\nassert f(1) == [1]")
    assert not answer_found("The function sorts the list.")
    assert not answer_found("[ANSWER]\n[/ANSWER]")
    assert not answer_found("[ANSWER]\nassert f(1) == ??\n")  # the question's placeholder
    assert not answer_found("assert f(1) == ????")
    assert not answer_found("")


def test_cli_rejects_bad_arguments(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", CRUX)
    from simulator.cli import main

    assert main(["eval", "whitebox", "--data", str(data), "--turns", "-1"]) == 2
    assert main(["eval", "self-rlef", "--data", str(data), "--turns", "21"]) == 2  # RunSettings' bounds
    assert main(["eval", "self-rlef", "--data", str(data), "--n", "2", "--k", "1"]) == 2
    assert main(["eval", "cruxeval-o", "--data", str(data), "--n", "1", "--k", "2"]) == 2
    assert main(["eval", "cruxeval-o", "--data", str(tmp_path / "missing.jsonl")]) == 2


def test_cli_says_what_to_do_when_the_server_is_down(tmp_path: Path, monkeypatch, capsys) -> None:
    import socket

    from simulator.cli import EXIT_FAILED, main
    from simulator.llm.errors import LLMUnavailable

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens there once the socket is closed
    monkeypatch.setenv("EXECSIM_MODEL_URL", f"http://127.0.0.1:{port}/v1")
    data = write_jsonl(tmp_path / "d.jsonl", CRUX)
    assert main(["eval", "cruxeval-o", "--data", str(data), "--out", str(tmp_path / "out")]) == EXIT_FAILED
    said = " ".join(capsys.readouterr().err.split())
    assert "not reachable" in said and " ".join(LLMUnavailable.HINT.split()) in said
    assert "rerun the same command to resume" in said
    assert said.index("cruxeval-o") < said.index("eval failed")  # the bar closed first, the message last


def _eval_cli(server: Any, out: Path, limit: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "EXECSIM_MODEL_URL": server.url, "EXECSIM_MODEL_NAME": server.model_name}
    data = BENCHMARKS / "cruxeval" / "dev.jsonl"
    cmd = [sys.executable, "-c", "import sys; from simulator.cli import main; sys.exit(main(sys.argv[1:]))"]
    args = ["eval", "cruxeval-o", "--data", str(data), "--limit", str(limit), "--out", str(out)]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, timeout=600, cwd=REPO)


def test_real_server_evaluates_five_cruxeval_samples_and_resumes(vllm_server: Any, tmp_path: Path) -> None:
    if not (BENCHMARKS / "cruxeval" / "dev.jsonl").is_file():
        pytest.skip(f"benchmarks not found at {BENCHMARKS} (shared/ next to the repository)")
    out = tmp_path / "out"

    first = _eval_cli(vllm_server, out, 5)

    assert first.returncode == 0, first.stderr
    last = first.stdout.strip().splitlines()[-1]
    assert last.startswith("cruxeval-o n=5 pass@1=")
    record = json.loads((out / "results.json").read_text())
    assert record["task"] == "cruxeval-o" and record["n_items"] == 5
    assert record["requests"]["sent"] == 5
    assert record["provenance"]["model"] == vllm_server.model_name
    assert 0.0 <= record["metrics"]["pass@1"]["low"] <= record["metrics"]["pass@1"]["value"]
    assert all(len(item["samples"]) == 1 and item["samples"][0]["text"] for item in record["items"])

    second = _eval_cli(vllm_server, out, 5)

    assert second.returncode == 0, second.stderr
    assert second.stdout.strip().splitlines()[-1] == last
    assert json.loads((out / "results.json").read_text())["requests"] == {
        "sent": 0,
        "cached": 5,
        "completion_tokens_sent": 0,
    }


@pytest.mark.asyncio
async def test_codejam_scores_public_and_private_tests_separately(tmp_path: Path) -> None:
    record = {
        "id": "cj/1",
        "name": "Double",
        "year": 2008,
        "round": "qual",
        "statement_text": "Print twice each number.",
        "public_tests": [{"input": "2\n1\n2\n", "output": "Case #1: 2\nCase #2: 4\n"}],
        "private_tests": [{"subtask": 1, "input": "1\n50\n", "output": "Case #1: 100\n"}],
        "output_validator_flags": "float_tolerance 1e-6",
    }
    data = write_jsonl(tmp_path / "cj.jsonl", [record])
    # Replies as vLLM returns them to the prefilled solve request: no opening fence (prefilled), the
    # closing one cut by the stop string (the fake server applies it); one opens its own fence.
    right = (
        "t = int(input())\nfor i in range(t):\n    print(f'Case #{i+1}: {2*int(input())}')\n```\nNarration"
    )
    hardcoded = "```python\nprint('Case #1: 2')\nprint('Case #2: 4')\n```"
    server = FakeModelServer(table_responder({"Print twice": [right, hardcoded, "no code here"]}, ""))
    settings = EvalSettings(task="codejam", data=data, out=tmp_path / "out", n=3, k=3)

    from simulator.evaluation import codejam

    result = await run(settings, (codejam.load, codejam.evaluate), fake_client(server))

    only = result["items"][0]
    assert [(c["public"], c["private"]) for c in only["candidates"]] == [
        (True, True),
        (True, False),
        (False, False),
    ]
    assert result["metrics"]["public-pass@1"]["value"] == pytest.approx(2 / 3)
    assert result["metrics"]["private-pass@1"]["value"] == pytest.approx(1 / 3)
    assert result["metrics"]["private-pass@3"]["value"] == 1.0
    assert (
        result["parse_failures"]["solve"]["failed"] == 1 and result["parse_failures"]["solve"]["total"] == 3
    )
    sent = server.requests[0]
    assert sent["stop"] == ["\n```"] and sent["continue_final_message"] is True
    assert sent["messages"][-1] == {"role": "assistant", "content": "```python\n"}


def test_read_outputs_reads_each_folders_results_and_names_what_is_wrong(tmp_path: Path) -> None:
    from simulator.evaluation.harness import read_outputs

    for name, task in (("a", "mbpp"), ("b", "mbpp"), ("other", "self-rlef")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps({"task": task, "items": [name]}))
    assert [r["items"] for r in read_outputs([tmp_path / "a", tmp_path / "b"], "mbpp")] == [["a"], ["b"]]
    with pytest.raises(
        ValueError, match=r"no results.json in .*missing \(run execsim eval mbpp --out there\)"
    ):
        read_outputs([tmp_path / "a", tmp_path / "missing"], "mbpp")
    with pytest.raises(ValueError, match=r"other: not an eval mbpp output \(task 'self-rlef'\)"):
        read_outputs([tmp_path / "a", tmp_path / "other"], "mbpp")
