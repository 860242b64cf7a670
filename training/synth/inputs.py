"""Inputs for synthesised programs: ExecVerify's reference values, then mutated values and types.

Reference values (reference/papers.md, "Input synthesis"): ints in [5, 20]; strings 50% alphanumeric of
length 5-10, 40% one character repeated 5-15 times, 10% with punctuation; collections of length 5-15.
Each program gets one original input, value mutations (same types, new values) and type mutations (one
argument changed to a neighbouring type, e.g. a list to a tuple, an int to a float); inputs a program
cannot run on are dropped later by the execution filter.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from typing import Any

# A neighbouring type for each type: the programs were written for the first, may still run on the second.
TYPE_MUTATIONS = {
    "str": "list_str",
    "int": "float",
    "float": "int",
    "list_int": "tuple_int",
    "tuple_int": "list_int",
    "list_str": "str",
    "set_int": "list_int",
    "dict_str_int": "list_str",
    "bool": "int",
}


@dataclass(frozen=True)
class SynthInput:
    args: str  # Python source of the argument list: the call is ``f(<args>)``
    mutation: str  # "original" | "value" | "type"


def value(type_: str, rng: random.Random) -> Any:
    """One reference value of ``type_``."""
    if type_ == "int":
        return rng.randint(5, 20)
    if type_ == "float":
        return round(rng.uniform(5, 20), rng.choice([0, 1, 2]))
    if type_ == "bool":
        return rng.random() < 0.5
    if type_ == "str":
        return _string(rng)
    size = rng.randint(5, 15)
    if type_ == "list_int":
        return [rng.randint(0, 20) for _ in range(size)]
    if type_ == "tuple_int":
        return tuple(rng.randint(0, 20) for _ in range(size))
    if type_ == "set_int":
        return set(rng.sample(range(0, 40), size))
    if type_ == "list_str":
        return [_string(rng, short=True) for _ in range(size)]
    if type_ == "dict_str_int":
        keys = {_string(rng, short=True) for _ in range(size)}
        return {k: rng.randint(0, 20) for k in sorted(keys)}
    raise ValueError(f"unknown type {type_!r}")


def _string(rng: random.Random, short: bool = False) -> str:
    roll = rng.random()
    if short:
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(1, 4)))
    if roll < 0.5:
        alphabet = string.ascii_letters + string.digits
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(5, 10)))
    if roll < 0.9:
        return rng.choice(string.ascii_lowercase) * rng.randint(5, 15)
    alphabet = string.ascii_letters + "!?.,;:-_ "
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(5, 10)))


def _source(values: list[Any]) -> str:
    return ", ".join(_repr(v) for v in values)


def _repr(v: Any) -> str:
    if isinstance(v, set):  # sorted, so the source text does not depend on set iteration order
        return "{" + ", ".join(repr(x) for x in sorted(v)) + "}" if v else "set()"
    return repr(v)


def inputs_for(
    params: list[tuple[str, str]], rng: random.Random, value_mutations: int = 2, type_mutations: int = 1
) -> list[SynthInput]:
    """The original input, ``value_mutations`` re-drawn ones and ``type_mutations`` with one argument's
    type changed; duplicates removed, order kept."""
    types = [t for _, t in params]
    made = [SynthInput(_source([value(t, rng) for t in types]), "original")]
    made += [SynthInput(_source([value(t, rng) for t in types]), "value") for _ in range(value_mutations)]
    for _ in range(type_mutations):
        changed = list(types)
        i = rng.randrange(len(changed))
        changed[i] = TYPE_MUTATIONS[changed[i]]
        made.append(SynthInput(_source([value(t, rng) for t in changed]), "type"))
    seen: set[str] = set()
    unique = []
    for item in made:
        if item.args not in seen:
            seen.add(item.args)
            unique.append(item)
    return unique
