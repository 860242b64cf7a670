"""Acceptance over the 200 dev CRUXEval programs: every narration checks true against its own trace,
and changing any one claimed value in it is caught at exactly that claim (a mutation test)."""

from __future__ import annotations

import ast
import json
from functools import cache
from pathlib import Path

import pytest

from simulator.execution.program import Program, call_from_input
from simulator.execution.trace import Trace
from simulator.execution.tracer import trace_in_process
from simulator.nlex.check import check_claims, check_text
from simulator.nlex.claims import extract_claims, program_names
from simulator.nlex.narrator import narrate

SHARED = Path(__file__).resolve().parents[3].parent / "shared"
CRUXEVAL = SHARED / "benchmarks" / "cruxeval" / "dev.jsonl"
pytestmark = pytest.mark.skipif(not CRUXEVAL.exists(), reason=f"benchmarks not found at {CRUXEVAL}")
VALUE_KINDS = ("value", "return", "print", "repeat", "answer")


@cache
def narrations() -> list[tuple[str, Program, Trace, str]]:
    out = []
    for raw in CRUXEVAL.read_text().splitlines():
        item = json.loads(raw)
        program = Program(code=item["code"], call=call_from_input("f", item["input"]))
        run = trace_in_process(program.code, program.call)
        out.append((item["id"], program, run.trace, narrate(run.trace, program)))
    return out


def mutate(source: str) -> str:
    """A different value of the same shape: a claim that must now be false."""
    try:
        value = ast.literal_eval(source)
    except (ValueError, SyntaxError):
        return source + "x"
    if isinstance(value, bool):
        return repr(not value)
    if isinstance(value, int | float):
        return repr(value + 1)
    if isinstance(value, str):
        return repr(value + "x")
    if isinstance(value, list | tuple):
        return repr(value + type(value)([0]))
    if isinstance(value, dict):
        return repr({**value, "mutated": 0})
    if isinstance(value, set | frozenset):
        return repr(value | {"mutated"})
    if value is None:
        return "0"
    return source + "x"


def test_every_narration_checks_true_with_a_claim_per_step() -> None:
    items = narrations()
    assert len(items) == 200
    for item_id, program, trace, text in items:
        result = check_text(text, trace, program_names(program.code))
        assert result.count("false") == 0 and result.count("unverifiable") == 0, (item_id, text)
        assert [v.claim.kind for v in result.verdicts][-1] == "answer", item_id
        assert result.verdicts[-1].verdict == "true", item_id
        narrated = [row for row in text.splitlines() if row.startswith("Line ")]
        lines_claimed = {v.claim.start for v in result.verdicts if v.claim.kind == "line"}
        assert len(lines_claimed) >= len(narrated), item_id
        assert result.count("true") == len(result.verdicts)


@pytest.mark.slow
def test_sandboxed_traces_narrate_and_check_and_answer_the_benchmark() -> None:
    """The same through the real runner (simulator.execution.run_many), against CRUXEval's outputs."""
    from simulator.execution import SandboxError, run_many

    rows = [json.loads(raw) for raw in CRUXEVAL.read_text().splitlines()]
    programs = [Program(code=r["code"], call=call_from_input("f", r["input"])) for r in rows]
    try:
        results = run_many(programs, trace=True)
    except SandboxError as exc:
        pytest.skip(f"sandbox unavailable: {exc}")
    for row, program, result in zip(rows, programs, results, strict=True):
        assert result.status == "ok" and result.trace is not None, row["id"]
        check = check_text(narrate(result.trace, program), result.trace, program_names(program.code))
        assert check.count("false") == 0 and check.count("unverifiable") == 0, row["id"]
        answer = check.verdicts[-1].claim
        assert answer.kind == "answer" and check.verdicts[-1].verdict == "true", row["id"]
        assert ast.literal_eval(answer.value or "") == ast.literal_eval(row["output"]), row["id"]


def test_changing_any_claimed_value_is_caught_at_that_claim() -> None:
    mutated = 0
    for item_id, program, trace, text in narrations():
        names = program_names(program.code)
        claims = extract_claims(text, names)
        for position, claim in enumerate(claims):
            if claim.kind not in VALUE_KINDS or claim.value_start is None or claim.value_end is None:
                continue
            original = text[claim.value_start : claim.value_end]
            if claim.kind == "answer" and claim.form == "stdout":
                changed = original + "x"
            elif claim.kind == "repeat":
                changed = str(int(original) + (1 if position % 2 else -1))
            else:
                changed = mutate(original)
            bad_text = text[: claim.value_start] + changed + text[claim.value_end :]
            bad_claims = extract_claims(bad_text, names)
            target = next((c for c in bad_claims if c.start == claim.start and c.kind == claim.kind), None)
            assert target is not None, (item_id, claim.text, changed)
            first = next((v for v in check_claims(bad_claims, trace).verdicts if v.verdict == "false"), None)
            assert first is not None, (item_id, claim.text, changed)
            assert first.claim is target, (item_id, claim.text, changed, first.claim.text)
            mutated += 1
    print(f"{mutated} mutated claims, each caught at its own claim")
    assert mutated > 1000
