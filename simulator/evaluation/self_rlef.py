"""Self-RLEF: does repairing from the model's own simulated feedback fix programs, or break them?

Each problem (MBPP call-style, its first assert public and the rest private; or Code Jam stdin, public
and private test files) goes through the real pipeline, ``simulator.pipeline.run`` with
``RunSettings(k=1, turns=T)``: solve one program, simulate it on the public tests as the app does
(narrated, greedy), then up to T repair turns (``pipeline.repair``): a program whose simulations match
every public test is submitted without asking; otherwise a new program is asked for and a fix kept
only when its simulations match more public tests. The pipeline's client is the run's
``CachingClient`` (``requests``), so a rerun resends nothing and the events are those the web page
shows.

Ground truth: the initial candidate (turn 0) and the submitted program (``run_finished.code``) both
run for real on every test with the pipeline's own judge (``pipeline.executor.program_for``,
``real_output``, ``matching.problem_matches``). A program passes a split when it passes all of its
tests. Figures, joint fractions of all problems as in the Self-RLEF paper's Table 5:
``{public,private}-{fail,pass}-{fail,pass}`` (initial -> submitted), and ``initial-``/``final-``
``public``/``private`` pass rates. A problem without code from the model counts as failing both times;
one whose prompt does not fit the context window too (``extra.prompt_too_long``). Problems without
private tests are left out of the private figures. A record that cannot become a problem (an MBPP one
with no ``assert f(args) == value``) is skipped and listed in ``extra.unconverted``; ``n`` counts the rest.
``extra`` counts the turns decided by the simulation (``repair_by_simulation``: submitted without a
request) and those asked of the model (``repair_asked``), and the fixes not kept
(``repair_not_kept``); the ``repair`` parse failures count the turns asked for that gave no new
program, ``repair_reply`` each reply that is no new program (a turn samples ``FIX_REPLIES`` replies at
a temperature above 0, and takes the best judged one), and ``repair_program`` each reply that is no
program at all (the attempt again is a program, a useless one).
``extra.fixes`` says whether the model or the judge held repair back: every fix offered (a new program
in any repair reply, taken or not) runs for real on the public tests; ``offered``, ``pass_public`` (of
them, those passing every public test) and ``failing_with_a_passing_fix`` (problems whose initial
program fails a public test and that were offered at least one fix passing them all).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from simulator.benchmarks import from_codejam, from_mbpp, read_jsonl
from simulator.evaluation.harness import Context, TaskResult, convert_items
from simulator.evaluation.metrics import Estimate, wilson
from simulator.pipeline import RunSettings
from simulator.pipeline import run as pipeline_run
from simulator.pipeline.executor import LocalExecutor, program_for, real_output
from simulator.pipeline.matching import problem_matches
from simulator.pipeline.repair import FIX_REPLIES
from simulator.problem import Problem
from simulator.prompts.parsing import REPEATED

DEFAULT_TURNS = 2
MAX_TOKENS = 512
OUTCOMES = ("fail-fail", "fail-pass", "pass-fail", "pass-pass")
STAGES = (
    "solve",
    "simulate",
    "repair",
    "repair_reply",
    "repair_program",
)  # whose parse failures a run counts
PROMPT_TOO_LONG = "prompt too long"


def load(path: Path) -> list[dict[str, Any]]:
    """MBPP (``task_id``, ``test_list``) or Code Jam (``statement_text``, ``public_tests``) records."""
    formats = {"MBPP": ("mbpp", "task_id"), "Code Jam": ("codejam", "id")}
    return [
        {"id": str(record[formats[found][1]]), "format": formats[found][0], "record": record}
        for found, record in read_jsonl(path, "MBPP", "Code Jam")
    ]


def to_problem(item: dict[str, Any]) -> Problem:
    convert = from_mbpp if item["format"] == "mbpp" else from_codejam
    return convert(item["record"])


async def judge(problem: Problem, code: str | None) -> dict[str, bool | None]:
    """Run ``code`` on every test for real: passes all public / all private tests (None: no private
    tests). No code fails both."""
    public_tests = [t for t in problem.tests if t.public]
    private_tests = [t for t in problem.tests if not t.public]
    if not code:
        return {"public": False, "private": False if private_tests else None}
    executor = LocalExecutor()

    async def passes(test: Any) -> bool:
        result = await executor.execute(program_for(problem, code, test), trace=False)
        output = real_output(problem.kind, result)
        return result.status == "ok" and problem_matches(problem, test.output, output)

    public = [await passes(t) for t in public_tests]
    private = [await passes(t) for t in private_tests]
    return {"public": all(public), "private": all(private) if private else None}


def summarize_events(events: list[dict[str, Any]]) -> dict[str, Any]:
    """What one pipeline run did, from its events (``Event.to_dict()`` payloads with ``type``):
    the initial and submitted code, turns, and the parse failures of each stage."""
    out: dict[str, Any] = {
        "initial": None,
        "final": None,
        "turns_used": 0,
        "submitted": False,
        "error": None,
        "solve": [0, 0],  # [unparsed, replies]
        "simulate": [0, 0],
        "repair": [0, 0],  # per turn asked: no new program
        "repair_reply": [0, 0],  # per reply (a turn samples several): no new program
        "repair_program": [0, 0],  # per reply: no program at all (the attempt again is one)
        "repair_repeats": 0,  # replies that are the attempted program again
        "repair_by_simulation": 0,  # turns the simulation decided (no request: submitted)
        "repair_not_kept": 0,  # fixes whose simulations matched no more public tests
        "fixes": [],  # every new program a repair reply offered, kept or not
        "prompt_too_long": 0,
    }
    for event in events:
        handler = HANDLERS.get(event["type"])
        if handler is not None:
            handler(out, event["payload"])
    return out


def _candidate_done(out: dict[str, Any], p: dict[str, Any]) -> None:
    out["solve"][1] += 1
    out["solve"][0] += p["code"] is None
    if p["candidate"] == 0:
        out["initial"] = p["code"]


def _simulation_done(out: dict[str, Any], p: dict[str, Any]) -> None:
    if (p.get("parse_error") or "").startswith(PROMPT_TOO_LONG):
        out["prompt_too_long"] += 1
        return
    out["simulate"][1] += 1
    out["simulate"][0] += p["predicted"] is None


def _repair_turn(out: dict[str, Any], p: dict[str, Any]) -> None:
    if p.get("decided_by", "model") != "model":  # nothing was asked: no reply to parse
        out["repair_by_simulation"] += 1
        return
    if (p.get("parse_error") or "").startswith(PROMPT_TOO_LONG):
        out["prompt_too_long"] += 1
        return
    out["repair"][1] += 1
    out["repair"][0] += p["code"] is None
    for reply in p.get("replies") or [{"code": p["code"], "error": p.get("parse_error")}]:
        no_code = reply["code"] is None
        repeated = reply["error"] == REPEATED
        out["repair_reply"][1] += 1
        out["repair_reply"][0] += no_code
        out["repair_program"][1] += 1
        out["repair_program"][0] += no_code and not repeated
        out["repair_repeats"] += repeated
        if reply["code"] is not None:
            out["fixes"].append(reply["code"])


def _repair_rejected(out: dict[str, Any], p: dict[str, Any]) -> None:
    out["repair_not_kept"] += 1


def _run_finished(out: dict[str, Any], p: dict[str, Any]) -> None:
    out.update(final=p["code"], turns_used=p["turns_used"], submitted=p["submitted"])


def _run_failed(out: dict[str, Any], p: dict[str, Any]) -> None:
    out["error"] = {"error": p["error"], "message": p["message"]}


# The events (docs/events.md) that change a run's summary, each with what it adds to it.
HANDLERS: dict[str, Callable[[dict[str, Any], dict[str, Any]], None]] = {
    "candidate_done": _candidate_done,
    "simulation_done": _simulation_done,
    "repair_turn": _repair_turn,
    "repair_rejected": _repair_rejected,
    "run_finished": _run_finished,
    "run_failed": _run_failed,
}


async def evaluate(items: list[dict[str, Any]], ctx: Context) -> TaskResult:
    turns = ctx.settings.turns
    temperature = ctx.settings.temperature if ctx.settings.temperature is not None else 0.0

    def settings_for(index: int) -> RunSettings:
        return RunSettings(
            k=1,
            turns=turns,
            seed=ctx.settings.seed + index,
            temperature=temperature,
            top_p=ctx.settings.top_p,
            max_tokens=MAX_TOKENS,
            concurrency=ctx.settings.concurrency,
        )

    async def one(entry: tuple[int, dict[str, Any], Problem]) -> dict[str, Any]:
        index, item, problem = entry
        settings = settings_for(index)
        client = ctx.requester.client_for(item["id"])
        events = [
            event.to_dict()
            async for event in pipeline_run(problem, settings, client, run_id=f"eval-{item['id']}")
        ]
        summary = summarize_events(events)
        error = summary["error"]
        if error is not None and error["error"] == "prompt_too_long":
            summary["prompt_too_long"] += 1
        elif error is not None and error["error"] != "no_code":
            # the server went away (or the like): end the evaluation; the cache keeps what was done
            raise RuntimeError(f"pipeline run for {item['id']} failed: {error['error']}: {error['message']}")
        initial = await judge(problem, summary["initial"])
        final_code = summary["final"] if summary["final"] is not None else summary["initial"]
        final = initial if final_code == summary["initial"] else await judge(problem, final_code)
        fixes_passing = [(await judge(problem, fix))["public"] for fix in summary["fixes"]]
        return {
            "id": item["id"],
            "initial": {"code": summary["initial"], **initial},
            "final": {"code": final_code, **final},
            "changed": final_code != summary["initial"],
            "turns_used": summary["turns_used"],
            "submitted": summary["submitted"],
            "error": error,
            "prompt_too_long": summary["prompt_too_long"],
            "parse": {stage: summary[stage] for stage in STAGES},
            "repair_repeats": summary["repair_repeats"],
            "repair_by_simulation": summary["repair_by_simulation"],
            "repair_not_kept": summary["repair_not_kept"],
            "fixes": {"offered": len(fixes_passing), "pass_public": sum(fixes_passing)},
        }

    converted, unconverted = convert_items(items, to_problem)
    records = await ctx.map(one, converted)
    metrics: dict[str, Estimate] = {}
    tables = []
    fix_break: dict[str, Any] = {}
    for split in ("public", "private"):
        scored = [r for r in records if r["initial"][split] is not None]
        counts = dict.fromkeys(OUTCOMES, 0)
        for r in scored:
            counts[f"{_word(r['initial'][split])}-{_word(r['final'][split])}"] += 1
        for outcome in OUTCOMES:
            metrics[f"{split}-{outcome}"] = wilson(counts[outcome], len(scored))
        metrics[f"initial-{split}"] = wilson(counts["pass-fail"] + counts["pass-pass"], len(scored))
        metrics[f"final-{split}"] = wilson(counts["fail-pass"] + counts["pass-pass"], len(scored))
        fix_break[split] = {"n": len(scored), "counts": counts}
        tables.append(_table(split, counts, len(scored)))
    parse_failures = {
        stage: (sum(r["parse"][stage][0] for r in records), sum(r["parse"][stage][1] for r in records))
        for stage in STAGES
    }
    fixes = {
        "offered": sum(r["fixes"]["offered"] for r in records),
        "pass_public": sum(r["fixes"]["pass_public"] for r in records),
        "failing_with_a_passing_fix": sum(
            not r["initial"]["public"] and r["fixes"]["pass_public"] > 0 for r in records
        ),
    }
    tables.append(
        {
            "title": "fixes the repair replies offered, run for real on the public tests",
            "header": ["offered", "passing them", "problems failing at first that were offered one"],
            "rows": [
                [str(fixes["offered"]), str(fixes["pass_public"]), str(fixes["failing_with_a_passing_fix"])]
            ],
        }
    )
    extra = {
        "turns": turns,
        "fixes_per_turn": FIX_REPLIES if temperature > 0 else 1,
        "fix_break": fix_break,
        "submitted": sum(r["submitted"] for r in records),
        "changed": sum(r["changed"] for r in records),
        "mean_turns_used": sum(r["turns_used"] for r in records) / len(records) if records else 0.0,
        "no_code": sum(r["initial"]["code"] is None for r in records),
        "repair_repeats": sum(r["repair_repeats"] for r in records),
        "repair_asked": parse_failures["repair"][1],
        "repair_by_simulation": sum(r["repair_by_simulation"] for r in records),
        "repair_not_kept": sum(r["repair_not_kept"] for r in records),
        "fixes": fixes,
        "prompt_too_long": sum(r["prompt_too_long"] > 0 for r in records),
        "tables": tables,
        "unconverted": unconverted,
    }
    return TaskResult(
        metrics=metrics,
        items=records,
        histogram=[r["turns_used"] for r in records],
        extra={**extra, "histogram_label": "repair turns used per problem"},
        parse_failures=parse_failures,
        n_items=len(records),
    )


def _word(passed: bool) -> str:
    return "pass" if passed else "fail"


def _table(split: str, counts: dict[str, int], n: int) -> dict[str, Any]:
    """Table 5's layout: joint percentages of all problems, initial -> submitted."""
    cells = [f"{100 * counts[o] / n:.1f}% ({counts[o]})" if n else "n/a" for o in OUTCOMES]
    return {
        "title": f"{split} tests, initial -> submitted (n={n}, % of all problems)",
        "header": ["tests", "fail->fail", "fail->pass", "pass->fail", "pass->pass"],
        "rows": [[split, *cells]],
    }
