"""The simulate prompt: code + one input -> a natural-language execution trace (NLEX) that ends in
the predicted output, without running anything.

- call problems, CRUXEval style: ``[PYTHON] code + assert f(...) == ?? [/PYTHON]`` answered by
  ``[THOUGHT] ... [/THOUGHT] [ANSWER] assert f(...) == X [/ANSWER]`` (stop string ``[/ANSWER]``);
- stdin/stdout programs: the same ``[PYTHON]`` block plus ``<input>``, answered by
  ``[THOUGHT] ... [/THOUGHT] <output> ... </output>`` (stop string ``</output>``), as in the
  Self-Execution Simulation paper's output-prediction environment.

A narration that runs out of its token budget before the answer (a small model's repetitions, mostly)
is closed and the answer asked for at once: ``answer_prefill`` is that reply so far plus the end of
the thought and the start of the answer, sent back as a prefilled assistant turn with a budget of
``ANSWER_TOKENS`` (budget forcing). A reply cut by the limit otherwise predicts nothing at all.
"""

from __future__ import annotations

VERSION = "simulate-v2"  # v2: a narration cut by the budget gets its answer asked for (answer_prefill)
SYSTEM = (
    "You simulate Python programs step by step in your head, without running them, "
    "and report the exact result."
)
CALL_STOP = ("[/ANSWER]",)
STDIN_STOP = ("</output>",)
ANSWER_TOKENS = 128  # the forced answer's budget: a literal, not a second narration

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
_STDIN_ANSWER = (
    "[THOUGHT] n is read as 3. The loop runs for i = 0, 1, 2 and prints 0, 1 and 4 on separate lines. "
    "[/THOUGHT]\n<output>\n0\n1\n4\n</output>"
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


def answer_prefill(text: str, call: str | None) -> str | None:
    """The prefilled reply that asks at once for the answer a cut-off narration ``text`` never gave:
    the narration, ``[/THOUGHT]`` where it is missing, then ``[ANSWER] assert call ==`` (``call``
    given) or ``<output>``. None when the reply had already begun its answer."""
    opener = "[ANSWER]" if call is not None else "<output>"
    if opener in text:
        return None
    prefill = text if "[/THOUGHT]" in text else text + ("" if text.endswith("\n") else "\n") + "[/THOUGHT]"
    return prefill + (f"\n[ANSWER]\nassert {call} ==" if call is not None else "\n<output>\n")
