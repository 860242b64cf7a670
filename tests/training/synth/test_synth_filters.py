"""The synthesis filters reject what they should, and decontamination catches a benchmark program."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from simulator.execution.result import ExecutionResult
from training.synth import filters
from training.synth.constraints import Constraint
from training.synth.llm_source import from_model
from training.synth.normalize import benchmark_fingerprints, fingerprint
from training.synth.pipeline import SynthConfig, synthesize
from training.synth.records import IOPair, SynthRecord

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "benchmarks"


def record(code: str, *inputs: str, id: str = "r", level: int = 1) -> SynthRecord:
    constraint = Constraint(level, "str", "upper").to_dict()
    return SynthRecord(id, "rules", level, constraint, code, io=[IOPair(x, "original") for x in inputs])


@pytest.fixture(scope="module")
def benchmark_index():
    if not SHARED.is_dir():
        pytest.skip(f"benchmarks not found at {SHARED} (CI keeps a copy of shared/ next to the repo)")
    return benchmark_fingerprints(SHARED)


def test_decontamination_catches_a_renamed_reformatted_benchmark_program(benchmark_index):
    first = json.loads((SHARED / "cruxeval" / "dev.jsonl").read_text().splitlines()[0])
    original = first["code"]
    # the same program with other names, other constants and other formatting
    disguised = original.replace("def f(", "def solve(")
    for old, new in (("nums", "values"), ("text", "s2"), ("array", "arr9")):
        disguised = disguised.replace(old, new)
    assert fingerprint(disguised, abstract_constants=True) == fingerprint(original, abstract_constants=True)
    rejected = Counter()
    fresh = "def f(s):\n    return s.upper().lower().upper().count('zz')"
    kept = filters.decontaminate(
        [record(disguised, "1", id="bench"), record(fresh, "'a'", id="new")], benchmark_index, rejected
    )
    assert [r.id for r in kept] == ["new"]
    assert rejected == {"contaminated": 1}


def test_decontamination_covers_mbpp_reference_solutions(benchmark_index):
    first = json.loads((SHARED / "mbpp" / "sanitized-dev.jsonl").read_text().splitlines()[0])
    rejected = Counter()
    assert filters.decontaminate([record(first["code"], "1")], benchmark_index, rejected) == []


def test_deduplication_ignores_names_but_not_literals():
    a = "def f(s):\n    return s.upper().strip('x')"
    b = "def f(text):\n    return text.upper().strip('x')"  # same program, other names
    c = "def f(s):\n    return s.upper().strip('y')"  # another literal: another program
    rejected = Counter()
    kept = filters.deduplicate(
        [record(a, "'a'", id="a"), record(b, "'a'", id="b"), record(c, "'a'", id="c")], rejected
    )
    assert [r.id for r in kept] == ["a", "c"]
    assert rejected == {"duplicate": 1}


def test_execution_drops_failing_inputs_and_programs_that_never_run(executor_double):
    rejected = Counter()
    ok = record("def f(x):\n    return sorted(x)[::-1]", "[3, 1, 2]", "5", id="ok")  # 5: TypeError
    slow = record("def f(x):\n    while True:\n        x += 1", "1", id="slow")
    broken = record("def f(x):\n    return x.nope()", "1", id="broken")
    kept = filters.execute([ok, slow, broken], rejected, executor_double, timeout_s=0.2)
    assert [r.id for r in kept] == ["ok"]
    assert [(p.input, p.output, p.output_type) for p in kept[0].io] == [("[3, 1, 2]", "[3, 2, 1]", "list")]
    assert rejected == {"input_runtime_error": 2, "input_timeout": 1, "timeout": 1, "error": 1}


def test_nondeterministic_programs_are_rejected():
    calls = Counter()

    def flaky_executor_double(programs):
        calls["n"] += 1
        return [
            ExecutionResult(status="ok", value=str(calls["n"]) if "flaky" in p.code else "1")
            for p in programs
        ]

    rejected = Counter()
    records = [
        record("def f(x):\n    return 1  # flaky", "1", id="flaky"),
        record("def f(x):\n    return 1", "1", id="stable"),
    ]
    records = filters.execute(records, rejected, flaky_executor_double)
    kept = filters.deterministic(records, rejected, flaky_executor_double)
    assert [r.id for r in kept] == ["stable"]
    assert rejected == {"nondeterministic": 1}


def test_trivial_programs_are_rejected():
    def with_outputs(id, *outputs):
        r = record("def f(x):\n    return x", *["1"] * len(outputs), id=id)
        r.io = [IOPair(str(i), "original", o, "x") for i, o in enumerate(outputs)]
        return r

    rejected = Counter()
    kept = filters.nontrivial(
        [
            with_outputs("constant", "'abc'", "'abc'"),
            with_outputs("empty", "[]", "''"),
            with_outputs("long", "'" + "a" * 400 + "'"),
            with_outputs("capped", "<str of length 504624>", "'ab'"),  # the sandbox's cap for huge values
            with_outputs("fine", "'abc'", "'ab'"),
        ],
        rejected,
    )
    assert [r.id for r in kept] == ["fine"]
    assert rejected == {"trivial_constant": 1, "trivial_empty": 1, "too_long": 1, "not_literal": 1}


def test_the_difficulty_filter_keeps_what_the_reference_model_gets_right_at_most_3_in_10(sampler_double):
    def with_gold(id, gold):
        r = record(f"def f(x):\n    return {gold}", "1", id=id)
        r.io[0].output = gold
        return r

    right = {"easy": 4, "edge": 3, "hard": 0}  # right answers out of 10 per program

    def reply(prompt, i):
        gold = next(g for g in ("'easy'", "'edge'", "'hard'") if f"return {g}" in prompt)
        return (
            f"[ANSWER] assert f(1) == {gold if i < right[gold.strip(chr(39))] else repr('wrong')} [/ANSWER]"
        )

    sampler = sampler_double(reply)
    rejected = Counter()
    records = [with_gold(k, repr(k)) for k in right]
    kept = filters.difficulty(records, rejected, sampler, samples=10, max_pass=3)
    assert [r.id for r in kept] == ["edge", "hard"]
    assert [r.pass_count for r in records] == [4, 3, 0]
    assert rejected == {"too_easy": 1}
    assert "assert f(1) == ??" in sampler.prompts[0]


def test_a_pass_needs_the_gold_in_the_answer_not_anywhere():
    assert filters.passes("[ANSWER] assert f([1, 2]) == 3 [/ANSWER]", "3")
    assert not filters.passes("[ANSWER] assert f([1, 2]) == 3 [/ANSWER]", "1")  # 1 only in the call
    assert filters.passes("[ANSWER] assert f('a') == ['A','B'] [/ANSWER]", "['A', 'B']")  # equal literal


def test_synthesis_from_a_model_goes_through_the_same_filters(sampler_double, executor_double):
    replies = [
        "```python\ndef f(s):\n    return s.upper().lower().count('a')\n\nprint(f('banana'))\n```",
        "no code at all",
        # level 1 forbids a for statement
        "```python\ndef f(s):\n    for c in s:\n        pass\n    return 1\n\nprint(f('x'))\n```",
    ]
    sampler = sampler_double(lambda prompt, i: replies.pop(0))
    constraints = [Constraint(1, "str", "count")] * 3
    records, broken = from_model(constraints, sampler)
    rejected = Counter()
    kept = filters.execute(filters.constraint(records, rejected), rejected, executor_double)
    assert [(r.source, r.io[0].input, r.io[0].output) for r in kept] == [("model", "'banana'", "3")]
    assert broken == 1 and rejected == {"constraint": 1}
    assert "`count` method of the `str` type" in sampler.prompts[0]


def test_the_pipeline_counts_every_filter_in_its_card(sampler_double, executor_double):
    sampler = sampler_double(lambda prompt, i: "not a program")
    config = SynthConfig(programs=30, model_programs=2, seed=5)
    kept, card = synthesize(config, executor=executor_double, generator_model=sampler, benchmark_index={})
    assert sum(card.generated_per_level.values()) == 30  # model replies broke the rules: none generated
    assert sum(card.kept_per_level.values()) == len(kept) > 0
    assert card.rejected["model_reply_broke_rules"] == 2
    assert card.sources["model"] == "scripted-sampler-double"
    assert "| filter (reason) | rejected |" in card.to_markdown()
    assert all(p.output is not None for r in kept for p in r.io)
