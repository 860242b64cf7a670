"""Normalised ASTs: the same program up to names, formatting, comments and docstrings hashes the same.

Used for deduplication (identifiers renamed, literals kept) and for decontamination against the
benchmarks (identifiers renamed *and* literals abstracted: a synthesised program that is a benchmark
program with other names or constants is still that benchmark program).
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import json
import warnings
from pathlib import Path

from simulator.source import parse_python

_BUILTINS = frozenset(dir(builtins))


class _Renamer(ast.NodeTransformer):
    def __init__(self, abstract_constants: bool) -> None:
        self.names: dict[str, str] = {}
        self.abstract_constants = abstract_constants

    def _canonical(self, name: str) -> str:
        if name in _BUILTINS and name not in self.names:
            return name
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.name = self._canonical(node.name)
        first = node.body[0] if node.body else None
        is_docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
        if is_docstring and isinstance(first.value.value, str) and len(node.body) > 1:
            node.body = node.body[1:]
        node.returns = None
        self.generic_visit(node)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._canonical(node.arg)
        node.annotation = None
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._canonical(node.id)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if self.abstract_constants:
            return ast.Constant(value=type(node.value).__name__)
        return node


def normalized(code: str, abstract_constants: bool = False) -> str:
    """The canonical dump of ``code``'s AST; raises SyntaxError if it does not parse."""
    tree = _Renamer(abstract_constants).visit(parse_python(code))
    return ast.dump(tree, annotate_fields=False, include_attributes=False)


def fingerprint(code: str, abstract_constants: bool = False) -> str:
    return hashlib.sha256(normalized(code, abstract_constants).encode()).hexdigest()[:24]


def benchmark_fingerprints(bench_dir: Path) -> dict[str, str]:
    """Fingerprint (literals abstracted) -> benchmark record id, over every program in the benchmark folder:
    CRUXEval ``code`` and MBPP reference ``code`` (Code Jam ships no programs)."""
    index: dict[str, str] = {}
    for path in sorted(bench_dir.glob("*/*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            for i, line in enumerate(handle):
                if '"code"' not in line[:20000]:
                    continue
                record = json.loads(line)
                code = record.get("code")
                if not isinstance(code, str):
                    continue
                try:
                    with (
                        warnings.catch_warnings()
                    ):  # benchmark code may hold invalid escapes: not ours to fix
                        warnings.simplefilter("ignore", (SyntaxWarning, DeprecationWarning))
                        key = fingerprint(code, abstract_constants=True)
                except SyntaxError:
                    continue
                rid = record.get("id", record.get("task_id", i))
                index.setdefault(key, f"{path.parent.name}/{rid}")
    return index
