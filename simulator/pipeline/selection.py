"""Best@k: pick the candidate whose outputs match the expected ones on the most public tests. Ties are
broken uniformly at random with a seeded generator, so a recorded seed reproduces the choice, or
first by what else is known of the tied candidates: a program known to fail every public test
without being simulated (``static.known_failure``) is never picked while a tied one is not known to
fail, whatever the tie-break; then (``RunSettings.ties``) how many of the k candidates are the same
program (``agreement``), or how likely the model finds the expected outputs after each
(``likelihoods``); the seeded draw then picks among those still equal."""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Selection:
    candidate: int
    score: int
    tied: tuple[int, ...]
    reason: str
    broken_by: tuple[str, ...] = ()  # what decided a tie, in order: known, agreement, likelihood, random


def best_of(
    scores: Mapping[int, int],
    rng: random.Random,
    *,
    tests: int,
    source: str = "simulation",
    known: Collection[int] = (),
    agreement: Mapping[int, int] | None = None,
    likelihoods: Mapping[int, float] | None = None,
) -> Selection:
    """``scores`` maps candidate index -> matched public tests (only candidates with code);
    ``known`` holds the candidates known to fail without a simulation (they match none);
    ``agreement`` maps a candidate -> how many candidates are the same program (itself included);
    ``likelihoods`` maps tied candidates -> the log-probability the model gives the expected outputs
    after them (a candidate left out is never the likeliest)."""
    if not scores:
        raise ValueError("no candidate to select from")
    top = max(scores.values())
    tied = tuple(sorted(c for c, s in scores.items() if s == top))
    reason = f"matched {top} of {tests} public tests in {source}"
    pool = tied
    steps: list[str] = []
    unknown = tuple(c for c in pool if c not in known)
    if unknown and len(unknown) < len(pool):
        out = [c for c in pool if c in known]
        reason += f"; tied with {_listed(out)}, {'which is' if len(out) == 1 else 'which are'} known to fail"
        pool = unknown
        steps.append("known")
    equally = ""  # why the draw decides, where agreement could not
    if len(pool) > 1 and agreement:
        most = max(agreement.get(c, 0) for c in pool)
        kept = tuple(c for c in pool if agreement.get(c, 0) == most)
        if len(kept) < len(pool):
            reason += (
                f"; tied with {_listed(c for c in pool if c not in kept)}, it is the program written "
                f"most often ({most} of the {len(scores)} candidates with code)"
            )
        pool = kept
        equally = f" (written as often, {most} of the {len(scores)})"
        steps.append("agreement")
    if len(pool) > 1 and likelihoods:
        best = max(likelihoods.get(c, float("-inf")) for c in pool)
        kept = tuple(c for c in pool if likelihoods.get(c, float("-inf")) == best)
        others = ", ".join(f"{c}: {likelihoods[c]:.2f}" for c in pool if c not in kept and c in likelihoods)
        reason += (
            f"; tied with {_listed(c for c in pool if c not in kept)}, it finds the expected outputs "
            f"likeliest (log-probability {best:.2f}; {others or 'the others not scored'})"
        )
        pool = kept
        steps.append("likelihood")
    chosen = pool[0] if len(pool) == 1 else rng.choice(pool)
    if len(pool) > 1:
        reason += f"; tied with {_listed(c for c in pool if c != chosen)}{equally}, chosen at random"
        steps.append("random")
    return Selection(chosen, top, tied, f"candidate {chosen} {reason}", tuple(steps))


def _listed(candidates: Iterable[int]) -> str:
    return ", ".join(str(c) for c in candidates)
