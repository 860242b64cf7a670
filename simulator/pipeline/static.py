"""What is known about a program before it is simulated or run: whether it can pass a test at all.

A program that does not parse, or a call problem's program that never binds the function its tests
call, fails every test whatever a simulation says. The default model writes such programs (its guided
"fixes" were often the test's own ``assert`` line alone) and its simulations of them often claim the
expected value, so selection and repair took them for right ones (docs/results.md, Issue 12 section
13). The pipeline and the MBPP evaluation judge them here, as a compiler or a linter would, instead of
asking the model. The check is conservative: a program that could bind the name in a way it cannot
see (``exec``, ``globals()``, a star import) passes it.
"""

from __future__ import annotations

import ast
import builtins

from simulator.problem import Problem
from simulator.source import explain_syntax_error, parse_python

# Calls and statements through which a program can bind a name the check cannot see.
_DYNAMIC = frozenset({"exec", "eval", "globals", "locals", "vars", "setattr", "__import__", "compile"})


def cannot_pass(problem: Problem, code: str) -> str | None:
    """Why ``code`` fails every test of ``problem`` without being run, or None when it may pass."""
    try:
        tree = parse_python(code)
    except SyntaxError as exc:
        return f"the program does not parse: {explain_syntax_error(code, exc)}"
    name = problem.entry_point
    if problem.kind != "call" or not name or hasattr(builtins, name):
        return None
    bound = _bound_names(tree)
    if name in bound or _DYNAMIC & bound or "*" in bound:
        return None
    return f"the program does not define {name}, which the tests call"


def _bound_names(tree: ast.AST) -> set[str]:
    """Every name the program binds anywhere (at any depth, which errs towards "may pass"), plus the
    dynamic helpers it uses (``_DYNAMIC``) and ``*`` for a star import."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store) or node.id in _DYNAMIC:
                names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.Global | ast.Nonlocal):
            names.update(node.names)
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            names.add(node.name)
    return names
