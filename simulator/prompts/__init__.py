"""Versioned prompts (solve, simulate, repair) and the parsers of their replies.

``VERSIONS`` is recorded in every run's provenance; ``kind_of`` tells which prompt a request carries
(by its system message), which test doubles use to script replies.
"""

from __future__ import annotations

from collections.abc import Sequence

from simulator.prompts import repair, simulate, solve

VERSIONS = {"solve": solve.VERSION, "simulate": simulate.VERSION, "repair": repair.VERSION}


def kind_of(messages: Sequence[dict[str, str]]) -> str | None:
    """``solve``, ``simulate_call``, ``simulate_stdin``, ``repair`` or None for a foreign prompt."""
    system = next((m.get("content") for m in messages if m.get("role") == "system"), None)
    question = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
    if system == solve.SYSTEM:  # guided repair's fix request is the solve request with sentences added
        return "repair" if repair.FIX_OPENING in question else "solve"
    if system == simulate.SYSTEM:  # the question is the last user turn (an answer may be prefilled)
        return "simulate_call" if "[ANSWER]" in question else "simulate_stdin"
    return None
