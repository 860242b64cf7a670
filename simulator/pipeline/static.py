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
  or a generator where any literal is (``_returned_types``). Only what Python fixes is used: builtins
  the program does not rebind, displays, comprehensions, f-strings, ``not`` and comparisons (not in a
  program that defines a class or imports numpy, pandas, sympy or torch, whose values may compare
  otherwise, or builtins); numbers compare with numbers (``1 == True == 1.0``), sets with frozensets.

One more is taken for wrong although it may pass a public test: a call problem's function with
parameters that returns the same literal whatever its arguments (``return 6``, ``return 7 if s ==
'x' else 7``): the test's answer written in, not computed. The model writes them as fixes: told that
a test expects 6, it returns 6; 23 of the 30 public-test "fixes" of two repair runs were such (the
rest nearly so), and none passed the private tests (docs/results.md, Issue 12 section 21).

The default model writes all six: guided "fixes" that were the test's own ``assert`` line alone,
test code after its function such as ``assert div_list(list1, list2) == [4.0, 2.5, 2.0]`` with
``list1`` defined nowhere, ``return 0`` above ``assert count_reverse_pairs([...]) == 2``. Its
simulations of them often claim the expected value (copied from the program itself in the last two
cases), so selection and repair took them for right ones (docs/results.md, Issue 12 sections
13-16; the last two were guided fixes that broke passing programs). The pipeline and the MBPP evaluation
judge them here, as a compiler or a linter would, instead of asking the model. The check is
conservative: a program that could bind a name in a way it cannot see (``exec``, ``globals()``, a
star import) passes it; a name bound anywhere, at any depth, counts as bound everywhere; lambdas,
generator expressions, generator functions, class bodies and annotations are not looked into; and
stdin programs get only the parse and compile checks (one may print its answer and ``exit()`` before
the failing line), and one more: a stdin program with no way to write to standard output (no
``print``, no ``sys.stdout``, no ``write``, no import but of a few quiet modules, nothing dynamic)
prints nothing, so it fails every public test that expects output; and one with no way to read its
input (no ``input``, no ``sys.stdin``, no ``open``, likewise) where a public test gives one prints the
same whatever the input: its answer written in, taken for wrong as a hard-coded function is. The
default model writes both for stdin problems: a function defined and never called (three of four
candidates of one "Square" run), ``n = 3`` then ``print(n * n)`` (the fourth); 136 of its 140 Code
Jam candidates with a program were one or the other (docs/results.md, Issue 12 section 33).

``known_failure`` also says what a run of such a program would show (``Failure.output``), for the
repair prompt (for a wrong type, whose value is not known: the type, ``a list``, which the fix
request reads as "A first attempt returned a list for ..., but the test expects (1, 2)."). It used
to read "returned [not simulated] twice takes (x), so ..." there, and the
model copied ``[not simulated]`` into its fix (23% of guided fix replies to such attempts did not
parse, against 5% for simulated ones; docs/results.md, Issue 12 section 21).
"""

from __future__ import annotations

import ast
import builtins
import inspect
from collections.abc import Iterator
from dataclasses import dataclass

from simulator.compare import NOT_LITERAL, literal
from simulator.nlex.verify import shorten
from simulator.pipeline.matching import problem_matches
from simulator.problem import Problem
from simulator.source import check_compiles, explain_syntax_error, parse_python

# Calls and statements through which a program can bind a name the check cannot see.
_DYNAMIC = frozenset({"exec", "eval", "globals", "locals", "vars", "setattr", "__import__", "compile"})
# Names through which a stdin program may write to standard output (``sys.displayhook(4)`` prints).
_WRITERS = frozenset(
    {"print", "pprint", "stdout", "__stdout__", "write", "writelines", "displayhook", "__displayhook__"}
)
# Names through which a stdin program may read its input.
_READERS = frozenset(
    {"input", "stdin", "__stdin__", "open", "fileinput", "read", "readline", "readlines", "buffer"}
)
# Names through which a program may do what the check cannot see: run code, reach any module or builtin.
_OPAQUE = _DYNAMIC | frozenset(
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
        if _sealed(tree, _WRITERS) and not any(
            problem_matches(problem, t.output, "") for t in problem.public_tests
        ):
            reason = f"the program {NO_OUTPUT} (no print), and every public test expects output"
            return Failure(reason, "")
        if _sealed(tree, _READERS) and any(t.input.strip() for t in problem.public_tests):
            reason = f"the program never reads its input (no input()), so it prints the same {NO_INPUT}"
            return Failure(reason, f"the same output {NO_INPUT}")
        return None
    name = problem.entry_point
    if problem.kind != "call" or not name or hasattr(builtins, name):
        return None
    bound = _bound_names(tree)
    if _DYNAMIC & bound or "*" in bound:
        return None
    if name not in bound:
        missing = _name_error(name, 1)  # raised by the test's call, line 1 of its own expression
        return Failure(f"the program does not define {name}, which the tests call", missing)
    never = "{0.id} is never defined (line {0.lineno}): "
    if found := _unbound_load(tree.body, bound):
        reason = never.format(found) + "the program raises NameError as it loads"
        return Failure(reason, _name_error(found.id, found.lineno))
    entry = _only_plain_def(tree, name)
    if entry is None:
        return None
    if found := _unbound_load(entry.body, bound):
        reason = never.format(found) + f"{name} raises NameError on every call"
        return Failure(reason, _name_error(found.id, found.lineno))
    if (refused := _refused_call(entry, problem)) is not None:
        return refused

    def unexpected(value: str) -> bool:
        return not any(problem_matches(problem, t.output, value) for t in problem.public_tests)

    returned = _returned_literal(entry)
    if returned is not None and unexpected(returned):
        reason = f"{name} returns {shorten(returned, 40)} on every call, which no public test expects"
        return Failure(reason, returned)
    if (constant := _hard_coded(entry)) is not None:
        reason = f"{name} returns {shorten(constant, 40)} {HARD_CODED}: written in, not computed"
        return Failure(reason, constant)
    if _returns_nothing(entry) and unexpected("None"):
        reason = f"{name} has no return with a value (it returns None), which no public test expects"
        return Failure(reason, "None")
    if (wrong := _wrong_type(entry, tree, bound, problem)) is not None:
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
    signature = _signature(entry.args)
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
    return Failure(f"{entry.name} takes {_shown(signature)}, so {said}", f"[runtime_error] {error}")


def _signature(args: ast.arguments) -> inspect.Signature:
    """The parameters of a ``def`` as ``inspect`` sees them (defaults stand in by a marker)."""
    kind = inspect.Parameter
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


def _shown(signature: inspect.Signature) -> str:
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


def _returns_nothing(entry: ast.FunctionDef) -> bool:
    """No ``return`` in the function's own body gives a value other than None."""
    return all(r.value is None or literal(r.value) is None for r in _own_returns(entry))


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


def _hard_coded(entry: ast.FunctionDef) -> str | None:
    """The value (``repr``) that a function with parameters returns whatever its arguments, or None:
    it returns a literal at once, or every ``return`` in its own body gives the same literal (or a
    conditional expression of it, ``7 if s == 'a' else 7``) and its body ends with one."""
    args = entry.args
    if not (args.posonlyargs or args.args or args.kwonlyargs or args.vararg or args.kwarg):
        return None
    if (at_once := _returned_literal(entry)) is not None:
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


def _wrong_type(
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


def _sealed(tree: ast.Module, names: frozenset[str]) -> bool:
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
