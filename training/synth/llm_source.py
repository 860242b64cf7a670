"""The second source: the same constraints as prompts to a served model (ExecVerify's own method).

The model answers with a fenced program that defines ``f`` and ends with exactly one ``print(f(...))``
outside the function (the hard rules in ``constraint_prompt``). We keep the function code, take the
call's arguments as the first input, add value mutations only when the argument types can be read
back from the literal arguments, and hand the record to the same filters as generated programs.
"""

from __future__ import annotations

import ast
import re

from simulator.source import parse_python
from training.synth.constraints import Constraint, constraint_prompt
from training.synth.records import IOPair, SynthRecord
from training.synth.sampler import Sampler

_FENCE = re.compile(r"```[ \t]*(?:python|py)?[^\n]*\n(.*?)```", re.DOTALL)


def parse_program(text: str, entry: str = "f") -> tuple[str, str] | None:
    """(function code without the print, argument source) from a model reply, or None when the reply
    breaks the rules (no fence, no ``f``, not exactly one ``print(f(...))`` at module level)."""
    match = _FENCE.search(text)
    source = match.group(1) if match else None
    if source is None:
        return None
    try:
        tree = parse_python(source)
    except SyntaxError:
        return None
    prints = [
        node
        for node in tree.body
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "print"
    ]
    defs = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    if len(prints) != 1 or entry not in {d.name for d in defs}:
        return None
    call = prints[0].value.args[0] if len(prints[0].value.args) == 1 else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == entry):
        return None
    if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    others = [n for n in tree.body if n not in defs and n is not prints[0]]
    if others:  # module-level state the call would depend on
        return None
    code = "\n\n".join(ast.get_source_segment(source, d) or "" for d in defs)
    args = ", ".join(ast.get_source_segment(source, a) or "" for a in call.args)
    return code, args


def from_model(
    constraints: list[Constraint],
    sampler: Sampler,
    *,
    temperature: float = 0.8,
    max_tokens: int = 768,
    id_prefix: str = "model",
) -> tuple[list[SynthRecord], int]:
    """One program per constraint from the model; returns (records, replies that broke the rules)."""
    replies = sampler.sample(
        [constraint_prompt(c) for c in constraints], n=1, temperature=temperature, max_tokens=max_tokens
    )
    records, broken = [], 0
    for i, (constraint, texts) in enumerate(zip(constraints, replies, strict=True)):
        parsed = parse_program(texts[0]) if texts else None
        if parsed is None:
            broken += 1
            continue
        code, args = parsed
        records.append(
            SynthRecord(
                id=f"{id_prefix}-L{constraint.level}-{i:06d}",
                source="model",
                level=constraint.level,
                constraint=constraint.to_dict(),
                code=code,
                io=[IOPair(args, "model")],
            )
        )
    return records, broken
