"""Trace records: what a line tracer saw while a program ran, detached from live frames.

JSON schema (``Trace.to_dict``; documented in docs/trace-schema.md):

    {"schema_version": 1, "truncated": bool, "max_steps": int, "source": str, "error": str,
     "steps": [{"index": int, "event": "call"|"line"|"return"|"exception",
                "function": str, "line": int, "depth": int, "frame": int,
                "changed": {name: {"repr": str, "type": str}},
                "stdout": str, "value": {"repr": str, "type": str} | null}]}

Semantics, chosen so that a narrator and a claim checker can both walk the list in order:

- ``line`` steps: ``line`` is the line *about to run*; ``changed`` holds the locals whose value changed
  since the previous step of the same frame (the effect of the line executed before it) and ``stdout``
  what was printed since the previous recorded step (in practice: by the line executed before it). So
  the state *after* line N has run is found on the next step of the same frame.
- ``call``: ``changed`` holds the arguments. ``return``: ``value`` is the returned value (null when the
  frame is unwinding because of an exception) and ``changed`` the last line's effects.
  ``exception``: ``value`` is the exception (``type`` its class name, ``repr`` its repr).
- Only frames of the traced program are recorded (code compiled from the program's source), never
  the harness or the standard library. ``depth`` is 0 for the outermost recorded frame (module-level
  code of a script, or the called function in call mode) and grows by one per nested recorded call.
  ``frame`` numbers frame instances 1, 2, ... in the order they were entered (recursion tells apart).
- A repr longer than the tracer's cap ends with ``TRUNCATION_MARK``; addresses (``at 0x7f...``) are
  normalised to ``at 0x...`` so traces are deterministic.
- ``truncated`` is true when the step cap stopped recording (the program itself kept running);
  ``error`` is non-empty when the tracer disabled itself (its own fault, or the program replaced the
  trace function): the steps before it are still valid.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from simulator import SCHEMA_VERSION

Event = Literal["call", "line", "return", "exception"]
DEFAULT_MAX_STEPS = 10_000
TRUNCATION_MARK = "\u2026"


@dataclass(frozen=True)
class Value:
    repr: str
    type: str

    @property
    def truncated(self) -> bool:
        return self.repr.endswith(TRUNCATION_MARK)


@dataclass
class Step:
    index: int
    event: Event
    function: str
    line: int
    depth: int
    changed: dict[str, Value] = field(default_factory=dict)
    stdout: str = ""
    value: Value | None = None
    frame: int = 0


@dataclass
class Trace:
    steps: list[Step] = field(default_factory=list)
    truncated: bool = False
    max_steps: int = DEFAULT_MAX_STEPS
    source: str = ""
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION, **asdict(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trace:
        def value(v: dict[str, str] | None) -> Value | None:
            return Value(**v) if v else None

        steps = [
            Step(
                index=s["index"],
                event=s["event"],
                function=s["function"],
                line=s["line"],
                depth=s["depth"],
                changed={k: Value(**v) for k, v in s.get("changed", {}).items()},
                stdout=s.get("stdout", ""),
                value=value(s.get("value")),
                frame=s.get("frame", 0),
            )
            for s in data.get("steps", [])
        ]
        return cls(
            steps=steps,
            truncated=data.get("truncated", False),
            max_steps=data.get("max_steps", DEFAULT_MAX_STEPS),
            source=data.get("source", ""),
            error=data.get("error", ""),
        )

    @property
    def stdout(self) -> str:
        """Everything the traced frames printed, in order."""
        return "".join(step.stdout for step in self.steps)

    def render(self) -> str:
        """A PySnooper-style text listing, one step per line: stable, for golden files and terminals."""
        lines = []
        for step in self.steps:
            head = f"{step.index:>4} {'  ' * step.depth}{step.event:<9} {step.function}:{step.line}"
            parts = [head]
            for name, val in step.changed.items():
                parts.append(f"{name} = {val.repr} ({val.type})")
            if step.value is not None:
                parts.append(f"-> {step.value.repr} ({step.value.type})")
            if step.stdout:
                parts.append(f"stdout {step.stdout!r}")
            lines.append("  ".join(parts))
        if self.truncated:
            lines.append(f"(truncated at {self.max_steps} steps)")
        if self.error:
            lines.append(f"(tracer stopped: {self.error})")
        return "\n".join(lines) + "\n"
