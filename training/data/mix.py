"""The SFT mix: one example kind per prompt the pipeline sends, in chosen proportions, and its data card.

    execsim train data ... --kinds simulate,repair,solve [--mix simulate=0.6,repair=0.25,solve=0.15]

Without ``--mix`` every example built is kept. With it, each kind is cut to its share (the kind that is
shortest for its share sets the total) by a seeded draw that keeps the styles' proportions inside the
kind (call, stdin and cruxeval simulations; call and stdin solutions), and the whole file is shuffled
(seeded) so every batch mixes kinds. The data card (``data-card.json`` and ``data-card.md``) says
where each kind comes from and how many of each were built and written.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

KINDS = ("simulate", "repair", "solve")
# --styles with stdin: solve examples of the stated tasks as stdin problems beside the call ones
STDIN_SOLVE = (
    "; style stdin: each stated task asked as a stdin problem (a line of input per argument), answered "
    "by its function, a line read per argument and the result printed (training.data.stdin_solve)"
)
SOURCES = {
    "simulate": "the simulate prompt (simulator.prompts.simulate; --styles) on synthesised programs and "
    "inputs, answered by the narration of the real trace (simulator.nlex.narrator); annotator exports",
    "repair": "guided fix requests (simulator.prompts.repair.fix_messages: the solve request told which "
    "public tests the attempt got wrong) on mutants (training.data.mutations) of synthesised programs that "
    "fail their public test in the sandbox, answered by the original program after the prefilled fence",
    "solve": "the solve prompt (simulator.prompts.solve, prefilled fence, stop at the closing fence) on "
    "the problem made from a synthesised program (its signature, or a stated task's statement) and tests, "
    "answered by that program (sandbox-checked against every test)" + STDIN_SOLVE,
}
# train data --solve-url: the solve answers are the served model's own, not the synthesised program
OWN_SOLVE_SOURCE = (
    "the solve prompt (simulator.prompts.solve) on the problem made from a synthesised program (its "
    "signature, or a stated task's statement) and tests, answered by the first of a served model's own "
    "replies to that request that passes every test in the sandbox (rejection sampling, "
    "training.data.solve.own_solve_examples)" + STDIN_SOLVE
)

# train data --fix-url: the guided fix answers are the served model's own replies, not the original
OWN_FIX_SOURCE = (
    "guided fix requests (simulator.prompts.repair.fix_messages) on mutants of synthesised programs that "
    "fail their public test in the sandbox, answered by a served model's own replies to that request: up "
    "to two distinct programs a request that run without an error on every test, passing ones first "
    "(training.data.repair.own_fix_examples)"
)


class MixError(ValueError):
    pass


def parse_kinds(spec: str) -> tuple[str, ...]:
    kinds = tuple(dict.fromkeys(k.strip() for k in spec.split(",") if k.strip()))
    if not kinds or any(k not in KINDS for k in kinds):
        raise MixError(f"--kinds takes a comma-separated subset of {', '.join(KINDS)}, not {spec!r}")
    return kinds


def parse_mix(spec: str, kinds: tuple[str, ...]) -> dict[str, float]:
    """``simulate=0.6,repair=0.3,solve=0.1`` -> shares summing to 1 over exactly ``kinds``."""
    shares: dict[str, float] = {}
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        name, _, value = part.partition("=")
        try:
            share = float(value)
        except ValueError:
            raise MixError(f"--mix takes KIND=SHARE pairs, not {part!r}") from None
        if name not in kinds or share <= 0:
            raise MixError(f"--mix: {part!r} names no chosen kind ({', '.join(kinds)}) or is not > 0")
        shares[name] = share
    if set(shares) != set(kinds):
        raise MixError(f"--mix must give a share to every chosen kind: {', '.join(kinds)}")
    total = sum(shares.values())
    return {k: shares[k] / total for k in kinds}


def mix(
    by_kind: dict[str, list[dict[str, Any]]], shares: dict[str, float] | None, seed: int = 0
) -> list[dict[str, Any]]:
    """Every example (``shares`` None) or each kind cut to its share; shuffled when several kinds."""
    rng = random.Random(seed)
    if shares is None:
        chosen = {k: list(v) for k, v in by_kind.items()}
    else:
        empty = [k for k in shares if not by_kind.get(k)]
        if empty:
            raise MixError(f"--mix gives a share to {', '.join(empty)}, but no such example was built")
        total = min(len(by_kind[k]) / share for k, share in shares.items())
        chosen = {k: _stratified(by_kind.get(k, []), int(total * share), rng) for k, share in shares.items()}
    examples = [e for kind in chosen for e in chosen[kind]]
    if len([k for k, v in chosen.items() if v]) > 1:
        rng.shuffle(examples)
    return examples


def _stratified(examples: list[dict[str, Any]], n: int, rng: random.Random) -> list[dict[str, Any]]:
    """``n`` of ``examples``, each style's share kept (largest remainders get the rounding)."""
    if n >= len(examples):
        return list(examples)
    groups: dict[str, list[dict[str, Any]]] = {}
    for example in examples:
        groups.setdefault(str(example.get("style")), []).append(example)
    exact = {style: n * len(group) / len(examples) for style, group in groups.items()}
    take = {style: int(x) for style, x in exact.items()}
    for style in sorted(exact, key=lambda s: exact[s] - take[s], reverse=True)[: n - sum(take.values())]:
        take[style] += 1
    picked = []
    for style, group in groups.items():
        picked += rng.sample(group, take[style])
    return picked


def data_card(
    *,
    built: dict[str, list[dict[str, Any]]],
    written: list[dict[str, Any]],
    shares: dict[str, float] | None,
    seed: int,
    details: dict[str, Any],
    sources: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Per kind: where it comes from (``SOURCES``, or ``sources`` for a kind built another way), how
    many were built and written, and per style."""
    kinds: dict[str, Any] = {}
    written_by = Counter(e["kind"] for e in written)
    styles = Counter((e["kind"], str(e.get("style"))) for e in written)
    for kind, examples in built.items():
        kinds[kind] = {
            "source": (sources or {}).get(kind, SOURCES[kind]),
            "built": len(examples),
            "written": written_by.get(kind, 0),
            "styles": {s: n for (k, s), n in sorted(styles.items()) if k == kind},
        }
    return {"kinds": kinds, "mix": shares, "seed": seed, "sft_examples": len(written), **details}


def card_markdown(card: dict[str, Any]) -> str:
    lines = [
        "# SFT data: data card",
        "",
        f"Seed {card['seed']}. Mix: {card['mix'] or 'every example built'}.",
    ]
    if card.get("narration") == "none":
        lines.append("Simulate completions: no narration, the answer at once (an empty thought).")
    elif card.get("narration"):
        lines.append(f"Simulate completions: the {card['narration']} NLEX style (simulator.nlex.narrator).")
    lines += ["", "| kind | built | written | styles | source |", "|---|---|---|---|---|"]
    for kind, row in card["kinds"].items():
        styles = ", ".join(f"{s} {n}" for s, n in row["styles"].items())
        lines.append(f"| {kind} | {row['built']} | {row['written']} | {styles} | {row['source']} |")
    if card.get("repair"):
        lines += ["", "Repair: " + ", ".join(f"{k} {v}" for k, v in card["repair"].items())]
    if card.get("solve"):
        lines += ["", "Solve (own solutions): " + ", ".join(f"{k} {v}" for k, v in card["solve"].items())]
    if card.get("solve_stdin"):
        lines += ["", "Solve (stdin): " + ", ".join(f"{k} {v}" for k, v in card["solve_stdin"].items())]
    lines += ["", "Programs are synthesised (training.synth); no example is drawn from a benchmark file."]
    return "\n".join(lines) + "\n"


def kind_counts(examples: list[dict[str, Any]]) -> dict[str, int]:
    """Examples per kind (rows written before kinds existed are simulations)."""
    return dict(sorted(Counter(e.get("kind", "simulate") for e in examples).items()))
