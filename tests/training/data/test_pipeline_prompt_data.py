"""Repair and solve examples: mutants that really fail, answers the pipeline parses, prompts that are the
pipeline's own requests byte for byte, and no benchmark program anywhere (real sandbox throughout)."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter

import pytest

from simulator.execution import run_many
from simulator.execution.program import Program
from simulator.llm.client import ChatClient
from simulator.llm.testing import FakeModelServer
from simulator.pipeline import RunSettings, run
from simulator.prompts import kind_of, solve
from training.data.mix import MixError, mix, parse_mix
from training.data.mutations import KINDS, mutants, sample
from training.data.problems import passing, synth_problem
from training.data.repair import repair_examples
from training.data.solve import solve_examples
from training.synth.records import IOPair, SynthRecord

CODE = (
    "def f(nums, k):\n    total = 0\n    for v in nums:\n        if v % 2 == 0 and v > k:\n"
    "            total += v * 2\n    return min(total, 100)"
)
OTHER = (
    "def f(s):\n    out = []\n    for c in s:\n        if c not in out:\n"
    "            out.append(c.upper())\n    return out"
)


def records() -> list[SynthRecord]:
    first = SynthRecord(
        "p1",
        "rules",
        3,
        {},
        CODE,
        io=[
            IOPair("[1, 2, 4, 8], 1", "original", "28", "int"),
            IOPair("[6, 3, 10], 5", "value", "32", "int"),
            IOPair("[40, 60], 0", "value", "100", "int"),
        ],
    )
    second = SynthRecord(
        "p2", "rules", 3, {}, OTHER, io=[IOPair("'abca'", "original", "['A', 'B', 'C', 'A']", "list")]
    )
    return [first, second]


def sandbox_value(code: str, call: str) -> tuple[str, str | None]:
    (result,) = run_many([Program(code=code, call=call)])
    return result.status, result.value


def test_mutants_change_one_place_and_every_kind_occurs():
    found = mutants(CODE)
    assert {m.kind for m in found} == set(KINDS)
    for mutant in found:
        changed = [
            i
            for i, (a, b) in enumerate(zip(CODE.split("\n"), mutant.code.split("\n"), strict=True))
            if a != b
        ]
        assert changed == [mutant.line - 1], mutant
    assert sample(CODE, random.Random(3), 4) == sample(CODE, random.Random(3), 4)  # seeded
    # a kind first, then a site: each kind about 1/6 of the draws though most sites are variable reads
    assert sum(m.kind == "variable" for m in found) > len(found) / 2
    drawn = Counter(sample(CODE, random.Random(seed), 1)[0].kind for seed in range(600))
    assert set(drawn) == set(KINDS) and min(drawn.values()) >= 60


def test_the_synth_problem_is_shaped_like_an_mbpp_problem():
    problem = synth_problem(records()[0])
    assert problem is not None and problem.kind == "call" and problem.entry_point == "f"
    assert [t.public for t in problem.tests] == [True, False, False]
    assert "`f(nums, k)` that takes a list and an int" in problem.statement
    assert "assert f([1, 2, 4, 8], 1) == 28" in problem.statement


def test_fix_examples_fail_in_the_sandbox_and_their_answers_pass():
    checked, counts = passing(records())
    assert len(checked) == 2 and counts == {"no_problem": 0, "original_fails": 0}
    examples, stats = repair_examples(checked, seed=0, mutants_per_program=3)
    assert examples and {e["style"] for e in examples} == {"fix"} and stats["fix"] == len(examples)
    assert examples == repair_examples(checked, seed=0, mutants_per_program=3)[0]  # seeded
    by_id = {c.record.id: c for c in checked}
    for example in examples:
        problem = by_id[example["program_id"]].problem
        public = problem.public_tests[0]
        status, value = sandbox_value(example["attempt"], f"f({public.input})")
        assert status != "ok" or value != public.output  # the attempt really fails its public test
        assert example["attempt"].strip() not in example["prompt"]  # told what went wrong, not shown it
        reply = example["completion"].removeprefix(solve.PREFILL).removesuffix(solve.STOP[0])
        code = solve.parse(reply).code  # the answer, read as the pipeline reads it, passes every test
        assert code is not None and code.strip() == example["fixed"].strip()
        for test in problem.tests:
            assert sandbox_value(code, f"f({test.input})") == ("ok", test.output)


def test_solve_examples_answer_with_the_program_in_the_prefilled_block():
    checked, _ = passing(records())
    examples = solve_examples(checked)
    assert [e["program_id"] for e in examples] == ["p1", "p2"]
    example = examples[0]
    assert example["completion"].startswith(solve.PREFILL) and example["completion"].endswith(solve.STOP[0])
    reply = example["completion"][len(solve.PREFILL) : -len(solve.STOP[0])]  # what the server returns
    assert solve.parse(reply).code == CODE + "\n"


# The served model's own solutions, over real HTTP (FakeModelServer, a test double of vLLM): for p1 one
# wrong reply then a right one written differently from the synthesised program; for p2 only wrong ones.
OWN_P1 = "def f(nums, k):\n    return min(sum(2 * v for v in nums if v % 2 == 0 and v > k), 100)"


def _own_replies(body: dict) -> list[str]:
    user = body["messages"][-2]["content"]
    wrong = "def f(*args):\n    return None"
    return [wrong, OWN_P1] if "f(nums, k)" in user else [wrong, "Line 1: x = 3"]


def test_own_solve_examples_keep_the_first_reply_that_passes_every_test():
    from training.data.solve import own_solve_examples
    from training.synth.sampler import ServedModel

    checked, _ = passing(records())
    server = FakeModelServer(_own_replies)
    with server.serve() as url:
        examples, counts = own_solve_examples(checked, ServedModel(url, server.model), samples=2)
    assert [e["program_id"] for e in examples] == ["p1"]  # p2: no reply passes, no example
    reply = examples[0]["completion"][len(solve.PREFILL) : -len(solve.STOP[0])]
    assert solve.parse(reply).code.strip() == OWN_P1  # the model's program, not the synthesised one
    assert examples[0]["messages"] == solve.messages(checked[0].problem)
    assert examples[0]["source"].startswith("own solution: fake-model")
    assert counts | {"model": None} == {
        "model": None,
        "problems": 2,
        "samples": 2,
        "replies": 4,
        "with_code": 3,
        "passing": 1,
        "answered": 1,
    }
    for body in server.requests:  # the pipeline's own request: prefilled fence, stop at the closing one
        assert body["stop"] == list(solve.STOP) and body["continue_final_message"] is True
        assert body["repetition_detection"] == solve.LOOP_STOP  # and at a loop
        assert body["top_p"] == RunSettings.top_p  # sampled as the app samples


# Own replies to guided fix requests (FakeModelServer again): junk, a program that raises, one that
# answers 0 to every test, a wrong one (twice), a right one (and the test adds the attempt again); for
# p1 the right one is OWN_P1, for p2 every program is wrong (and p2 has one test, so answering one
# value is not degenerate there).
WRONG = "def f(*args):\n    return len(args[0])"
CONSTANT = "def f(*args):\n    return 0"


def _fix_replies(body: dict) -> list[str]:
    user = body["messages"][-2]["content"]
    right = OWN_P1 if "f(nums, k)" in user else "def f(s):\n    return list(s)"
    return ["[not sim] x", "def f(*args):\n    return 1 / 0", CONSTANT, WRONG, WRONG + "\n", right]


def test_own_fix_examples_keep_runnable_distinct_replies_passing_first():
    from training.data.repair import own_fix_examples
    from training.synth.sampler import ServedModel

    checked, _ = passing(records())
    guided, _ = repair_examples(checked, seed=1)
    attempt_of = {e["prompt"]: e["attempt"] for e in guided}  # the mutant each request was made from

    def replies(body: dict) -> list[str]:  # first, the attempt again: the wrong answers it names
        return [attempt_of[body["messages"][-2]["content"]], *_fix_replies(body)]

    server = FakeModelServer(replies)
    with server.serve() as url:
        examples, counts = own_fix_examples(guided, checked, ServedModel(url, server.model), samples=7)
    by_program: dict[str, list[str]] = {}
    for example in examples:
        assert example["completion"].startswith(solve.PREFILL) and example["completion"].endswith(
            solve.STOP[0]
        )
        reply = example["completion"][len(solve.PREFILL) : -len(solve.STOP[0])]
        assert solve.parse(reply).code.strip() == example["fixed"].strip()
        by_program.setdefault(example["program_id"], []).append(example["fixed"].strip())
    # p1: the passing reply first, then the wrong one once; the constant, raising one and junk never
    assert by_program["p1"] == [OWN_P1, WRONG]
    assert by_program["p2"] == [CONSTANT, WRONG]  # all wrong: the first two distinct, in reply order
    assert [e["source"].endswith("passes every test") for e in examples] == [True, False, False, False]
    assert counts | {"model": None} == {
        "model": None, "requests": 2, "samples": 7, "replies": 14, "with_code": 12, "runs": 10,
        "constant": 1, "attempt_again": 2, "passing": 1, "kept": 4, "passing_only": False,
    }  # fmt: skip
    assert sorted(b["messages"][-2]["content"] for b in server.requests) == sorted(
        e["prompt"] for e in guided
    )
    for body in server.requests:  # the pipeline's guided request, as it sends it
        assert body["stop"] == list(solve.STOP) and body["repetition_detection"] == solve.LOOP_STOP
    with FakeModelServer(replies).serve() as url:  # rejection sampling proper: the passing fix alone
        examples, counts = own_fix_examples(
            guided, checked, ServedModel(url, server.model), samples=7, passing_only=True
        )
    assert [(e["program_id"], e["fixed"].strip()) for e in examples] == [("p1", OWN_P1)]
    assert counts["passing"] == counts["kept"] == 1 and counts["runs"] == 10


def test_train_data_solve_url_writes_own_solutions_and_says_so(tmp_path, capsys):
    from simulator.cli import EXIT_FAILED, main
    from training.synth.pipeline import SynthConfig, synthesize, write

    kept, card = synthesize(SynthConfig(programs=24, seed=5))
    write(tmp_path / "synth", kept, card)
    argv = ["train", "data", "--programs", str(tmp_path / "synth" / "programs.jsonl"), "--kinds", "solve"]
    argv += ["--solve-samples", "1", "--solve-limit", "3", "--solve-model", "fake-model"]

    def echo_the_test(body: dict) -> str:  # answers each problem with a function returning its assert
        user = body["messages"][-2]["content"]
        value = user.split("Your code should pass this test:\n", 1)[1].split("\n", 1)[0].split(" == ", 1)[1]
        return f"def f(*args):\n    return {value}"

    server = FakeModelServer(echo_the_test)
    with server.serve() as url:
        assert main([*argv, "--out", str(tmp_path / "data"), "--solve-url", url]) == 0
    data_card = json.loads((tmp_path / "data" / "data-card.json").read_text())
    assert data_card["solve"]["problems"] == 3 and len(server.requests) == 3
    assert "own replies" in data_card["kinds"]["solve"]["source"]
    assert "Solve (own solutions)" in (tmp_path / "data" / "data-card.md").read_text()
    rows = [json.loads(line) for line in (tmp_path / "data" / "sft.jsonl").read_text().splitlines()]
    assert len(rows) == data_card["solve"]["answered"]
    assert all(r["completion"].startswith(solve.PREFILL + "def f(*args):") for r in rows)

    capsys.readouterr()
    down = "http://127.0.0.1:9/v1"  # nothing listens there
    assert main([*argv, "--out", str(tmp_path / "down"), "--solve-url", down]) == EXIT_FAILED
    err = capsys.readouterr().err
    assert "execsim train data:" in err and "127.0.0.1:9" in err
    assert not (tmp_path / "down" / "sft.jsonl").exists()


def test_train_data_fix_url_answers_guided_fixes_with_own_replies_and_says_so(tmp_path):
    from simulator.cli import EXIT_USAGE, main
    from training.synth.pipeline import SynthConfig, synthesize, write

    kept, card = synthesize(SynthConfig(programs=24, seed=5))
    write(tmp_path / "synth", kept, card)
    argv = [
        "train",
        "data",
        "--programs",
        str(tmp_path / "synth" / "programs.jsonl"),
        "--fix-model",
        "fake-model",
    ]
    server = FakeModelServer(lambda body: "def f(*args):\n    return repr(args)")  # runs, and is wrong
    with server.serve() as url:
        assert (
            main([*argv, "--kinds", "simulate", "--out", str(tmp_path / "x"), "--fix-url", url]) == EXIT_USAGE
        )
        assert main([*argv, "--kinds", "repair", "--out", str(tmp_path / "data"), "--fix-url", url]) == 0
    data_card = json.loads((tmp_path / "data" / "data-card.json").read_text())
    own = data_card["repair"]["own_fixes"]
    assert own["requests"] == len(server.requests) > 0 and own["kept"] == own["requests"]  # one program each
    assert "own replies" in data_card["kinds"]["repair"]["source"]
    rows = [json.loads(line) for line in (tmp_path / "data" / "sft.jsonl").read_text().splitlines()]
    assert len(rows) == own["kept"]
    assert all(
        r["completion"] == solve.PREFILL + "def f(*args):\n    return repr(args)" + solve.STOP[0]
        for r in rows
    )


def _pipeline_requests(problem, solve_reply: str, **settings) -> list[dict]:
    """Every request body the real pipeline sends for ``problem`` (a fake model answers; the programs
    run in the real sandbox)."""

    def responder(body):
        kind = kind_of(body["messages"])
        if kind in ("solve", "repair"):  # a guided repair reply is a program, as a solve reply is
            return solve_reply + solve.STOP[0]
        return "[THOUGHT] t [/THOUGHT] [ANSWER] assert f(1) == 0 [/ANSWER]"

    server = FakeModelServer(responder)

    async def go() -> None:
        client = ChatClient("http://fake/v1", server.model, transport=server.transport(), retries=0)
        async with client:
            async for _ in run(problem, RunSettings(k=1, seed=0, **settings), client, run_id="t"):
                pass

    asyncio.run(go())
    return server.requests


def test_every_prompt_is_the_request_the_pipeline_sends():
    from training.data.examples import sft_examples

    checked, _ = passing(records())
    item = checked[0]
    examples, _ = repair_examples(checked, seed=0)
    fix = next(e for e in examples if e["program_id"] == "p1")
    # oracle mode: the real output in the feedback, as the examples are made
    requests = _pipeline_requests(item.problem, fix["attempt"], turns=1, oracle=True)
    by_kind = {kind_of(r["messages"]): r["messages"] for r in requests}
    assert by_kind["solve"] == solve_examples([item])[0]["messages"]
    asked = by_kind["repair"]  # the guided repair request, byte for byte
    assert asked == fix["messages"] and asked[-1] == {"role": "assistant", "content": solve.PREFILL}
    assert fix["prompt"] == asked[-2]["content"]
    reply = fix["completion"].removeprefix(solve.PREFILL).removesuffix(solve.STOP[0])
    assert solve.parse(reply).code.strip() == item.record.code.strip()  # the original program
    # the narrated simulation of the public test (training teaches the narration; by default the app
    # sends the same request with the answer prefilled after an empty thought)
    requests = _pipeline_requests(item.problem, item.record.code, turns=0, narrate=True)
    simulate = next(r["messages"] for r in requests if kind_of(r["messages"]) == "simulate_call")
    example = sft_examples([item.record], styles=("call",))[0]  # the public test is the first input
    assert example["messages"] == simulate


def test_the_mix_keeps_shares_and_styles_and_is_seeded():
    by_kind = {
        "simulate": [{"kind": "simulate", "style": s, "i": i} for i, s in enumerate(["call", "stdin"] * 50)],
        "repair": [{"kind": "repair", "style": "fix", "i": i} for i in range(20)],
    }
    shares = parse_mix("simulate=3,repair=1", ("simulate", "repair"))
    mixed = mix(by_kind, shares, seed=1)
    kinds = [e["kind"] for e in mixed]
    assert kinds.count("repair") == 20 and kinds.count("simulate") == 60
    assert sum(e["style"] == "call" for e in mixed) == 30
    assert mixed == mix(by_kind, shares, seed=1) and mixed != mix(by_kind, shares, seed=2)
    everything = mix(by_kind, None, seed=1)  # no shares: every example, shuffled across the kinds
    assert sorted(map(str, everything)) == sorted(map(str, by_kind["simulate"] + by_kind["repair"]))
    assert mix({"simulate": by_kind["simulate"]}, None) == by_kind["simulate"]  # one kind: order kept
    with pytest.raises(MixError):
        parse_mix("simulate=1", ("simulate", "repair"))
    with pytest.raises(MixError, match="no such example"):
        mix({"simulate": by_kind["simulate"], "repair": []}, shares)


def test_train_data_writes_every_kind_counts_them_and_uses_no_benchmark_program(tmp_path):
    from simulator.cli import main
    from training.paths import benchmarks_dir
    from training.synth.normalize import benchmark_fingerprints, fingerprint
    from training.synth.pipeline import SynthConfig, synthesize, write

    bench = benchmarks_dir()
    if bench is None:
        pytest.skip("no benchmark folder (../shared/benchmarks)")
    index = benchmark_fingerprints(bench)
    kept, card = synthesize(SynthConfig(programs=24, seed=5), benchmark_index=index)
    write(tmp_path / "synth", kept, card)
    out = tmp_path / "data"
    argv = ["train", "data", "--programs", str(tmp_path / "synth" / "programs.jsonl"), "--out", str(out)]
    assert main([*argv, "--styles", "call", "--kinds", "simulate,repair,solve"]) == 0
    rows = [json.loads(line) for line in (out / "sft.jsonl").read_text().splitlines()]
    data_card = json.loads((out / "data-card.json").read_text())
    for kind in ("simulate", "repair", "solve"):
        assert data_card["kinds"][kind]["written"] == sum(r["kind"] == kind for r in rows) > 0
        assert data_card["kinds"][kind]["source"]
    card_md = (out / "data-card.md").read_text()
    assert "| repair |" in card_md and "full NLEX style" in card_md
    benchmark_codes = set()
    for path in sorted(bench.glob("*/*.jsonl")):
        for line in path.read_text().splitlines():
            code = json.loads(line).get("code")
            if isinstance(code, str):
                benchmark_codes.add(code.strip())
    for row in rows:
        programs = [row.get("attempt"), row.get("fixed")]
        if row["kind"] == "solve":
            programs.append(row["completion"][len(solve.PREFILL) : -len(solve.STOP[0])])
        if row["kind"] == "simulate":
            programs.append(row["prompt"].split("[PYTHON]\n", 1)[1].rsplit("\nassert ", 1)[0])
        for code in filter(None, programs):
            assert code.strip() not in benchmark_codes
            assert fingerprint(code, abstract_constants=True) not in index


def test_chat_rows_train_on_what_the_model_writes_after_the_prefill(tiny_model_dir):
    from transformers import AutoTokenizer

    from training.sft.train import to_dataset_rows

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    checked, _ = passing(records()[:1])
    (example,) = solve_examples(checked)
    (row,) = to_dataset_rows([example], "chat", tokenizer)
    prefill = example["messages"][-1]["content"]
    completion = example["completion"].strip()
    assert completion.startswith(prefill)
    whole = [*example["messages"][:-1], {"role": "assistant", "content": completion}]
    assert tokenizer.decode(row["input_ids"]) == tokenizer.apply_chat_template(whole, tokenize=False)
    start = row["completion_mask"].index(1)
    assert set(row["completion_mask"][start:]) == {1}
    asked = tokenizer.decode(row["input_ids"][:start])
    assert asked.rstrip().endswith(prefill.strip())  # the prefill is the request's: no loss on it
    assert tokenizer.decode(row["input_ids"][start:]).strip() == completion[len(prefill) :].strip()


def test_chat_rows_without_a_prefill_train_on_the_whole_turn(tiny_model_dir):
    from transformers import AutoTokenizer

    from training.sft.train import to_dataset_rows

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    messages = [{"role": "user", "content": "What is 2 + 2?"}]
    (row,) = to_dataset_rows([{"messages": messages, "completion": " 4, so: four."}], "chat", tokenizer)
    start = row["completion_mask"].index(1)
    assert tokenizer.decode(row["input_ids"][start:]).strip() == "4, so: four."
