"""Every input the command line reads is bounded (issue 51, item 12: ``execsim run p.py --stdin /dev/zero``
grew by about 1.2 GB/s until the machine ran out): a file, a special file or this process's stdin is
read up to ``EXECSIM_CLI_MAX_INPUT_BYTES`` and refused past it, in one line with exit 2, quickly.

The commands run in a child process with its address space capped (1.5 GB), so that the unbounded read
these tests guard against fails there instead of taking this machine's memory."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simulator.cli import DEFAULT_MAX_INPUT_BYTES, MAX_INPUT_ENV

REPO = Path(__file__).resolve().parents[3]
SQUARE = REPO / "examples" / "square.json"
MEMORY_CAP = 1_500_000_000


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def execsim(*args: str, stdin: object = subprocess.DEVNULL, **env: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from simulator.cli import main; sys.exit(main(sys.argv[1:]))"
    environ = {**os.environ, "EXECSIM_MODEL_URL": "http://127.0.0.1:9/v1", **env}
    return subprocess.run(
        [sys.executable, "-c", code, *args], stdin=stdin, capture_output=True, text=True, timeout=60,
        env=environ, cwd=REPO, preexec_fn=_capped,
    )  # fmt: skip


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text[-2000:]
    return lines[0]


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "echo.py"
    path.write_text("print(input())\n")
    return path


def test_the_default_cap_is_documented_and_generous():
    assert DEFAULT_MAX_INPUT_BYTES == 64 * 1024 * 1024 and MAX_INPUT_ENV == "EXECSIM_CLI_MAX_INPUT_BYTES"


@pytest.mark.parametrize("command", ["run", "trace", "check", "simulate"])
def test_stdin_from_a_file_that_never_ends_is_refused(command: str, program: Path, tmp_path: Path) -> None:
    nlex = tmp_path / "nlex.txt"
    nlex.write_text("It prints x.")
    extra = ["--nlex", str(nlex)] if command == "check" else []
    started = time.monotonic()
    done = execsim(command, str(program), "--stdin", "/dev/zero", *extra)
    assert done.returncode == 2, done.stderr[-2000:]
    line = one_line(done.stderr)
    assert "stdin file /dev/zero" in line and "more than 67,108,864 bytes" in line and MAX_INPUT_ENV in line
    assert time.monotonic() - started < 30


def test_this_processs_stdin_is_bounded_too(program: Path) -> None:
    with open("/dev/zero", "rb") as zeros:
        done = execsim("run", str(program), "--stdin", "-", stdin=zeros, **{MAX_INPUT_ENV: "1000"})
    assert done.returncode == 2
    assert "stdin file - holds more than 1,000 bytes" in one_line(done.stderr)


@pytest.mark.parametrize(
    ("args", "what"),
    [
        (["run", "/dev/zero", "--call", "f()"], "program /dev/zero"),
        (["batch", "/dev/zero"], "tasks file /dev/zero"),
        (["solve", "/dev/zero"], "problem file /dev/zero"),
    ],
)
def test_every_file_a_command_reads_is_bounded(args: list[str], what: str, program: Path) -> None:
    done = execsim(*args)
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"{what} holds more than" in one_line(done.stderr)


def test_check_bounds_its_nlex_file(program: Path, tmp_path: Path) -> None:
    given = tmp_path / "in.txt"
    given.write_text("x\n")
    done = execsim(
        "check", str(program), "--stdin", str(given), "--nlex", "/dev/zero", **{MAX_INPUT_ENV: "50"}
    )
    assert done.returncode == 2 and "NLEX file /dev/zero holds more than 50 bytes" in one_line(done.stderr)


def test_a_regular_file_over_the_cap_is_refused_and_one_within_it_is_read(
    program: Path, tmp_path: Path
) -> None:
    big = tmp_path / "big.txt"
    big.write_text("x" * 101)
    done = execsim("run", str(program), "--stdin", str(big), **{MAX_INPUT_ENV: "100"})
    assert done.returncode == 2 and "holds more than 100 bytes" in one_line(done.stderr)
    done = execsim("solve", str(SQUARE), "--json", **{MAX_INPUT_ENV: "100"})
    assert done.returncode == 2 and "problem file" in one_line(done.stderr)
    done = execsim("run", str(program), "--stdin", str(big), "--json", **{MAX_INPUT_ENV: "101"})
    assert done.returncode in (0, 3), done.stderr[-2000:]  # read (3: no sandbox on this machine)


def test_eval_checks_the_size_of_the_files_other_modules_read(tmp_path: Path) -> None:
    data = tmp_path / "dev.jsonl"
    data.write_text("{}\n" * 50)
    done = execsim("eval", "cruxeval-o", "--data", str(data), **{MAX_INPUT_ENV: "100"})
    assert done.returncode == 2 and f"--data {data} holds more than 100 bytes" in one_line(done.stderr)
    done = execsim("eval-diff", str(data), str(data), **{MAX_INPUT_ENV: "100"})
    assert done.returncode == 2 and "holds more than 100 bytes" in one_line(done.stderr)


def test_dev_null_is_still_an_empty_input(tmp_path: Path) -> None:
    quiet = tmp_path / "quiet.py"
    quiet.write_text("print('ok')\n")
    done = execsim("run", str(quiet), "--stdin", "/dev/null")
    assert done.returncode in (0, 3), done.stderr[-2000:]


@pytest.mark.parametrize("value", ["lots", "0", "-5", "1e9"])
def test_a_bad_cap_setting_is_a_usage_error_naming_it(value: str, program: Path) -> None:
    done = execsim("run", str(program), "--stdin", "", **{MAX_INPUT_ENV: value})
    assert done.returncode == 2 and f"{MAX_INPUT_ENV}={value!r}" in one_line(done.stderr)
