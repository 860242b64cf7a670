"""What is known about a program before it is simulated or run: whether it can pass a test at all.

A program fails every public test, whatever a simulation says, when

- it does not parse, or does not compile (``def f(a, a)``);
- a call problem's program never binds the function its tests call;
- a call problem's program loads a name it binds nowhere (and that is not a builtin) in a statement
  that certainly runs: at the top level before any ``if``, loop, ``try`` or ``with`` (the program
  raises ``NameError`` as it loads), or likewise in the called function's body (it raises on every
  call);
- a call problem's function returns a literal at once (``return 0``) that no public test expects;
- a call problem's function cannot be called with the arguments of any public test (a ``TypeError``:
  ``def f(n)`` called as ``f(3, 4)``);
- a call problem's function has no ``return`` with a value (it returns None, or raises) and no public
  test expects None;
- a call problem's function returns, by every ``return``, a value of a type that is never equal to
  what any public test expects: ``sum(...)``, ``len(...)`` or a comparison where a list is expected,
  a list (``sorted(...)``, ``[... for ...]``) where a tuple is, a ``map``/``filter``/``zip`` object
  or a generator where any literal is (``ast_facts.wrong_type``). Only what Python fixes is used: builtins
  the program does not rebind, displays, comprehensions, f-strings, ``not`` and comparisons (not in a
  program that defines a class or imports numpy, pandas, sympy or torch, whose values may compare
  otherwise, or builtins); numbers compare with numbers (``1 == True == 1.0``), sets with frozensets.

One more is taken for wrong although it may pass a public test: a call problem's function with
parameters that returns the same literal whatever its arguments (``return 6``, ``return 7 if s ==
'x' else 7``): the test's answer written in, not computed. Likewise a stdin program that cannot write
to standard output fails every public test that expects output, and one that cannot read its input
prints the same whatever the input, taken for wrong as a hard-coded function is. Stdin programs get
no other check (one may print its answer and ``exit()`` before a failing line).

The default model writes all of these, and its simulations of them often claim the expected value,
so selection and repair took them for right ones; the pipeline and the MBPP evaluation judge them
here, as a compiler or a linter would, instead of asking the model (docs/results.md#selection). The
check is conservative (``ast_facts``): it flags none of the dev splits' reference programs.

``known_failure`` also says what a run of such a program would show (``Failure.output``), for the
repair request (for a wrong type, whose value is not known: the type, ``a list``, which the request
reads as "A first attempt returned a list for ..., but the test expects (1, 2).").
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass

from simulator.nlex.verify import shorten
from simulator.pipeline.ast_facts import (
    DYNAMIC,
    READERS,
    WRITERS,
    bound_names,
    hard_coded,
    only_plain_def,
    returned_literal,
    returns_nothing,
    sealed,
    shown_signature,
    signature_of,
    unbound_load,
    wrong_type,
)
from simulator.pipeline.matching import problem_matches
from simulator.problem import Problem
from simulator.source import check_compiles, explain_syntax_error, parse_python

HARD_CODED = "whatever its arguments"  # in the reason of a hard-coded function's Failure
NO_INPUT = "whatever the input"  # in the reason of a stdin program that reads none
NO_OUTPUT = "never writes to standard output"  # in the reason of a stdin program that prints nothing


@dataclass(frozen=True)
class Failure:
    """Why a program is judged wrong without simulating it (it fails every public test, or is
    hard-coded), and what a run of it would show, in ``executor.real_output``'s form
    (``[runtime_error] NameError: ...``, the literal it returns): the repair prompt shows that, as it
    shows a simulated or real output."""

    reason: str
    output: str


def cannot_pass(problem: Problem, code: str) -> str | None:
    """Why ``code`` is judged wrong for ``problem`` without being run (it fails every public test, or
    is hard-coded), or None when it may be right."""
    failure = known_failure(problem, code)
    return None if failure is None else failure.reason


def known_failure(problem: Problem, code: str) -> Failure | None:
    """``cannot_pass`` with the output a run would show."""
    try:
        tree = parse_python(code)
    except SyntaxError as exc:
        return Failure(f"the program does not parse: {explain_syntax_error(code, exc)}", _syntax(exc))
    try:
        check_compiles(tree)
    except SyntaxError as exc:
        return Failure(f"the program does not compile: {explain_syntax_error(code, exc)}", _syntax(exc))
    if problem.kind == "stdin":
        if sealed(tree, WRITERS) and not any(
            problem_matches(problem, t.output, "") for t in problem.public_tests
        ):
            reason = f"the program {NO_OUTPUT} (no print), and every public test expects output"
            return Failure(reason, "")
        if sealed(tree, READERS) and any(t.input.strip() for t in problem.public_tests):
            reason = f"the program never reads its input (no input()), so it prints the same {NO_INPUT}"
            return Failure(reason, f"the same output {NO_INPUT}")
        return None
    name = problem.entry_point
    if problem.kind != "call" or not name or hasattr(builtins, name):
        return None
    bound = bound_names(tree)
    if DYNAMIC & bound or "*" in bound:
        return None
    if name not in bound:
        missing = _name_error(name, 1)  # raised by the test's call, line 1 of its own expression
        return Failure(f"the program does not define {name}, which the tests call", missing)
    never = "{0.id} is never defined (line {0.lineno}): "
    if found := unbound_load(tree.body, bound):
        reason = never.format(found) + "the program raises NameError as it loads"
        return Failure(reason, _name_error(found.id, found.lineno))
    entry = only_plain_def(tree, name)
    if entry is None:
        return None
    if found := unbound_load(entry.body, bound):
        reason = never.format(found) + f"{name} raises NameError on every call"
        return Failure(reason, _name_error(found.id, found.lineno))
    if (refused := _refused_call(entry, problem)) is not None:
        return refused

    def unexpected(value: str) -> bool:
        return not any(problem_matches(problem, t.output, value) for t in problem.public_tests)

    returned = returned_literal(entry)
    if returned is not None and unexpected(returned):
        reason = f"{name} returns {shorten(returned, 40)} on every call, which no public test expects"
        return Failure(reason, returned)
    if (constant := hard_coded(entry)) is not None:
        reason = f"{name} returns {shorten(constant, 40)} {HARD_CODED}: written in, not computed"
        return Failure(reason, constant)
    if returns_nothing(entry) and unexpected("None"):
        reason = f"{name} has no return with a value (it returns None), which no public test expects"
        return Failure(reason, "None")
    if (wrong := wrong_type(entry, tree, bound, problem)) is not None:
        returned, expected = wrong
        reason = f"{name} returns {returned}, never equal to {expected}, which the public tests expect"
        return Failure(reason, returned)
    return None


def _syntax(exc: SyntaxError) -> str:
    return f"[syntax_error] SyntaxError: {exc.msg} (line {exc.lineno})"


def _name_error(name: str, line: int) -> str:
    return f"[runtime_error] NameError: name '{name}' is not defined (line {line})"


def _refused_call(entry: ast.FunctionDef, problem: Problem) -> Failure | None:
    """Why Python refuses every public test's call of ``entry`` (``f takes (n), so f(3, 4) raises
    TypeError: ...``), or None when one of them may bind (or one's arguments are unpacked)."""
    signature = signature_of(entry.args)
    reasons = []
    for test in problem.public_tests:
        call = f"{entry.name}({test.input})"
        try:
            parsed = parse_python(call, mode="eval").body
        except SyntaxError:
            return None
        if (
            not isinstance(parsed, ast.Call)
            or any(isinstance(a, ast.Starred) for a in parsed.args)
            or any(k.arg is None for k in parsed.keywords)
        ):
            return None
        try:
            signature.bind(*parsed.args, **{k.arg: k.value for k in parsed.keywords if k.arg})
        except TypeError as exc:
            reasons.append((f"{shorten(call, 60)} raises TypeError: {exc}", f"TypeError: {exc}"))
            continue
        return None
    if not reasons:
        return None
    said, error = reasons[0]
    return Failure(f"{entry.name} takes {shown_signature(signature)}, so {said}", f"[runtime_error] {error}")
