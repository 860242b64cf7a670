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

from simulator.execution import sandbox, seccomp
from simulator.execution.sandbox import (
    NOBODY,
    PROJECT_ROOT,
    SANDBOX_PYTHON,
    WORKER_MODULES,
    Interpreter,
    Limits,
    SandboxError,
    module_fds,
    worker_command,
    worker_sources,
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


def command_for(limits: Limits, **options) -> list[str]:
    """worker_command's command line (with the fds of the modules it copies in, closed afterwards)."""
    with module_fds(worker_sources()) as fds:
        return worker_command(limits, fds, **options)


@pytest.mark.skipif(os.geteuid() != 0, reason="the root path of worker_command")
def test_root_drops_to_an_unprivileged_uid_before_the_sandbox() -> None:
    command = command_for(Limits())
    assert f"--reuid={NOBODY}" in command
    inner = command[command.index("--", command.index(f"--reuid={NOBODY}")) + 1 :]
    assert inner[0].endswith("bwrap") and "--unshare-all" in inner and "--clearenv" in inner
    with pytest.raises(SandboxError, match="root"):
        command_for(Limits(), run_as_uid=0)


def test_tmp_is_size_capped() -> None:
    command = command_for(Limits(tmp_size_mb=5))
    i = command.index("/tmp", command.index("--unshare-all"))
    assert command[i - 3 : i] == ["--size", str(5 * 1024 * 1024), "--tmpfs"]


def test_dev_shm_is_a_size_capped_tmpfs_and_dev_is_read_only() -> None:
    command = command_for(Limits(shm_size_mb=7))
    i = command.index("/dev/shm", command.index("--unshare-all"))
    assert command[i - 5 : i] == ["--perms", "1777", "--size", str(7 * 1024 * 1024), "--tmpfs"]
    j = command.index("/dev", command.index("--remount-ro"))
    assert command[j - 1] == "--remount-ro" and j > i  # after /dev/shm is mounted in it


def test_the_modules_are_copied_in_not_bound() -> None:
    """A bind names its host path in the sandbox's /proc/self/mountinfo: the worker's modules go in as
    copies (``--file FD PATH``), and no argument names the checkout."""
    with module_fds(worker_sources()) as fds:
        command = worker_command(Limits(), fds, setup_as_root=False)
        for path, fd in fds.items():
            i = command.index(path)
            assert command[i - 2 : i] == ["--file", str(fd)]
    assert not [arg for arg in command if str(PROJECT_ROOT) in arg]


PYENV = Interpreter(
    "/opt/py/bin/python3.11", "/opt/py", ("/opt/py/lib/python3.11/site-packages",), "/opt/py/lib"
)
SYSTEM = Interpreter("/usr/bin/python3.11", "/usr", ("/usr/local/lib/python3.11/dist-packages",), "/usr/lib")


def test_an_interpreter_outside_usr_is_shown_at_the_sandboxs_own_path_and_told_so() -> None:
    assert sandbox._binds(PYENV) == [("/opt/py", SANDBOX_PYTHON)]
    assert sandbox._inside(PYENV, PYENV.executable) == SANDBOX_PYTHON + "/bin/python3.11"
    assert sandbox._python_environment(PYENV) == [
        "--setenv", "PYTHONHOME", SANDBOX_PYTHON, "--setenv", "LD_LIBRARY_PATH", SANDBOX_PYTHON + "/lib",
    ]  # fmt: skip
    assert sandbox._binds(SYSTEM) == [] and sandbox._python_environment(SYSTEM) == []
    assert sandbox._inside(SYSTEM, SYSTEM.executable) == SYSTEM.executable


def test_the_data_directory_is_masked_only_where_the_sandbox_shows_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Inside the interpreter's installation (shown at SANDBOX_PYTHON) it gets an empty tmpfs there;
    elsewhere (the checkout, /tmp) nothing of it is made; one holding what the sandbox shows is refused."""
    for data, masks in (("/opt/py/data", [SANDBOX_PYTHON + "/data"]), ("/srv/execsim/data", [])):
        monkeypatch.setattr(sandbox.config, "data_dir", lambda data=data: Path(data))
        assert sandbox._private_data_masks(PYENV) == masks
    monkeypatch.setattr(sandbox.config, "data_dir", lambda: Path("/opt"))
    with pytest.raises(SandboxError, match="holds /opt/py"):
        sandbox._private_data_masks(PYENV)


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
