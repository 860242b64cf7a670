"""Best@k: pick the candidate whose outputs match the expected ones on the most public tests. Ties are
broken uniformly at random with a seeded generator, so a recorded seed reproduces the choice, or,
given each tied candidate's likelihood of the expected outputs (``RunSettings.ties``), by the
likeliest, then at random among equals."""

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
    scores: Mapping[int, int],
    rng: random.Random,
    *,
    tests: int,
    source: str = "simulation",
    likelihoods: Mapping[int, float] | None = None,
) -> Selection:
    """``scores`` maps candidate index -> matched public tests (only candidates with code);
    ``likelihoods`` maps tied candidates -> the log-probability the model gives the expected outputs
    after them (a candidate left out is never the likeliest)."""
    if not scores:
        raise ValueError("no candidate to select from")
    top = max(scores.values())
    tied = tuple(sorted(c for c, s in scores.items() if s == top))
    reason = f"matched {top} of {tests} public tests in {source}"
    pool = tied
    if len(tied) > 1 and likelihoods:
        best = max(likelihoods.get(c, float("-inf")) for c in tied)
        pool = tuple(c for c in tied if likelihoods.get(c, float("-inf")) == best)
        others = ", ".join(f"{c}: {likelihoods[c]:.2f}" for c in tied if c not in pool and c in likelihoods)
        reason += (
            f"; tied with {', '.join(str(c) for c in tied if c not in pool)}, it finds the expected "
            f"outputs likeliest (log-probability {best:.2f}; {others or 'the others not scored'})"
        )
    chosen = pool[0] if len(pool) == 1 else rng.choice(pool)
    if len(pool) > 1:
        reason += f"; tied with {', '.join(str(c) for c in pool if c != chosen)}, chosen at random"
    return Selection(candidate=chosen, score=top, tied=tied, reason=f"candidate {chosen} {reason}")
