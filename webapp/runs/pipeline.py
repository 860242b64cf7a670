"""What the task needs from ``simulator``: the pipeline functions, their Settings, and a model client.

- ``solve`` runs call ``settings.EXECSIM_PIPELINE`` (default ``simulator.pipeline.run``) with a Problem;
- ``simulate`` runs ("Simulate my code") call ``settings.EXECSIM_SIMULATE_PIPELINE`` (default
  ``simulator.pipeline.simulate_program``) with a Program.
Both are dotted paths so tests can point them at scripted doubles.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from django.conf import settings

from simulator.execution.program import Program

PipelineFn = Callable[..., AsyncIterator[Any]]


def load_pipeline(kind: str = "solve") -> PipelineFn:
    path = settings.EXECSIM_SIMULATE_PIPELINE if kind == "simulate" else settings.EXECSIM_PIPELINE
    module_name, _, attr = path.replace(":", ".").rpartition(".")
    return getattr(importlib.import_module(module_name), attr)


def program_for_simulation(code: str, code_input: str, mode: str) -> Program:
    """The Program a "Simulate my code" run simulates: a call expression or stdin text."""
    if mode == "stdin":
        return Program(code=code, stdin=code_input)
    return Program(code=code, call=code_input.strip())


def make_client(model: str | None = None) -> Any:
    """The one model client (``simulator.llm.client.ChatClient``), reading simulator.config."""
    from simulator.llm.client import ChatClient

    return ChatClient(model=model or None)
