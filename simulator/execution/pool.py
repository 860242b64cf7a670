"""A thread-safe pool of warm sandboxed workers (sandbox.py) that run programs and return results.

    with Pool(workers=2) as pool:
        result = pool.run(Program(code="def f(x): return x + 1", call="f(1)"))
        results = pool.run_many(programs, trace=True)

Workers start lazily, up to ``workers`` of them; each runs one program at a time. A worker that dies
(a program can kill it: same uid) is reported as a ``killed`` result for that program and replaced by
a fresh one, started by the next caller that needs a worker (one already waiting included). All worker
processes are started from one long-lived launcher thread, because bwrap's ``--die-with-parent``
follows the *thread* that started it.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import subprocess
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields
from typing import IO, Any

from simulator.compare import outputs_match
from simulator.execution.program import Program
from simulator.execution.result import STATUSES, ExceptionInfo, ExecutionResult
from simulator.execution.sandbox import Limits, SandboxError, module_fds, worker_command, worker_sources
from simulator.execution.trace import DEFAULT_MAX_STEPS, HEADER_FIELDS, Trace, decode_steps
from simulator.execution.worker import decode_report, write_message

# A function that runs programs, results in order: ``run_many``'s shape. Code that runs model text takes
# one (the rewards, training's synthesis), so that its unit tests can pass a test double.
RunPrograms = Callable[[list[Program]], list[ExecutionResult]]

_PROGRAM_FIELDS = tuple(field.name for field in fields(Program))
START_TIMEOUT_S = 20.0
ANSWER_GRACE_S = 5.0  # beyond a program's own timeout, how long the pool waits for its worker
Progress = Callable[[int, int], None]


class _Worker:
    """One sandboxed worker process and its pipes."""

    def __init__(self, command: list[str], pass_fds: Sequence[int] = ()) -> None:
        self.log: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115  (lives as long as the worker)
        self.timed_out = False
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=_host_env(),
            bufsize=0,
            pass_fds=pass_fds,
        )
        info = self._receive(START_TIMEOUT_S)
        if not info or not info.get("ready"):
            self.close()
            raise SandboxError(f"the sandbox did not start: {self.log_text() or 'no message'}")
        self.info: dict[str, Any] = info

    def _receive(self, timeout: float) -> dict[str, Any] | None:
        """The next JSON message, or None if the worker died or stayed silent for ``timeout`` seconds."""
        body = self._receive_bytes(timeout)
        return None if body is None else json.loads(body)

    def _receive_bytes(self, timeout: float) -> bytes | None:
        deadline = time.monotonic() + timeout
        header = self._read_exact(4, deadline)
        if header is None:
            return None
        return self._read_exact(int.from_bytes(header, "big"), deadline)

    def _read_exact(self, size: int, deadline: float) -> bytes | None:
        fd = self.process.stdout.fileno()  # type: ignore[union-attr]  # a PIPE: not None
        chunks: list[bytes] = []
        while size > 0:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.timed_out = True
                self.process.kill()
                return None
            data = os.read(fd, min(size, 1 << 20))
            if not data:
                return None
            chunks.append(data)
            size -= len(data)
        return b"".join(chunks)

    def ask(self, request: dict[str, Any], timeout: float) -> bytes | None:
        """Send one request; its report (worker.encode_report), or None if the worker died or stalled."""
        try:
            write_message(self.process.stdin, request)  # type: ignore[arg-type]  # a PIPE: not None
        except (BrokenPipeError, OSError):
            return None
        return self._receive_bytes(timeout)

    def log_text(self) -> str:
        """What the worker (or bwrap) wrote to stderr: the reason when a sandbox fails to start."""
        self.log.seek(0)
        return self.log.read().decode(errors="replace").strip()[-2000:]

    def close(self) -> None:
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                stream.close()  # type: ignore[union-attr]  # PIPEs: not None
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _host_env() -> dict[str, str]:
    """bwrap clears the environment for the program anyway; give bwrap itself only what it needs."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}


class Pool:
    """Runs programs in sandboxed workers; ``run`` and ``run_many`` may be called from any thread."""

    def __init__(
        self,
        workers: int | None = None,
        *,
        limits: Limits | None = None,
        python: str | None = None,
        run_as_uid: int | None = None,
        setup_as_root: bool = True,
    ) -> None:
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.limits = limits or Limits()
        self._sources = worker_sources()  # the worker's modules: every worker runs the code of now
        self._options: dict[str, Any] = {
            "python": python, "run_as_uid": run_as_uid, "setup_as_root": setup_as_root,
        }  # fmt: skip
        with module_fds(self._sources) as fds:  # a sandbox that cannot start fails here, not later
            worker_command(self.limits, fds, **self._options)
        self._idle: deque[_Worker] = deque()  # oldest released first
        self._started = 0  # workers started or starting, not yet discarded
        self._lock = threading.Lock()
        # Signalled whenever a caller waiting for a worker may go on: one was released, or a slot freed
        # (a worker discarded, a start failed) for the caller to start a fresh one, or the pool closed.
        self._changed = threading.Condition(self._lock)
        self._closed = False
        self._launcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="execsim-launcher")
        self._all: set[_Worker] = set()

    # -- lifecycle ---------------------------------------------------------------------------------

    def __enter__(self) -> Pool:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> Pool:
        """Start one worker now (raises SandboxError if the sandbox cannot start); others start on demand."""
        self._release(self._acquire())
        return self

    def close(self) -> None:
        with self._lock:
            self._closed = True
            workers, self._all = list(self._all), set()
            self._changed.notify_all()
        for worker in workers:
            worker.close()
        self._launcher.shutdown(wait=False)

    def _start_worker(self) -> _Worker:
        """Start one worker (in the launcher thread): its modules go in through fds of its own."""
        with module_fds(self._sources) as fds:
            return _Worker(worker_command(self.limits, fds, **self._options), tuple(fds.values()))

    def _spawn(self) -> _Worker:
        worker = self._launcher.submit(self._start_worker).result()
        with self._lock:
            self._all.add(worker)
        return worker

    def _acquire(self) -> _Worker:
        """An idle worker, else a fresh one while fewer than ``workers`` run, else the next one released
        or, when a worker is discarded, a fresh one in its place."""
        with self._lock:
            while True:
                if self._closed:
                    raise SandboxError("the pool is closed")
                if self._idle:
                    return self._idle.popleft()
                if self._started < self.workers:
                    self._started += 1
                    break
                self._changed.wait()
        try:
            return self._spawn()
        except BaseException:
            self._free_slot()
            raise

    def _release(self, worker: _Worker) -> None:
        with self._lock:
            self._idle.append(worker)
            self._changed.notify()

    def _free_slot(self) -> None:
        with self._lock:
            self._started -= 1
            self._changed.notify()  # a caller waiting for a worker starts one in its place

    def _discard(self, worker: _Worker) -> None:
        with self._lock:
            self._all.discard(worker)
        self._free_slot()
        worker.close()

    @property
    def worker_info(self) -> list[dict[str, Any]]:
        """What each started worker reported at start (uid and pid inside its sandbox)."""
        with self._lock:
            return [w.info for w in self._all]

    # -- running -----------------------------------------------------------------------------------

    def run(
        self, program: Program, *, trace: bool = False, max_steps: int = DEFAULT_MAX_STEPS
    ) -> ExecutionResult:
        """Run one program in a fresh sandboxed child; failures of the program come back as data."""
        problems = program.problems()
        if problems:
            return ExecutionResult.invalid("; ".join(problems))
        request = {"program": _program_dict(program), "trace": trace, "max_steps": max_steps}
        worker = self._acquire()
        answer = worker.ask(request, program.timeout_s + ANSWER_GRACE_S)
        if answer is None:
            self._discard(worker)
            if worker.timed_out:
                return ExecutionResult(
                    status="timeout", message="the sandbox worker stopped answering (replaced)"
                )
            return ExecutionResult(
                status="killed",
                message="the sandbox worker died while running this program (it was replaced)",
            )
        self._release(worker)
        return _result(answer, program, trace, max_steps)

    def run_many(
        self,
        programs: Iterable[Program],
        *,
        trace: bool = False,
        max_steps: int = DEFAULT_MAX_STEPS,
        progress: Progress | None = None,
    ) -> list[ExecutionResult]:
        """Run programs concurrently on the pool's workers; results in input order."""
        items: Sequence[Program] = list(programs)
        results: list[ExecutionResult | None] = [None] * len(items)
        done = 0
        done_lock = threading.Lock()

        def one(index: int) -> None:
            nonlocal done
            results[index] = self.run(items[index], trace=trace, max_steps=max_steps)
            with done_lock:
                done += 1
                if progress is not None:
                    progress(done, len(items))

        with ThreadPoolExecutor(max_workers=min(self.workers, max(1, len(items)))) as executor:
            for future in [executor.submit(one, i) for i in range(len(items))]:
                future.result()
        return results  # type: ignore[return-value]  # each one set (or future.result() raised)


def _program_dict(program: Program) -> dict[str, Any]:
    """The program as the request's JSON object (field by field: ``dataclasses.asdict`` deep-copies,
    ~14 us a program against ~1)."""
    data = {name: getattr(program, name) for name in _PROGRAM_FIELDS}
    if data["tests"] is not None:
        data["tests"] = list(data["tests"])
    return data


_CHILD_STATUSES = frozenset(STATUSES) - {"invalid_input"}
_MALFORMED = (ValueError, TypeError, KeyError, AttributeError, RecursionError)


def _parse_record(data: bytes) -> dict[str, Any] | None:
    """The child's result record, or None when it is cut short or malformed.

    The bytes come from the program's own process (it can write to the record's pipe itself), so they are
    checked before use: a forged record may lie about the program, but must not crash the caller. Its
    ``trace``, when there is one, is the trace's header (``Trace.header``): the steps come apart.
    """
    try:
        record = json.loads(data)
        if not isinstance(record, dict) or record.get("status") not in _CHILD_STATUSES:
            return None
        exception = record.get("exception")
        record["exception"] = ExceptionInfo(**exception) if exception is not None else None
        header = record.get("trace")
        if header is not None and not (
            isinstance(header, dict) and all(type(header[k]) is HEADER_FIELDS.get(k) for k in header)
        ):
            return None
        for key in ("value", "value_type"):
            if not isinstance(record.get(key), str | None):
                return None
        if not isinstance(record.get("duration_s", 0.0), int | float):
            return None
    except _MALFORMED:
        return None
    return record


def _result(report: bytes, program: Program, traced: bool, max_steps: int) -> ExecutionResult:
    """The ExecutionResult from a worker's report: the status the worker gave (timeout, output_limit,
    killed) or else the child's own record; stdout judged against the program's expected stdout when
    given. A traced program's trace is its streamed steps, under the record's header, or, when the
    program was stopped from outside, flagged truncated with the reason."""
    header, (record_bytes, out_bytes, err_bytes, steps_bytes) = decode_report(report)
    verdict, message = header["verdict"], header["message"]
    record: dict[str, Any] = {}
    if verdict is None:
        parsed = _parse_record(record_bytes)
        if parsed is None:
            verdict, message = "killed", "the program's result record was cut short or malformed"
        else:
            record = parsed
    trace = None
    if traced:
        try:
            steps = decode_steps(steps_bytes)
        except _MALFORMED:
            steps = None
        if steps is None:  # the program wrote over its steps
            if verdict is None:
                verdict, message = "killed", "the program's traced steps were cut short or malformed"
        elif verdict is not None:
            reason = "max_steps" if len(steps) >= max_steps else verdict
            trace = Trace(steps, True, max_steps, program.code, truncated_reason=reason)
        elif record.get("trace") is not None:
            trace = Trace(steps=steps, source=program.code, **record["trace"])
    stdout = out_bytes.decode("utf-8", errors="replace")
    exception: ExceptionInfo | None = record.get("exception")
    status = verdict or record["status"]
    if not message and status != "ok" and exception is not None:
        where = f" (line {exception.line})" if exception.line else ""
        message = f"{exception.type}: {exception.message}{where}"[:500]
    expected_stdout = program.expected_stdout
    if (
        status == "ok"
        and expected_stdout is not None
        and (header["stdout_truncated"] or not outputs_match(stdout, expected_stdout, tolerance=1e-6))
    ):
        status, message = "wrong_answer", "stdout differs from the expected output"
    return ExecutionResult(
        status=status,
        value=record.get("value"),
        value_type=record.get("value_type"),
        stdout=stdout,
        stdout_truncated=header["stdout_truncated"],
        stderr=err_bytes.decode("utf-8", errors="replace"),
        stderr_truncated=header["stderr_truncated"],
        exception=exception,
        duration_s=record.get("duration_s", header["duration_s"]),
        peak_memory_kb=header["peak_memory_kb"],
        message=message,
        trace=trace,
    )


_default: Pool | None = None
_default_lock = threading.Lock()


def default_pool(workers: int | None = None) -> Pool:
    """The process-wide pool behind ``simulator.execution.run``/``run_many``, started on first use and
    closed at exit. ``workers``: its size when this call starts it (``cpu_count`` unless given); the
    first call's size stands."""
    global _default
    with _default_lock:
        if _default is None:
            pool = Pool(workers).start()
            atexit.register(pool.close)
            _default = pool
        return _default
