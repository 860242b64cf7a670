"""whitebox: questions from real traces, answered by a scripted model server (a test double behind the
real ChatClient), scored per kind with the gated reward."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simulator.evaluation import whitebox
from simulator.evaluation.harness import EvalSettings, final_line, run
from simulator.llm.testing import FakeModelServer
from tests.simulator.evaluation.eval_doubles import fake_client, write_jsonl

SUM = {
    "id": "sum",
    "code": "def f(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total",
    "input": "[1, 2]",
    "output": "3",
}
REVERSE = {
    "id": "rev",
    "code": "def f(s):\n    out = ''\n    for c in s:\n        out = c + out\n    return out",
    "input": "'ab'",
    "output": "'ba'",
}
TOO_SMALL = {"id": "small", "code": "def f(x):\n    return x * 2", "input": "3", "output": "6"}


@pytest.mark.asyncio
async def test_whitebox_scores_path_and_state_answers_and_the_gated_reward(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "crux.jsonl", [SUM, REVERSE, TOO_SMALL])
    qset, why = whitebox.question_set(SUM, seed=0)
    assert qset is not None and why is None and qset.path and qset.state
    # the right assertion and next lines, a wrong value for every state question
    lines = [q.answers[0] if q.kind == "path" else "-5; object" for q in qset.questions]
    right_answer = "<reasoning>\nadds up\n</reasoning>\n<answer>\nassert f([1, 2]) == 3\n" + "\n".join(lines)
    right_answer += "\n</answer>"

    def respond(body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        assert "Question2:" in prompt  # the rendered white-box prompt
        return right_answer if "total = 0" in prompt else "It reverses the string."

    server = FakeModelServer(respond)
    settings = EvalSettings(task="whitebox", data=data, out=tmp_path / "out")

    record = await run(settings, (whitebox.load, whitebox.evaluate), fake_client(server))

    assert record["n_items"] == 2 and len(server.requests) == 2  # the small program is not asked
    assert record["extra"]["skipped"] == {"fails ExecVerify's filter (no loop, under 5 lines)": 1}
    other, _ = whitebox.question_set(REVERSE, seed=0)
    assert other is not None
    paths = len(qset.path)
    metrics = {name: m["value"] for name, m in record["metrics"].items()}
    assert metrics["path-acc"] == pytest.approx(paths / (paths + len(other.path)))
    assert metrics["state-acc"] == 0.0
    assert metrics["assert-acc"] == 0.5
    accuracy = paths / len(qset.questions)
    assert metrics["reward"] == pytest.approx((2 * (0.5 + 0.5 * accuracy) + 0.0) / 2)
    assert record["parse_failures"]["answer"]["failed"] == 1
    assert record["parse_failures"]["answer"]["total"] == 2
    first = next(item for item in record["items"] if item["id"] == "sum")
    assert first["samples"][0]["marks"] == [q.kind == "path" for q in qset.questions]
    assert final_line(record).startswith("whitebox n=2 path-acc=")
    assert (tmp_path / "out" / "report.md").exists()

    again = await run(settings, (whitebox.load, whitebox.evaluate), fake_client(server))

    assert len(server.requests) == 2 and again["requests"]["cached"] == 2
    assert again["metrics"] == record["metrics"]


def test_question_set_is_none_for_a_program_that_fails() -> None:
    qset, why = whitebox.question_set(
        {"id": "x", "code": "def f(x):\n    for i in x:\n        pass\n    return 1 / 0", "input": "[1]"},
        seed=0,
    )
    assert qset is None and why is not None and "did not run cleanly" in why
