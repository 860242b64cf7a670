"""How a pool worker is started inside bubblewrap, and the limits every program runs under.

One worker = one long-lived ``bwrap`` sandbox running ``python -m simulator.execution.worker``; the worker
forks a fresh child per program (see worker.py), so no state survives from one program to the next.

What is protected (each is tested in tests/simulator/execution/test_adversarial.py):

- Never root: when the host runs as root, a privileged bwrap first prepares the file-system view (it hides
  /root, /home, /run and rebinds read-only only the interpreter and the project), then ``setpriv`` drops to an
  unprivileged uid (65534 by default) and the real sandbox is an unprivileged bwrap in its own user namespace.
  RLIMIT_NPROC is counted per user namespace, so a fork bomb exhausts its own sandbox only.
- Namespaces: user (no further user namespaces), pid (the host's processes are invisible; ``kill(-1)`` reaches
  only the sandbox), network (no interface but a down ``lo``: loopback services of the host are out of reach),
  ipc, uts, cgroup, mount (read-only root, private size-capped /tmp, minimal /dev, own /proc).
- Every tmpfs that hides a folder (/root, /home, /run, /var/tmp, the data directory) is remounted read-only
  once what lies under it is mounted: those are never emptied between programs, so a file one program
  left there would reach the next. /tmp and /dev/shm, emptied after each program, are the only writable
  places.
- A cleared environment (``--clearenv``): the host's variables never reach the program.
- The data directory (embedded database, secret key, model weights and caches) is hidden behind an empty
  tmpfs, also where it lies inside the rebound project folder.
- A seccomp filter making socket/socketpair/io_uring_setup/ptrace fail with EPERM, and the calls that make
  state outliving a program (System V IPC, POSIX message queues, kernel keyrings), installed in the worker
  before its first fork, so every child (and whatever it starts) inherits it and cannot remove it.
- Per program, in the child: rlimits on address space, CPU time, file size, processes, open files, no core
  files; a fresh working directory; fixed hash seed and ``random.seed(0)``; the wall clock enforced by the
  worker, stdout/stderr capped (over the cap the program is killed: ``output_limit``); the program's
  stdin is a memfd, never a file in /tmp. Afterwards every process left in the sandbox is killed and
  /tmp and /dev/shm are emptied, folders the program locked with chmod or nested deep included (what
  cannot be removed ends the worker, and its sandbox with it); the folders bwrap itself made there (when
  the data directory lies under /tmp: the folders leading to its read-only masking tmpfs) are kept as
  made, and emptied.
- The worker is not dumpable (the child cannot read its memory); if the child kills it anyway (same uid),
  the pool reports ``killed`` and starts a fresh worker.

What is not protected:

- Files readable by the sandbox uid on the host (other than the hidden directories) can be read.
- A program runs in the same process as the harness, so it could forge its own result record; results are
  trustworthy against accidents and runaway code, not against code written to fool the judge.
- Memory is bounded per process by RLIMIT_AS (and /tmp by its size), not by a cgroup; CPU share between
  workers is not bounded beyond the per-program CPU-time limit.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from simulator import config

NOBODY = 65534
HIDDEN_DIRS = ("/root", "/home", "/run", "/var/tmp")
PROJECT_ROOT = Path(__file__).resolve().parents[2]  # the folder that holds the simulator package
# Processes of the sandbox that are not the program's: bwrap's init, the worker.
SANDBOX_OVERHEAD_PROCESSES = 2


class SandboxError(RuntimeError):
    """The sandbox itself could not start or broke (not the program's fault): CLI exit 3."""


@dataclass(frozen=True)
class Limits:
    """Per-program resource limits (the wall clock comes from each Program's ``timeout_s``)."""

    memory_mb: int = 512  # RLIMIT_AS of the child
    file_size_mb: int = 16  # RLIMIT_FSIZE: the largest file it may write
    tmp_size_mb: int = 64  # size of the sandbox's /tmp (all files together)
    processes: int = 16  # RLIMIT_NPROC: processes and threads of the program at once
    open_files: int = 64  # RLIMIT_NOFILE
    output_kb: int = 1024  # stdout and stderr, each; more is killed with output_limit
    result_mb: int = 64  # the harness's result record (a long trace); more is an output_limit

    def to_json(self) -> dict[str, int]:
        return asdict(self)


def needed_paths(python: str) -> list[str]:
    """Folders the worker must see: the interpreter's installation(s) and the project."""
    real = os.path.realpath(python)
    paths = {os.path.dirname(real), os.path.dirname(os.path.dirname(real)), str(PROJECT_ROOT)}
    if real == os.path.realpath(sys.executable):
        paths |= {sys.prefix, sys.base_prefix}
    return sorted(p for p in paths if p and os.path.isdir(p))


def _hide_and_rebind(paths: list[str], tmp_size: int | None) -> list[str]:
    """bwrap arguments: an empty tmpfs over each hidden folder (and /tmp), then ``paths`` under them
    rebound read-only."""
    args: list[str] = []
    hidden = [d for d in HIDDEN_DIRS if os.path.isdir(d)]
    for folder in hidden:
        args += ["--tmpfs", folder]
    if tmp_size is not None:
        args += ["--perms", "1777", "--size", str(tmp_size), "--tmpfs", "/tmp"]
        hidden.append("/tmp")
    made: set[str] = set()
    for path in paths:
        under = [h for h in hidden if path == h or path.startswith(h + "/")]
        if not under:
            continue
        # bwrap would create the folders leading to the mount point as 0700: make them traversable
        parent = os.path.dirname(path)
        chain = []
        while parent != under[0] and parent not in made:
            chain.append(parent)
            parent = os.path.dirname(parent)
        for folder in reversed(chain):
            args += ["--perms", "0755", "--dir", folder]
            made.add(folder)
        args += ["--ro-bind", path, path]
    return args


def _hide_private_data() -> list[str]:
    """bwrap arguments masking the data directory, which holds the app's secrets and user data."""
    return ["--tmpfs", str(config.data_dir())]


def _hidden_read_only() -> list[str]:
    """bwrap arguments making every hiding tmpfs but /tmp read-only (the hidden folders and the data
    directory), once everything under them is mounted: they are never emptied between programs, so
    a file one program left there would reach the next. /tmp (and /dev/shm) are the writable ones."""
    folders = [d for d in HIDDEN_DIRS if os.path.isdir(d)]
    folders.append(str(config.data_dir()))
    return [arg for folder in dict.fromkeys(folders) for arg in ("--remount-ro", folder)]


def worker_command(
    limits: Limits,
    *,
    python: str | None = None,
    run_as_uid: int | None = None,
    setup_as_root: bool = True,
) -> list[str]:
    """The command line that starts one sandboxed worker.

    As a normal user: ``bwrap ... python -m simulator.execution.worker``. As root: the same, started as
    ``run_as_uid`` (default 65534) through ``setpriv``; with ``setup_as_root`` a privileged bwrap first builds
    a file-system view where the interpreter and project are reachable by that uid (e.g. under /root).
    Without it the worker is started exactly as that user would start it (used by tests to run the
    unprivileged path from a root host).
    """
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxError("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    setpriv = shutil.which("setpriv")
    python = python or sys.executable
    paths = needed_paths(python)
    inner = [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        *_hide_and_rebind(paths, limits.tmp_size_mb * 1024 * 1024),
        *_hide_private_data(),
        *_hidden_read_only(),
        "--clearenv",
        "--setenv", "PYTHONHASHSEED", "0",
        "--setenv", "PYTHONPATH", str(PROJECT_ROOT),
        "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
        "--setenv", "PYTHONIOENCODING", "utf-8",
        "--setenv", "LANG", "C.UTF-8",
        "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
        "--setenv", "HOME", "/tmp",
        "--chdir", "/tmp",
        "--",
        python, "-m", "simulator.execution.worker", _json(limits.to_json()),
    ]  # fmt: skip
    if os.geteuid() != 0:
        if run_as_uid not in (None, os.geteuid()):
            raise SandboxError("run_as_uid needs a pool started as root")
        return inner
    uid = NOBODY if run_as_uid is None else run_as_uid
    if uid == 0:
        raise SandboxError("refusing to run programs as root (RLIMIT_NPROC is not enforced for uid 0)")
    if setpriv is None:
        raise SandboxError("setpriv (util-linux) is needed to drop root privileges")
    drop = [
        setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
        "--inh-caps=-all", "--bounding-set=-all", "--",
    ]  # fmt: skip
    if not setup_as_root:
        return drop + inner
    view = [
        bwrap, "--dev-bind", "/", "/", *_hide_and_rebind(paths, None), "--die-with-parent",
        "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--",
    ]  # fmt: skip
    return view + drop + inner


def _json(data: dict[str, int]) -> str:
    import json

    return json.dumps(data, separators=(",", ":"))
