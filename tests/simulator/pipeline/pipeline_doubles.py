"""Test doubles for pipeline tests: a fake model server behind the real ChatClient, and an executor
double that runs trusted test programs in-process (never user code)."""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from simulator.execution.program import Program
from simulator.execution.result import ExceptionInfo, ExecutionResult
from simulator.llm.client import ChatClient
from simulator.llm.testing import FakeModelServer, PipelineScript
from simulator.nlex.verify import AnswerCheck, ClaimCheck, FirstDivergence, Verification
from simulator.pipeline.events import Event
from simulator.pipeline.run import run
from simulator.pipeline.settings import RunSettings
from simulator.problem import Problem

DOUBLE_PROBLEM = {
    "title": "Double",
    "statement": "Read an integer n and print 2*n.",
    "kind": "stdin",
    "tests": [
        {"input": "2\n", "output": "4\n"},
        {"input": "5\n", "output": "10\n"},
        {"input": "7\n", "output": "14\n", "public": False},
    ],
}
RIGHT = "```python\nn = int(input())\nprint(2 * n)\n```"
WRONG = "```python\nn = int(input())\nprint(n + 2)\n```"


def fence(code: str) -> str:
    return f"```python\n{code}```"


def run_stdin(code: str, stdin: str) -> str:
    """What ``code`` prints on ``stdin`` (trusted test programs only)."""
    out = io.StringIO()
    lines = iter(stdin.splitlines())
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<double>", "exec"), {"input": lambda *_: next(lines)})
    return out.getvalue()


def perfect_simulator(code: str, what: str) -> str:
    """Simulation replies that predict the true output (a model that never errs)."""
    return f"[THOUGHT] it prints the result [/THOUGHT]\n<output>\n{run_stdin(code, what)}"


class ExecutorDouble:
    """Runs trusted test programs in-process; every verified NLEX gets ``double_verification`` of
    ``divergence`` (a first divergence's fields, e.g. {"claimed": "99", "actual": "2"}; None: agrees)."""

    def __init__(self, divergence: dict[str, Any] | None = None) -> None:
        self.divergence = divergence
        self.executed: list[Program] = []
        self.checked: list[str] = []

    async def execute(self, program: Program, *, trace: bool) -> ExecutionResult:
        self.executed.append(program)
        await asyncio.sleep(0)
        try:
            if program.call is not None:
                namespace: dict[str, Any] = {}
                exec(compile(program.code, "<double>", "exec"), namespace)
                value = eval(program.call, namespace)
                return ExecutionResult(status="ok", value=repr(value), value_type=type(value).__name__)
            return ExecutionResult(status="ok", stdout=run_stdin(program.code, program.stdin or ""))
        except Exception as exc:
            return ExecutionResult(
                status="runtime_error",
                exception=ExceptionInfo(type(exc).__name__, str(exc)),
                message=f"{type(exc).__name__}: {exc}",
            )

    def verify(self, nlex: str, result: ExecutionResult, program: Program) -> Verification:
        self.checked.append(nlex)
        return double_verification(self.divergence)


def double_verification(divergence: dict[str, Any] | None) -> Verification:
    """A scripted verification (test double): one claim, true, or false with ``divergence``'s fields."""
    if divergence is None:
        claim = ClaimCheck("answer", "[ANSWER] 2", 0, 10, "true", claimed="2", actual="2")
        return Verification("checked", AnswerCheck("true", "2", "2", 0, 10), (claim,))
    first = {"start": 0, "end": 6, "kind": "value", "text": "n = 99", "step": 1, "claimed": "99",
             "actual": "2", "sentence": "line 1: the simulation says n is 99; the real run has 2 (step 1)",
             "line": 1, **divergence}  # fmt: skip
    claim = ClaimCheck(first["kind"], first["text"], first["start"], first["end"], "false", first["step"],
                       first["actual"], first["claimed"], first["line"])  # fmt: skip
    return Verification("checked", AnswerCheck("true", "2", "2"), (claim,), FirstDivergence(**first))


def make_client(server: FakeModelServer, **kwargs: Any) -> ChatClient:
    options = {"retries": 0, "backoff_s": 0.0, **kwargs}
    return ChatClient("http://fake/v1", server.model, transport=server.transport(), **options)


async def collect(events: AsyncIterator[Event]) -> list[Event]:
    return [event async for event in events]


def run_script(
    script: PipelineScript | Callable[[dict[str, Any]], Sequence[str] | str],
    problem: dict[str, Any] = DOUBLE_PROBLEM,
    executor: ExecutorDouble | None = None,
    server: FakeModelServer | None = None,
    code: str | None = None,
    **settings: Any,
) -> list[Event]:
    """Run the whole pipeline against the script; returns every event."""

    async def main() -> list[Event]:
        fake = server or FakeModelServer(script)
        async with make_client(fake) as client:
            events = run(
                Problem.from_dict(problem),
                RunSettings(**settings),
                client,
                run_id="test-run",
                executor=executor or ExecutorDouble(),
                code=code,
            )
            return await collect(events)

    return asyncio.run(main())


def of_type(events: list[Event], type: str) -> list[Event]:
    return [e for e in events if e.type == type]
