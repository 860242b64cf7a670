"""White-box: can the model answer ExecVerify's questions about a program it does not run?

Each CRUXEval program is traced for real (``simulator.execution.run(..., trace=True)`` on
``f(<input>)``); ``simulator.questions.select_questions`` draws up to 5 path (which line runs next)
and 5 state (value and type of a variable) questions from that trace with ``random.Random(seed)``,
and ``render_prompt`` asks them, after Question1 (fill the assertion). The model answers (``n``
samples, greedy for ``--n 1``). Scoring is the project's own: ``parse_answer_block`` and
``score_answers`` (per question), and ``rewards.WhiteBoxReward`` (the gated reward in [0, 2]: 0 unless
the filled assertion holds).

Figures: ``path-acc`` and ``state-acc`` (right answers / questions asked of that kind, pooled over
items, cluster-bootstrap interval), ``assert-acc`` (samples whose assertion holds) and ``reward``
(mean gated reward, in [0, 2]). Programs that fail ExecVerify's filter (no loop and under 5 lines),
that do not run, or that yield no question are skipped (``extra.skipped``); ``n`` counts the items
asked. An answer without an ``<answer>`` block is a parse failure (stage ``answer``); one whose lines
do not line up with the questions scores 0 on every question (``extra.line_count_mismatch``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from simulator.benchmarks import read_jsonl
from simulator.evaluation.harness import Context, TaskResult
from simulator.evaluation.metrics import Estimate, bootstrap, ratio_bootstrap, wilson
from simulator.execution import run as sandbox_run
from simulator.execution.program import Program
from simulator.prompts.parsing import parse_answer_block
from simulator.questions import (
    QuestionSet,
    render_prompt,
    score_answers,
    select_questions,
)
from simulator.rewards import WhiteBoxReward

MAX_TOKENS = 1024
ENTRY = "f"


def load(path: Path) -> list[dict[str, Any]]:
    return [record for _, record in read_jsonl(path, "CRUXEval")]


def question_set(item: dict[str, Any], seed: int) -> tuple[QuestionSet | None, str | None]:
    """The questions about one item from its real trace, or (None, why not)."""
    result = sandbox_run(Program(code=item["code"], call=f"{ENTRY}({item['input']})"), trace=True)
    if result.status != "ok" or result.trace is None:
        return None, f"the program did not run cleanly ({result.status})"
    qset = select_questions(item["code"], ENTRY, item["input"], result.trace, seed=seed)
    if qset is None:
        return None, "fails ExecVerify's filter (no loop, under 5 lines)"
    if not qset.questions:
        return None, "no question to ask"
    return qset, None


def score_sample(qset: QuestionSet, item: dict[str, Any], text: str) -> dict[str, Any]:
    """One answer: parsed?, per-question marks, right answers per kind, gated reward."""
    block = parse_answer_block(text)
    score = score_answers(qset, block)
    reward = WhiteBoxReward()(
        [text],
        code=[item["code"]],
        entry_point=[ENTRY],
        input=[item["input"]],
        output=[item["output"]],
        questions=[qset],
    )[0]
    right = {"path": 0, "state": 0}
    for question, mark in zip(qset.questions, score.per_question, strict=True):
        right[question.kind] += mark
    return {
        "text": text,
        "parsed": block.ok,
        "line_count_ok": score.line_count_ok,
        "marks": list(score.per_question),
        "right": right,
        "reward": reward or 0.0,
        "assertion_holds": bool(reward),
    }


async def evaluate(items: list[dict[str, Any]], ctx: Context) -> TaskResult:
    params = ctx.sampling(max_tokens=MAX_TOKENS)

    async def one(item: dict[str, Any]) -> dict[str, Any]:
        qset, why = await asyncio.to_thread(question_set, item, ctx.settings.seed)
        if qset is None:
            return {"id": item["id"], "skipped": why}
        messages = [{"role": "user", "content": render_prompt(qset)}]
        reply = await ctx.requester.chat(item["id"], messages, params)
        samples = [await asyncio.to_thread(score_sample, qset, item, text) for text in reply.texts]
        return {
            "id": item["id"],
            "skipped": None,
            "questions": [
                {
                    "kind": q.kind,
                    "line": q.line,
                    "occurrence": q.occurrence,
                    "variable": q.variable,
                    "answers": list(q.answers),
                }
                for q in qset.questions
            ],
            "asked": {"path": len(qset.path), "state": len(qset.state)},
            "samples": samples,
        }

    records = await ctx.map(one, items)
    asked = [r for r in records if r["skipped"] is None]
    metrics: dict[str, Estimate] = {}
    for kind in ("path", "state"):
        metrics[f"{kind}-acc"] = ratio_bootstrap(
            [
                (sum(s["right"][kind] for s in r["samples"]), r["asked"][kind] * len(r["samples"]))
                for r in asked
            ]
        )
    holds = [[s["assertion_holds"] for s in r["samples"]] for r in asked]
    if all(len(h) == 1 for h in holds):
        metrics["assert-acc"] = wilson(sum(h[0] for h in holds), len(holds))
    else:
        metrics["assert-acc"] = bootstrap([sum(h) / len(h) for h in holds if h])
    metrics["reward"] = bootstrap(
        [sum(s["reward"] for s in r["samples"]) / len(r["samples"]) for r in asked if r["samples"]]
    )
    samples = [s for r in asked for s in r["samples"]]
    skipped: dict[str, int] = {}
    for r in records:
        if r["skipped"] is not None:
            skipped[r["skipped"]] = skipped.get(r["skipped"], 0) + 1
    return TaskResult(
        metrics=metrics,
        items=records,
        histogram=[sum(sum(s["marks"]) for s in r["samples"]) for r in asked],
        extra={
            "skipped": skipped,
            "questions": {kind: sum(r["asked"][kind] for r in asked) for kind in ("path", "state")},
            "line_count_mismatch": sum(s["parsed"] and not s["line_count_ok"] for s in samples),
            "histogram_label": "right answers per item (all samples)",
        },
        parse_failures={"answer": (sum(not s["parsed"] for s in samples), len(samples))},
        n_items=len(asked),
    )
