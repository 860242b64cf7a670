"""The pieces under the pool: the seccomp filter (in a forked child of this process), the worker command."""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from simulator.execution import seccomp
from simulator.execution.sandbox import (
    NOBODY,
    PROJECT_ROOT,
    WORKER_MODULES,
    Limits,
    SandboxError,
    worker_command,
)
from simulator.execution.worker import in_sandbox


def in_child(body) -> int:
    """Run ``body()`` in a forked child; its exit code (0 = every check held)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            body()
            code = 0
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_seccomp_filter_blocks_sockets_but_not_files() -> None:
    def body() -> None:
        seccomp.install()
        for make in (socket.socket, socket.socketpair, lambda: socket.socket(socket.AF_UNIX)):
            try:
                make()
            except PermissionError:
                continue
            raise AssertionError("a socket was created")
        with open("/proc/self/status") as handle:  # ordinary system calls still work
            assert handle.read()

    assert in_child(body) == 0


def test_seccomp_filter_is_a_valid_bpf_program() -> None:
    code = seccomp.build_filter("x86_64")
    assert len(code) % 8 == 0
    assert seccomp.build_filter("aarch64") != code
    with pytest.raises(seccomp.SeccompUnsupported):
        seccomp.build_filter("sparc")


def test_seccomp_syscall_tables_agree_with_libseccomp() -> None:
    """The filter's hand-written arch tokens and syscall numbers, checked against libseccomp's tables
    (libseccomp2 is on every Debian machine: apt depends on it)."""
    path = ctypes.util.find_library("seccomp")
    if path is None:
        pytest.skip("libseccomp (libseccomp2) is not installed: nothing to check the tables against")
    lib = ctypes.CDLL(path)
    lib.seccomp_arch_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_arch_resolve_name.restype = ctypes.c_uint32
    lib.seccomp_syscall_resolve_name_arch.argtypes = [ctypes.c_uint32, ctypes.c_char_p]
    lib.seccomp_syscall_resolve_name_arch.restype = ctypes.c_int
    for machine, (audit_arch, numbers) in seccomp._ARCHES.items():
        token = lib.seccomp_arch_resolve_name(machine.encode())
        assert token == audit_arch, machine
        theirs = {
            name: lib.seccomp_syscall_resolve_name_arch(token, name.encode()) for name in seccomp.DENIED
        }
        assert theirs == {name: numbers[name] for name in seccomp.DENIED}, machine


@pytest.mark.skipif(os.geteuid() != 0, reason="the root path of worker_command")
def test_root_drops_to_an_unprivileged_uid_before_the_sandbox() -> None:
    command = worker_command(Limits())
    assert f"--reuid={NOBODY}" in command
    inner = command[command.index("--", command.index(f"--reuid={NOBODY}")) + 1 :]
    assert inner[0].endswith("bwrap") and "--unshare-all" in inner and "--clearenv" in inner
    with pytest.raises(SandboxError, match="root"):
        worker_command(Limits(), run_as_uid=0)


def test_tmp_is_size_capped() -> None:
    command = worker_command(Limits(tmp_size_mb=5))
    i = command.index("/tmp", command.index("--unshare-all"))
    assert command[i - 3 : i] == ["--size", str(5 * 1024 * 1024), "--tmpfs"]


def test_dev_shm_is_a_size_capped_tmpfs_and_dev_is_read_only() -> None:
    command = worker_command(Limits(shm_size_mb=7))
    i = command.index("/dev/shm", command.index("--unshare-all"))
    assert command[i - 5 : i] == ["--perms", "1777", "--size", str(7 * 1024 * 1024), "--tmpfs"]
    j = command.index("/dev", command.index("--remount-ro"))
    assert command[j - 1] == "--remount-ro" and j > i  # after /dev/shm is mounted in it


def test_worker_refuses_to_run_outside_its_sandbox() -> None:
    assert not in_sandbox()


@pytest.mark.parametrize("cleanup", ["_kill_everything_else", "_empty_tmp"])
def test_the_workers_cleanups_refuse_to_run_outside_a_sandbox(cleanup: str) -> None:
    """Outside its pid namespace and private /tmp these would kill the host's processes or empty the
    host's /tmp: called from the host they raise instead."""
    from simulator.execution import worker

    marker = Path(tempfile.gettempdir()) / f"execsim-keep-{os.getpid()}"
    marker.write_text("still here")
    try:
        with pytest.raises(RuntimeError, match="only runs inside its sandbox"):
            getattr(worker, cleanup)()
        assert marker.read_text() == "still here"
    finally:
        marker.unlink()


def test_the_worker_modules_bound_into_the_sandbox_are_exactly_those_the_worker_imports() -> None:
    """The sandbox shows only WORKER_MODULES of the checkout: one the worker imports but the list lacks
    would break every worker's start; one listed but unused would show source for nothing."""
    probe = (
        "import json, sys\nimport simulator.execution.worker, simulator.execution.seccomp\n"
        "print(json.dumps(sorted(m.__file__ for n, m in sys.modules.items()"
        " if n.split('.')[0] == 'simulator')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
    )
    imported = [os.path.relpath(path, PROJECT_ROOT / "simulator") for path in json.loads(out.stdout)]
    assert sorted(imported) == sorted(WORKER_MODULES)
