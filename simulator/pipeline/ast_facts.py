"""What the syntax tree of a program says without running it, for the static check (``static``): the
names it binds and loads, and which statements certainly run; the parameters of a function and what
its ``return`` statements give (a literal, the same value whatever the arguments, or values of a type
Python fixes). Conservative throughout: where a program could do what the tree does not show (``exec``,
``globals()``, a star import, a class or an import that may overload ``==``), nothing is claimed.
"""

from __future__ import annotations

import ast
import builtins
import inspect
from collections.abc import Iterator

from simulator.compare import NOT_LITERAL, literal
from simulator.problem import Problem

# Calls and statements through which a program can bind a name the check cannot see.
DYNAMIC = frozenset({"exec", "eval", "globals", "locals", "vars", "setattr", "__import__", "compile"})
# Names through which a stdin program may write to standard output (``sys.displayhook(4)`` prints).
WRITERS = frozenset(
    {"print", "pprint", "stdout", "__stdout__", "write", "writelines", "displayhook", "__displayhook__"}
)
# Names through which a stdin program may read its input.
READERS = frozenset(
    {"input", "stdin", "__stdin__", "open", "fileinput", "read", "readline", "readlines", "buffer"}
)
# Names through which a program may do what the check cannot see: run code, reach any module or builtin.
_OPAQUE = DYNAMIC | frozenset(
    {"getattr", "help", "breakpoint", "system", "popen", "exit", "quit", "_exit", "modules", "__dict__"}
    | {"__builtins__", "__loader__", "__spec__"}
)
# Modules a stdin program may import: none prints as it loads, or reads or writes but through the names above.
_QUIET_MODULES = frozenset(
    {"array", "bisect", "cmath", "collections", "copy", "dataclasses", "decimal", "enum", "fractions"}
    | {"functools", "heapq", "itertools", "math", "random", "re", "statistics", "string", "sys", "typing"}
)
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


def signature_of(args: ast.arguments) -> inspect.Signature:
    """The parameters of a ``def`` as ``inspect`` sees them (defaults stand in by a marker)."""
    kind = inspect.Parameter
    positional: list[tuple[ast.arg, inspect._ParameterKind]]
    positional = [(a, kind.POSITIONAL_ONLY) for a in args.posonlyargs]
    positional += [(a, kind.POSITIONAL_OR_KEYWORD) for a in args.args]
    first_default = len(positional) - len(args.defaults)
    params = [
        kind(a.arg, k, default=... if i >= first_default else kind.empty)
        for i, (a, k) in enumerate(positional)
    ]
    if args.vararg:
        params.append(kind(args.vararg.arg, kind.VAR_POSITIONAL))
    params += [
        kind(a.arg, kind.KEYWORD_ONLY, default=kind.empty if d is None else ...)
        for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
    ]
    if args.kwarg:
        params.append(kind(args.kwarg.arg, kind.VAR_KEYWORD))
    return inspect.Signature(params)


def shown_signature(signature: inspect.Signature) -> str:
    return str(signature).replace("=Ellipsis", "=...")


def _own_returns(entry: ast.FunctionDef) -> Iterator[ast.Return]:
    """The ``return`` statements of the function's own body (not of a nested def, class or lambda)."""
    stack: list[ast.AST] = list(entry.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.Return):
            yield node
        stack += ast.iter_child_nodes(node)


def returns_nothing(entry: ast.FunctionDef) -> bool:
    """No ``return`` in the function's own body gives a value other than None."""
    return all(r.value is None or literal(r.value) is None for r in _own_returns(entry))


def returned_literal(entry: ast.FunctionDef) -> str | None:
    """The value, as the program's run would show it (``repr``), of a literal the function returns
    as its first statement (after a docstring); None otherwise."""
    body = entry.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if not body or not isinstance(body[0], ast.Return) or body[0].value is None:
        return None
    value = literal(body[0].value)
    return None if value is NOT_LITERAL else repr(value)


def hard_coded(entry: ast.FunctionDef) -> str | None:
    """The value (``repr``) that a function with parameters returns whatever its arguments, or None:
    it returns a literal at once, or every ``return`` in its own body gives the same literal (or a
    conditional expression of it, ``7 if s == 'a' else 7``) and its body ends with one."""
    args = entry.args
    if not (args.posonlyargs or args.args or args.kwonlyargs or args.vararg or args.kwarg):
        return None
    if (at_once := returned_literal(entry)) is not None:
        return at_once
    if not entry.body or not isinstance(entry.body[-1], ast.Return):
        return None
    values: set[str] = set()
    for node in _own_returns(entry):
        branches: list[ast.expr | None] = [node.value]
        while branches:
            expr = branches.pop()
            if isinstance(expr, ast.IfExp):
                branches += [expr.body, expr.orelse]
                continue
            value = NOT_LITERAL if expr is None else literal(expr)
            if value is NOT_LITERAL:
                return None
            values.add(repr(value))
    return values.pop() if len(values) == 1 else None


# What a call of a builtin returns, whatever its arguments (or it raises); sum with one argument
# starts from 0, so it adds numbers or raises.
_CALL_TYPES = {
    **dict.fromkeys(("len", "ord", "int", "round"), "int"),
    **dict.fromkeys(("isinstance", "issubclass", "all", "any", "callable", "hasattr", "bool"), "bool"),
    **dict.fromkeys(("str", "repr", "chr", "ascii", "format"), "str"),
    **dict.fromkeys(("list", "sorted"), "list"),
    **dict.fromkeys(("tuple", "divmod"), "tuple"),
    "float": "float",
    "sum": "number",
    "set": "set",
    "frozenset": "frozenset",
    "dict": "dict",
    **{name: f"{name} object" for name in ("map", "filter", "zip", "reversed", "enumerate", "range")},
}
_DISPLAYS = {
    ast.List: "list",
    ast.ListComp: "list",
    ast.Tuple: "tuple",
    ast.Set: "set",
    ast.SetComp: "set",
    ast.Dict: "dict",
    ast.DictComp: "dict",
    ast.GeneratorExp: "generator",
    ast.JoinedStr: "str",
}
_NUMBERS = frozenset({"bool", "int", "float", "complex", "number"})
# modules whose values compare otherwise, or through which a program can change what a builtin returns
_OVERLOADING = frozenset({"numpy", "pandas", "sympy", "torch", "builtins"})


def wrong_type(
    entry: ast.FunctionDef, tree: ast.Module, bound: set[str], problem: Problem
) -> tuple[str, str] | None:
    """(what ``entry`` returns, what the public tests expect), as ``a list``, when no value it can
    return is ever equal to an expected one; None when one may be, or when that is not certain."""
    returned = _returned_types(entry, tree, bound)
    expected = set()
    for test in problem.public_tests:
        value = literal(test.output)
        if value is NOT_LITERAL:
            return None
        expected.add(type(value).__name__)
    if returned is None or any(_comparable(r, e) for r in returned for e in expected):
        return None
    return _a(returned), _a(expected)


def _returned_types(entry: ast.FunctionDef, tree: ast.Module, bound: set[str]) -> set[str] | None:
    """The types of the values ``entry`` can return (``NoneType`` when it may end without a return),
    when Python fixes each; None when one is not known."""
    if _may_overload(tree):
        return None
    types: set[str] = set()
    for node in _own_returns(entry):
        found = {"NoneType"} if node.value is None else _expression_types(node.value, bound)
        if found is None:
            return None
        types |= found
    if not entry.body or not isinstance(entry.body[-1], ast.Return | ast.Raise):
        types.add("NoneType")
    return types


def _expression_types(expr: ast.expr, bound: set[str]) -> set[str] | None:
    if isinstance(expr, ast.IfExp):
        body, orelse = _expression_types(expr.body, bound), _expression_types(expr.orelse, bound)
        return None if body is None or orelse is None else body | orelse
    if isinstance(expr, ast.Constant):
        return {type(expr.value).__name__}
    if (shown := _DISPLAYS.get(type(expr))) is not None:
        return {shown}
    if isinstance(expr, ast.Compare) or (isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not)):
        return {"bool"}
    if not isinstance(expr, ast.Call) or expr.keywords or any(isinstance(a, ast.Starred) for a in expr.args):
        return None
    func = expr.func
    if isinstance(func, ast.Name) and func.id in _CALL_TYPES and func.id not in bound:
        if func.id in ("sum", "round") and len(expr.args) != 1:  # a start value; round(x, n) keeps x's type
            return None
        return {_CALL_TYPES[func.id]}
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Constant)
        and isinstance(func.value.value, str)
        and func.attr in ("join", "format")
    ):
        return {"str"}
    return None


def _may_overload(tree: ast.Module) -> bool:
    """The program defines a class, or imports a module whose values compare otherwise (or
    ``builtins``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            return True
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            modules += [alias.name for alias in node.names]
            if any(m.split(".")[0] in _OVERLOADING for m in modules):
                return True
    return False


def _comparable(returned: str, expected: str) -> bool:
    """Whether a value of type ``returned`` may equal one of type ``expected`` (a literal's)."""
    if returned in _NUMBERS and expected in _NUMBERS:
        return True
    return returned == expected or {returned, expected} == {"set", "frozenset"}


def _a(types: set[str]) -> str:
    shown = [f"{'an' if t[0] in 'aeiou' else 'a'} {t}" for t in sorted(types - {"NoneType"})]
    shown += ["None"] if "NoneType" in types else []
    return " or ".join(shown)


def unbound_load(body: list[ast.stmt], bound: set[str]) -> ast.Name | None:
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
    names: list[ast.Name] = []
    stack: list[ast.AST] = [stmt]
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


def only_plain_def(tree: ast.Module, name: str) -> ast.FunctionDef | None:
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


def sealed(tree: ast.Module, names: frozenset[str]) -> bool:
    """The program has no way to use ``names`` (to write its output, or read its input): none of them
    as a name or attribute, nothing of ``_OPAQUE`` (dynamic code, ``sys.modules``, ...), and no
    import of a module outside ``_QUIET_MODULES`` (a module may print as it loads, or read)."""
    names = names | _OPAQUE
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names:
            return False
        if isinstance(node, ast.Attribute) and node.attr in names:
            return False
        if isinstance(node, ast.ImportFrom) and (
            node.level or (node.module or "").split(".")[0] not in _QUIET_MODULES
        ):
            return False
        if isinstance(node, ast.alias) and ({node.name, node.asname} & names or node.name == "*"):
            return False
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] not in _QUIET_MODULES for a in node.names
        ):
            return False
    return True


def bound_names(tree: ast.AST) -> set[str]:
    """Every name the program binds anywhere (at any depth, which errs towards "may pass"), plus the
    dynamic helpers it uses (``DYNAMIC``) and ``*`` for a star import."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store) or node.id in DYNAMIC:
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
