"""A tiny seccomp filter, built in pure Python: no sockets (and no side doors to them) for sandboxed code.

The sandbox already runs in an empty network namespace; this filter is the second wall: ``socket``,
``socketpair`` and ``io_uring_setup`` (io_uring can open sockets on its own) fail with ``EPERM``, and
``ptrace`` too (a program must not attach to its worker). So do the calls that create state outliving a
program which the worker's cleanup (kill every process, empty /tmp and /dev/shm) would not remove, so
the next program on the same worker could read it: System V shared memory, semaphores and message
queues (``shmget``, ``semget``, ``msgget``: the worker's IPC namespace outlives its programs), POSIX
message queues (``mq_open``) and kernel keyrings (``add_key``, ``request_key``, ``keyctl``: the user
keyring is shared by every process of the sandbox's uid). Everything else is allowed. A system call made
with a foreign calling convention (x32, or 32-bit ``int 0x80`` on x86-64) kills the process, since its
numbers differ and would slip past the list.

``install()`` applies the filter to the calling thread (Python runs user code on that thread; threads
started later inherit it) and sets ``no_new_privs``, which the kernel requires for unprivileged filters.
It cannot be removed afterwards, and every process forked later inherits it: the worker installs it in
itself once, before it forks any child, so a program starts already confined (installing it in each child
cost ~0.2 ms a program: the kernel checks and compiles the filter at every install).

Why the BPF is written here rather than by libseccomp (checked 2026-12-02 on Debian 12, libseccomp2
2.5.4-1+deb12u1, the project's Python 3.11.7):
- libseccomp's own Python bindings come from Debian only (python3-seccomp 2.5.4, built for the system
  python3, 3.11.2: ``Depends: python3 (>= 3.11~), python3 (<< 3.12)``); the project's virtual
  environment runs its own interpreter without system site-packages and cannot import it, short of
  putting /usr/lib/python3/dist-packages on ``sys.path`` by hand, which holds only while both Pythons
  share a minor version. On PyPI, libseccomp publishes none; mephi42-seccomp 2.5.6 (a build of those
  bindings) has wheels for CPython 3.12 and 3.13 only and no sdist, so nothing installs for 3.11.
- pyseccomp 0.1.2 (a ctypes re-implementation of that API; last release 2021-01-02) installs and
  works, and for this policy libseccomp emits the same program: 19 instructions on x86_64 (17 on
  aarch64), the same arch check, x32 check, 11 compares and returns (it lets syscall number -1
  through, which this filter kills). So the kernel would run the same filter; but the worker installs
  it inside the sandbox, where site-packages are hidden, so the binding would have to be shown there or
  the program built outside and handed in (keeping this loader anyway), and importing it costs ~53 ms
  (``-X importtime``) in a worker that imports as little as it can before it forks.
What libseccomp does give is checked instead: ``test_sandbox.py`` compares ``_ARCHES`` (arch tokens
and syscall numbers) with libseccomp's tables through libseccomp.so.2 (apt itself depends on it).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import platform
import struct

# BPF opcodes (linux/filter.h, linux/bpf_common.h) and seccomp return values (linux/seccomp.h).
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2

# offsets in struct seccomp_data
_NR_OFFSET, _ARCH_OFFSET = 0, 4

# machine -> (AUDIT_ARCH_*, {name: number}); numbers from the kernel's syscall tables
_ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (
        0xC000003E,
        {
            "socket": 41, "socketpair": 53, "ptrace": 101, "io_uring_setup": 425,
            "shmget": 29, "semget": 64, "msgget": 68, "mq_open": 240,
            "add_key": 248, "request_key": 249, "keyctl": 250,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "socket": 198, "socketpair": 199, "ptrace": 117, "io_uring_setup": 425,
            "shmget": 194, "semget": 190, "msgget": 186, "mq_open": 180,
            "add_key": 217, "request_key": 218, "keyctl": 219,
        },
    ),
}  # fmt: skip
DENIED = (
    "socket", "socketpair", "ptrace", "io_uring_setup",
    "shmget", "semget", "msgget", "mq_open", "add_key", "request_key", "keyctl",
)  # fmt: skip
_X32_BIT = 0x40000000


class SeccompUnsupported(RuntimeError):
    """This machine's architecture has no syscall table here."""


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def build_filter(machine: str | None = None) -> bytes:
    """The BPF program (``struct sock_filter[]`` bytes) for ``machine`` (default: this one)."""
    machine = machine or platform.machine()
    if machine not in _ARCHES:
        raise SeccompUnsupported(f"no seccomp syscall table for {machine!r}")
    audit_arch, numbers = _ARCHES[machine]
    denied = [numbers[name] for name in DENIED]
    deny = RET_ERRNO | errno.EPERM
    program = [
        _insn(_LD_W_ABS, 0, 0, _ARCH_OFFSET),
        _insn(_JEQ_K, 1, 0, audit_arch),  # native arch: skip the kill
        _insn(_RET_K, 0, 0, RET_KILL_PROCESS),
        _insn(_LD_W_ABS, 0, 0, _NR_OFFSET),
    ]
    if machine == "x86_64":
        program += [_insn(_JGE_K, 0, 1, _X32_BIT), _insn(_RET_K, 0, 0, RET_KILL_PROCESS)]
    # one compare per denied call: jump to the deny return at the end, or fall through
    for i, number in enumerate(denied):
        remaining = len(denied) - i - 1
        program.append(_insn(_JEQ_K, remaining + 1, 0, number))
    program += [_insn(_RET_K, 0, 0, RET_ALLOW), _insn(_RET_K, 0, 0, deny)]
    return b"".join(program)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


@functools.cache
def _loaded() -> tuple[ctypes.CDLL, ctypes.Array[ctypes.c_char], _SockFprog]:
    """libc and the filter in C memory, built once per process."""
    code = build_filter()
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(code, len(code))
    return libc, buffer, _SockFprog(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))


def install() -> None:
    """Load the filter into the calling thread (after ``no_new_privs``). Raises OSError on failure."""
    libc, _buffer, fprog = _loaded()
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(NO_NEW_PRIVS): {errno.errorcode.get(err, err)}")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(SET_SECCOMP): {errno.errorcode.get(err, err)}")
