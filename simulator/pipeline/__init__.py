"""solve -> simulate -> select -> repair, as a stream of typed events (see ``events``).

``run(problem, settings, client, *, run_id=None, executor=None, cancel=None)`` is the entry point for
every host (CLI, web app task, evaluation); ``simulate_program`` is the single-program variant behind
``execsim simulate``.
"""

from __future__ import annotations

from simulator.pipeline.events import EVENT_TYPES, FINAL_TYPES, Event
from simulator.pipeline.run import run
from simulator.pipeline.settings import RunSettings, SettingsError
from simulator.pipeline.single import simulate_program

__all__ = ["EVENT_TYPES", "FINAL_TYPES", "Event", "RunSettings", "SettingsError", "run", "simulate_program"]
