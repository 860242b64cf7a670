"""What the trace explorer shows beside a real trace: the deterministic narration split into sentences,
each tied to the trace step it describes, so a viewer can show "the narration of the current step".

The stepper shows ``stepper_sentences`` (``simulator.nlex.narrator.step_sentences``): one sentence
per executed line of every frame, callees and recursive calls included, each on the step where the
line's effects show, so the sentence agrees with the values on screen. The sentence for step i is
the last one placed at or before i (``sentence_at``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from simulator.execution.program import Program
from simulator.execution.trace import Trace
from simulator.nlex.narrator import step_sentences


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


def explorer_payload(trace: Trace, program: Program) -> dict[str, Any]:
    """Everything the explorer's script needs, as JSON: the trace, the stepper's sentences, the
    program's shape and source lines, and why the trace is partial ("" when it is whole)."""
    return {
        "trace": trace.to_dict(),
        "sentences": [asdict(s) for s in stepper_sentences(trace, program)],
        "lines": program.code.split("\n"),
        "shape": program.shape,
        "truncation": trace.truncation,
    }
