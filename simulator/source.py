"""Parsing what users give (Python source, JSON) so that hostile depth is a malformed input, not a crash.

CPython's parser and ``json`` answer input nested too deeply with ``RecursionError`` (``1+`` x 5000,
``[`` x 100000 in JSON) or ``MemoryError`` (``-`` x 100000), which nothing expects from a parse and which
reached users as tracebacks and 500s. These wrappers turn them into the errors a malformed input already
gives (``SyntaxError``, ``json.JSONDecodeError``), with a message in the user's terms, so that every
place that validates input (the problem format, the benchmark converters, ``Program.problems``, the
command line, the web forms through them) reports it at the field like any other mistake.

The same for characters Python source cannot hold (issue 51, item 14): a NUL made ``ast.parse`` raise
``ValueError`` and a lone surrogate (``\udc80`` in a JSON file) ``UnicodeEncodeError``, which callers
that catch ``SyntaxError`` let through; ``parse_python`` raises ``SyntaxError`` for both, naming the
character and where it is. And a JSON integer past ``int``'s 4,300-digit limit made ``json.loads``
raise a bare ``ValueError``; ``load_json`` reads it as JavaScript reads every number, as a float
(infinity), which the fields that take numbers then refuse as out of range.

``same_program`` says when two programs are one as far as a call of their functions can tell (a
repair that only adds test code is no fix).
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
import threading
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, Literal, overload

TOO_DEEP = "too deeply nested or too long for Python's parser"
TOO_DEEP_JSON = "too deeply nested"
CANNOT_HOLD = "which Python source cannot hold"
_UNSOURCEABLE = re.compile("[\x00\ud800-\udfff]")  # NUL and lone surrogates (a pair is one character)
# CPython 3.11's AST conversion keeps its recursion depth in state shared by all threads, so two threads
# parsing at once can fail with "SystemError: AST constructor recursion depth mismatch" (CPython
# gh-106905; the sandbox pool checks programs from a thread pool). Parsing is quick; one at a time.
_PARSE_LOCK = threading.Lock()


@overload
def parse_python(source: str, *, mode: Literal["exec"] = "exec", filename: str = "<input>") -> ast.Module: ...
@overload
def parse_python(source: str, *, mode: Literal["eval"], filename: str = "<input>") -> ast.Expression: ...
def parse_python(source: str, *, mode: str = "exec", filename: str = "<input>") -> ast.AST:
    """``ast.parse``; input too deeply nested for the parser, or holding a character Python source cannot
    hold (NUL, a lone surrogate), is a ``SyntaxError`` whose ``msg`` says so. The parser's warnings about
    the source (``'\\.'``: an invalid escape sequence) are the program's, not ours: they are not raised
    here (a run of the program shows them)."""
    found = _UNSOURCEABLE.search(source)
    if found is not None:
        line = source.count("\n", 0, found.start()) + 1
        column = found.start() - (source.rfind("\n", 0, found.start()) + 1) + 1
        raise SyntaxError(unsourceable(found.group()), (filename, line, column, None))
    with _as_the_parser(filename):
        return ast.parse(source, filename=filename, mode=mode)


def unsourceable(char: str) -> str:
    """Why ``char`` (NUL or a lone surrogate) cannot be in Python source."""
    return f"it holds {unsourceable_name(char)}, {CANNOT_HOLD}"


def unsourceable_name(char: str) -> str:
    """``char`` (NUL or a lone surrogate) named with its escape: the character itself cannot be
    printed as UTF-8, nor stored by PostgreSQL."""
    return "a NUL character (\\x00)" if char == "\x00" else f"a lone surrogate (\\u{ord(char):04x})"


def first_unsourceable(text: str) -> tuple[str, int] | None:
    """The first character of ``text`` Python source cannot hold, and its line (from 1); None if none."""
    found = _UNSOURCEABLE.search(text)
    if found is None:
        return None
    return found.group(), text.count("\n", 0, found.start()) + 1


def check_compiles(tree: ast.Module, *, filename: str = "<input>") -> None:
    """Raise the ``SyntaxError`` that compiling a parsed program finds and the parser does not (a
    duplicate parameter, ``return`` outside a function, ``nonlocal`` of nothing): such a program
    never runs a line. Warnings and depth as in ``parse_python``."""
    with _as_the_parser(filename):
        compile(tree, filename, "exec", dont_inherit=True)


@contextlib.contextmanager
def _as_the_parser(filename: str) -> Iterator[None]:
    """Around Python's parser or compiler: the source's own warnings are not raised, and input too
    deep for it is a ``SyntaxError`` (``TOO_DEEP``)."""
    try:
        with _PARSE_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            yield
    except (RecursionError, MemoryError):
        raise SyntaxError(TOO_DEEP, (filename, 1, 0, None)) from None


def unparse(node: ast.AST) -> str:
    """``ast.unparse``; a tree too deep to print again (it parsed, just) is a ``SyntaxError`` too."""
    try:
        return ast.unparse(node)
    except (RecursionError, MemoryError):
        raise SyntaxError(TOO_DEEP) from None


def _json_int(text: str) -> int | float:
    """A JSON integer as ``json`` reads it, unless it is too long for ``int`` (more than 4,300 digits:
    CPython's guard against quadratic conversion): then a float, infinite, as JavaScript reads it."""
    try:
        return int(text)
    except ValueError:
        return float(text)


def load_json(text: str | bytes) -> Any:
    """``json.loads``; a document nested too deeply is a ``json.JSONDecodeError`` (a ``ValueError``), and
    an integer too long for ``int`` reads as an infinite float (``_json_int``)."""
    try:
        return json.loads(text, parse_int=_json_int)
    except RecursionError:
        raise json.JSONDecodeError(TOO_DEEP_JSON, text if isinstance(text, str) else "", 0) from None


_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_BRACKET_NAMES = {"(": "parenthesis (", "[": "list", "{": "dict or set"}


def explain_syntax_error(source: str, exc: SyntaxError, *, column_shift: int = 0) -> str:
    """Why ``source`` does not parse, in the user's terms and with the position in ``source``.

    Brackets first ("the list opened with [ at column 1 is never closed", "the ) at column 5 does
    not close the [ opened at column 1"), else Python's message and where it points. ``exc`` came from
    parsing ``source`` wrapped in ``column_shift`` characters of prefix on its first line (``f(`` for
    an argument list), which the position given leaves out.
    """
    if exc.msg == TOO_DEEP:
        return TOO_DEEP
    found = _UNSOURCEABLE.search(source) if CANNOT_HOLD in exc.msg else None
    if found is not None:  # where it is in ``source`` itself (the shift does not apply)
        before = source[: found.start()]
        line, column = before.count("\n") + 1, found.start() - (before.rfind("\n") + 1) + 1
        multiline = "\n" in source.strip()
        return f"{exc.msg} at {f'line {line}, column {column}' if multiline else f'column {column}'}"
    multiline = "\n" in source.strip()

    def where(line: int, column: int) -> str:
        return f"line {line}, column {column}" if multiline else f"column {column}"

    stack: list[tuple[str, int, int]] = []
    quote: str | None = None
    for number, text in enumerate(source.split("\n"), start=1):
        column = 0
        while column < len(text):
            char = text[column]
            if quote:  # inside a string: only its closing quote (not escaped) matters
                if char == "\\":
                    column += 1
                elif text.startswith(quote, column):
                    column += len(quote) - 1
                    quote = None
            elif char == "#":
                break
            elif char in "'\"":
                quote = char * 3 if text.startswith(char * 3, column) else char
                column += len(quote) - 1
                start = (number, column + 1)
            elif char in _OPENERS:
                stack.append((char, number, column + 1))
            elif char in _CLOSERS:
                if not stack:
                    return f"the {char} at {where(number, column + 1)} closes nothing"
                opener, line, col = stack.pop()
                if _OPENERS[opener] != char:
                    return (
                        f"the {char} at {where(number, column + 1)} does not close the {opener} "
                        f"opened at {where(line, col)} (close it with {_OPENERS[opener]})"
                    )
            column += 1
        if quote and len(quote) == 1:
            return f"the string opened at {where(*start)} is never closed (add its closing {quote})"
    if quote:
        return f"the string opened at {where(*start)} is never closed (add its closing {quote})"
    if stack:
        opener, line, col = stack[-1]
        name = _BRACKET_NAMES[opener]
        opened = f"the {name} opened" if opener == "(" else f"the {name} opened with {opener}"
        return f"{opened} at {where(line, col)} is never closed (add its {_OPENERS[opener]})"
    line, column = exc.lineno or 1, exc.offset or 1
    if line == 1:
        column = max(1, column - column_shift)
    return f"{exc.msg} at {where(line, column)}"


def same_program(first: str, second: str, kind: str) -> bool:
    """Whether two programs differ at most in layout and comments, and for a ``call`` problem also
    in the test code a model writes after its function (``_without_test_code``): no call of their
    functions can tell them apart, only a simulation that copies the value of an added
    ``assert f(x) == expected``. A ``stdin`` program's top-level prints are its answer, so they count.
    Programs that do not parse are compared as text."""
    try:
        trees = parse_python(first), parse_python(second)
    except SyntaxError:
        return first.strip() == second.strip()
    bodies = [_without_test_code(t) if kind == "call" else t.body for t in trees]
    return [ast.dump(s) for s in bodies[0]] == [ast.dump(s) for s in bodies[1]]


def first_same(programs: Sequence[str], kind: str) -> list[int]:
    """For each of ``programs``, the index of the first of them that is the same program
    (``same_program``): its own index when none earlier is. Copies of one program share it."""
    firsts: list[int] = []
    for i, program in enumerate(programs):
        firsts.append(next(j for j in range(i + 1) if j == i or same_program(programs[j], program, kind)))
    return firsts


def agreement_counts(programs: Sequence[str], kind: str) -> list[int]:
    """For each of ``programs``, how many of them are the same program (``same_program``, itself
    included): the self-consistency of code that breaks Best@k's ties (``selection.best_of``), counted
    one way by the pipeline and by ``eval mbpp``, which measures it."""
    return [sum(same_program(program, other, kind) for other in programs) for program in programs]


def renamed_variables(before: str, after: str) -> dict[str, str] | None:
    """The renames (old name -> new name) that turn ``before`` into ``after`` when that is all a
    change does (layout and comments aside): the same program with some of the names it binds
    (variables, parameters) spelled otherwise, one for one. None when the programs differ otherwise,
    do not parse, or are the same program with no rename."""
    try:
        trees = [parse_python(before), parse_python(after)]
    except SyntaxError:
        return None
    names: list[list[str]] = [[], []]
    bound: list[set[str]] = [set(), set()]
    for tree, found, binds in zip(trees, names, bound, strict=True):
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                found.append(node.id)
                if isinstance(node.ctx, ast.Store | ast.Del):
                    binds.add(node.id)
                node.id = "_"
            elif isinstance(node, ast.arg):
                found.append(node.arg)
                binds.add(node.arg)
                node.arg = "_"
    if ast.dump(trees[0]) != ast.dump(trees[1]):
        return None
    forward: dict[str, str] = {}
    backward: dict[str, str] = {}
    for old, new in zip(names[0], names[1], strict=True):
        if forward.setdefault(old, new) != new or backward.setdefault(new, old) != old:
            return None
    renames = {old: new for old, new in forward.items() if old != new}
    if not renames or any(old not in bound[0] or new not in bound[1] for old, new in renames.items()):
        return None
    return renames


def _without_test_code(tree: ast.Module) -> list[ast.stmt]:
    """``tree``'s top-level statements less the test code a model writes after its function:
    ``assert`` statements, expressions standing alone (a comparison, a constant, a call of a plain
    name such as ``print(f(3))`` or ``f(3)``), ``if __name__ == "__main__":`` blocks, then
    assignments of a literal or such a call to names nothing left reads and no ``def``, ``class`` or
    ``import`` binds (``expected = [4.0, 2.5]``, ``result = f(3)``). A call standing alone can change
    a global only through a ``global`` statement, which this does not follow."""
    kept = [s for s in tree.body if not _is_test_code(s)]
    read = {
        n.id for s in kept for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    defined = {name for s in kept for name in _defines(s)}
    return [s for s in kept if not _test_value_assignment(s, read | defined)]


def _is_test_code(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Assert):
        return True
    if isinstance(stmt, ast.Expr):
        return isinstance(stmt.value, ast.Compare | ast.Constant) or _plain_call(stmt.value)
    if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare):
        return unparse(stmt.test).replace("'", '"') == '__name__ == "__main__"'
    return False


def _defines(stmt: ast.stmt) -> list[str]:
    """The names a ``def``, ``class`` or ``import`` statement binds."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [stmt.name]
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        return [(alias.asname or alias.name).split(".")[0] for alias in stmt.names]
    return []


def _plain_call(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name)


def _test_value_assignment(stmt: ast.stmt, taken: set[str]) -> bool:
    """An assignment of a literal or a plain call whose every target is a plain name not in ``taken``."""
    if isinstance(stmt, ast.Assign):
        targets, value = stmt.targets, stmt.value
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        targets, value = [stmt.target], stmt.value
    else:
        return False
    if not (_plain_call(value) or _literal(value)):
        return False
    return all(isinstance(t, ast.Name) and t.id not in taken for t in targets)


def _literal(node: ast.expr) -> bool:
    """Whether ``node`` is a literal; ``compare.literal`` says so too, but sits on a floor above this
    module (tests/test_project.py)."""
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True
