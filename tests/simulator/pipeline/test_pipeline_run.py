"""The pipeline against a scripted fake model server and an executor double."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any

import httpx
import pytest

from simulator.llm.client import ChatClient
from simulator.llm.testing import FakeModelServer, PipelineScript, ScriptedFailure
from simulator.pipeline import EVENT_TYPES, FINAL_TYPES, Event, RunSettings, run
from simulator.pipeline.repair import FIX_REPLIES
from simulator.problem import Problem
from simulator.prompts import simulate, solve
from tests.simulator.pipeline.pipeline_doubles import (
    DOUBLE_PROBLEM,
    RIGHT,
    WRONG,
    ExecutorDouble,
    collect,
    fence,
    make_client,
    of_type,
    perfect_simulator,
    run_script,
)

CALL_PROBLEM = {
    "title": "Twice",
    "statement": "Return 2 * x.",
    "kind": "call",
    "entry_point": "twice",
    "tests": [{"input": "1", "output": "2"}, {"input": "4", "output": "8"}],
}


def question(body: dict[str, Any]) -> str:
    """The last user message of a request (an answer may be prefilled after it)."""
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")


def assert_well_formed(events: list[Event]) -> None:
    assert [e.seq for e in events] == list(range(len(events)))
    assert len({e.run_id for e in events}) == 1
    assert events[0].type == "run_started"
    assert [e.type in FINAL_TYPES for e in events].count(True) == 1
    assert events[-1].is_final
    for event in events:
        Event.from_dict(event.to_dict())  # JSON round trip
        assert event.to_json()


def index_of(events: list[Event], type: str, **match: Any) -> int:
    return next(
        i
        for i, e in enumerate(events)
        if e.type == type and all(e.payload.get(k) == v for k, v in match.items())
    )


def test_a_full_run_emits_every_event_type_in_order() -> None:
    script = PipelineScript(solve=[WRONG, WRONG], simulate=perfect_simulator, repair=[RIGHT])
    events = run_script(script, k=2, turns=3, seed=7, real=True)
    assert_well_formed(events)
    seen = {e.type for e in events}
    assert seen == set(EVENT_TYPES) - {"run_failed", "run_cancelled", "repair_rejected"}  # test_repair.py
    assert events[-1].type == "run_finished"
    # stages come in order: solve, simulate, select, repair, execute
    last_candidate = max(i for i, e in enumerate(events) if e.type == "candidate_done")
    first_simulation = index_of(events, "simulation_delta")
    assert last_candidate < first_simulation
    last_verdict = max(i for i, e in enumerate(events) if e.type == "verdict" and e.payload["turn"] == 0)
    assert last_verdict < index_of(events, "selected") < index_of(events, "repair_turn")
    assert index_of(events, "repair_turn") < index_of(events, "execution")
    # the repair's fix is kept (turn 1), then submitted as it is (turn 2)
    assert [e.payload["submitted"] for e in of_type(events, "repair_turn")] == [False, True]
    finished = events[-1].payload
    assert finished["code"] == "n = int(input())\nprint(2 * n)\n" and finished["submitted"] is True
    assert (finished["passed_public_simulated"], finished["public_tests"]) == (2, 2)
    assert finished["real"] == {
        "passed_public": 2,
        "public_tests": 2,
        "passed_private": 1,
        "private_tests": 1,
    }
    # solve, 2 candidates x 2 tests, one repair request, its 4 replies judged at once on 2 tests
    assert finished["totals"]["requests"] == 1 + 4 + 1 + 4 * 2
    # candidate text is streamed: the deltas of a candidate add up to its text
    for done in of_type(events, "candidate_done"):
        deltas = [
            e.payload["text"]
            for e in of_type(events, "candidate_delta")
            if e.payload["candidate"] == done.payload["candidate"]
        ]
        assert "".join(deltas) == done.payload["text"]


def test_run_started_records_provenance(data_dir) -> None:
    weights = data_dir / "models" / "fake-model"
    weights.mkdir(parents=True)
    (weights / "weights.sha256").write_text("abc123  model.safetensors\n")
    script = PipelineScript(solve=RIGHT, simulate=perfect_simulator)
    started = run_script(script, k=2, turns=0, seed=11, temperature=0.5)[0].payload
    prov = started["provenance"]
    assert prov["model"] == "fake-model" and prov["weights_sha256"] == "abc123"
    assert prov["prompts"] == {"solve": "solve-v3", "simulate": "simulate-v2", "repair": "repair-v3"}
    assert prov["sampling"]["temperature"] == 0.5 and prov["seed"] == 11
    assert prov["code_version"] != ""
    assert started["settings"]["seed"] == 11 and started["problem"]["title"] == "Double"


def test_without_a_weights_file_the_hash_is_unknown() -> None:
    script = PipelineScript(solve=RIGHT, simulate=perfect_simulator)
    assert run_script(script, k=1, turns=0)[0].payload["provenance"]["weights_sha256"] == "unknown"


def test_a_drawn_seed_is_recorded_and_replays_the_tie_break() -> None:
    script = PipelineScript(solve=RIGHT, simulate=perfect_simulator)
    events = run_script(script, k=4, turns=0)
    selected = of_type(events, "selected")[0].payload
    assert selected["tied"] == [0, 1, 2, 3]
    replay = run_script(
        PipelineScript(solve=RIGHT, simulate=perfect_simulator), k=4, turns=0, seed=selected["seed"]
    )
    assert of_type(replay, "selected")[0].payload["candidate"] == selected["candidate"]


def test_tie_breaking_is_reproducible_and_uniform_over_seeds() -> None:
    def chosen(seed: int) -> int:
        events = run_script(PipelineScript(solve=RIGHT, simulate=perfect_simulator), k=3, turns=0, seed=seed)
        return of_type(events, "selected")[0].payload["candidate"]

    picks = [chosen(seed) for seed in range(12)]
    assert picks == [chosen(seed) for seed in range(12)]
    assert set(picks) == {0, 1, 2}


def test_selection_prefers_more_matching_tests_and_explains_why() -> None:
    script = PipelineScript(solve=[WRONG, RIGHT, "no code"], simulate=perfect_simulator)
    events = run_script(script, k=3, turns=0, seed=1)
    selected = of_type(events, "selected")[0].payload
    assert selected["candidate"] == 1
    assert selected["scores"] == [1, 2, None]  # WRONG matches 2+2=4 only; no code gets no score
    assert selected["reason"] == "candidate 1 matched 2 of 2 public tests in simulation"
    # "no code" continues the prefilled ```python block, and does not parse as Python
    assert "does not parse" in of_type(events, "candidate_done")[2].payload["parse_error"]


@pytest.mark.parametrize("narrate", [True, False])
def test_a_simulation_is_one_greedy_request_whether_narrated_or_answered_at_once(narrate: bool) -> None:
    """The verdict is the model's likeliest run, not a draw at the run's temperature."""
    script = PipelineScript(solve=RIGHT, simulate=perfect_simulator)
    server = FakeModelServer(script)
    run_script(script, server=server, k=2, turns=0, temperature=0.8, narrate=narrate)
    simulated = [b for b in server.requests if b["messages"][0]["content"] == simulate.SYSTEM]
    solving = [b for b in server.requests if b["messages"][0]["content"] != simulate.SYSTEM]
    assert [b["temperature"] for b in solving] == [0.8]
    assert len(simulated) == 2 * 2 and {(b["temperature"], b.get("n", 1)) for b in simulated} == {(0.0, 1)}
    prefilled = {b["messages"][-1]["role"] == "assistant" for b in simulated}
    assert prefilled == {not narrate}  # at once: the answer's opening is prefilled


def test_oracle_mode_selects_and_repairs_by_real_execution() -> None:
    def lying_simulator(code: str, stdin: str) -> str:
        return "<output>\n0\n"

    script = PipelineScript(solve=[WRONG, RIGHT], simulate=lying_simulator)
    executor = ExecutorDouble()
    events = run_script(script, k=2, turns=1, oracle=True, seed=0, executor=executor)
    assert "simulate_stdin" not in script.calls  # no simulation at all
    verdicts = [e.payload for e in of_type(events, "verdict")]
    assert {v["source"] for v in verdicts} == {"real"}
    assert of_type(events, "selected")[0].payload["candidate"] == 1
    assert "real execution" in of_type(events, "selected")[0].payload["reason"]
    assert of_type(events, "repair_turn")[0].payload["feedback"][0]["output"] == "4\n"
    assert len(executor.executed) == 4
    assert events[-1].payload["judged_by"] == "real execution"


def test_real_mode_records_real_outputs_and_divergences() -> None:
    divergence = {"claimed": "3", "actual": "2"}
    executor = ExecutorDouble(divergence=divergence)
    script = PipelineScript(solve=WRONG, simulate=perfect_simulator)
    events = run_script(script, k=1, turns=0, real=True, seed=0, executor=executor)
    real = of_type(events, "verdict")[0].payload["real"]
    assert real["status"] == "ok" and real["verification"]["first_divergence"]["claimed"] == "3"
    assert real["output"] == "4\n" and real["passed"] is True
    executions = [e.payload for e in of_type(events, "execution")]
    assert [(x["test"], x["public"], x["passed"]) for x in sorted(executions, key=lambda x: x["test"])] == [
        (0, True, True),
        (1, True, False),
        (2, False, False),
    ]
    assert all(x["verification"]["first_divergence"]["actual"] == "2" for x in executions if x["public"])
    assert executor.checked and executor.checked[0].startswith("[THOUGHT]")


LOOPING = "[THOUGHT]\n" + "Line 2: `print(2 * n)`; the loop goes on.\n" * 100  # past 512 tokens
STOPPED = "[THOUGHT]\nLine 1: `n = int(input())`; now n = 2.\n[/THOUGHT]\n"  # ends, no <output>


@pytest.mark.parametrize(("narration", "cut"), [(LOOPING, True), (STOPPED, False)])
def test_a_narration_that_ends_before_its_answer_gets_it_asked_for_and_streamed_on(narration, cut) -> None:
    """Cut by the token budget, or stopped by the model (seen on a pasted stdin program): either way
    the answer is asked for and streams on after the narration; the request leaves out a cut (looping)
    narration and goes on from a stopped one."""
    asked: list[str] = []

    def responder(body: dict[str, Any]) -> str:
        messages = body["messages"]
        if messages[-1]["role"] == "assistant" and messages[-1]["content"].endswith("<output>\n"):
            assert body["max_tokens"] == simulate.ANSWER_TOKENS
            asked.append(messages[-1]["content"])
            user = messages[-2]["content"]
            return "4\n</output>" if "<input>\n2\n" in user else "11\n</output>"
        return RIGHT if messages[-1]["role"] == "assistant" else narration  # solve (prefilled), simulate

    events = run_script(responder, k=1, turns=0, seed=0, narrate=True)
    assert events[-1].type == "run_finished"
    done = of_type(events, "simulation_done")
    assert [e.payload["forced"] for e in done] == [True, True]
    assert sorted(e.payload["predicted"] for e in done) == ["11\n", "4\n"]
    for event in done:  # what streamed is the whole reply: the narration, the closing, the answer
        p = event.payload
        streamed = "".join(
            e.payload["text"]
            for e in of_type(events, "simulation_delta")
            if (e.payload["test"], e.payload["sample"]) == (p["test"], p["sample"])
        )
        assert streamed == p["text"] and "\n[/THOUGHT]\n<output>\n" in p["text"]
        assert (p["tokens"] > 512) == cut and not p["parse_error"] and p["text"].startswith(narration[:60])
    assert sorted(e.payload["match"] for e in of_type(events, "verdict")) == [False, True]
    expected = simulate.answer_prefill(None) if cut else STOPPED + "<output>\n"
    assert asked == [expected, expected]


def test_call_problems_compare_python_literals() -> None:
    def simulator(code: str, call: str) -> str:
        value = {"twice(1)": "2", "twice(4)": "8.0"}[call]  # 8.0 == 8 as Python values
        return f"[THOUGHT] t [/THOUGHT] [ANSWER] assert {call} == {value} [/ANSWER]"

    script = PipelineScript(solve=fence("def twice(x):\n    return 2 * x\n"), simulate=simulator)
    server = FakeModelServer(script)
    events = run_script(script, problem=CALL_PROBLEM, k=1, turns=0, seed=0, server=server)
    assert [e.payload["match"] for e in of_type(events, "verdict")] == [True, True]
    prompts = [question(body) for body in server.requests]
    assert any("assert twice(4) == ??" in p for p in prompts)


def test_no_code_in_any_candidate_fails_the_run() -> None:
    events = run_script(PipelineScript(solve="I cannot do that.", simulate=perfect_simulator), k=2, turns=1)
    assert_well_formed(events)
    assert events[-1].type == "run_failed"
    assert events[-1].payload["error"] == "no_code"
    assert "none of the 2 candidates" in events[-1].payload["message"]


def test_a_parse_error_says_when_the_reply_was_cut_by_its_budget() -> None:
    def errors(max_tokens: int) -> list[str]:
        prose = " ".join(f"I cannot do step {i}." for i in range(40))  # no loop to stop
        script = PipelineScript(solve=prose, simulate=perfect_simulator)
        events = run_script(script, k=1, max_tokens=max_tokens)
        return [e.payload["parse_error"] for e in of_type(events, "candidate_done")]

    (cut,) = errors(16)
    (whole,) = errors(4096)
    assert cut.endswith(" (the reply hit the token budget)")
    assert "token budget" not in whole and cut.startswith(whole)


def test_a_reply_cut_because_the_statement_filled_the_context_says_so() -> None:
    """A statement that leaves the reply little room in the model's context window: the cut reply's
    error names the budget the prompt left, so the user knows a shorter statement helps."""
    prose = " ".join(f"I cannot do step {i}." for i in range(40))
    script = PipelineScript(solve=prose, simulate=perfect_simulator)
    messages = solve.messages(Problem.from_dict(DOUBLE_PROBLEM))
    prompt_chars = sum(len(m["content"]) for m in messages)
    window = prompt_chars // 3 + 8 * len(messages) + 20  # ChatClient._fit: 20 tokens left for the reply
    events = run_script(script, k=1, server=FakeModelServer(script, max_model_len=window))
    (error,) = [e.payload["parse_error"] for e in of_type(events, "candidate_done")]
    assert error.endswith(
        "(the reply hit the token budget: the prompt left room for only 20 tokens in the model's "
        "context window; a shorter statement leaves more)"
    )


def test_code_requests_ask_vllm_to_stop_a_looping_reply_and_a_parse_error_says_so() -> None:
    """The solve request carries ``solve.LOOP_STOP`` (the double ends a reply there as vLLM does);
    simulations do not: an answer may repeat a value legitimately."""
    script = PipelineScript(solve="Answer:\n" + "no code\n" * 100, simulate=perfect_simulator)
    server = FakeModelServer(script)
    events = run_script(script, server=server, k=1)
    (done,) = [e.payload for e in of_type(events, "candidate_done")]
    assert done["finish_reason"] == "repetition" and done["tokens"] < 60  # of 202
    assert done["parse_error"].endswith(" (the reply repeated itself and was stopped)")
    solve_body, *others = server.requests
    assert solve_body["repetition_detection"] == solve.LOOP_STOP
    assert others == [] or all("repetition_detection" not in body for body in others)


def test_a_server_failure_mid_run_fails_it_cleanly() -> None:
    def responder(body: dict[str, Any]):
        if "<input>" in question(body):
            raise ScriptedFailure(500, "engine crashed")
        return RIGHT

    events = run_script(responder, k=2, turns=1)
    assert_well_formed(events)
    failed = events[-1]
    assert failed.type == "run_failed" and failed.payload["error"] == "model_unavailable"
    assert "HTTP 500: engine crashed" in failed.payload["message"]


def test_a_server_that_is_down_fails_the_run_after_run_started() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]

    async def main() -> list[Event]:
        async with ChatClient(f"http://127.0.0.1:{port}/v1", "m", retries=0) as client:
            problem = Problem.from_dict(DOUBLE_PROBLEM)
            return await collect(run(problem, RunSettings(), client, executor=ExecutorDouble()))

    events = asyncio.run(main())
    assert [e.type for e in events] == ["run_started", "run_failed"]
    assert events[1].payload["error"] == "model_unavailable"
    assert "is not reachable" in events[1].payload["message"]


def test_an_unknown_model_fails_the_run() -> None:
    script = PipelineScript(solve=RIGHT, simulate=perfect_simulator)
    events = run_script(script, k=1, model="no-such-model")
    assert events[-1].payload["error"] == "model_not_found"
    assert "'no-such-model'" in events[-1].payload["message"]


def test_a_simulation_prompt_that_does_not_fit_is_recorded_and_the_run_goes_on() -> None:
    def responder(body: dict[str, Any]):
        if "<input>" in question(body):
            raise ScriptedFailure(400, "This model's maximum context length is 2048 tokens.")
        return RIGHT

    events = run_script(responder, k=1, turns=0, seed=0)
    assert events[-1].type == "run_finished"
    done = of_type(events, "simulation_done")
    assert done and all("prompt too long" in e.payload["parse_error"] for e in done)
    assert all(e.payload["match"] is False for e in of_type(events, "verdict"))


class BlockingSimulations:
    """Fake server transport whose simulation requests never answer (until cancelled)."""

    def __init__(self) -> None:
        self.server = FakeModelServer(PipelineScript(solve=RIGHT, simulate=perfect_simulator))
        self.blocked = asyncio.Event()

    def transport(self) -> httpx.MockTransport:
        inner = self.server.transport()

        async def handle(request: httpx.Request) -> httpx.Response:
            if b"<input>" in request.content:
                self.blocked.set()
                await asyncio.Event().wait()
            return inner.handle_request(request)

        return httpx.MockTransport(handle)


def leftover_tasks() -> list[asyncio.Task[Any]]:
    """The pipeline's own tasks still alive (the driver and the cancel watcher are named execsim-*)."""
    return [t for t in asyncio.all_tasks() if t.get_name().startswith("execsim-") and not t.done()]


async def blocked_run(cancel: asyncio.Event | None = None):
    double = BlockingSimulations()
    client = ChatClient("http://fake/v1", "fake-model", transport=double.transport(), retries=0)
    problem = Problem.from_dict(DOUBLE_PROBLEM)
    events = run(problem, RunSettings(k=2, seed=0), client, executor=ExecutorDouble(), cancel=cancel)
    return double, client, events


def test_setting_the_cancel_event_ends_the_run_with_run_cancelled() -> None:
    async def main() -> list[Event]:
        cancel = asyncio.Event()
        double, client, events = await blocked_run(cancel)
        seen = []
        async with client:
            async for event in events:
                seen.append(event)
                if event.type == "stage" and event.payload["stage"] == "simulate":
                    await double.blocked.wait()
                    cancel.set()
        assert leftover_tasks() == []
        return seen

    events = asyncio.run(asyncio.wait_for(main(), 10))
    assert_well_formed(events)
    assert events[-1].type == "run_cancelled"
    assert events[-1].payload["reason"] == "cancelled on request"


def test_cancelling_the_consuming_task_yields_run_cancelled_then_propagates() -> None:
    async def main() -> tuple[list[Event], bool]:
        double, client, events = await blocked_run()
        seen: list[Event] = []

        async def consume() -> None:
            async for event in events:
                seen.append(event)

        async with client:
            task = asyncio.create_task(consume())
            await double.blocked.wait()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        return seen, task.cancelled() and leftover_tasks() == []

    events, cleanly = asyncio.run(asyncio.wait_for(main(), 10))
    assert_well_formed(events)
    assert events[-1].type == "run_cancelled"
    assert cleanly


def test_a_consumer_that_stops_early_leaves_no_tasks_behind() -> None:
    async def main() -> list[asyncio.Task[Any]]:
        double, client, events = await blocked_run()
        async with client:
            async for event in events:
                if event.type == "candidate_done":
                    break
            await events.aclose()
            return leftover_tasks()

    assert asyncio.run(asyncio.wait_for(main(), 10)) == []


def test_the_client_double_is_the_real_client() -> None:
    # the pipeline talks to the model only through ChatClient; the double is a fake *server*
    assert isinstance(make_client(FakeModelServer(lambda body: "x")), ChatClient)


def test_the_users_own_code_is_candidate_0_and_no_solution_is_asked_for() -> None:
    """ "Simulate my code" against a problem: the program is given, the model only simulates it."""
    server = FakeModelServer(PipelineScript(solve=WRONG, simulate=perfect_simulator))
    own = "n = int(input())\nprint(n * 2)"
    events = run_script(None, server=server, k=1, turns=0, real=True, seed=0, code=own)  # type: ignore[arg-type]
    done = of_type(events, "candidate_done")
    assert len(done) == 1 and done[0].payload["given"] is True and done[0].payload["code"] == own + "\n"
    assert not of_type(events, "candidate_delta")
    kinds = [question(b) for b in server.requests]
    assert kinds and all("<input>" in k for k in kinds)  # simulate requests only, no solve request
    assert events[-1].type == "run_finished" and events[-1].payload["code"] == own + "\n"
    assert [x.payload["passed"] for x in of_type(events, "execution")] == [True, True, True]


def _nothing_matches(code: str, stdin: str) -> str:
    return "<output>\n0\n"  # every candidate ties at 0 matches


def test_a_tie_never_goes_to_a_program_known_to_fail_whatever_breaks_ties() -> None:
    """Nothing matches: the misnamed program, written twice, is known to fail without simulation;
    the other may pass. Neither the draw nor agreement (2 against 1) may pick the misnamed one."""
    misnamed = fence("def thrice(x):\n    return 3 * x\n")
    script = PipelineScript(
        solve=[misnamed, misnamed, fence("def twice(x):\n    return x\n")], simulate=perfect_simulator
    )
    for seed in range(4):
        events = run_script(script, problem=CALL_PROBLEM, k=3, turns=0, seed=seed)
        selected = of_type(events, "selected")[0].payload
        assert selected["scores"] == [0, 0, 0] and selected["tied"] == [0, 1, 2]
        assert selected["candidate"] == 2 and selected["broken_by"] == ["known"]
        assert "tied with 0, 1, which are known to fail" in selected["reason"]


def test_a_tie_broken_by_agreement_goes_to_the_program_written_most_often_without_asking() -> None:
    same = fence("n = int(input())\n\nprint(2 * n)  # the same program, laid out otherwise\n")
    script = PipelineScript(solve=[WRONG, RIGHT, same], simulate=_nothing_matches)
    for seed in range(4):
        server = FakeModelServer(script)
        events = run_script(script, server=server, k=3, turns=0, seed=seed)
        selected = of_type(events, "selected")[0].payload
        assert selected["candidate"] in (1, 2) and selected["agreement"] == [1, 2, 2]
        assert "it is the program written most often (2 of the 3 candidates with code)" in selected["reason"]
        assert len(server.requests) == 1 + 3 * 2  # nothing asked beyond solving and simulating


def test_a_repair_reply_cut_by_its_budget_says_so() -> None:
    """As a candidate's does: a fix that ran out of tokens is not a fix the model could not write."""
    prose = " ".join(f"I cannot do step {i}." for i in range(40))
    script = PipelineScript(solve=WRONG, simulate=perfect_simulator, repair=[prose])
    events = run_script(script, k=1, turns=1, seed=0, max_tokens=24)
    (turn,) = [e.payload for e in of_type(events, "repair_turn")]
    errors = [r["error"] for r in turn["replies"]]
    assert turn["code"] is None and len(errors) == FIX_REPLIES
    assert all(e.endswith("(the reply hit the token budget)") for e in errors), errors
    assert of_type(events, "candidate_done")[0].payload["code"] is not None  # the solve reply fit


def test_a_repair_reply_cut_because_its_prompt_filled_the_context_says_so() -> None:
    """The repair request holds the problem and the feedback: when that leaves the reply little room in
    the model's context window, its error names the room, as a candidate's does."""
    from simulator.prompts import kind_of

    prose = " ".join(f"I cannot do step {i}." for i in range(40))
    script = PipelineScript(solve=WRONG, simulate=perfect_simulator, repair=[prose])
    server = FakeModelServer(script)
    run_script(script, k=1, turns=1, seed=0, server=server)
    (asked,) = [b["messages"] for b in server.requests if kind_of(b["messages"]) == "repair"]
    window = sum(len(m["content"]) for m in asked) // 3 + 8 * len(asked) + 20  # as in ChatClient._fit
    events = run_script(script, k=1, turns=1, seed=0, server=FakeModelServer(script, max_model_len=window))
    (turn,) = [e.payload for e in of_type(events, "repair_turn")]
    errors = [r["error"] for r in turn["replies"]]
    room = "the prompt left room for only 20 tokens in the model's context window"
    assert errors and all(room in e for e in errors), errors


def test_a_simulation_that_repeats_its_input_says_it_may_be_a_copy() -> None:
    """A small model echoes a stdin program's input for half the programs (docs/results.md#stdin-problems)."""

    def echo(code: str, stdin: str) -> str:
        return f"[THOUGHT] [/THOUGHT]\n<output>\n{stdin}"

    events = run_script(PipelineScript(solve=RIGHT, simulate=echo), k=1, turns=0, seed=0)
    assert [e.payload["copied"] for e in of_type(events, "simulation_done")] == ["input", "input"]
    events = run_script(PipelineScript(solve=RIGHT, simulate=perfect_simulator), k=1, turns=0, seed=0)
    assert [e.payload["copied"] for e in of_type(events, "simulation_done")] == [None, None]
