"""The warm process inside a sandbox: it forks a fresh child per program and reports what happened.

Run as ``python -m simulator.execution.worker '<limits json>'`` by the pool (see sandbox.py), never by
hand. It speaks length-prefixed messages (4-byte big-endian length) on its stdin/stdout: first it sends
``{"ready": true, "uid": ..., "pid": ...}`` (UTF-8 JSON), then one report per request
``{"program": {...}, "trace": bool, "max_steps": int}`` (JSON). A report is what the worker saw, raw
(``encode_report``): a JSON header (the status only the worker can give, if any, and its message; wall
time; peak memory; truncation flags) and, as bytes, the child's own result record, its stdout, its
stderr and its traced steps. The pool parses and judges them (pool.py), so the worker, whose every page
written after a fork is a copy-on-write fault, does as little per program as it can.

A traced child writes its steps, as they are recorded, into a memfd the worker made once (sealed at
``Limits.result_mb``, so no program can shrink it under the next one) and maps it as a ``StepStream``
(trace.py); the worker reads it after the child is gone, whatever ended it. So a program killed for its
wall clock or its output keeps the steps it had, and no step costs a system call or a wake-up of the
worker. The bytes are the program's to forge, like its record: the pool checks them.

The worker installs the seccomp filter (seccomp.py) in itself once, before its first fork, so every
child inherits it, and makes the program's three text streams once (``_child_streams``). Per program
the worker: makes a fresh working directory under /tmp and a memfd holding the given stdin; forks a
child that points fds 0-3 at that memfd and at its pipes (fd 4 at the steps memfd), sets rlimits,
seeds ``random`` and runs the harness; drains the pipes with caps under the wall clock (poll on the
pipes and a pidfd); reaps the child (its rusage gives the peak memory); kills every other process
left in the sandbox (the worker is the sandbox's pid 1: every orphan is its child); empties /tmp and
/dev/shm (two tmpfs of the sandbox's own, holding nothing but the programs' files), whatever the
program did to its folders; reads the steps a traced child streamed.

A fork costs far more than the child's own work: every page the child or the worker writes afterwards
is copied on a fault. So the worker keeps what it imports small and does what it can once, before
the first fork, rather than in every child.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import math
import mmap
import os
import random
import resource
import select
import signal
import struct
import sys
import time
from typing import Any, BinaryIO, TextIO

from simulator.execution import harness  # here, not in the child: an import there cost ~45 us a program
from simulator.execution.trace import StepStream

_HEADER = struct.Struct(">I")
_STEPS_FD = 4  # in the child: the steps memfd
# Made once: json.dumps with separators makes a JSONEncoder on every call, in the worker and in each child.
_ENCODER = json.JSONEncoder(separators=(",", ":"))
_PR_SET_DUMPABLE = 4
_GRACE_S = 0.2  # after the child exits, how long to wait for its pipes to close
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
# Modules a program commonly imports: loaded once in the worker, so each forked child has them free.
PRELOAD = (
    "collections", "itertools", "functools", "math", "re", "string", "heapq", "bisect", "random",
    "operator", "copy", "json", "typing", "dataclasses", "fractions", "decimal", "statistics",
    "datetime", "textwrap", "unicodedata", "hashlib", "array", "cmath", "numbers", "traceback",
)  # fmt: skip


def write_message(stream: BinaryIO, message: dict[str, Any]) -> None:
    data = _ENCODER.encode(message).encode()
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def encode_report(header: dict[str, Any], blobs: tuple[bytes, bytes, bytes, bytes]) -> bytes:
    """A report's body: the JSON header, a newline, then the blobs (record, stdout, stderr, steps) raw."""
    header["sizes"] = [len(blob) for blob in blobs]
    return _ENCODER.encode(header).encode() + b"\n" + b"".join(blobs)


def decode_report(body: bytes) -> tuple[dict[str, Any], list[bytes]]:
    """The header and the blobs of a report made by ``encode_report``."""
    end = body.index(b"\n")
    header = json.loads(body[:end])
    blobs, start = [], end + 1
    for size in header["sizes"]:
        blobs.append(body[start : start + size])
        start += size
    return header, blobs


def read_message(stream: BinaryIO) -> dict[str, Any] | None:
    """The next message, or None at end of stream (the other side is gone)."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        return None
    message: dict[str, Any] = json.loads(data)
    return message


class _Capture:
    """Bytes drained from one pipe, up to a cap."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.chunks: list[bytes] = []
        self.size = 0
        self.over = False

    def add(self, data: bytes) -> None:
        room = self.cap - self.size
        if len(data) > room:
            self.over = True
            data = data[: max(room, 0)]
        self.chunks.append(data)
        self.size += len(data)

    def data(self) -> bytes:
        return b"".join(self.chunks)


def _child(
    request: dict[str, Any],
    limits: dict[str, int],
    fds: tuple[int, int, int, int, int],
    workdir: str,
    streams: tuple[TextIO, TextIO, TextIO],
) -> None:
    """In the forked child: confine this process, run the harness, write the record to fd 3. Never returns."""
    code = 70
    try:
        stdin_fd, out_w, err_w, res_w, steps_fd = fds
        os.dup2(stdin_fd, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.dup2(res_w, 3)
        os.dup2(steps_fd, _STEPS_FD)
        os.closerange(_STEPS_FD + 1, 1 << 16)
        os.chdir(workdir)
        timeout = float(request["program"].get("timeout_s", 3.0))
        cpu = max(1, math.ceil(timeout))
        mb = 1024 * 1024
        nproc = limits["processes"] + 1  # the worker counts too (sandbox.SANDBOX_OVERHEAD_PROCESSES)
        for which, value in (
            (resource.RLIMIT_CORE, (0, 0)),
            (resource.RLIMIT_CPU, (cpu, cpu + 1)),
            (resource.RLIMIT_FSIZE, (limits["file_size_mb"] * mb,) * 2),
            (resource.RLIMIT_NOFILE, (limits["open_files"],) * 2),
            (resource.RLIMIT_NPROC, (nproc, nproc)),
            (resource.RLIMIT_AS, (limits["memory_mb"] * mb,) * 2),
        ):
            resource.setrlimit(which, value)
        random.seed(0)
        sys.stdin, sys.stdout, sys.stderr = streams
        trace = request.get("trace", False)
        stream = StepStream(mmap.mmap(_STEPS_FD, limits["result_mb"] * mb)) if trace else None
        record = harness.execute(request["program"], trace, request["max_steps"], stream)
        view = memoryview(_ENCODER.encode(record).encode())
        while view:
            view = view[os.write(3, view) :]
        code = 0
    except BaseException:  # nothing can be reported but the exit code; the worker calls it "killed"
        pass
    os._exit(code)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _child_streams() -> tuple[TextIO, TextIO, TextIO]:
    """The program's ``sys.stdin``, ``sys.stdout`` and ``sys.stderr``, made once, in the worker.

    They sit on fds 0, 1 and 2, which each child points at its stdin memfd and its output pipes, so no
    child pays for making three text streams (~70 copy-on-write page faults a program). They are made
    while those fds are of the kinds a child has (a memfd, two pipes): a stream notes once whether its
    file is seekable. The worker never reads or writes them, so every child starts from their untouched
    state; its own fds 0 and 1 are /dev/null again afterwards, fd 2 its log.
    """
    saved = [os.dup(fd) for fd in (0, 1, 2)]
    stdin_fd = os.memfd_create("stdin", 0)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    for fd, target in ((stdin_fd, 0), (out_w, 1), (err_w, 2)):
        os.dup2(fd, target)
    streams = (
        open(0, encoding="utf-8", errors="replace", closefd=False),  # noqa: SIM115
        open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False),  # noqa: SIM115
        open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1),  # noqa: SIM115
    )
    for fd, target in zip(saved, (0, 1, 2), strict=True):
        os.dup2(fd, target)
    for fd in (*saved, stdin_fd, out_r, out_w, err_r, err_w):
        os.close(fd)
    return streams


_sandboxed: bool | None = None


def in_sandbox() -> bool:
    """Whether this process is the worker bwrap started as the pid 1 of its own pid namespace
    (``--as-pid-1``), where ``kill(-1)`` reaches only the sandbox's processes.

    Checked once per process (no process leaves its pid namespace), not once per program."""
    global _sandboxed
    if _sandboxed is None:
        _sandboxed = os.getpid() == 1
    return _sandboxed


def _kill_everything_else() -> None:
    """Kill every process left in the sandbox but this one, and reap them (as the sandbox's pid 1, the
    worker is every orphan's parent)."""
    if not in_sandbox():  # outside a pid namespace kill(-1) would hit the host's processes
        raise RuntimeError("the worker only runs inside its sandbox")
    while True:
        try:  # noqa: SIM105  (contextlib.suppress would cost a class instance and two calls a program)
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:  # nothing left to kill
            pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _empty_tmp() -> None:
    """Empty the sandbox's private /tmp and /dev/shm (outside a sandbox these would be the host's).

    Both are tmpfs of the sandbox's own, holding nothing of bwrap's (nothing the sandbox shows of the
    host lies in them), so everything in them is the programs' and goes. Called after the kill sweep,
    when nothing else runs in the sandbox. Whatever cannot be removed raises: the worker then exits and
    its sandbox, /tmp included, goes with it, rather than let the next program see it."""
    if not in_sandbox():
        raise RuntimeError("the worker only runs inside its sandbox")
    _empty_folder("/tmp")
    _empty_folder("/dev/shm")


def _empty_folder(folder: str) -> None:
    for entry in list(os.scandir(folder)):
        if not entry.is_dir(follow_symlinks=False):
            os.unlink(entry.path)
            continue
        try:
            os.rmdir(entry.path)  # the usual case: a program's working directory, left empty
        except OSError:
            _remove_tree(entry.path)


def _remove_files(folder: int) -> list[str]:
    """Unlink everything but folders in the open folder ``folder``; the names of its folders."""
    folders = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                folders.append(entry.name)
            else:
                os.unlink(entry.name, dir_fd=folder)
    return folders


def _remove_tree(path: str) -> None:
    """Remove a folder a program left, whatever it did to it.

    Each folder gets its owner's permissions back before it is opened (a program can lock one with
    ``chmod 0``, which ``shutil.rmtree`` would leave, contents and all). The walk holds one open folder
    at a time and no recursion (folders may be nested thousands deep)."""
    os.chmod(path, 0o700)
    fd = os.open(path, _DIR_FLAGS)
    above: list[tuple[str, list[str]]] = []  # from ``path`` down to ``fd``: each folder, what is left in it
    try:
        left = _remove_files(fd)
        while True:
            if left:  # go down into the next folder
                name = left.pop()
                os.chmod(name, 0o700, dir_fd=fd)
                inner = os.open(name, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = inner
                above.append((name, left))
                left = _remove_files(fd)
            elif above:  # this folder is empty: go up and remove it
                name, left = above.pop()
                outer = os.open("..", _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = outer
                os.rmdir(name, dir_fd=fd)
            else:
                break
    finally:
        os.close(fd)
    os.rmdir(path)


def _stdin_memfd(text: str | None) -> int:
    """A memfd holding ``text`` (UTF-8), positioned at its start: the program's stdin, never in /tmp."""
    fd = os.memfd_create("stdin", 0)
    if text:
        view = memoryview(text.encode("utf-8", errors="surrogatepass"))
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    return fd


def steps_memfd(size: int) -> int:
    """The memfd a traced child streams its steps into: ``size`` bytes, sealed at that size (a program
    that could shrink it would make the next program's writes fault)."""
    fd = os.memfd_create("steps", os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, size)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
    return fd


def _read_steps(fd: int) -> bytes:
    """The steps a child streamed into the memfd ``fd`` (its length field clipped to the memfd's size)."""
    length = StepStream.LENGTH
    (size,) = length.unpack(os.pread(fd, length.size, 0))
    size = min(size, os.fstat(fd).st_size - length.size)
    chunks, offset = [], length.size
    while size > 0:
        data = os.pread(fd, min(size, 1 << 24), offset)
        if not data:
            break
        chunks.append(data)
        offset += len(data)
        size -= len(data)
    return b"".join(chunks)


def run_one(
    request: dict[str, Any], limits: dict[str, int], streams: tuple[TextIO, TextIO, TextIO], steps_fd: int
) -> bytes:
    """Fork a child for one program, supervise it, clean the sandbox up after it, and return the
    report (``encode_report``). ``steps_fd`` is the steps memfd (``steps_memfd``), reused."""
    if not in_sandbox():  # it forks unconfined code and its cleanups would hit the host
        raise RuntimeError("the worker only runs inside its sandbox")
    program = request["program"]
    timeout = float(program.get("timeout_s", 3.0))
    workdir = f"/tmp/run-{time.monotonic_ns()}"
    os.mkdir(workdir, 0o700)
    stdin_fd = _stdin_memfd(program.get("stdin"))
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    res_r, res_w = os.pipe()
    traced = bool(request.get("trace", False))
    if traced:  # no steps yet: what the previous program left there is not this one's
        os.pwrite(steps_fd, bytes(StepStream.LENGTH.size), 0)
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _child(request, limits, (stdin_fd, out_w, err_w, res_w, steps_fd), workdir, streams)
    for fd in (stdin_fd, out_w, err_w, res_w):
        os.close(fd)
    pidfd = os.pidfd_open(pid)

    cap = limits["output_kb"] * 1024
    captures = {
        out_r: _Capture(cap),
        err_r: _Capture(cap),
        res_r: _Capture(limits["result_mb"] * 1024 * 1024),
    }
    verdict: str | None = None  # a status only the worker can give
    message = ""
    poller = select.poll()
    watched = {out_r, err_r, res_r, pidfd}  # until the child has exited and its pipes are closed
    for fd in watched:
        poller.register(fd, select.POLLIN)
    deadline = started + timeout
    exited_at: float | None = None
    while watched:
        now = time.monotonic()
        limit = deadline if exited_at is None else min(deadline, exited_at + _GRACE_S)
        if now >= limit:
            if exited_at is None:
                verdict, message = "timeout", f"wall-clock limit of {timeout:g} s exceeded"
                os.kill(pid, signal.SIGKILL)
            break
        for fd, _ in poller.poll(math.ceil((limit - now) * 1000)):
            if fd == pidfd:
                exited_at = time.monotonic()
            else:  # readable or hung up: a read does not block, and b"" is the end
                data = os.read(fd, 1 << 16)
                if data:
                    capture = captures[fd]
                    capture.add(data)
                    if capture.over and verdict is None:
                        verdict = "output_limit"
                        which = {out_r: "stdout", err_r: "stderr", res_r: "the result record"}[fd]
                        message = f"{which} exceeded its cap of {capture.cap} bytes"
                        os.kill(pid, signal.SIGKILL)
                    continue
            poller.unregister(fd)
            watched.discard(fd)
        if verdict is not None:
            break
    _, wait_status, usage = os.wait4(pid, 0)
    duration = time.monotonic() - started
    os.close(pidfd)
    for fd in captures:
        os.close(fd)
    _kill_everything_else()
    _empty_tmp()
    steps = _read_steps(steps_fd) if traced else b""  # nothing of the program's can write there now

    out, err, res = captures[out_r], captures[err_r], captures[res_r]
    if verdict is None and not res.size:  # no record: how the child ended is the status
        if os.WIFSIGNALED(wait_status):
            number = os.WTERMSIG(wait_status)
            cpu_used = usage.ru_utime + usage.ru_stime
            if number == signal.SIGXCPU or (number == signal.SIGKILL and cpu_used >= math.ceil(timeout)):
                verdict, message = "timeout", f"CPU-time limit of {math.ceil(timeout)} s exceeded"
            elif number == signal.SIGXFSZ:
                verdict, message = "output_limit", "file-size limit exceeded"
            else:
                verdict, message = "killed", f"killed by {_signal_name(number)}"
        else:
            code = os.WEXITSTATUS(wait_status)
            verdict, message = "killed", f"exited with code {code} before reporting a result"
    header = {
        "verdict": verdict,  # None: the record (which the pool parses) says how the program went
        "message": message,
        "duration_s": duration,
        "peak_memory_kb": usage.ru_maxrss,
        "stdout_truncated": out.over,
        "stderr_truncated": err.over,
    }
    return encode_report(header, (res.data() if verdict is None else b"", out.data(), err.data(), steps))


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def main() -> None:
    if not in_sandbox():
        sys.exit("simulator.execution.worker runs only as the pid 1 of its bwrap sandbox (started by Pool)")
    limits = json.loads(sys.argv[1])
    # The protocol moves off fds 0/1 so that nothing printed by accident can corrupt it.
    requests = os.fdopen(os.dup(0), "rb")
    responses = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    _prctl(_PR_SET_DUMPABLE, 0)
    for name in PRELOAD:
        __import__(name)
    from simulator.execution import seccomp

    streams = _child_streams()
    steps_fd = steps_memfd(limits["result_mb"] * 1024 * 1024)
    seccomp.install()  # once, before any fork: every child inherits it (and cannot remove it)
    write_message(responses, {"ready": True, "uid": os.getuid(), "pid": os.getpid()})
    while (request := read_message(requests)) is not None:
        report = run_one(request, limits, streams, steps_fd)
        responses.write(_HEADER.pack(len(report)) + report)
        responses.flush()


if __name__ == "__main__":
    main()
