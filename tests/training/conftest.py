"""Fixtures and test doubles for training tests: an in-process executor standing in for the sandbox,
and a scripted
sampler standing in for a served model. Only for unit tests of training's own logic; tests that need
real execution use ``simulator.execution.run_many`` and skip when it is absent."""

from __future__ import annotations

import signal
from dataclasses import dataclass, field

import pytest

from simulator.execution.program import Program
from simulator.execution.result import ExecutionResult


class _Timeout(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001
    raise _Timeout


def in_process_executor_double(programs: list[Program]) -> list[ExecutionResult]:
    """Runs call-shaped programs in this process (NOT sandboxed: trusted test programs only)."""
    results = []
    for program in programs:
        namespace: dict = {}
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, program.timeout_s)
        try:
            exec(compile(program.code, "<program>", "exec"), namespace)
            value = eval(compile(program.call, "<call>", "eval"), namespace)
            results.append(ExecutionResult(status="ok", value=repr(value), value_type=type(value).__name__))
        except _Timeout:
            results.append(ExecutionResult(status="timeout"))
        except SyntaxError:
            results.append(ExecutionResult(status="syntax_error"))
        except Exception as exc:  # noqa: BLE001
            results.append(ExecutionResult(status="runtime_error", message=repr(exc)))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    return results


@dataclass
class ScriptedSamplerDouble:
    """Answers each prompt with ``reply(prompt, i)`` for i in range(n); records the prompts it got."""

    reply: object
    name: str = "scripted-sampler-double"
    prompts: list[str] = field(default_factory=list)

    def sample(self, prompts: list[str], *, n: int, temperature: float, max_tokens: int) -> list[list[str]]:
        self.prompts += prompts
        return [[self.reply(p, i) for i in range(n)] for p in prompts]


@pytest.fixture
def executor_double():
    return in_process_executor_double


@pytest.fixture
def sampler_double():
    """The ScriptedSamplerDouble class (construct it with a ``reply(prompt, i)`` function)."""
    return ScriptedSamplerDouble


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    pytest.importorskip("trl", reason="the train extra is not installed (pip install -e '.[train]')")
    from training.smoke import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="module")
def sft_data(tmp_path_factory):
    """16 SFT rows (12 simulate, 4 solve) in a JSONL file, read-only, for the runs compared in a module."""
    from training.data.examples import write_jsonl

    simulate = [
        {
            "kind": "simulate",
            "prompt": f"[PYTHON] f({i}) [/PYTHON]",
            "completion": f" [ANSWER] {i * 3} [/ANSWER]",
        }
        for i in range(12)
    ]
    solve = [{"kind": "solve", "prompt": "def f(s):", "completion": "\n    return s.upper()"}] * 4
    path = tmp_path_factory.mktemp("sft-data") / "sft.jsonl"
    write_jsonl(path, simulate + solve)
    return path
