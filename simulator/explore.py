"""What the trace explorer shows beside a real trace: the deterministic narration split into sentences,
each tied to the trace step it describes, so a viewer can show "the narration of the current step".

The stepper shows ``stepper_sentences`` (``simulator.nlex.narrator.step_sentences``): one sentence
per executed line of every frame, callees and recursive calls included, each on the step where the
line's effects show, so the sentence agrees with the values on screen. ``narration_sentences`` places
the checked narration text (the NLEX a model is trained on, outermost frame only, loops summarised).

Each narration line is placed at the step of its first checkable claim (``Line N`` -> the step where
line N is about to run; ``Lines A-B repeat K more times`` -> the last skipped visit); a line without
a claim (``The program starts.``) inherits the previous placement, and the answer after ``[/THOUGHT]``
sits on the last step. The sentence for step i is then the last one placed at or before i.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from simulator.execution.program import Program
from simulator.execution.trace import Trace
from simulator.nlex import check_text, narrate, program_names
from simulator.nlex.narrator import step_sentences

_MARKERS = frozenset({"[THOUGHT]", "[/THOUGHT]", "[ANSWER]", "[/ANSWER]"})


@dataclass
class Sentence:
    text: str
    step: int


def narration_sentences(trace: Trace, program: Program, text: str | None = None) -> list[Sentence]:
    """The narration (``narrate`` unless ``text`` is given) as sentences placed on trace steps."""
    if text is None:
        text = narrate(trace, program)
    result = check_text(text, trace, program_names(program.code))
    sentences: list[Sentence] = []
    offset = 0
    step = 0
    for line in text.split("\n"):
        end = offset + len(line)
        placed = [
            v.step
            for v in result.verdicts
            if v.step is not None and offset <= v.claim.start < end + 1 and v.claim.kind != "answer"
        ]
        if line.strip() == "[/THOUGHT]":  # what follows is the answer: the end of the execution
            step = max(len(trace.steps) - 1, 0)
        elif placed:
            step = min(placed)
        if line.strip() and line.strip() not in _MARKERS:
            sentences.append(Sentence(text=line, step=step))
        offset = end + 1
    return sentences


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
