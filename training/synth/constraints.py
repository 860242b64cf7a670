"""ExecVerify's synthesis constraints: which built-in to test and how hard the program must be.

Six levels of increasing difficulty (reference/papers.md, "Data synthesis"):

1. nested calls only (at least two levels), no control flow;
2. + additional built-in methods;
3. + control flow nested to depth 1;
4. + depth 2;
5. + depth 3;
6. + a helper called by the entry function (control flow depth 3 inside the helper).

A ``Constraint`` drives both sources: the rule-based generator (no model) and the prompt sent to a
served model, so the two produce comparable programs and the same checks apply to both.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from typing import Any

# The focal methods per type (ExecVerify lists dict, float, list, set, str, tuple, plus builtins).
METHODS: dict[str, tuple[str, ...]] = {
    "str": (
        "upper",
        "lower",
        "swapcase",
        "title",
        "capitalize",
        "strip",
        "replace",
        "split",
        "join",
        "count",
        "find",
        "startswith",
        "endswith",
        "isalpha",
        "center",
        "zfill",
    ),
    "list": ("append", "count", "sort", "reverse", "extend", "insert", "pop", "copy"),
    "dict": ("get", "keys", "values", "items", "update", "setdefault"),
    "set": ("add", "union", "intersection", "difference", "symmetric_difference"),
    "tuple": ("count", "index"),
    "int": ("bit_length",),
    "float": ("is_integer",),
    "builtin": ("enumerate", "zip", "range", "filter", "sorted", "reversed", "sum", "max", "min", "len"),
}
CONTROL_KINDS = ("if", "for", "while", "if-elif")


@dataclass(frozen=True)
class Level:
    number: int
    control_depth: int
    extra_methods: int
    helper: bool
    description: str


LEVELS: dict[int, Level] = {
    1: Level(1, 0, 0, False, "nested calls only (>= 2 levels), no control flow"),
    2: Level(2, 0, 2, False, "nested calls + additional built-in methods"),
    3: Level(3, 1, 2, False, "+ control flow nested to depth 1"),
    4: Level(4, 2, 2, False, "+ control flow nested to depth 2"),
    5: Level(5, 3, 2, False, "+ control flow nested to depth 3"),
    6: Level(6, 3, 2, True, "+ a helper function called by the entry function, depth 3"),
}


@dataclass(frozen=True)
class Constraint:
    """What one synthesised program must contain."""

    level: int
    type: str  # a key of METHODS
    method: str  # the focal method (or builtin) the program tests
    control: tuple[str, ...] = ()  # control structures, outermost first, each nested in the previous
    extra_methods: int = 0
    helper: bool = False

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["control"] = list(self.control)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Constraint:
        return cls(**{**data, "control": tuple(data.get("control", ()))})


def draw_constraint(level: int, rng: random.Random) -> Constraint:
    """A random constraint at ``level`` (deterministic for a seeded ``rng``)."""
    if level not in LEVELS:
        raise ValueError(f"level must be 1..6, not {level}")
    spec = LEVELS[level]
    type_ = rng.choice(sorted(METHODS))
    method = rng.choice(METHODS[type_])
    control = tuple(rng.choice(CONTROL_KINDS) for _ in range(spec.control_depth))
    if control and control[0] in ("if", "if-elif") and spec.control_depth > 1:
        # A loop somewhere makes deeper nesting meaningful; the outermost one iterates over the data.
        control = ("for", *control[1:])
    return Constraint(level, type_, method, control, spec.extra_methods, spec.helper)


_CONTROL_WORDS = {"if": "an if statement", "for": "a for statement", "while": "a while statement"}
_CONTROL_WORDS["if-elif"] = "an if-elif statement"


def constraint_prompt(constraint: Constraint) -> str:
    """The generation prompt for a served model (ExecVerify's wording and hard rules)."""
    if constraint.type == "builtin":
        focus = f"Write a Python function that tests the built-in `{constraint.method}`."
    else:
        focus = (
            f"Write a Python function that tests the `{constraint.method}` method "
            f"of the `{constraint.type}` type."
        )
    rules = [
        "Use nested calls of at least two levels (a call whose argument is another call).",
    ]
    if constraint.extra_methods:
        rules.append(f"Use at least {constraint.extra_methods} other built-in methods as well.")
    if constraint.control:
        words = [_CONTROL_WORDS[c] for c in constraint.control]
        nesting = words[0] + "".join(f", nest {w} inside it" for w in words[1:])
        rules.append(f"Include {nesting}.")
    else:
        rules.append("Do not use any control flow (no if, for or while).")
    if constraint.helper:
        rules.append("Put the control flow in a helper function, and call the helper from the function `f`.")
    rules += [
        "The entry function is named `f`.",
        "Do not write comments.",
        "Every function takes at least one argument; no default parameter values.",
        "Write exactly one `print(...)`, outside the function, that calls `f` once with concrete arguments.",
        "Answer with the code only, in one ```python fenced block.",
    ]
    return focus + "\n" + "\n".join(f"- {rule}" for rule in rules)
