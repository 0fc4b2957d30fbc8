"""Input files that are not regular files (a device, a FIFO, a directory) or far too large:
one line, before any database is opened, never read forever."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from esatui.cli import main
from tests.fixtures.recording import host_recording


@pytest.fixture
def recorded(db_path: Path) -> Path:
    host_recording(db_path, n_intervals=3)
    return db_path


def _fifo(tmp_path: Path) -> Path:
    fifo = tmp_path / "costs.json"
    os.mkfifo(fifo)  # no writer: a blocking open would wait for one
    return fifo


def _big(tmp_path: Path) -> Path:
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (17 * 1024 * 1024))
    return big


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda _: Path("/dev/zero"), "is a character device, not a file"),
        (_fifo, "is a named pipe (FIFO), not a file"),
        (lambda tmp: tmp, "is a directory, not a file"),
        (_big, "is larger than 1,024 KiB, more than such a file holds"),
    ],
)
def test_a_cost_table_that_is_no_small_file_is_one_line(
    make: object, said: str, recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: /dev/zero filled memory until the OOM killer came; a FIFO hung; a directory
    was "cannot read it ([Errno 21] Is a directory: ...)"."""
    assert callable(make)
    costs = make(tmp_path)
    argv = ["export", "ESACRYPE", "--db", str(recorded), "--crypto-costs", str(costs)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"esatui: error: --crypto-costs {costs} {said}: give a JSON or TOML file"]


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("/dev/zero", "/dev/zero is a character device, not a MONWRITE file"),
        ("{tmp}", "{tmp} is a directory, not a MONWRITE file"),
    ],
)
def test_a_monwrite_import_of_a_device_is_refused_before_the_database(
    spec: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: /dev/zero was read at full CPU forever, the database created."""
    db = tmp_path / "c.sqlite"
    source = "monwrite:" + spec.format(tmp=tmp_path)
    assert main(["collect", "--source", source, "--db", str(db)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("esatui: error: " + said.format(tmp=tmp_path))
    assert not list(tmp_path.glob("c.sqlite*"))


@pytest.mark.parametrize("source", ["sim:mode-vm-day", "host"])
@pytest.mark.parametrize("layout", ["/dev/zero", "fifo", "big"])
def test_a_layout_file_that_is_no_small_file_is_refused_before_the_database(
    layout: str, source: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused whether or not a monitor source runs: with the host source alone a mistyped
    or unusable file was ignored, exit 0 (an outside check)."""
    path = {"fifo": _fifo, "big": _big}.get(layout, lambda _: Path(layout))(tmp_path)
    db = tmp_path / "c.sqlite"
    argv = ["collect", "--source", source, "--count", "1", "--interval", "1", "--db", str(db)]
    assert main([*argv, "--monitor-layout", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"esatui: error: {path} is ")
    assert not list(tmp_path.glob("c.sqlite*"))


def test_a_missing_layout_file_is_refused_with_the_host_source_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "c.sqlite"
    missing = tmp_path / "layuots.json"
    argv = ["collect", "--source", "host", "--count", "1", "--interval", "1", "--db", str(db)]
    assert main([*argv, "--monitor-layout", str(missing)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"esatui: error: {missing}: cannot read: No such file or directory"]
    assert not list(tmp_path.glob("c.sqlite*"))
