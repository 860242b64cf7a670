"""The simulate prompt: code + one input -> a natural-language execution trace (NLEX) that ends in
the predicted output, without running anything.

- call problems, CRUXEval style: ``[PYTHON] code + assert f(...) == ?? [/PYTHON]`` answered by
  ``[THOUGHT] ... [/THOUGHT] [ANSWER] assert f(...) == X [/ANSWER]`` (stop string ``[/ANSWER]``);
- stdin/stdout programs: the same ``[PYTHON]`` block plus ``<input>``, answered by
  ``[THOUGHT] ... [/THOUGHT] <output> ... </output>`` (stop string ``</output>``), as in the
  Self-Execution Simulation paper's output-prediction environment.

The answer can also be asked for at once, without a narration: ``answer_prefill`` is a reply whose
thought is empty and whose answer has begun, sent as a prefilled assistant turn with a budget of
``ANSWER_TOKENS``. The pipeline does so when ``RunSettings.narrate`` is off (the quicker option) and
for a narration that ran out of its budget before its answer (a small model's repetitions, mostly),
which would otherwise predict nothing; the looping narration is left out of that request (it makes
the answer worse, docs/results.md#simulation).
"""

from __future__ import annotations

VERSION = "simulate-v2"  # v2: the answer asked for at once (answer_prefill), unless narrating
SYSTEM = (
    "You simulate Python programs step by step in your head, without running them, "
    "and report the exact result."
)
CALL_STOP = ("[/ANSWER]",)
STDIN_STOP = ("</output>",)
ANSWER_TOKENS = 128  # an answer asked for at once: a literal, not a narration

_CALL_INSTRUCTION = (
    "Execute the program step by step and complete the assertion with the literal value it returns. "
    "Think inside [THOUGHT] [/THOUGHT], then give the full assertion inside [ANSWER] [/ANSWER].\n"
)
_CALL_EXAMPLE = (
    "[PYTHON]\ndef f(xs):\n    total = 0\n    for x in xs:\n        total += x * 2\n    return total\n"
    "assert f([1, 2]) == ??\n[/PYTHON]"
)
_CALL_ANSWER = (
    "[THOUGHT] f is called with xs = [1, 2]. total starts at 0. For x = 1, total becomes 2. "
    "For x = 2, total becomes 6. The loop ends and f returns 6. [/THOUGHT] "
    "[ANSWER] assert f([1, 2]) == 6 [/ANSWER]"
)
_STDIN_INSTRUCTION = (
    "Execute the program step by step on the given standard input. Think inside [THOUGHT] [/THOUGHT], "
    "then write exactly what the program prints inside <output> </output>.\n"
)
_STDIN_EXAMPLE = (
    "[PYTHON]\nn = int(input())\nfor i in range(n):\n    print(i * i)\n[/PYTHON]\n<input>\n3\n</input>"
)
EXAMPLE_OUTPUT = "0\n1\n4\n"  # what the example program prints: a copy of it is not a simulation
_STDIN_ANSWER = (
    "[THOUGHT] n is read as 3. The loop runs for i = 0, 1, 2 and prints 0, 1 and 4 on separate lines. "
    f"[/THOUGHT]\n<output>\n{EXAMPLE_OUTPUT}</output>"
)


def call_messages(code: str, call: str) -> list[dict[str, str]]:
    """Messages to predict the value of ``call`` (an expression such as ``f(1, 2)``) after ``code``."""
    user = f"{_CALL_INSTRUCTION}[PYTHON]\n{code.rstrip()}\nassert {call} == ??\n[/PYTHON]"
    return _messages(_CALL_INSTRUCTION + _CALL_EXAMPLE, _CALL_ANSWER, user)


def stdin_messages(code: str, stdin: str) -> list[dict[str, str]]:
    """Messages to predict what ``code`` prints when fed ``stdin``."""
    shown = stdin if stdin.endswith("\n") or not stdin else stdin + "\n"
    user = f"{_STDIN_INSTRUCTION}[PYTHON]\n{code.rstrip()}\n[/PYTHON]\n<input>\n{shown}</input>"
    return _messages(_STDIN_INSTRUCTION + _STDIN_EXAMPLE, _STDIN_ANSWER, user)


def _messages(example: str, answer: str, user: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": example},
        {"role": "assistant", "content": answer},
        {"role": "user", "content": user},
    ]


EMPTY_THOUGHT = "[THOUGHT]\n[/THOUGHT]\n"  # how a reply that answers at once begins


def answer_prefill(call: str | None) -> str:
    """The start of a reply that answers at once: an empty thought, then ``[ANSWER] assert call ==``
    (``call`` given) or ``<output>``; the model writes the value."""
    return EMPTY_THOUGHT + _answer_opener(call)


def answer_after(narration: str, call: str | None) -> str:
    """What a narration that stopped before its answer is followed by, for the reply to go on with
    the answer: the thought closed (unless it is), then the answer begun as ``answer_prefill`` begins
    it."""
    closing = "" if narration.rstrip().endswith("[/THOUGHT]") else "[/THOUGHT]\n"
    return ("" if narration.endswith("\n") else "\n") + closing + _answer_opener(call)


def forced_answer(narration: str, call: str | None, cut: bool) -> tuple[str, str]:
    """How to ask for the answer a narration ended without: (the assistant turn to send, what the
    reply shows between the narration and the answer). A narration the token budget cut loops, so
    the answer is asked at once, without it; one that stopped is whole but for its answer, so the
    reply goes on from it (docs/results.md#simulation)."""
    if cut:
        prefill = answer_prefill(call)
        return prefill, "\n" + prefill
    after = answer_after(narration, call)
    return narration + after, after


def _answer_opener(call: str | None) -> str:
    return f"[ANSWER]\nassert {call} ==" if call is not None else "<output>\n"


def answered(text: str, call: str | None) -> bool:
    """Whether a reply has begun its answer (then a cut reply is left as it is)."""
    return ("[ANSWER]" if call is not None else "<output>") in text


def copied(predicted: str | None, stdin: str | None) -> str | None:
    """What a stdin program's predicted output is a copy of, when it is one, token for token:
    ``"input"`` (the program's own input, given just above the answer) or ``"example"`` (the
    prompt's example output); None otherwise. A small model copies instead of simulating
    (docs/results.md#stdin-problems); a program may really print either, so the page says "may have
    copied"."""
    if predicted is None or not predicted.split():
        return None
    if stdin and predicted.split() == stdin.split():
        return "input"
    if predicted.split() == EXAMPLE_OUTPUT.split():
        return "example"
    return None
