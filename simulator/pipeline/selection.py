"""Best@k: pick the candidate whose outputs match the expected ones on the most public tests. A tie is
broken first by what else is known of the tied candidates: a program known to fail without being
simulated (``static.known_failure``) is never picked while a tied one is not; then the program the
candidates agree on most (``agreement``: how many of the k are the same program); then uniformly at
random with a seeded generator, so a recorded seed reproduces the choice. A draw among copies of one
program (``same_as``) picks nothing, and the reason says so. Without ``known`` and
``agreement`` this is the paper's rule: matches alone, ties at random. Each step measured well on
the dev split (docs/results.md#selection)."""

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
    broken_by: tuple[str, ...] = ()  # what decided a tie, in order: known, agreement, random or copies
    pool: tuple[int, ...] = ()  # the candidates the seeded draw chose among (one when none was needed)

    def expected(self, passed: Mapping[int, bool]) -> float:
        """The share of ``pool`` that ``passed``: the pick's correctness in expectation over the draw
        (an evaluation's figure without the draw's noise)."""
        return sum(bool(passed.get(c)) for c in self.pool) / len(self.pool)


def best_of(
    scores: Mapping[int, int],
    rng: random.Random,
    *,
    tests: int,
    source: str = "simulation",
    known: Collection[int] = (),
    agreement: Mapping[int, int] | None = None,
    same_as: Mapping[int, int] | None = None,
) -> Selection:
    """``scores`` maps candidate index -> matched public tests (only candidates with code);
    ``known`` holds the candidates known to fail without a simulation (they match none);
    ``agreement`` maps a candidate -> how many candidates are the same program (itself included);
    ``same_as`` maps a candidate -> the first candidate that is the same program (itself, if none
    earlier is)."""
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
    chosen = pool[0] if len(pool) == 1 else rng.choice(pool)
    if len(pool) > 1 and same_as is not None and len({same_as.get(c, c) for c in pool}) == 1:
        reason += f"; tied with {_listed(c for c in pool if c != chosen)}, the same program: the same pick"
        steps.append("copies")
    elif len(pool) > 1:
        reason += f"; tied with {_listed(c for c in pool if c != chosen)}{equally}, chosen at random"
        steps.append("random")
    return Selection(chosen, top, tied, f"candidate {chosen} {reason}", tuple(steps), tuple(pool))


def _listed(candidates: Iterable[int]) -> str:
    return ", ".join(str(c) for c in candidates)
