"""The model-free generator: each level has the constructs it claims, and output is deterministic."""

from __future__ import annotations

import random

import pytest

from training.synth.analysis import features, unmet
from training.synth.constraints import LEVELS, Constraint, constraint_prompt, draw_constraint
from training.synth.generator import generate_checked
from training.synth.inputs import inputs_for
from training.synth.pipeline import SynthConfig, generate_records


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_it_produces_the_constructs_each_level_claims(level):
    spec = LEVELS[level]
    for i in range(25):
        rng = random.Random(f"t:{level}:{i}")
        constraint = draw_constraint(level, rng)
        program = generate_checked(constraint, rng)
        found = features(program.code)
        assert found.call_depth >= 2, program.code  # nested calls at every level
        assert found.control_depth == spec.control_depth, program.code
        assert constraint.method in found.calls, program.code
        assert len(found.calls) >= 1 + spec.extra_methods, program.code
        assert found.helper_called == spec.helper, program.code
        if spec.control_depth == 0:
            assert not found.controls, program.code
        compile(program.code, "<program>", "exec")


def test_the_analysis_measures_what_the_levels_are_judged_by():
    code = (
        "def g(xs):\n"
        "    out = []\n"
        "    for x in xs:\n"
        "        while len(out) < 3:\n"
        "            if x > 2:\n"
        "                out.append(str(x).upper())\n"
        "            elif x:\n"
        "                out.append('a')\n"
        "            else:\n"
        "                out.append('b')\n"
        "    return out\n\n"
        "def f(xs):\n"
        "    return g(sorted(xs))\n"
    )
    found = features(code)
    assert (found.call_depth, found.control_depth) == (3, 3)  # append(upper(str(x))); elif is not a level
    assert found.controls == {"for", "while", "if", "elif"}
    assert found.helper_called
    assert {"append", "upper", "str", "sorted", "len", "g"} <= found.calls
    level5 = Constraint(5, "list", "append", ("for", "while", "if-elif"), 2, False)
    assert unmet(level5, found) == []
    assert unmet(Constraint(1, "str", "upper"), found) == ["control depth 3 != 0"]
    assert "no while statement" in unmet(
        Constraint(3, "str", "upper", ("while",)), features("def f(s):\n    return s.upper().lower()")
    )


def test_it_is_deterministic_for_a_seed():
    first = generate_records(SynthConfig(programs=12, seed=3))
    again = generate_records(SynthConfig(programs=12, seed=3))
    other = generate_records(SynthConfig(programs=12, seed=4))
    assert [r.to_dict() for r in first] == [r.to_dict() for r in again]
    assert [r.code for r in first] != [r.code for r in other]


def test_inputs_include_value_and_type_mutations():
    rng = random.Random(0)
    made = inputs_for([("s", "str"), ("nums", "list_int")], rng, value_mutations=2, type_mutations=1)
    kinds = [x.mutation for x in made]
    assert kinds == ["original", "value", "value", "type"]
    original = eval(f"({made[0].args},)")  # noqa: S307 - our own literal
    mutated = eval(f"({made[-1].args},)")  # noqa: S307
    assert (type(original[0]), type(original[1])) == (str, list)
    assert [type(v) for v in mutated] != [str, list]  # one argument changed type
    assert 5 <= len(original[1]) <= 15


def test_the_model_prompt_states_the_constraint():
    text = constraint_prompt(Constraint(6, "dict", "get", ("for", "while", "if"), 2, True))
    assert "`get` method of the `dict` type" in text
    assert (
        "Include a for statement, nest a while statement inside it, nest an if statement inside it." in text
    )
    assert "helper" in text and "exactly one `print(...)`" in text
    assert "Do not use any control flow" in constraint_prompt(Constraint(1, "str", "upper"))
