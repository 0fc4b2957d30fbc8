"""Standard output closed, full, in an encoding that cannot show the text, or a pipe whose
reader went away: one line (or, for the pipe, silence), never a traceback or a lost
recording. These run the program itself: the streams are the process's own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.recording import host_recording


@pytest.fixture
def recorded(db_path: Path) -> Path:
    host_recording(db_path, n_intervals=5)
    return db_path


def _esatui(
    *argv: str, env: dict[str, str] | None = None, stdout: object = subprocess.PIPE
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-m", "esatui", *argv],
        env={**os.environ, **(env or {})},
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )


COMPARED = ["--with-from", "2026-01-05T00:00", "--with-to", "2026-01-05T00:10"]
COMPARED += ["--from", "2026-01-05T00:10"]


def _closed_stdout() -> None:
    os.close(1)


def test_a_closed_standard_output_is_one_line(recorded: Path, tmp_path: Path) -> None:
    """Before: "'NoneType' object has no attribute 'write'"."""
    done = subprocess.run(
        [sys.executable, "-m", "esatui", "export", "ESALNXC", "--db", str(recorded)],
        preexec_fn=_closed_stdout,  # as the shell's >&-
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "esatui: error: standard output is closed: redirect it (> FILE, or > /dev/null)"
    ]
    report = tmp_path / "r.txt"  # a command that does not write it is not held up
    output = ["--output", str(report)]
    done = subprocess.run(
        [sys.executable, "-m", "esatui", "export", "ESALNXC", "--db", str(recorded), *output],
        preexec_fn=_closed_stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and "ESALNXC" in report.read_text()


@pytest.mark.parametrize(
    "env",
    [
        {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"},
        {"PYTHONIOENCODING": "ascii"},
    ],
)
@pytest.mark.parametrize(
    "argv",
    [
        ["export", "ESAPOLL", "--db", "{sim}"],
        ["screens"],
        ["compare", "ESAPOLL", "--db", "{sim}", *COMPARED],
    ],
)
def test_text_the_encoding_cannot_show_is_replaced(
    argv: list[str], env: dict[str, str], simulated: Path
) -> None:
    """Before: "'ascii' codec can't encode character '\\xb5'", exit 1, no report."""
    done = _esatui(*[a.format(sim=simulated) for a in argv], env=env)
    assert done.returncode == 0, done.stderr
    assert "?s" in done.stdout and "µ" not in done.stdout


def test_a_report_file_is_utf8_whatever_the_locale(simulated: Path, tmp_path: Path) -> None:
    report = tmp_path / "poll.txt"
    env = {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    done = _esatui("export", "ESAPOLL", "--db", str(simulated), "--output", str(report), env=env)
    assert done.returncode == 0, done.stderr
    assert "µs" in report.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("sim") / "poll.sqlite"
    done = _esatui("sim", "--scenario", "mode-vm-day", "--duration", "20m", "--db", str(db))
    assert done.returncode == 0, done.stderr
    return db


def test_a_full_standard_output_says_it_and_what_was_recorded(simulated: Path) -> None:
    """Before: "[Errno 28] No space left on device", as if the database were full."""
    with Path("/dev/full").open("w") as full:
        done = _esatui("export", "ESAPOLL", "--db", str(simulated), stdout=full)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "esatui: error: cannot write to standard output: No space left on device"
    )
    db = simulated.with_name("again.sqlite")
    with Path("/dev/full").open("w") as full:
        done = _esatui(
            "sim", "--scenario", "mode-vm-day", "--duration", "5m", "--db", str(db), stdout=full
        )
    last = done.stderr.splitlines()[-1]
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert last.startswith("esatui: error: cannot write to standard output: No space left")
    assert "done all the same: 5 intervals of mode-vm-day" in last and db.exists()


@pytest.mark.parametrize("output", [[], ["--output", "/dev/stdout"]])
def test_a_pipe_whose_reader_went_away_is_silent_either_way(
    output: list[str], simulated: Path
) -> None:
    """Before: --output /dev/stdout | head -1 was "Broken pipe", exit 1, plain stdout exit 0."""
    argv = ["export", "ESAPOLL", "--db", str(simulated), "--format", "csv", *output]
    read, write = os.pipe()
    os.close(read)  # the reader gone before a byte is written
    try:
        done = _esatui(*argv, stdout=write)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["export", "--help"]])
def test_help_to_a_full_standard_output_says_it(argv: list[str]) -> None:
    """Before: the help was lost at the interpreter's exit: exit 120 and a traceback
    (``python -m esatui``), or exit 0 and nothing said (the ``esatui`` script)."""
    with Path("/dev/full").open("w") as full:
        done = _esatui(*argv, stdout=full)
    assert (done.returncode, done.stderr.splitlines()) == (
        1,
        ["esatui: error: cannot write to standard output: No space left on device"],
    )
    read, write = os.pipe()
    os.close(read)  # a reader that went away (| head) is silent, as for a report
    try:
        done = _esatui(*argv, stdout=write)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (0, "")
