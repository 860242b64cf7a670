"""The knobs of one run, validated, and their JSON form (the web app stores it on the Run row)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


class SettingsError(ValueError):
    """A setting out of range; ``field`` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


INT_RANGES = {  # the bounds of RunSettings' integer fields, which the command lines check too
    "k": (1, 64),
    "turns": (0, 20),
    "fixes": (1, 16),
    "sims": (1, 16),
    "max_tokens": (16, 32768),
    "concurrency": (1, 256),
}
REPAIR_MODES = ("guided", "model")  # how a repair turn is decided (RunSettings.repair)
TIE_BREAKS = ("agreement", "random", "likelihood")  # how Best@k breaks a tie (RunSettings.ties)


@dataclass(frozen=True)
class RunSettings:
    """k candidates, up to ``turns`` repair turns, ``sims`` simulations per test (majority vote);
    ``oracle`` drives selection and repair by real execution; ``real`` also runs the code for real and
    records where the simulation diverged. ``seed`` None draws one (recorded in the run).

    ``narrate``: each simulation narrates the run (NLEX) before its answer; off, the answer is asked
    for at once (``simulate.answer_prefill``). Repair (``turns=0``) and narration are off by default:
    on the dev split each lowers the score of the default model (docs/results.md, "Issue 12"); they
    come back on when training makes them help. "Simulate my code" always narrates.

    ``repair``: how each of the ``turns`` is decided. ``model`` is the Self-RLEF paper's scaffold: the
    model reads the feedback and answers ``#SUBMIT`` or a fix, in free form. ``guided`` (the default)
    leaves to the model only what it does reliably, writing a program: a program whose verdicts match
    every public test is submitted without asking; otherwise the solve request is sent again, told
    which public tests the attempt got wrong but not shown its code (``prompts.repair.fix_messages``;
    the reply is a program), and the fix replaces the attempt only when its verdicts match more
    public tests than the attempt's did; sampling (temperature > 0), a turn that kept no fix is
    asked again at the next turn. With the paper's free reply the default model's repairs
    parsed as neither 65-74% of the time and broke passing programs; shown its attempt, it copied
    it (docs/results.md, "Issue 12").

    ``fixes``: a guided turn samples this many replies in one request (one at temperature 0, where
    they would all be the same); of the new programs not known to fail (``static.cannot_pass``),
    the one whose verdicts match the most public tests is the fix. One reply in five is no new
    program (the attempt again, or code that does not parse), and a turn's replies often hold a
    passing program that is not the first (docs/results.md, "Issue 12").

    ``ties``: how Best@k breaks a tie between candidates that match as many public tests.
    ``agreement`` (the default) first by how many of the k candidates are the same program
    (``source.same_program``; self-consistency of code, nothing asked): on MBPP dev it picked a
    program passing every test +0.4 points more often than ties at random, confirmed on fresh runs
    (docs/results.md, "Issue 12" section 25); ``random`` as in the paper; ``likelihood`` first by
    how likely the model finds the expected outputs after each tied program (the log-probability of
    the expected answer as the end of the simulate request, ``ChatClient.score``; one prompt read per
    candidate and public test, nothing sampled; not shown to help, section 24); then at random among
    equals. Simulations rarely match, so most runs end in a tie."""

    k: int = 4
    turns: int = 0
    repair: str = "guided"
    fixes: int = 4
    sims: int = 1
    ties: str = "agreement"
    oracle: bool = False
    real: bool = False
    narrate: bool = False
    seed: int | None = None
    temperature: float = 0.8
    top_p: float = 0.95
    max_tokens: int = 512
    model: str | None = None
    concurrency: int = 8

    def __post_init__(self) -> None:
        for name, (low, high) in INT_RANGES.items():
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise SettingsError(name, f"must be an integer from {low} to {high}, not {value!r}")
        if self.repair not in REPAIR_MODES:
            raise SettingsError("repair", f"must be one of {', '.join(REPAIR_MODES)}, not {self.repair!r}")
        if self.ties not in TIE_BREAKS:
            raise SettingsError("ties", f"must be one of {', '.join(TIE_BREAKS)}, not {self.ties!r}")
        for name in ("oracle", "real", "narrate"):
            if not isinstance(getattr(self, name), bool):
                raise SettingsError(name, "must be true or false")
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0
        ):
            raise SettingsError("seed", f"must be a non-negative integer or null, not {self.seed!r}")
        if not _number(self.temperature) or not 0 <= self.temperature <= 2:
            raise SettingsError("temperature", f"must be a number from 0 to 2, not {self.temperature!r}")
        if not _number(self.top_p) or not 0 < self.top_p <= 1:
            raise SettingsError("top_p", f"must be a number in (0, 1], not {self.top_p!r}")
        if self.model is not None and (not isinstance(self.model, str) or not self.model.strip()):
            raise SettingsError("model", "must be a non-empty string or null")

    @property
    def fix_replies(self) -> int:
        """Replies a guided repair turn asks for: ``fixes`` when sampling, one at temperature 0 (the
        others would be the same reply)."""
        return self.fixes if self.temperature > 0 else 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> RunSettings:
        """Build from JSON; unknown keys are an error (a typo must not silently use a default)."""
        if not isinstance(data, dict):
            raise SettingsError("(top level)", "settings are a JSON object")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise SettingsError(unknown[0], f"unknown setting (known: {', '.join(sorted(known))})")
        return cls(**data)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
