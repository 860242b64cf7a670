"""How a pool worker is started inside bubblewrap, and the limits every program runs under.

One worker = one long-lived ``bwrap`` sandbox running ``python -m simulator.execution.worker`` as its pid 1;
the worker forks a fresh child per program (see worker.py), so no state survives from one program to the
next.

What is protected (each is tested in tests/simulator/execution/test_adversarial.py):

- Never root: when the host runs as root, a privileged bwrap first prepares the file-system view (it hides
  /root, /home, /run and /var/tmp and rebinds read-only only what the sandbox binds from under them, e.g.
  an interpreter in /root/.pyenv), then ``setpriv`` drops to an unprivileged uid (65534 by default) and the
  real sandbox is an unprivileged bwrap in its own user namespace. RLIMIT_NPROC is counted per user
  namespace, so a fork bomb exhausts its own sandbox only.
- Namespaces: user (no further user namespaces), pid (the host's processes are invisible; ``kill(-1)`` reaches
  only the sandbox), network (no interface but a down ``lo``: loopback services of the host are out of reach),
  ipc, uts, cgroup, mount.
- Its own pid 1, as nsjail gives: bwrap starts the worker as the pid namespace's init (``--as-pid-1``), so no
  bwrap process is inside and /proc/1/cmdline is the worker's (``/execsim/python/bin/python3.11 -m
  simulator.execution.worker {limits}``), not bwrap's command line with every host path it binds. As init,
  the worker gets no signal from inside the sandbox but those it handles (SIGINT: a program that sends it
  ends its worker, which the pool reports as ``killed`` and replaces); SIGKILL and ``kill(-1)`` spare it.
- A minimal root, as isolate and nsjail give: an empty, read-only root holding only
  - /usr, and /bin, /sbin, /lib, /lib64 (links into /usr where the host has them so): the system's programs
    and shared libraries, which a program may start (``sh``, ``sleep``) and the interpreter links to;
  - /etc/ld.so.cache (where the loader finds libraries), /etc/localtime (``time.localtime``) and
    /etc/alternatives (links some programs of /usr go through), and nothing else of /etc: no passwd
    (nothing the worker or a program needs reads it; ``pwd.getpwuid`` fails, ``id -u`` works);
  - the interpreter's installation (its prefix: the executable, the standard library, lib-dynload,
    libpython): where it is when it is the system's (under /usr), else at SANDBOX_PYTHON (/execsim/python,
    with PYTHONHOME and LD_LIBRARY_PATH telling it so); its site-packages folders are behind empty
    read-only tmpfs: programs get the standard library only, as the worker needs nothing else. A virtual
    environment is never bound: the worker runs its real interpreter file;
  - of the checkout, only copies of the worker's own modules (``WORKER_MODULES``, read when the pool is
    made and copied into the root by bwrap, ``--file``) at SANDBOX_WORKER (/execsim/worker): no other
    source, no settings, no .env, no .git, no virtual environment;
  - /dev (minimal, read-only), /proc (the sandbox's own), a private size-capped /tmp, and empty /root,
    /home, /run, /var/tmp.
  Nothing in it names where anything lies on the host: no folder of the host's leads to what is shown
  (``/`` lists the system's folders, /etc, /dev, /proc, /tmp, the empty ones and /execsim), the
  environment and every command line name only sandbox paths, and /proc/self/mountinfo names no host
  path but those of the system's folders and of an interpreter outside /usr (see below). Everything else
  on the host (other projects, /srv, /opt, /work, world-readable files a deployer left) is not there.
- /dev is bwrap's minimal one (null, zero, full, random, urandom, tty, pts and ptmx, the fd links), its
  folder read-only, as isolate binds /dev read-only: nothing can be made there (EROFS), and the devices
  work as they do everywhere. /dev/shm is a tmpfs of its own, size-capped (``Limits.shm_size_mb``, 64 MB:
  Docker's default /dev/shm, the same as /tmp), as nsjail sizes every tmpfs it mounts: a program cannot
  fill the host's memory there (it gets ENOSPC), nor in /tmp (``Limits.tmp_size_mb``).
- The root, /dev and every tmpfs that hides a folder (site-packages, the data directory where it would
  show) are read-only: they are never emptied between programs, so a file one program left there would
  reach the next. /tmp and /dev/shm, emptied after each program, are the only writable places.
- A cleared environment (``--clearenv``): the host's variables never reach the program.
- The data directory (embedded database, secret key, model weights and caches) is never bound: it is not
  there at all, or, where it lies inside a folder the sandbox shows (/usr, the interpreter's prefix),
  hidden behind an empty read-only tmpfs; a data directory that holds something the sandbox shows is
  refused (``SandboxError``).
- A seccomp filter making socket/socketpair/io_uring_setup/ptrace fail with EPERM, and the calls that make
  state outliving a program (System V IPC, POSIX message queues, kernel keyrings), installed in the worker
  before its first fork, so every child (and whatever it starts) inherits it and cannot remove it.
- Per program, in the child: rlimits on address space, CPU time, file size, processes, open files, no core
  files; a fresh working directory; fixed hash seed and ``random.seed(0)``; the wall clock enforced by the
  worker, stdout/stderr capped (over the cap the program is killed: ``output_limit``); the program's
  stdin is a memfd, never a file in /tmp. Afterwards every process left in the sandbox is killed and
  /tmp and /dev/shm are emptied, folders the program locked with chmod or nested deep included (what
  cannot be removed ends the worker, and its sandbox with it).
- The worker is not dumpable (the child cannot read its memory or its /proc files).

What is not protected:

- What is bound can be read: the system's /usr (programs, libraries, documentation, /usr/local), the
  interpreter's installation (whose build configuration, e.g. ``sysconfig``, names the prefix it was
  built for) and the worker's modules, and /proc's view of the kernel (e.g. /proc/cpuinfo, the kernel's
  version, and in /proc/self/mountinfo the host's device names and, for each bind, its path on the host's
  file system: an interpreter outside /usr is named there where it lies, e.g. /root/.pyenv/...).
- A program runs in the same process as the harness, so it could forge its own result record; results are
  trustworthy against accidents and runaway code, not against code written to fool the judge.
- Memory is bounded per process by RLIMIT_AS (and /tmp and /dev/shm by their sizes, outside it), not by a
  cgroup; CPU share between workers is not bounded beyond the per-program CPU-time limit.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from simulator import config

NOBODY = 65534
HIDDEN_DIRS = ("/root", "/home", "/run", "/var/tmp")  # empty in the sandbox; the root view hides them too
PROJECT_ROOT = Path(__file__).resolve().parents[2]  # the folder that holds the simulator package
# Processes of the sandbox that are not the program's: the worker (the sandbox's pid 1).
SANDBOX_OVERHEAD_PROCESSES = 1
# The sandbox's own folder, the same on every host: what it shows of the host besides the system's
# folders lies there, so that no path in the sandbox says where anything lies on the host.
SANDBOX_DIR = "/execsim"
SANDBOX_PYTHON = SANDBOX_DIR + "/python"  # the interpreter's installation, when it lies outside /usr
SANDBOX_BIN = SANDBOX_DIR + "/bin"  # the interpreter's folder, when it lies outside that and /usr
SANDBOX_WORKER = SANDBOX_DIR + "/worker"  # copies of the worker's modules (PYTHONPATH)


class SandboxError(RuntimeError):
    """The sandbox itself could not start or broke (not the program's fault): CLI exit 3."""


@dataclass(frozen=True)
class Limits:
    """Per-program resource limits (the wall clock comes from each Program's ``timeout_s``)."""

    memory_mb: int = 512  # RLIMIT_AS of the child
    file_size_mb: int = 16  # RLIMIT_FSIZE: the largest file it may write
    tmp_size_mb: int = 64  # size of the sandbox's /tmp (all files together)
    shm_size_mb: int = 64  # size of the sandbox's /dev/shm (all files together; Docker's default)
    processes: int = 16  # RLIMIT_NPROC: processes and threads of the program at once
    open_files: int = 64  # RLIMIT_NOFILE
    output_kb: int = 1024  # stdout and stderr, each; more is killed with output_limit
    result_mb: int = 64  # the harness's result record (a long trace); more is an output_limit

    def to_json(self) -> dict[str, int]:
        return asdict(self)


# The worker's own modules, relative to the ``simulator`` package: the only files of the checkout the
# sandbox shows, copied (tests/simulator/execution/test_sandbox.py checks that this is exactly what it
# imports).
WORKER_MODULES = (
    "__init__.py",
    "execution/__init__.py",
    "execution/harness.py",
    "execution/seccomp.py",
    "execution/trace.py",
    "execution/tracer.py",
    "execution/worker.py",
)
# The system's programs and shared libraries (``/bin/sh``, ``libc``; where /bin and /lib are symlinks
# into /usr, as on merged-/usr systems, the links are made instead) and the few files of /etc they read.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives")
# Python asked about itself: where it is installed, where its third-party packages would be, and where
# its shared library lies (a build's RUNPATH names that folder on the host).
_PROBE = (
    "import json, site, sys, sysconfig; "
    "print(json.dumps([sys.base_prefix, site.getsitepackages(), sysconfig.get_config_var('LIBDIR')]))"
)


@dataclass(frozen=True)
class Interpreter:
    """The Python a worker runs (the real file, never a virtual environment's link) and what it needs:
    its installation's prefix (stdlib, shared library, lib-dynload), shown read-only, its site-packages
    folders, hidden (programs get the standard library only), and the folder of its shared library."""

    executable: str
    prefix: str
    site_packages: tuple[str, ...]
    libdir: str = ""


@functools.cache
def interpreter(python: str) -> Interpreter:
    """Ask ``python`` where it lives (once per interpreter: a pool asks when it is made)."""
    real = os.path.realpath(python)
    try:
        probe = [real, "-I", "-c", _PROBE]
        out = subprocess.run(probe, capture_output=True, text=True, timeout=30, check=True)
        prefix, site_packages, libdir = json.loads(out.stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        message = f"the sandbox did not start: {real} cannot say where it is installed: {exc}"
        raise SandboxError(message) from exc
    folders = tuple(p for p in map(os.path.realpath, site_packages) if os.path.isdir(p))
    return Interpreter(real, os.path.realpath(prefix), folders, os.path.realpath(libdir) if libdir else "")


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _system(path: str) -> bool:
    """Whether ``path`` lies in the system's folders, which the sandbox shows where they are."""
    return any(_under(path, folder) for folder in SYSTEM_DIRS)


def _binds(python: Interpreter) -> list[tuple[str, str]]:
    """What the sandbox shows of the host besides the system's folders, and where: the interpreter's
    installation at SANDBOX_PYTHON, and its executable's folder at SANDBOX_BIN when that lies outside
    both, unless they are the system's (a Python in /usr is shown where it is)."""
    binds = []
    if not _system(python.prefix):
        binds.append((python.prefix, SANDBOX_PYTHON))
    folder = os.path.dirname(python.executable)
    if not _under(folder, python.prefix) and not _system(folder):
        binds.append((folder, SANDBOX_BIN))
    return binds


def _inside(python: Interpreter, path: str) -> str:
    """Where the host's ``path`` (of the interpreter or the system) lies in the sandbox."""
    for source, target in _binds(python):
        if _under(path, source):
            return target + path[len(source) :]
    return path


def _python_environment(python: Interpreter) -> list[str]:
    """bwrap arguments telling a relocated interpreter where it is: PYTHONHOME (it would look for its
    standard library where it was installed on the host) and LD_LIBRARY_PATH (its RUNPATH names the
    host's folder of libpython). None for a Python the sandbox shows where it is."""
    args: list[str] = []
    if _inside(python, python.prefix) != python.prefix:
        args += ["--setenv", "PYTHONHOME", _inside(python, python.prefix)]
    if python.libdir and _inside(python, python.libdir) != python.libdir:
        args += ["--setenv", "LD_LIBRARY_PATH", _inside(python, python.libdir)]
    return args


def worker_sources() -> dict[str, bytes]:
    """The worker's modules (WORKER_MODULES), read now, by their path in the sandbox (under
    SANDBOX_WORKER). A pool reads them once: its workers run the code the pool was made with."""
    return {
        f"{SANDBOX_WORKER}/simulator/{module}": (PROJECT_ROOT / "simulator" / module).read_bytes()
        for module in WORKER_MODULES
    }


@contextlib.contextmanager
def module_fds(sources: Mapping[str, bytes]) -> Iterator[dict[str, int]]:
    """A memfd holding each of ``sources``, by path in the sandbox, for one worker's start (bwrap copies
    each into the sandbox: ``--file FD PATH``, reading it to its end); closed on leaving."""
    fds: dict[str, int] = {}
    try:
        for path, data in sources.items():
            fd = fds[path] = os.memfd_create("module")  # close-on-exec: only pass_fds hands it on
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.lseek(fd, 0, os.SEEK_SET)
        yield fds
    finally:
        for fd in fds.values():
            os.close(fd)


def _minimal_root(python: Interpreter, limits: Limits, modules: Mapping[str, int]) -> list[str]:
    """bwrap arguments building the sandbox's file system on an empty root: the system's folders and
    files; a minimal /dev with a size-capped /dev/shm of its own; /proc; a private size-capped /tmp; the
    interpreter read-only, at SANDBOX_PYTHON when it lies outside /usr, with its site-packages behind
    empty tmpfs; copies of the worker's modules (from ``modules``: path in the sandbox -> fd) under
    SANDBOX_WORKER; and the conventional empty folders (HIDDEN_DIRS)."""
    mb = 1024 * 1024
    args: list[str] = []
    for folder in SYSTEM_DIRS:
        if os.path.islink(folder):
            args += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            args += ["--ro-bind", folder, folder]
    for path in SYSTEM_FILES:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            args += ["--ro-bind", path, path]
    args += ["--dev", "/dev", "--proc", "/proc"]
    args += ["--perms", "1777", "--size", str(limits.shm_size_mb * mb), "--tmpfs", "/dev/shm"]
    args += ["--perms", "1777", "--size", str(limits.tmp_size_mb * mb), "--tmpfs", "/tmp"]
    made = {"/", "/tmp"}
    for source, target in _binds(python):
        args += _folders_leading_to(target, made)
        args += ["--ro-bind", source, target]
    for folder in python.site_packages:
        args += ["--tmpfs", _inside(python, folder)]  # within the prefix or /usr (the probe found them there)
    for path, fd in modules.items():
        args += _folders_leading_to(path, made)
        args += ["--perms", "0444", "--file", str(fd), path]
    for folder in HIDDEN_DIRS:
        if os.path.isdir(folder) and folder not in made:
            args += ["--dir", folder]
    return args


def _folders_leading_to(path: str, made: set[str]) -> list[str]:
    """bwrap arguments making the folders above ``path`` traversable (bwrap would make them 0700)."""
    chain = []
    parent = os.path.dirname(path)
    while parent not in made and parent != "/":
        chain.append(parent)
        parent = os.path.dirname(parent)
    args: list[str] = []
    for folder in reversed(chain):
        args += ["--perms", "0755", "--dir", folder]
        made.add(folder)
    return args


def _hide_and_rebind(paths: list[str]) -> list[str]:
    """bwrap arguments of the privileged view (root host): an empty tmpfs over each hidden folder, then
    ``paths`` under them rebound read-only, so the unprivileged uid can reach them (e.g. under /root)."""
    args: list[str] = []
    hidden = [d for d in HIDDEN_DIRS if os.path.isdir(d)]
    for folder in hidden:
        args += ["--tmpfs", folder]
    made: set[str] = set(hidden)
    for path in paths:
        if any(path.startswith(h + "/") for h in hidden):
            args += _folders_leading_to(path, made)
            args += ["--ro-bind", path, path]
    return args


def _private_data_masks(python: Interpreter) -> list[str]:
    """Where the data directory, which holds the app's secrets and user data, would show in the sandbox:
    nothing of it is bound, but it may lie inside a folder that is (/usr, the interpreter's prefix), and
    there it gets an empty tmpfs. Refuses a data directory holding something the sandbox shows."""
    data = os.path.realpath(config.data_dir())
    shown = [(f, f) for f in (*SYSTEM_DIRS, *SYSTEM_FILES) if os.path.exists(f) and not os.path.islink(f)]
    shown += _binds(python)
    for source, _ in shown:
        if _under(source, data):
            raise SandboxError(f"the data directory {data} holds {source}, which the sandbox shows")
    return [target + data[len(source) :] for source, target in shown if _under(data, source)]


def _read_only(python: Interpreter, masks: list[str]) -> list[str]:
    """bwrap arguments making the root (with the sandbox's own folders and copies in it), /dev and
    every hiding tmpfs read-only, once everything is mounted: they are never emptied between programs,
    so a file one program left there would reach the next. /tmp and /dev/shm, mounts of their own,
    stay writable: they are emptied after each program."""
    folders = ["/", "/dev", *(_inside(python, f) for f in python.site_packages), *masks]
    return [arg for folder in dict.fromkeys(folders) for arg in ("--remount-ro", folder)]


def worker_command(
    limits: Limits,
    modules: Mapping[str, int],
    *,
    python: str | None = None,
    run_as_uid: int | None = None,
    setup_as_root: bool = True,
) -> list[str]:
    """The command line that starts one sandboxed worker; ``modules`` are the fds of its modules
    (``module_fds``), which the caller passes to it (``pass_fds``).

    As a normal user: ``bwrap ... python -m simulator.execution.worker``. As root: the same, started as
    ``run_as_uid`` (default 65534) through ``setpriv``; with ``setup_as_root`` a privileged bwrap first builds
    a file-system view where the interpreter is reachable by that uid (e.g. under /root). Without it the
    worker is started exactly as that user would start it (used by tests to run the unprivileged path
    from a root host).
    """
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxError("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    setpriv = shutil.which("setpriv")
    found = interpreter(python or sys.executable)
    masks = _private_data_masks(found)
    inner = [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--as-pid-1",
        *_minimal_root(found, limits, modules),
        *(arg for mask in masks for arg in ("--tmpfs", mask)),
        *_read_only(found, masks),
        "--clearenv",
        "--setenv", "PYTHONHASHSEED", "0",
        "--setenv", "PYTHONPATH", SANDBOX_WORKER,
        "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
        "--setenv", "PYTHONIOENCODING", "utf-8",
        "--setenv", "LANG", "C.UTF-8",
        "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
        "--setenv", "HOME", "/tmp",
        *_python_environment(found),
        "--chdir", "/tmp",
        "--",
        _inside(found, found.executable), "-m", "simulator.execution.worker", _json(limits.to_json()),
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
        bwrap, "--dev-bind", "/", "/", *_hide_and_rebind([source for source, _ in _binds(found)]),
        "--die-with-parent", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--",
    ]  # fmt: skip
    return view + drop + inner


def _json(data: dict[str, int]) -> str:
    return json.dumps(data, separators=(",", ":"))
