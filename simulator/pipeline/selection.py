"""Best@k: pick the candidate whose outputs match the expected ones on the most public tests; ties
are broken uniformly at random with a seeded generator, so a recorded seed reproduces the choice."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Selection:
    candidate: int
    score: int
    tied: tuple[int, ...]
    reason: str


def best_of(
    scores: Mapping[int, int], rng: random.Random, *, tests: int, source: str = "simulation"
) -> Selection:
    """``scores`` maps candidate index -> matched public tests (only candidates with code)."""
    if not scores:
        raise ValueError("no candidate to select from")
    top = max(scores.values())
    tied = tuple(sorted(c for c, s in scores.items() if s == top))
    chosen = tied[0] if len(tied) == 1 else rng.choice(tied)
    reason = f"candidate {chosen} matched {top} of {tests} public tests in {source}"
    if len(tied) > 1:
        others = ", ".join(str(c) for c in tied if c != chosen)
        reason += f"; tied with {others}, chosen at random"
    return Selection(candidate=chosen, score=top, tied=tied, reason=reason)
