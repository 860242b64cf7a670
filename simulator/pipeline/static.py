"""What is known about a program before it is simulated or run: whether it can pass a test at all.

A program fails every public test, whatever a simulation says, when

- it does not parse;
- a call problem's program never binds the function its tests call;
- a call problem's program loads a name it binds nowhere (and that is not a builtin) in a statement
  that certainly runs: at the top level before any ``if``, loop, ``try`` or ``with`` (the program
  raises ``NameError`` as it loads), or likewise in the called function's body (it raises on every
  call);
- a call problem's function returns a literal at once (``return 0``) that no public test expects.

The default model writes all four: guided "fixes" that were the test's own ``assert`` line alone,
test code after its function such as ``assert div_list(list1, list2) == [4.0, 2.5, 2.0]`` with
``list1`` defined nowhere, ``return 0`` above ``assert count_reverse_pairs([...]) == 2``. Its
simulations of them often claim the expected value (copied from the program itself in the last two
cases), so selection and repair took them for right ones (docs/results.md, Issue 12 sections
13-15). The pipeline and the MBPP evaluation
judge them here, as a compiler or a linter would, instead of asking the model. The check is
conservative: a program that could bind a name in a way it cannot see (``exec``, ``globals()``, a
star import) passes it; a name bound anywhere, at any depth, counts as bound everywhere; lambdas,
generator expressions, generator functions, class bodies and annotations are not looked into; and
stdin programs get only the parse check (one may print its answer and ``exit()`` before the failing
line).
"""

from __future__ import annotations

import ast
import builtins

from simulator.compare import NOT_LITERAL, literal
from simulator.nlex.verify import shorten
from simulator.pipeline.matching import problem_matches
from simulator.problem import Problem
from simulator.source import explain_syntax_error, parse_python

# Calls and statements through which a program can bind a name the check cannot see.
_DYNAMIC = frozenset({"exec", "eval", "globals", "locals", "vars", "setattr", "__import__", "compile"})
# Statements after which the next one may not run, or that run their bodies conditionally.
_BRANCHING = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.Try,
    ast.TryStar,
    ast.With,
    ast.AsyncWith,
    ast.Match,
)


def cannot_pass(problem: Problem, code: str) -> str | None:
    """Why ``code`` fails every public test of ``problem`` without being run, or None when it may pass."""
    try:
        tree = parse_python(code)
    except SyntaxError as exc:
        return f"the program does not parse: {explain_syntax_error(code, exc)}"
    name = problem.entry_point
    if problem.kind != "call" or not name or hasattr(builtins, name):
        return None
    bound = _bound_names(tree)
    if _DYNAMIC & bound or "*" in bound:
        return None
    if name not in bound:
        return f"the program does not define {name}, which the tests call"
    never = "{0.id} is never defined (line {0.lineno}): "
    if found := _unbound_load(tree.body, bound):
        return never.format(found) + "the program raises NameError as it loads"
    entry = _only_plain_def(tree, name)
    if entry is None:
        return None
    if found := _unbound_load(entry.body, bound):
        return never.format(found) + f"{name} raises NameError on every call"
    returned = _returned_literal(entry)
    if returned is not None and not any(
        problem_matches(problem, t.output, returned) for t in problem.public_tests
    ):
        return f"{name} returns {shorten(returned, 40)} on every call, which no public test expects"
    return None


def _returned_literal(entry: ast.FunctionDef) -> str | None:
    """The value, as the program's run would show it (``repr``), of a literal the function returns
    as its first statement (after a docstring); None otherwise."""
    body = entry.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if not body or not isinstance(body[0], ast.Return) or body[0].value is None:
        return None
    value = literal(body[0].value)
    return None if value is NOT_LITERAL else repr(value)


def _unbound_load(body: list[ast.stmt], bound: set[str]) -> ast.Name | None:
    """The first name loaded, but bound nowhere, by the statements of ``body`` certain to run: those
    before the first compound statement, up to a ``return`` or ``raise``."""
    for stmt in body:
        if isinstance(stmt, _BRANCHING):
            return None
        for node in _evaluated(stmt):
            if node.id not in bound and not hasattr(builtins, node.id) and not _dunder(node.id):
                return node
        if isinstance(stmt, ast.Return | ast.Raise):
            return None
    return None


def _evaluated(stmt: ast.stmt) -> list[ast.Name]:
    """The names a simple statement loads when it runs, in source order: not inside a lambda or a
    generator expression (they run later, if at all), nor in the body of a ``def`` or ``class``
    (their decorators, defaults and bases do run), nor in annotations."""
    names, stack = [], [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Lambda | ast.GeneratorExp):
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            stack += [*node.decorator_list, *node.args.defaults, *(d for d in node.args.kw_defaults if d)]
            continue
        if isinstance(node, ast.ClassDef):
            stack += [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
            continue
        if isinstance(node, ast.AnnAssign):  # a local's annotation is never evaluated (nor any, lazily)
            stack += [node.target, *([node.value] if node.value else [])]
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            names.append(node)
        stack += ast.iter_child_nodes(node)
    return sorted(names, key=lambda n: (n.lineno, n.col_offset))


def _only_plain_def(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    """The one top-level ``def name``, undecorated, not a generator, and ``name`` not bound otherwise:
    the function every test call certainly runs; None when that is not certain."""
    defs = [s for s in tree.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name == name]
    others = [
        n
        for n in ast.walk(tree)
        if (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == name)
        or (isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name == name)
        or (isinstance(n, ast.alias) and (n.asname or n.name) == name)
    ]
    if (
        len(defs) != 1
        or len(others) != 1
        or not isinstance(defs[0], ast.FunctionDef)
        or defs[0].decorator_list
    ):
        return None
    if any(isinstance(n, ast.Yield | ast.YieldFrom) for n in ast.walk(defs[0])):
        return None
    return defs[0]


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


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
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names
