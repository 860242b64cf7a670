"""Small AST mutations of a correct program: the buggy attempts that repair examples start from.

Each mutant changes one node of the program, the kind of slip a model makes when it writes code:

- ``operator``: an arithmetic operator for another of the same precedence (``+``/``-``, ``*``/``//``,
  ``%``/``//``), in an expression or an augmented assignment (``+=`` -> ``-=``);
- ``comparison``: a comparison flipped or off by one (``<`` -> ``<=`` or ``>``, ``==`` -> ``!=``,
  ``in`` -> ``not in``);
- ``constant``: an integer literal off by one (``n`` -> ``n + 1`` or ``n - 1``);
- ``variable``: a variable read replaced by another variable of the same function;
- ``boolean``: ``and`` <-> ``or``, or a ``not`` dropped;
- ``call``: a built-in or method for its sibling (``min``/``max``, ``any``/``all``, ``upper``/``lower``,
  ``startswith``/``endswith``, ``lstrip``/``rstrip``, ``find``/``rfind``, ``index``/``rindex``).

Only the mutated node's text is rewritten (``ast.unparse`` of that node, in parentheses when needed), so
the rest of the attempt is byte-identical to the original and the fix is a one-place edit. Whether a
mutant is a bug is not decided here: ``training.data.repair`` runs it in the sandbox and keeps it only
when it really fails a test.
"""

from __future__ import annotations

import ast
import builtins
import copy
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from simulator.source import parse_python

KINDS = ("operator", "comparison", "constant", "variable", "boolean", "call")

_OPERATORS: dict[type, tuple[type, ...]] = {
    ast.Add: (ast.Sub,),
    ast.Sub: (ast.Add,),
    ast.Mult: (ast.FloorDiv,),
    ast.FloorDiv: (ast.Mult, ast.Mod),
    ast.Mod: (ast.FloorDiv,),
    ast.Div: (ast.Mult,),
}
_COMPARISONS: dict[type, tuple[type, ...]] = {
    ast.Lt: (ast.LtE, ast.Gt),
    ast.LtE: (ast.Lt, ast.GtE),
    ast.Gt: (ast.GtE, ast.Lt),
    ast.GtE: (ast.Gt, ast.LtE),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
}
_SYMBOLS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Div: "/",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.And: "and",
    ast.Or: "or",
}
_SIBLINGS = {
    "min": "max",
    "max": "min",
    "any": "all",
    "all": "any",
    "upper": "lower",
    "lower": "upper",
    "startswith": "endswith",
    "endswith": "startswith",
    "lstrip": "rstrip",
    "rstrip": "lstrip",
    "find": "rfind",
    "rfind": "find",
    "index": "rindex",
    "rindex": "index",
    "isdigit": "isalpha",
    "isalpha": "isdigit",
}
_BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True)
class Mutant:
    """One buggy variant: its code, the mutation kind, the (1-based) line it changed and what changed
    there, in words, from the mutant's side (``"`<` instead of `<=`"``: the mutant has ``<``), which a
    repair answer can state truthfully."""

    code: str
    kind: str
    line: int
    change: str


@dataclass(frozen=True)
class _Site:
    kind: str
    index: int  # the node's position in ``ast.walk`` order (the same for every parse of the code)
    apply: Callable[[ast.AST], ast.AST]  # the mutated copy of the node (a new node, or the node changed)
    change: str


def mutants(code: str) -> list[Mutant]:
    """Every single-node mutant of ``code``, in source order of the walk; empty when it does not parse."""
    try:
        tree = parse_python(code)
    except (SyntaxError, ValueError, RecursionError):
        return []
    found = []
    for site in _sites(tree):
        mutant = _apply(code, site)
        if mutant is not None:
            found.append(mutant)
    return found


def sample(code: str, rng: random.Random, k: int) -> list[Mutant]:
    """Up to ``k`` distinct mutants, a kind drawn uniformly among those the program allows, then a site
    of that kind: so programs full of variables do not get only ``variable`` mutants."""
    by_kind: dict[str, list[Mutant]] = {}
    for mutant in mutants(code):
        by_kind.setdefault(mutant.kind, []).append(mutant)
    chosen: list[Mutant] = []
    while by_kind and len(chosen) < k:
        kind = rng.choice(sorted(by_kind))
        pool = by_kind[kind]
        chosen.append(pool.pop(rng.randrange(len(pool))))
        if not pool:
            del by_kind[kind]
    return chosen


def _sites(tree: ast.Module) -> Iterator[_Site]:
    nodes = list(ast.walk(tree))
    owners = _function_locals(tree)
    negated = {id(n.operand) for n in nodes if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub)}
    for index, node in enumerate(nodes):
        if isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in _OPERATORS:
            for new in _OPERATORS[type(node.op)]:
                change = f"`{_SYMBOLS[new]}` instead of `{_SYMBOLS[type(node.op)]}`"
                yield _Site("operator", index, _set_op(new), change)
        elif isinstance(node, ast.Compare):
            for position, op in enumerate(node.ops):
                for new in _COMPARISONS.get(type(op), ()):
                    change = f"`{_SYMBOLS[new]}` instead of `{_SYMBOLS[type(op)]}`"
                    yield _Site("comparison", index, _set_compare(position, new), change)
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            sign = -1 if id(node) in negated else 1  # ``-1`` is ``-`` applied to the literal 1
            for delta in (1, -1):
                new_value = node.value + delta
                if sign < 0 and new_value <= 0:  # would read ``-0`` or ``--1``
                    continue
                change = f"`{sign * new_value}` instead of `{sign * node.value}`"
                yield _Site("constant", index, _set_constant(new_value), change)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) in owners:
            for other in sorted(owners[id(node)] - {node.id}):
                yield _Site("variable", index, _set_name(other), f"`{other}` instead of `{node.id}`")
        elif isinstance(node, ast.BoolOp):
            new = ast.Or if isinstance(node.op, ast.And) else ast.And
            change = f"`{_SYMBOLS[new]}` instead of `{_SYMBOLS[type(node.op)]}`"
            yield _Site("boolean", index, _set_op(new), change)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield _Site("boolean", index, lambda n: n.operand, "a missing `not`")
        elif isinstance(node, ast.Call):
            name = _called_name(node.func)
            if name in _SIBLINGS:
                change = f"`{_SIBLINGS[name]}` instead of `{name}`"
                yield _Site("call", index, _set_called(_SIBLINGS[name]), change)


def _function_locals(tree: ast.Module) -> dict[int, set[str]]:
    """For each variable read inside a function (by node id): the function's own variables (its
    parameters and every name it assigns), the candidates a ``variable`` mutant may read instead.
    An inner function's reads belong to the inner function."""
    owners: dict[int, set[str]] = {}
    for function in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        names = {a.arg for a in function.args.args + function.args.kwonlyargs}
        names |= {
            n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        names -= _BUILTINS
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
                owners[id(node)] = names
    return owners


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _set_op(op: type) -> Callable[[ast.AST], ast.AST]:
    def apply(node: ast.AST) -> ast.AST:
        node.op = op()  # type: ignore[attr-defined]
        return node

    return apply


def _set_compare(position: int, op: type) -> Callable[[ast.AST], ast.AST]:
    def apply(node: ast.AST) -> ast.AST:
        node.ops[position] = op()  # type: ignore[attr-defined]
        return node

    return apply


def _set_constant(value: int) -> Callable[[ast.AST], ast.AST]:
    def apply(node: ast.AST) -> ast.AST:
        node.value = value  # type: ignore[attr-defined]
        return node

    return apply


def _set_name(name: str) -> Callable[[ast.AST], ast.AST]:
    def apply(node: ast.AST) -> ast.AST:
        node.id = name  # type: ignore[attr-defined]
        return node

    return apply


def _set_called(name: str) -> Callable[[ast.AST], ast.AST]:
    def apply(node: ast.AST) -> ast.AST:
        func = node.func  # type: ignore[attr-defined]
        if isinstance(func, ast.Name):
            func.id = name
        else:
            func.attr = name
        return node

    return apply


def _apply(code: str, site: _Site) -> Mutant | None:
    """The mutant's code: the node's source segment replaced by the mutated node's text, checked by
    parsing it back (the whole tree must be the mutated tree; parentheses are added when the
    surrounding code would otherwise read it differently). None when no text gives that tree."""
    tree = parse_python(code)
    node = list(ast.walk(tree))[site.index]
    original = copy.deepcopy(node)
    replacement = site.apply(node)
    if not _replace_in_parent(tree, node, replacement):
        return None
    expected = ast.dump(tree)
    start, end = _offsets(code, original)
    text = ast.unparse(replacement)
    for candidate in (text, f"({text})"):
        mutated = code[:start] + candidate + code[end:]
        try:
            if ast.dump(parse_python(mutated)) == expected and mutated != code:
                return Mutant(mutated, site.kind, original.lineno, site.change)
        except (SyntaxError, ValueError, RecursionError):
            continue
    return None


def _replace_in_parent(tree: ast.AST, node: ast.AST, replacement: ast.AST) -> bool:
    """Put ``replacement`` where ``node`` was (nothing to do when the node was changed in place);
    False when the node has no parent to hold it."""
    if replacement is node:
        return True
    for parent in ast.walk(tree):
        for name, value in ast.iter_fields(parent):
            if value is node:
                setattr(parent, name, replacement)
                return True
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if item is node:
                        value[i] = replacement
                        return True
    return False


def _offsets(code: str, node: ast.AST) -> tuple[int, int]:
    """Character offsets of a node's source segment (ast columns count UTF-8 bytes)."""
    lines = code.split("\n")

    def offset(lineno: int, col: int) -> int:
        prefix = lines[lineno - 1].encode()[:col].decode(errors="ignore")
        return sum(len(line) + 1 for line in lines[: lineno - 1]) + len(prefix)

    return (
        offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
        offset(node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]
    )
