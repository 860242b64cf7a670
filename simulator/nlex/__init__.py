"""NLEX: natural-language execution explanations. ``narrate`` turns a trace into text; ``extract_claims``
and ``check_text`` turn any text (ours or a model's) back into claims with verdicts against a trace;
``verify`` is the one verdict on a simulation that every page, command and export shows."""

from __future__ import annotations

from simulator.nlex.check import CheckResult, ClaimVerdict, check_claims, check_text
from simulator.nlex.claims import Claim, extract_claims, program_names
from simulator.nlex.narrator import narrate
from simulator.nlex.verify import Verification, verify, verify_program

__all__ = [
    "CheckResult",
    "Claim",
    "ClaimVerdict",
    "check_claims",
    "check_text",
    "extract_claims",
    "narrate",
    "program_names",
    "Verification",
    "verify",
    "verify_program",
]
