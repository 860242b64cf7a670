"""The outcome of running one program: data, never an exception.

Statuses (a closed list; scripts rely on these names):

- ``ok``            ran to completion (all asserts held; stdout matched when an expected one was given)
- ``wrong_answer``  ran, but an assert failed or stdout differed from the expected one
- ``runtime_error`` an uncaught exception other than a failed assert
- ``syntax_error``  the code (or a test) does not parse
- ``timeout``       CPU-time or wall-clock limit exceeded
- ``memory_limit``  address-space limit exceeded (MemoryError or killed for it)
- ``output_limit``  stdout/stderr or a written file exceeded its cap
- ``killed``        the process died from a signal or exited without reporting (``os._exit``, segfault)
- ``invalid_input`` the request itself was malformed (no program was run)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal, get_args

from simulator import SCHEMA_VERSION

Status = Literal[
    "ok",
    "wrong_answer",
    "runtime_error",
    "syntax_error",
    "timeout",
    "memory_limit",
    "output_limit",
    "killed",
    "invalid_input",
]
STATUSES: tuple[str, ...] = get_args(Status)


@dataclass
class ExceptionInfo:
    type: str
    message: str
    line: int | None = None


@dataclass
class ExecutionResult:
    status: Status
    value: str | None = None  # repr of the call's return value
    value_type: str | None = None  # its type name
    stdout: str = ""
    stdout_truncated: bool = False
    stderr: str = ""
    stderr_truncated: bool = False
    exception: ExceptionInfo | None = None
    duration_s: float = 0.0
    peak_memory_kb: int | None = None
    message: str = ""  # a human explanation for statuses other than ok
    trace: Any = None  # a simulator.execution.trace.Trace when tracing was asked for

    def to_record(self, id: Any = None) -> dict[str, Any]:
        """The JSON record of the CLI (``run --json`` and each ``batch`` line)."""
        record = {"schema_version": SCHEMA_VERSION, "id": id}
        record.update(asdict(self))
        record["trace"] = self.trace.to_dict() if self.trace is not None else None
        return record

    @classmethod
    def invalid(cls, message: str) -> ExecutionResult:
        return cls(status="invalid_input", message=message)
