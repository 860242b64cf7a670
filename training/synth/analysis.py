"""What a program's AST actually contains, to check it against the constraint it was written for.

Used on both sources (generated and model-written): a program is kept only when it has the constructs
its level claims (nested calls, distinct methods, control nesting depth, a helper call).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from simulator.source import parse_python
from training.synth.constraints import Constraint


@dataclass
class Features:
    call_depth: int = 0  # deepest nesting of calls (``a.b().c()`` and ``f(g(x))`` are 2)
    control_depth: int = 0  # deepest nesting of if/for/while (an ``elif`` is not a level)
    controls: set[str] = field(default_factory=set)  # "if", "for", "while", "elif"
    calls: set[str] = field(default_factory=set)  # called names: methods and builtins
    functions: list[str] = field(default_factory=list)
    helper_called: bool = False  # the entry function calls another function defined here
    lines: int = 0


def features(code: str, entry: str = "f") -> Features:
    """Parse ``code`` and measure it; raises SyntaxError for code that does not parse."""
    tree = parse_python(code)
    found = Features(lines=len([ln for ln in code.splitlines() if ln.strip()]))
    found.functions = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):
                found.calls.add(func.attr)
            elif isinstance(func, ast.Name):
                found.calls.add(func.id)
    found.call_depth = _call_depth(tree)
    found.control_depth = _control_depth(tree.body, found.controls)
    helpers = set(found.functions) - {entry}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == entry:
            called = {
                c.func.id for c in ast.walk(node) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
            }
            found.helper_called = bool(called & helpers)
    return found


def _call_depth(node: ast.AST) -> int:
    inner = max((_call_depth(child) for child in ast.iter_child_nodes(node)), default=0)
    return inner + 1 if isinstance(node, ast.Call) else inner


def _control_depth(body: list[ast.stmt], kinds: set[str]) -> int:
    deepest = 0
    for stmt in body:
        deepest = max(deepest, _stmt_depth(stmt, kinds))
    return deepest


def _stmt_depth(stmt: ast.stmt, kinds: set[str], is_elif: bool = False) -> int:
    if isinstance(stmt, ast.If):
        kinds.add("elif" if is_elif else "if")
        inner = _control_depth(stmt.body, kinds)
        if len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], ast.If):
            # ``elif``: the same level as its ``if``
            return max(1 + inner, _stmt_depth(stmt.orelse[0], kinds, is_elif=True))
        return 1 + max(inner, _control_depth(stmt.orelse, kinds))
    if isinstance(stmt, ast.For | ast.While):
        kinds.add("for" if isinstance(stmt, ast.For) else "while")
        return 1 + max(_control_depth(stmt.body, kinds), _control_depth(stmt.orelse, kinds))
    if isinstance(stmt, ast.FunctionDef):
        return _control_depth(stmt.body, kinds)
    if isinstance(stmt, ast.With | ast.Try):
        return _control_depth(stmt.body, kinds)
    return 0


def unmet(constraint: Constraint, found: Features) -> list[str]:
    """The ways a program falls short of its constraint (empty when it meets it)."""
    problems = []
    if found.call_depth < 2:
        problems.append(f"call nesting {found.call_depth} < 2")
    if len(found.calls) < 1 + constraint.extra_methods:
        problems.append(f"{len(found.calls)} distinct calls < {1 + constraint.extra_methods}")
    if constraint.method not in found.calls:
        problems.append(f"focal method {constraint.method!r} not called")
    want_depth = len(constraint.control)
    if found.control_depth != want_depth:
        problems.append(f"control depth {found.control_depth} != {want_depth}")
    for kind in set(constraint.control):
        needed = {"if-elif": "elif"}.get(kind, kind)
        if needed not in found.controls:
            problems.append(f"no {needed} statement")
    if constraint.helper and not found.helper_called:
        problems.append("the entry function calls no helper")
    return problems
