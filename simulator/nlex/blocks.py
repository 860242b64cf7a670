"""The control-flow blocks of a program, by header line: what the narrator narrates ("starts the
loop", "the condition holds") and the checker checks such statements against."""

from __future__ import annotations

import ast

from simulator.source import parse_python


def control_blocks(code: str) -> tuple[dict[int, tuple[int, int]], dict[int, tuple[int, int]]]:
    """(loops, branches): a ``for``/``while`` header line -> (header, last line of the loop); an
    ``if``/``elif`` line -> (first, last line of its body). Code that does not parse has none."""
    try:
        tree = parse_python(code)
    except SyntaxError:
        return {}, {}
    loops: dict[int, tuple[int, int]] = {}
    branches: dict[int, tuple[int, int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.For | ast.While):
            loops[node.lineno] = (node.lineno, node.end_lineno or node.lineno)
        elif isinstance(node, ast.If) and node.body:
            body = node.body
            branches[node.lineno] = (body[0].lineno, body[-1].end_lineno or node.lineno)
    return loops, branches
