"""What the trace explorer shows beside a real trace: the deterministic narration split into sentences,
each tied to the trace step it describes, so a viewer can show "the narration of the current step".

The stepper shows ``stepper_sentences`` (``simulator.nlex.narrator.step_sentences``): one sentence
per executed line of every frame, callees and recursive calls included, each on the step where the
line's effects show, so the sentence agrees with the values on screen. The sentence for step i is
the last one placed at or before i (``sentence_at``).
"""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass
from typing import Any

from simulator.execution.program import Program
from simulator.execution.trace import ADDRESS_MARK, Objects, Trace
from simulator.nlex.narrator import step_sentences
from simulator.source import parse_python

UNTRACED = "(set before the call: not traced)"


@dataclass
class Sentence:
    text: str
    step: int


def sentence_at(sentences: list[Sentence], step: int) -> Sentence | None:
    """The sentence describing step ``step``: the last one placed at or before it."""
    found = None
    for sentence in sentences:
        if sentence.step <= step:
            found = sentence
    return found


def stepper_sentences(trace: Trace, program: Program) -> list[Sentence]:
    """The stepper's narration: a sentence for every executed line of every frame (see the module doc)."""
    return [Sentence(text=text, step=step) for step, text in step_sentences(trace, program)]


def global_names(program: Program) -> list[dict[str, Any]]:
    """Call mode runs the definitions untraced and traces only the call, so the trace has no module
    frame; this is what Python Tutor's Global frame would show, read from the code's top level:
    ``{"name", "value": {"repr", "type"}}`` for each function and class (as the trace records such
    values), module imported, and name bound to a literal (its value); another top-level name is
    listed with ``untraced: true`` and no value. [] for a script (its module frame is traced) and for
    code that does not parse."""
    if program.shape != "call":
        return []
    try:
        tree = parse_python(program.code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    found: dict[str, dict[str, Any]] = {}

    def bind(name: str, value: dict[str, Any], untraced: bool = False) -> None:
        found[name] = {"name": name, "value": value, **({"untraced": True} if untraced else {})}

    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            bind(node.name, {"repr": f"<function {node.name} at 0x...>", "type": "function"})
        elif isinstance(node, ast.ClassDef):
            bind(node.name, {"repr": f"<class '{node.name}'>", "type": "type"})
        elif isinstance(node, ast.Import):
            for alias in node.names:
                module = alias.name if alias.asname else alias.name.split(".")[0]
                bind(alias.asname or module, {"repr": f"<module '{module}'>", "type": "module"})
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name != "*":
                    bind(alias.asname or alias.name, {"repr": UNTRACED, "type": ""}, untraced=True)
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            try:
                literal = ast.literal_eval(node.value)
                value = {"repr": repr(literal)[:1000], "type": type(literal).__name__}
                untraced = False
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                value, untraced = {"repr": UNTRACED, "type": ""}, True
            for name in names:
                bind(name, value, untraced)
    return list(found.values())


def returned_shown(trace: Trace) -> dict[int, str]:
    """Per return step whose value shows a memory address (an instance with the default repr), that
    value as the narration tells it from the heap (``Node(value=1, next=None)``), for the event line
    and the result, which would otherwise show ``<__program__.Node object at 0x...>``."""
    objects = Objects(trace)
    shown = {}
    for step in trace.steps:
        if step.event == "return" and step.value is not None and ADDRESS_MARK in step.value.repr:
            value = objects.returned(step)
            if value is not None and value.repr != step.value.repr:
                shown[step.index] = value.repr
    return shown


def result_shown(trace: Trace) -> str | None:
    """What the traced call returned, as the narration tells it (``returned_shown`` of the outermost
    frame's last return), when its repr shows a memory address; None otherwise."""
    returns = [s for s in trace.steps if s.event == "return" and s.depth == 0]
    return returned_shown(trace).get(returns[-1].index) if returns else None


def explorer_payload(trace: Trace, program: Program) -> dict[str, Any]:
    """Everything the explorer's script needs, as JSON: the trace (a return value that shows a memory
    address also as the narration tells it: ``value.shown``), the stepper's sentences, the program's
    shape and source lines, why the trace is partial ("" when it is whole), and in call mode the Global
    frame's names (``global_names``)."""
    data = trace.to_dict()
    for index, text in returned_shown(trace).items():
        data["steps"][index]["value"]["shown"] = text
    return {
        "trace": data,
        "sentences": [asdict(s) for s in stepper_sentences(trace, program)],
        "lines": program.code.split("\n"),
        "shape": program.shape,
        "truncation": trace.truncation,
        "globals": global_names(program),
    }
