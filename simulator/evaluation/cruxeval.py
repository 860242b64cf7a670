"""CRUXEval-O: predict ``f(input)`` for a small Python function, scored by execution (see ``scoring``).

Four prompts: ``direct`` (answer at once, CRUXEval's [PYTHON]/[ANSWER] format, one worked example
given as an earlier chat turn), ``nlex`` (first narrate the execution step by step, then answer),
``simulate`` (the app's own simulate request with its token budget: what the served model is asked
on every public test, so the figure is the app's; a narration cut by the budget is finished as the
app finishes it, its answer asked for at once: ``app_texts``) and ``simulate-answer`` (the same
request answered at once, as the app sends it with narration off).
Each item gets ``n`` samples in one request (``n=`` in the API); pass@1 and pass@k use the unbiased
estimator.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from simulator.benchmarks import read_jsonl
from simulator.evaluation.harness import Context, TaskResult
from simulator.evaluation.metrics import estimate_pass_at_k, wilson
from simulator.evaluation.requests import Reply, RequestRejected
from simulator.evaluation.scoring import answer_found, cruxeval_passes, extract_answer
from simulator.execution import run as sandbox_run
from simulator.execution.program import Program
from simulator.nlex.verify import Verification, verify_result
from simulator.pipeline.settings import RunSettings
from simulator.prompts import simulate

SIMULATE = "simulate"  # the app's simulate request, narrated (RunSettings.narrate on, the default)
SIMULATE_ANSWER = "simulate-answer"  # the same request answered at once (narrate off)
APP_PROMPT = SIMULATE if RunSettings().narrate else SIMULATE_ANSWER  # what the app sends by default

INSTRUCTION = {
    "direct": (
        "You are given a Python function and an assertion containing an input to the function. Complete "
        "the assertion with a literal (no unsimplified expressions, no function calls) containing the "
        "output when executing the provided code on the given input, even if the function is incorrect "
        "or incomplete. Answer with the full assertion in [ANSWER] and [/ANSWER] tags."
    ),
    "nlex": (
        "You are given a Python function and an assertion containing an input to the function. Simulate "
        "the execution step by step in [THOUGHT] and [/THOUGHT] tags: for each line that runs, say what "
        "it does and the values of the variables it changes. Then answer with the full assertion, its "
        "output completed with a literal, in [ANSWER] and [/ANSWER] tags."
    ),
}
EXAMPLE_CALL = "f('hi')"
EXAMPLE_CODE = "def f(s):\n    s = s + s\n    return 'b' + s + 'a'"
EXAMPLE_ANSWER = {
    "direct": "[ANSWER]\nassert f('hi') == 'bhihia'\n[/ANSWER]",
    "nlex": (
        "[THOUGHT]\nf is called with s = 'hi'. Line 2: s = s + s, so s = 'hihi'. Line 3 returns "
        "'b' + 'hihi' + 'a' = 'bhihia'.\n[/THOUGHT]\n[ANSWER]\nassert f('hi') == 'bhihia'\n[/ANSWER]"
    ),
}
MAX_TOKENS = {
    "direct": 128,
    "nlex": 1024,
    SIMULATE: RunSettings().max_tokens,
    SIMULATE_ANSWER: simulate.ANSWER_TOKENS,
}
PROMPTS = tuple(MAX_TOKENS)


def load(path: Path) -> list[dict[str, Any]]:
    return [record for _, record in read_jsonl(path, "CRUXEval")]


def messages(code: str, call: str, prompt: str) -> list[dict[str, str]]:
    """The chat messages asking for the value of ``call`` (e.g. ``f(1)``) after running ``code``: the
    instruction, one worked example as a previous turn, then the question; for ``simulate``, the
    app's simulate request (``simulator.prompts.simulate``), and for ``simulate-answer`` the same
    with the answer begun. Reused to simulate MBPP candidates."""
    if prompt == SIMULATE:
        return simulate.call_messages(code, call)
    if prompt == SIMULATE_ANSWER:
        prefill = {"role": "assistant", "content": simulate.answer_prefill(call)}
        return [*simulate.call_messages(code, call), prefill]

    def question(source: str, expression: str) -> str:
        return f"[PYTHON]\n{source}\nassert {expression} == ??\n[/PYTHON]"

    return [
        {"role": "user", "content": f"{INSTRUCTION[prompt]}\n\n{question(EXAMPLE_CODE, EXAMPLE_CALL)}"},
        {"role": "assistant", "content": EXAMPLE_ANSWER[prompt]},
        {"role": "user", "content": question(code, call)},
    ]


def _verifier(item: dict[str, Any]) -> Callable[[str], Verification]:
    """Runs the item's program once, traced, in the sandbox; returns "verify this text against it"."""
    program = Program(code=item["code"], call=f"f({item['input']})")
    result = sandbox_run(program, trace=True)
    return lambda text: verify_result(text, result, program)


async def app_texts(
    ctx: Context, item: str, asked: list[dict[str, str]], params: dict[str, Any], reply: Reply, call: str
) -> list[tuple[str, bool]]:
    """Each sample of ``reply`` as the pipeline reads it, with whether its answer was forced: an
    answer asked for at once is read after its prefill; a ``simulate`` narration that ends before its
    answer gets the answer asked for, in a request of its own sampled as ``params`` (the narration's)
    say, as ``simulator.pipeline.job`` does (``simulate.forced_answer``)."""
    if ctx.settings.prompt == SIMULATE_ANSWER:
        return [(asked[-1]["content"] + text, False) for text in reply.texts]
    if ctx.settings.prompt != SIMULATE:
        return [(text, False) for text in reply.texts]
    answer_params = {**params, "n": 1, "max_tokens": simulate.ANSWER_TOKENS}

    async def one(index: int, text: str, reason: str | None) -> tuple[str, bool]:
        if simulate.answered(text, call):
            return text, False
        turn, shown = simulate.forced_answer(text, call, cut=reason == "length")
        answer_asked = [*asked, {"role": "assistant", "content": turn}]
        try:
            answer = await ctx.requester.chat(f"{item}/answer{index}", answer_asked, answer_params)
        except RequestRejected:  # no room left in the context: the reply stays without an answer
            return text, False
        return f"{text}{shown}{answer.texts[0]}", True

    reasons = reply.finish_reasons or [None] * len(reply.texts)
    jobs = [one(i, text, reason) for i, (text, reason) in enumerate(zip(reply.texts, reasons, strict=True))]
    return list(await asyncio.gather(*jobs))


async def evaluate(items: list[dict[str, Any]], ctx: Context) -> TaskResult:
    params = ctx.sampling(max_tokens=MAX_TOKENS[ctx.settings.prompt])
    params["stop"] = list(simulate.CALL_STOP)

    async def one(item: dict[str, Any]) -> dict[str, Any]:
        call = f"f({item['input']})"
        asked = messages(item["code"], call, ctx.settings.prompt)
        reply = await ctx.requester.chat(item["id"], asked, params)
        cut = [reason == "length" for reason in reply.finish_reasons or [None] * len(reply.texts)]
        finished = await app_texts(ctx, item["id"], asked, params, reply, call)
        samples = []
        narrated = ctx.settings.prompt in ("nlex", SIMULATE)
        checked = await asyncio.to_thread(_verifier, item) if narrated else None
        for (text, was_forced), was_cut in zip(finished, cut, strict=True):
            answer = extract_answer(text)
            passed = await asyncio.to_thread(
                cruxeval_passes, item["code"], item["input"], item["output"], answer
            )
            sample = {
                "text": text,
                "answer": answer,
                "passed": passed,
                "parsed": answer_found(text),
                "cut": was_cut,
                "forced": was_forced,
            }
            if checked is not None:  # the one verifier's label of the narration: agrees/diverges/unverified
                sample["verification"] = checked(text).label
            samples.append(sample)
        return {
            "id": item["id"],
            "gold": item["output"],
            "n": len(samples),
            "correct": sum(s["passed"] for s in samples),
            "samples": samples,
        }

    records = await ctx.map(one, items)
    counts = [(r["n"], r["correct"]) for r in records]
    metrics = {f"pass@{k}": estimate_pass_at_k(counts, k) for k in ctx.ks()}
    samples = [s for r in records for s in r["samples"]]
    unparsed = sum(not s["parsed"] for s in samples)
    metrics["cut by the token budget"] = wilson(sum(s["cut"] for s in samples), len(samples))
    if ctx.settings.prompt == SIMULATE:
        metrics["answer forced"] = wilson(sum(s["forced"] for s in samples), len(samples))
    labels = [s["verification"] for s in samples if "verification" in s]
    if labels:  # NLEX prompt: how often the narration holds up against the real run, claim by claim
        for label in ("agrees", "diverges", "unverified"):
            metrics[f"narration {label}"] = wilson(labels.count(label), len(labels))
    return TaskResult(
        metrics=metrics,
        items=records,
        histogram=[c for _, c in counts],
        parse_failures={"simulate": (unparsed, len(samples))},
    )
