"""Each test adversarially checks one property of the sandbox: the hostile program is contained with the
right status, and the host is unharmed (later programs run normally, nothing leaks out).

All go through the pool, once as root and once as the unprivileged user (see sandbox_support.py).
"""

from __future__ import annotations

import ast
import os
import shutil
import socket
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from simulator import config
from simulator.execution import Pool, Program
from tests.simulator.execution.sandbox_support import SMALL, VARIANTS, data_dir_under_tmp, make_pool

SECRET = f"execsim-secret-{uuid.uuid4().hex}"


@pytest.fixture(scope="module", params=VARIANTS)
def pool(request: pytest.FixtureRequest):
    os.environ["EXECSIM_TEST_SECRET"] = SECRET  # the pool's own process holds a secret
    try:
        pool = make_pool(request.param)
        yield pool
        pool.close()
    finally:
        os.environ.pop("EXECSIM_TEST_SECRET", None)


def run(pool: Pool, code: str, timeout: float = 1.0, **kwargs):
    return pool.run(Program(code=code, stdin=kwargs.pop("stdin", ""), timeout_s=timeout, **kwargs))


def assert_healthy(pool: Pool) -> None:
    """The pool still runs an ordinary program normally, in a clean directory."""
    result = pool.run(Program(code="import os\ndef f(x):\n    return (x * 2, os.listdir('.'))", call="f(21)"))
    assert result.status == "ok", result.message
    assert result.value == "(42, [])"


def host_processes_with(marker: str) -> list[str]:
    """Host processes whose command line contains ``marker``."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline and str(os.getpid()) != pid:
            found.append(cmdline)
    return found


def test_infinite_loop_times_out(pool: Pool) -> None:
    started = time.monotonic()
    result = run(pool, "while True:\n    pass\n")
    assert result.status == "timeout"
    assert time.monotonic() - started < 5
    assert_healthy(pool)


def test_sleeping_past_the_wall_clock_times_out(pool: Pool) -> None:
    started = time.monotonic()
    result = run(pool, "import time\ntime.sleep(60)\n")
    assert result.status == "timeout"
    assert "wall-clock" in result.message
    assert time.monotonic() - started < 5
    assert_healthy(pool)


def test_fork_bomb_hits_the_process_limit(pool: Pool) -> None:
    code = (
        "import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n"
        "            time.sleep(30)\n            os._exit(0)\n        n += 1\n"
        "except OSError as exc:\n    print(n, exc.errno)\n"
    )
    result = run(pool, code, timeout=2.0)
    assert result.status == "ok", result.message
    forked, errno_ = map(int, result.stdout.split())
    assert errno_ == 11  # EAGAIN from RLIMIT_NPROC
    assert forked <= SMALL.processes
    assert_healthy(pool)


def test_endless_fork_bomb_is_stopped(pool: Pool) -> None:
    code = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    result = run(pool, code, timeout=1.0)
    assert result.status in ("timeout", "killed")
    assert_healthy(pool)


def test_memory_bomb_hits_the_memory_limit(pool: Pool) -> None:
    result = run(pool, "chunks = []\nwhile True:\n    chunks.append(bytearray(10 ** 7))\n", timeout=3.0)
    assert result.status == "memory_limit"
    assert result.exception is not None and result.exception.type == "MemoryError"
    assert_healthy(pool)


def test_one_gigabyte_file_hits_the_file_size_limit(pool: Pool) -> None:
    code = "with open('big', 'wb') as f:\n    for _ in range(1024):\n        f.write(b'x' * 2 ** 20)\n"
    result = run(pool, code, timeout=3.0)
    assert result.status == "output_limit"
    assert result.exception is not None and "File too large" in result.exception.message
    assert_healthy(pool)


def test_many_small_files_fill_the_private_tmp(pool: Pool) -> None:
    code = "i = 0\nwhile True:\n    with open(f'f{i}', 'w') as f:\n        f.write('x')\n    i += 1\n"
    result = run(pool, code, timeout=5.0)
    assert result.status in ("output_limit", "timeout")
    assert_healthy(pool)  # the next program's directory is empty: the files are gone


def test_socket_to_a_loopback_listener_is_refused(pool: Pool) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        result = run(pool, f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=0.5)\n")
        assert result.status == "runtime_error"
        assert result.exception is not None and result.exception.type == "PermissionError"
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
    finally:
        listener.close()
    assert_healthy(pool)


def test_parent_secrets_are_out_of_reach(pool: Pool) -> None:
    code = (
        "import os\nseen = [repr(dict(os.environ))]\nfor pid in os.listdir('/proc'):\n"
        "    if pid.isdigit():\n        for name in ('environ', 'cmdline'):\n            try:\n"
        "                seen.append(open(f'/proc/{pid}/{name}', 'rb').read().decode(errors='replace'))\n"
        "            except OSError:\n                pass\n"
        "print(len([p for p in os.listdir('/proc') if p.isdigit()]))\nprint('\\n'.join(seen))\n"
    )
    result = run(pool, code)
    assert result.status == "ok", result.message
    assert SECRET not in result.stdout
    assert "EXECSIM_TEST_SECRET" not in result.stdout
    assert int(result.stdout.split()[0]) <= 4  # bwrap's init, the worker, the program: no host process
    assert_healthy(pool)


def test_the_data_directory_is_hidden(pool: Pool) -> None:
    """The embedded database and secret key live in the data directory: the program does not find it
    (it lies in no folder the sandbox shows: were it in one, it would be an empty tmpfs)."""
    secret_file = config.data_dir() / f"execsim-private-{uuid.uuid4().hex}"
    secret_file.write_text(SECRET)
    secret_file.chmod(0o644)  # readable by anyone on the host: only the sandbox's view protects it
    try:
        code = (
            f"import os\ndata = {str(config.data_dir())!r}\n"
            "print(os.listdir(data) if os.path.exists(data) else 'absent')\n"
            f"try:\n    print(open({str(secret_file)!r}).read())\n"
            "except OSError:\n    print('refused')\n"
        )
        result = run(pool, code)
    finally:
        secret_file.unlink()
    assert result.status == "ok", result.message
    assert result.stdout.split("\n")[:2] == ["absent", "refused"]
    assert SECRET not in result.stdout


def test_writing_outside_the_temporary_directory_fails(pool: Pool) -> None:
    name = f"execsim-escape-{uuid.uuid4().hex}"
    project = Path(__file__).resolve().parents[3]
    targets = [project / name, Path("/etc") / name, Path("/var/tmp") / name, Path("/tmp") / name]
    code = (
        f"for path in {[str(t) for t in targets]!r}:\n    try:\n        open(path, 'w').write('x')\n"
        "        print('wrote', path)\n    except OSError as exc:\n"
        "        print('refused', path, exc.errno)\n"
    )
    result = run(pool, code)
    assert result.status == "ok", result.message
    assert "refused " + str(project / name) in result.stdout
    assert "refused /etc/" + name in result.stdout
    for target in targets:  # /tmp and /var/tmp inside the sandbox are private
        assert not target.exists()
    assert_healthy(pool)


def test_the_program_cannot_kill_its_worker_with_a_signal_it_does_not_handle(pool: Pool) -> None:
    """The worker is its sandbox's pid 1: the kernel drops every signal sent to it from inside the
    sandbox for which it has no handler (SIGKILL, SIGTERM, SIGSTOP included), and ``kill(-1)`` spares
    it. The program goes on and ends normally; the worker runs the next program."""
    code = (
        "import os, signal\nfor number in (signal.SIGKILL, signal.SIGTERM, signal.SIGSTOP, signal.SIGSEGV):\n"
        "    os.kill(os.getppid(), number)\nos.kill(1, signal.SIGKILL)\n"
        "try:\n    os.kill(-1, signal.SIGKILL)\nexcept ProcessLookupError:\n    pass\n"  # ESRCH
        "print(os.getppid(), 'alive')\n"
    )
    for _ in range(pool.workers):
        result = run(pool, code)
        assert (result.status, result.stdout) == ("ok", "1 alive\n"), result.message
    assert_healthy(pool)
    assert_healthy(pool)  # both workers


def test_killing_the_worker_is_reported_and_it_is_replaced(pool: Pool) -> None:
    """SIGINT is the one signal the worker handles (Python's KeyboardInterrupt): a program that sends
    it ends its worker, which the pool reports as ``killed`` and replaces."""
    result = run(pool, "import os, signal, time\nos.kill(os.getppid(), signal.SIGINT)\ntime.sleep(5)\n")
    assert result.status == "killed"
    assert_healthy(pool)
    assert_healthy(pool)  # both workers


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("def f(n):\n    return f(n + 1)\nf(0)\n", "runtime_error"),
        # recursion through a C function overflows the C stack: SIGSEGV
        (
            "import sys\nsys.setrecursionlimit(10 ** 7)\ndef f(n):\n    return min([n], key=f)\nf(0)\n",
            "killed",
        ),
    ],
    ids=["default-limit", "raised-limit-c-stack"],
)
def test_deep_recursion_is_contained(pool: Pool, code: str, status: str) -> None:
    result = run(pool, code, timeout=3.0)
    assert result.status == status, result.message
    assert_healthy(pool)


def test_hundred_megabytes_of_output_is_cut(pool: Pool) -> None:
    result = run(pool, "import sys\nfor _ in range(100):\n    sys.stdout.write('x' * 10 ** 6)\n", timeout=3.0)
    assert result.status == "output_limit"
    assert result.stdout_truncated
    assert len(result.stdout) <= SMALL.output_kb * 1024
    assert_healthy(pool)


def test_os_exit_is_killed_without_a_result(pool: Pool) -> None:
    result = run(pool, "import os\nprint('bye', flush=True)\nos._exit(3)\n")
    assert result.status == "killed"
    assert "code 3" in result.message
    assert result.stdout == "bye\n"
    assert_healthy(pool)


def test_ctypes_segfault_is_killed(pool: Pool) -> None:
    result = run(pool, "import ctypes\nctypes.string_at(0)\n")
    assert result.status == "killed"
    assert "SIGSEGV" in result.message
    assert_healthy(pool)


def test_subprocess_runs_confined_and_dies_with_the_program(pool: Pool) -> None:
    marker = f"{time.time_ns() % 10**6}.{os.getpid()}"
    code = (
        "import subprocess\nsubprocess.Popen(['sleep', '" + marker + "'])\n"
        "print(subprocess.run(['sh', '-c', 'id -u; env'], capture_output=True, text=True).stdout)\n"
    )
    result = run(pool, code)
    assert result.status == "ok", result.message
    assert result.stdout.split()[0] != "0"  # never root
    assert "EXECSIM_TEST_SECRET" not in result.stdout
    time.sleep(0.2)
    assert host_processes_with("sleep " + marker) == []
    assert_healthy(pool)


def test_daemon_that_tries_to_outlive_the_program_is_killed(pool: Pool) -> None:
    marker = f"{time.time_ns() % 10**6}.{os.getpid()}"
    code = (
        "import os, subprocess\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
        f"        os.execvp('sleep', ['sleep', '{marker}'])\n    os._exit(0)\n"
        "os.wait()\nprint('parent done')\n"
    )
    result = run(pool, code)
    assert result.status == "ok", result.message
    time.sleep(0.2)
    assert host_processes_with("sleep " + marker) == []
    assert_healthy(pool)


def test_thread_that_tries_to_outlive_the_program_does_not_hold_it(pool: Pool) -> None:
    code = "import threading, time\nthreading.Thread(target=time.sleep, args=(30,)).start()\n"
    code += "print('main done')\n"
    started = time.monotonic()
    result = run(pool, code, timeout=3.0)
    assert result.status == "ok", result.message
    assert result.stdout == "main done\n"
    assert time.monotonic() - started < 2.5
    assert_healthy(pool)


def test_the_program_and_its_worker_are_both_under_the_seccomp_filter(pool: Pool) -> None:
    """The worker installs the filter in itself before forking: the program inherits it, and the process
    it could attack (its parent) is confined as well."""
    code = (
        "import os\nfor pid in ('self', str(os.getppid())):\n"
        "    for line in open(f'/proc/{pid}/status'):\n"
        "        if line.startswith('Seccomp:'):\n            print(line.split()[1])\n"
    )
    result = run(pool, code)
    assert result.status == "ok", result.message
    assert result.stdout.split() == ["2", "2"]  # SECCOMP_MODE_FILTER
    assert_healthy(pool)


# What is in /tmp, /dev/shm and the program's own directory, leaving out the program's directory.
LOOK_AROUND = (
    "import os\nhere = os.path.basename(os.getcwd())\n"
    "print(sorted(set(os.listdir('/tmp')) - {here}), os.listdir('/dev/shm'), os.listdir('.'))\n"
)


def test_files_in_locked_folders_do_not_reach_the_next_program(pool: Pool) -> None:
    """A program hides a secret in folders it locked with chmod (in its directory and elsewhere in
    /tmp) and leaves a file in /dev/shm: the next program on the same worker finds none of it."""
    hide = (
        "import os\nos.makedirs('locked/inner')\n"
        "with open('locked/inner/secret', 'w') as f:\n    f.write('s3cret')\n"
        "os.chmod('locked/inner', 0)\nos.chmod('locked', 0o500)\n"
        "os.mkdir('/tmp/elsewhere')\nopen('/tmp/elsewhere/f', 'w').close()\nos.chmod('/tmp/elsewhere', 0)\n"
        "open('/dev/shm/left', 'w').close()\n"
    )
    for _ in range(pool.workers):  # twice: a leftover would also break the second hostile run
        assert run(pool, hide).status == "ok"
    for _ in range(pool.workers):
        result = run(pool, LOOK_AROUND)
        assert result.status == "ok", result.message
        assert result.stdout == "[] [] []\n"


def test_nothing_left_in_a_hidden_folder_reaches_the_next_program(pool: Pool) -> None:
    """The empty folders of the sandbox's root (/root, /home, /run, /var/tmp) are never emptied between
    programs: a program cannot write there (EROFS: the root is read-only), nor make the data directory's
    path (ENOENT: it is not there), so the next program on the same worker finds nothing it left."""
    name = f"execsim-left-{uuid.uuid4().hex}"
    folders = [d for d in ("/root", "/home", "/run", "/var/tmp") if os.path.isdir(d)]
    folders.append(str(config.data_dir()))
    targets = [f"{folder}/{name}" for folder in folders]
    leave = (
        "import errno\n"
        f"for path in {targets!r}:\n    try:\n        open(path, 'w').write('s3cret')\n"
        "        print('wrote', path)\n    except OSError as exc:\n"
        "        print('refused', path, errno.errorcode[exc.errno])\n"
    )
    look = f"import os\nprint([path for path in {targets!r} if os.path.lexists(path)])\n"
    left = [run(pool, leave) for _ in range(pool.workers)]  # on each worker
    for _ in range(pool.workers):
        result = run(pool, look)
        assert (result.status, result.stdout) == ("ok", "[]\n"), result.message
    for result in left:
        assert result.status == "ok", result.message
        expected = [["refused", "EROFS"]] * (len(targets) - 1) + [["refused", "ENOENT"]]
        assert [line.split()[::2] for line in result.stdout.splitlines()] == expected, result.stdout
    for target in targets:
        assert not os.path.lexists(target)  # nor did it reach the host
    assert_healthy(pool)


def test_folders_nested_thousands_deep_are_removed(pool: Pool) -> None:
    hide = "import os\nfor _ in range(3000):\n    os.mkdir('d')\n    os.chdir('d')\nprint(len(os.getcwd()))\n"
    for _ in range(pool.workers):
        result = run(pool, hide, timeout=5.0)
        assert result.status == "ok", result.message
        assert int(result.stdout) > 6000
    for _ in range(pool.workers):
        result = run(pool, LOOK_AROUND)
        assert result.status == "ok", result.message
        assert result.stdout == "[] [] []\n"


# Every folder under /tmp but the program's own, with its mode and contents.
WALK_TMP = (
    "import os\nhere = os.getcwd()\nmine = os.path.basename(here)\n"
    "for root, folders, files in os.walk('/tmp'):\n"
    "    folders.sort()\n"
    "    if root != here:\n"
    "        print(root, oct(os.stat(root).st_mode), sorted(set(folders) - {mine}), sorted(files))\n"
)


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_data_directory_under_tmp_leaves_nothing_in_the_sandboxs_tmp(
    variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the data directory under /tmp (as the browser tests' site has it), the sandbox's /tmp is
    empty all the same: the data directory lies in no folder the sandbox shows, so nothing of it (no
    mask, no folder leading to one) is made there. A program that makes the data directory's path
    there, fills it and locks it with chmod leaves nothing for the next program."""
    with data_dir_under_tmp(monkeypatch) as data:
        pool = make_pool(variant, workers=1)  # generous time limits: what is tested is what stays, not speed
        try:
            made = run(pool, WALK_TMP, timeout=5.0)
            assert (made.status, made.stdout) == ("ok", "/tmp 0o41777 [] []\n"), made.message
            top = str(data.parents[len(data.parts) - 4])  # the folder right under /tmp
            sub, secret = str(data / "sub"), str(data / "secret")
            hide = (
                f"import os\nos.makedirs({sub!r})\nopen({secret!r}, 'w').write('s')\n"
                f"os.chmod({sub!r}, 0)\nos.chmod({str(data)!r}, 0)\nos.chmod({top!r}, 0)\n"
            )
            hidden = run(pool, hide, timeout=5.0)
            assert hidden.status == "ok", hidden.message
            after = run(pool, WALK_TMP, timeout=5.0)
            assert (after.status, after.stdout) == ("ok", made.stdout)
        finally:
            pool.close()


def test_no_ipc_object_or_key_outlives_a_program(pool: Pool) -> None:
    """System V shared memory, semaphores and message queues, POSIX message queues and keyring keys would
    outlive the program on its worker (the next program could read them): creating any of them fails."""
    code = (
        "import ctypes, errno, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.syscall.restype = ctypes.c_long\n"
        "attempts = {\n"
        "    'shmget': lambda: libc.shmget(0x5EC, 4096, 0o1600),\n"
        "    'semget': lambda: libc.semget(0x5EC, 1, 0o1600),\n"
        "    'msgget': lambda: libc.msgget(0x5EC, 0o1600),\n"
        "    'mq_open': lambda: libc.mq_open(b'/execsim', os.O_CREAT | os.O_RDWR, 0o600, None),\n"
        "    'add_key': lambda: libc.syscall(248 if os.uname().machine == 'x86_64' else 217,"
        " b'user', b'execsim', b'secret', 6, ctypes.c_int(-4)),\n"
        "}\n"
        "for name, attempt in attempts.items():\n"
        "    ctypes.set_errno(0)\n"
        "    print(name, attempt(), errno.errorcode.get(ctypes.get_errno()))\n"
    )
    result = run(pool, code)
    assert result.status == "ok", result.message
    for line in result.stdout.splitlines():
        assert line.split()[1:] == ["-1", "EPERM"], line
    assert len(result.stdout.splitlines()) == 5
    assert_healthy(pool)


@pytest.mark.parametrize(
    "record",
    [
        b'{"status": "ok", "exception": 5}',
        b'{"status": "pwned"}',
        b"[1, 2, 3]",
        b'{"status": "ok", "trace": {"steps": [{"index": 0}]}}',
        b"[" * 100_000,
        b'{"status": "ok", "value": 1' + b"0" * 5000 + b"}",
    ],
    ids=["exception-not-a-dict", "unknown-status", "not-an-object", "broken-trace", "deep", "huge-int"],
)
def test_a_forged_result_record_is_reported_not_raised(pool: Pool, record: bytes) -> None:
    """The program writes its own result record and exits before the harness can: the pool reports it as
    killed instead of failing on it."""
    result = run(pool, f"import os\nos.write(3, {record!r})\nos._exit(0)\n")
    assert result.status == "killed"
    assert "malformed" in result.message
    assert_healthy(pool)


# --- The minimal root: only the interpreter, its standard library, the system's programs and libraries
# and the worker's own modules are visible (sandbox.py).

PROJECT = Path(__file__).resolve().parents[3]

READ_EACH = (
    "for path in PATHS:\n    try:\n"
    "        print('read', path, open(path).read())\n    except OSError as exc:\n"
    "        print('refused', path, type(exc).__name__)\n"
)


def read_from_inside(pool: Pool, paths: list[str]):
    """Run a program that tries to read each of ``paths``; its result."""
    result = run(pool, f"PATHS = {paths!r}\n" + READ_EACH)
    assert result.status == "ok", result.message
    return result


def world_readable_secret(folder: Path, name: str = "secret") -> Path:
    """A file holding SECRET at mode 644, in a folder anyone on the host may enter (so only the sandbox's
    view of the file system keeps it from the program)."""
    folder.chmod(0o755)
    path = folder / name
    path.write_text(SECRET)
    path.chmod(0o644)
    return path


@pytest.mark.parametrize("location", ["/srv", "/var/lib", "/opt", str(PROJECT.parent)])
def test_a_world_readable_file_outside_the_binds_cannot_be_read(pool: Pool, location: str) -> None:
    if not os.access(location, os.W_OK):
        pytest.skip(f"{location} is not writable here")
    folder = Path(tempfile.mkdtemp(prefix="execsim-other-project-", dir=location))
    try:
        secret = world_readable_secret(folder)
        result = read_from_inside(pool, [str(secret)])
    finally:
        shutil.rmtree(folder)
    assert SECRET not in result.stdout
    assert result.stdout.startswith("refused ")


def test_a_dotenv_left_in_the_project_root_cannot_be_read(pool: Pool) -> None:
    dotenv = PROJECT / ".env"
    if dotenv.exists():
        pytest.skip(f"{dotenv} exists already: not overwriting a deployer's file")
    try:
        dotenv.write_text(f"SECRET_KEY={SECRET}\n")
        dotenv.chmod(0o644)
        result = read_from_inside(pool, [str(dotenv)])
    finally:
        dotenv.unlink(missing_ok=True)
    assert SECRET not in result.stdout
    assert result.stdout.startswith("refused ")


def test_the_hosts_etc_passwd_is_not_readable(pool: Pool) -> None:
    result = read_from_inside(pool, ["/etc/passwd"])
    assert result.stdout.startswith("refused "), result.stdout
    assert Path("/etc/passwd").read_text().splitlines()[0] not in result.stdout


def test_the_projects_settings_cannot_be_read(pool: Pool) -> None:
    result = read_from_inside(pool, [str(PROJECT / "webapp" / "settings.py")])
    assert result.stdout.startswith("refused "), result.stdout
    assert "SECRET_KEY" not in result.stdout


def test_the_project_shows_only_the_workers_own_modules(pool: Pool) -> None:
    """Of the checkout, the program sees copies of the files the worker imports, under the sandbox's own
    folder, and nothing else (no other source, no .git, no virtual environment); the checkout's own
    path is not there."""
    from simulator.execution.sandbox import SANDBOX_WORKER, WORKER_MODULES

    code = (
        f"import os\nroot = {SANDBOX_WORKER!r}\nprint(os.path.exists({str(PROJECT)!r}))\n"
        "for folder, _, files in os.walk(root):\n    for name in files:\n"
        "        print(os.path.relpath(os.path.join(folder, name), root))\n"
    )
    result = run(pool, code)
    assert result.status == "ok", result.message
    absent, *files = result.stdout.split()
    assert absent == "False"
    assert sorted(files) == sorted(f"simulator/{module}" for module in WORKER_MODULES)


def test_the_apps_installed_packages_are_not_importable(pool: Pool) -> None:
    """Programs get the standard library only: the app's dependencies (Django here) are not there."""
    result = run(pool, "import django\n")
    assert result.status == "runtime_error"
    assert result.exception is not None and result.exception.type == "ModuleNotFoundError"


# --- /dev and /dev/shm (issue 51, items 5 and 6): /dev is read-only, as isolate binds it; /dev/shm is a
# tmpfs of its own with a size cap, as nsjail and Docker give one.


def test_a_file_written_in_dev_does_not_reach_the_next_program(pool: Pool) -> None:
    """A program leaves a file in /dev (a tmpfs that was writable and never emptied): a later program,
    another user's, on the same worker finds nothing of it."""
    path = f"/dev/execsim-canary-{uuid.uuid4().hex}"
    leave = f"try:\n    open({path!r}, 'w').write({SECRET!r})\nexcept OSError:\n    pass\n"
    look = f"import os\nprint(os.path.lexists({path!r}))\n"
    for _ in range(pool.workers):  # on each worker
        assert run(pool, leave).status == "ok"
    for _ in range(pool.workers):
        result = run(pool, look)
        assert (result.status, result.stdout) == ("ok", "False\n"), result.message
    assert not os.path.lexists(path)  # nor did it reach the host's /dev
    assert_healthy(pool)


def test_nothing_can_be_made_in_dev_but_its_devices_work(pool: Pool) -> None:
    """Creating a file, a folder or a link in /dev fails (EROFS); what programs use of it still works:
    writing to /dev/null, reading /dev/zero and /dev/urandom."""
    name = f"/dev/execsim-{uuid.uuid4().hex}"
    code = (
        "import errno, os\n"
        f"for what, make in [('file', lambda: open({name!r}, 'w')), ('folder', lambda: os.mkdir({name!r})),"
        f" ('link', lambda: os.symlink('/tmp', {name!r}))]:\n"
        "    try:\n        make()\n        print(what, 'made')\n"
        "    except OSError as exc:\n        print(what, errno.errorcode[exc.errno])\n"
        "open('/dev/null', 'w').write('x' * 1000)\n"
        "print(len(open('/dev/zero', 'rb').read(10)), len(open('/dev/urandom', 'rb').read(10)))\n"
    )
    result = run(pool, code)
    assert result.status == "ok", result.message
    assert result.stdout.splitlines() == ["file EROFS", "folder EROFS", "link EROFS", "10 10"]
    assert_healthy(pool)


def test_dev_shm_is_size_capped(pool: Pool) -> None:
    """A program writes files into /dev/shm (each under the file-size limit) far past any cap: it gets
    ENOSPC at the cap, not the host's memory; the next program finds /dev/shm empty, its space free."""
    code = (
        "import errno, os\nwritten = 0\ntry:\n    for i in range(32):\n"
        "        with open(f'/dev/shm/f{i}', 'wb') as f:\n            for _ in range(8):\n"
        "                f.write(b'x' * 2 ** 20)\n                written += 1\n"
        "    print('none', written)\nexcept OSError as exc:\n    print(errno.errorcode[exc.errno], written)\n"
        "st = os.statvfs('/dev/shm')\nprint(st.f_blocks * st.f_frsize // 2 ** 20)\n"
    )
    result = run(pool, code, timeout=5.0)
    assert result.status == "ok", result.message
    (error, written), (size,) = (line.split() for line in result.stdout.splitlines())
    assert (error, int(size)) == ("ENOSPC", SMALL.shm_size_mb), result.stdout
    assert int(written) <= SMALL.shm_size_mb
    look = (
        "import os\nst = os.statvfs('/dev/shm')\nprint(os.listdir('/dev/shm'), st.f_bfree == st.f_blocks)\n"
    )
    for _ in range(pool.workers):
        after = run(pool, look)
        assert (after.status, after.stdout) == ("ok", "[] True\n"), after.message
    assert_healthy(pool)


# --- What the sandbox shows of the host (issue 51, item 7): no host path, no bwrap command line.


def _host_paths() -> list[str]:
    """Paths of this host that the sandbox has no need to show: the checkout, the data directory, and
    the interpreter's installation when it lies outside /usr (the system's, which is shown)."""
    from simulator.execution.sandbox import interpreter

    paths = [str(PROJECT), str(config.data_dir())]
    for python in {os.path.realpath(p) for p in (sys.executable, "/usr/bin/python3") if os.path.exists(p)}:
        prefix = interpreter(python).prefix
        if not (prefix == "/usr" or prefix.startswith("/usr/")):
            paths.append(prefix)
    return paths


def test_no_process_shows_a_bwrap_command_line_or_a_host_path(pool: Pool) -> None:
    """/proc/1/cmdline was bwrap's own command line (every bound path of the host); the command lines
    of every process the program sees and its environment name no host path and no bwrap."""
    code = (
        "import os\nseen = [repr(dict(os.environ))]\nfor pid in os.listdir('/proc'):\n"
        "    if pid.isdigit():\n        for name in ('cmdline', 'environ'):\n            try:\n"
        "                seen.append(open(f'/proc/{pid}/{name}', 'rb').read().decode(errors='replace'))\n"
        "            except OSError:\n                pass\n"
        "print('\\n'.join(seen).replace('\\0', ' '))\n"
    )
    result = run(pool, code)
    assert result.status == "ok", result.message
    assert "bwrap" not in result.stdout, result.stdout[:2000]
    for path in _host_paths():
        assert path not in result.stdout, (path, result.stdout[:2000])
    assert_healthy(pool)


# Every path of the sandbox's tree (not into /proc, /sys or /usr, the system's own), as the program
# sees it, that names one of FORBIDDEN (a host path and the folders leading to it), and the listing of /.
WALK_ROOT = (
    "import os\nfound = []\n"
    "for root, folders, files in os.walk('/'):\n"
    "    if root == '/':\n        folders[:] = [f for f in folders if f not in ('proc', 'sys', 'usr')]\n"
    "    for name in folders + files:\n        path = os.path.join(root, name)\n"
    "        if any(path == f or path.startswith(f + '/') for f in FORBIDDEN):\n"
    "            found.append(path)\n"
    "print(sorted(os.listdir('/')))\nprint(sorted(found)[:20])\n"
)


def test_the_visible_tree_names_no_host_folder(pool: Pool) -> None:
    """Listing / and walking the whole tree shows none of the host's folders that lead to the checkout,
    the data directory or the interpreter (the worker's modules were bound at their host paths, so /
    listed the checkout's parent folders)."""
    from simulator.execution.sandbox import HIDDEN_DIRS, SYSTEM_DIRS

    made_anyway = {"/", "/etc", "/dev", "/proc", "/tmp", *HIDDEN_DIRS, *map(os.path.dirname, HIDDEN_DIRS)}
    made_anyway |= set(SYSTEM_DIRS)
    forbidden = set()
    for path in _host_paths():
        while path not in made_anyway:
            forbidden.add(path)
            path = os.path.dirname(path)
    result = run(pool, f"FORBIDDEN = {sorted(forbidden)!r}\n" + WALK_ROOT, timeout=5.0)
    assert result.status == "ok", result.message
    top, found = result.stdout.splitlines()
    assert found == "[]", (sorted(forbidden), found)
    host_tops = {p[1:] for p in forbidden if p.count("/") == 1}
    assert not host_tops & set(ast.literal_eval(top)), top
    assert_healthy(pool)


def test_the_mount_table_names_no_host_folder_of_the_checkout(pool: Pool) -> None:
    """/proc/self/mountinfo names the host path of every bind: the checkout's (the worker's modules)
    and the data directory's must not be there. (The interpreter's installation is bound, so where it
    lies on the host is named there when it lies outside /usr: sandbox.py's "What is not protected".)"""
    result = run(pool, "print(open('/proc/self/mountinfo').read())\n")
    assert result.status == "ok", result.message
    for path in (str(PROJECT), str(config.data_dir())):
        assert path not in result.stdout, (path, result.stdout)
    assert_healthy(pool)
