"""Fault injection, the store's promises: one writer (a second refused, naming the first;
no lock left by a killed one), retention under a size bound (the files, WAL included), the
file modes, and a damaged database refused in one line (issue 13 items 5-9)."""

from __future__ import annotations

import itertools
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from esatui.cli import main
from esatui.db.database import file_bytes
from esatui.db.records import EntityRow, Interval
from esatui.db.schema import SCHEMA_VERSION
from esatui.db.store import Store, StoreError
from esatui.sampling.recorder import Retention
from esatui.sampling.session import Recording
from esatui.sim.clock import SimClock
from tests.fakes.sources import THING, CountingSource
from tests.fixtures.reading import sql
from tests.fixtures.recording import host_recording
from tests.reliability.figures import record_figure

START_US = 1_790_000_040_000_000


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# --- one writer --------------------------------------------------------------------------


def test_a_second_writer_is_refused_naming_the_first(db_path: Path) -> None:
    with Store.open(db_path), pytest.raises(StoreError) as refused:
        Store.open(db_path)
    message = str(refused.value)
    assert f"pid {os.getpid()}" in message and "one writer at a time" in message
    assert "\n" not in message
    Store.open(db_path).close()  # free again once the first closed


def _collect(db: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "esatui", "collect", "--db", str(db), "--source", "host",
         "--interval", "0.3", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def _wait_for_writer(db: Path, proc: subprocess.Popen[str]) -> None:
    lock = db.with_name(db.name + "-lock")
    for _ in range(600):
        if lock.exists() and f"pid {proc.pid} " in lock.read_text():
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("the recorder did not start")


@pytest.mark.slow
def test_two_recorders_the_second_refused_until_the_first_is_killed(db_path: Path) -> None:
    """Before: two recorders wrote overlapping intervals side by side."""
    first = _collect(db_path)
    try:
        _wait_for_writer(db_path, first)
        second = _collect(db_path, "--count", "1")
        _, err = second.communicate(timeout=120)
        assert second.returncode == 1
        (line,) = err.strip().splitlines()
        assert f"already being written by pid {first.pid}" in line
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate()
    third = _collect(db_path, "--count", "1")  # the killed one left no lock behind
    _out, err = third.communicate(timeout=120)
    assert third.returncode == 0, err
    record_figure("two writers", "the second refused with the first's pid; free after kill -9")


@pytest.mark.slow
def test_a_closed_terminal_stops_the_recorder_as_ctrl_c_does(db_path: Path) -> None:
    """Before: SIGHUP killed it (exit 129), leaving the -wal and -shm files and WAL mode."""
    proc = _collect(db_path)
    _wait_for_writer(db_path, proc)
    time.sleep(0.7)
    proc.send_signal(signal.SIGHUP)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "recorded (sources: host, esatui)" in out
    assert not Path(f"{db_path}-wal").exists() and not Path(f"{db_path}-shm").exists()
    assert sql(db_path, "PRAGMA journal_mode") == [("delete",)]


# --- retention under a size bound ----------------------------------------------------------


def test_db_prune_max_size_ends_within_the_bound(
    db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: --max-size 300KB deleted 3,697 intervals and left 856,064 bytes (the
    incremental vacuum was stepped once)."""
    host_recording(db_path, n_intervals=4000)
    assert file_bytes(db_path) > 800_000
    assert main(["db", "prune", "--db", str(db_path), "--max-size", "300KB"]) == 0
    assert 0 < file_bytes(db_path) <= 300 * 1024  # KB as esatui reads sizes: 1024 bytes
    assert not db_path.with_name(db_path.name + "-wal").exists()
    assert sql(db_path, "SELECT COUNT(*) FROM interval")[0][0] > 0  # the newest are kept
    capsys.readouterr()


def test_the_recorder_keeps_the_files_within_max_size_as_it_goes(db_path: Path) -> None:
    """Before: retention ran once an hour and did not count the WAL: after 210 s at
    --interval 0.1 --max-size 300KB --keep 20s the database was 745 KB plus a 4.2 MB WAL.
    Now the files (WAL included) stay within the bound, but for the pages one commit adds
    to the log before its checkpoint."""
    bound = 300 * 1024
    wal = db_path.with_name(db_path.name + "-wal")
    clock = SimClock(START_US)
    source = CountingSource("good", clock, entities=40)
    sizes: list[tuple[int, int]] = []  # (database and log, log) after each interval

    def measure(_interval: Interval) -> None:
        sizes.append((file_bytes(db_path), wal.stat().st_size if wal.exists() else 0))

    recording = Recording(
        db_path,
        [source],
        interval_s=0.1,
        hf_s=None,
        clock=clock,
        retention=Retention(keep_s=20.0, max_bytes=bound),
    )
    stats = recording.run(threading.Event(), warn=print, on_interval=measure, count=2100)
    commit = max(b[1] - a[1] for a, b in itertools.pairwise(sizes))  # one commit's log pages
    peak = max(total for total, _ in sizes)
    assert peak <= bound + commit, (peak, commit)
    assert file_bytes(db_path) <= bound
    ends = [e for (e,) in sql(db_path, "SELECT end_us FROM interval WHERE source = 'good'")]
    assert max(ends) - min(ends) <= (20 + 2) * 1e6  # --keep, checked every tenth of it
    record_figure(
        "retention", f"{stats.written} intervals written at --interval 0.1 --keep 20s "
        f"--max-size 300KB: files at most {peak} B for a bound of {bound} B (one commit "
        f"adds up to {commit} B to the log before its checkpoint)"
    )  # fmt: skip


def test_a_bound_below_the_empty_tables_keeps_each_sources_newest_interval(
    db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: --max-size 100KB deleted every interval, in `db prune` and in the recorder
    (whose "5 intervals recorded" left none), and the files still took more than 100 KB:
    the tables themselves do. Now the newest interval of each source is kept, and said."""
    host_recording(db_path, n_intervals=50)
    assert main(["db", "prune", "--db", str(db_path), "--max-size", "100KB", "--dry-run"]) == 0
    planned = capsys.readouterr().out
    assert "would delete 98 of 100 source intervals" in planned
    assert "which the newest interval of each source exceeds" in planned
    assert main(["db", "prune", "--db", str(db_path), "--max-size", "100KB"]) == 0
    out, err = capsys.readouterr()
    assert "source intervals deleted" in out
    assert err.startswith("esatui: --max-size 102,400 bytes is less than the database takes ")
    assert err.strip().endswith("those are kept") and len(err.strip().splitlines()) == 1
    newest = sql(db_path, "SELECT source, COUNT(*), MAX(end_us) FROM interval GROUP BY source")
    assert [(s, n) for s, n, _ in newest] == [("esatui", 1), ("host", 1)]
    assert main(["export", "ESALNXC", "--db", str(db_path)]) == 0  # the newest is shown
    capsys.readouterr()

    recorded = db_path.with_name("bounded.sqlite")
    clock = SimClock(START_US)
    said: list[str] = []
    recording = Recording(
        recorded,
        [CountingSource("good", clock, entities=40)],
        interval_s=1.0,
        hf_s=None,
        clock=clock,
        retention=Retention(keep_s=None, max_bytes=100 * 1024),
    )
    stats = recording.run(threading.Event(), warn=said.append, count=20)
    assert stats.intervals == 20
    assert [s for s in said if "--max-size" in s] == [
        next(s for s in said if s.startswith("retention: --max-size 102,400 bytes holds only"))
    ]  # said once
    assert sql(recorded, "SELECT COUNT(*) FROM interval WHERE source = 'good'")[0][0] >= 1


# --- file modes ---------------------------------------------------------------------------


def test_the_data_directory_is_0700_and_the_database_0600(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: 0644 in 0755 directories, holding host, LPAR and guest names."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("ESATUI_DB", raising=False)
    os.umask(0o022)
    assert main(["collect", "--source", "host", "--interval", "0.2", "--count", "1"]) == 0
    data = tmp_path / "xdg" / "esatui"
    assert _mode(tmp_path / "xdg") == 0o700 and _mode(data) == 0o700
    assert _mode(data / "esatui.sqlite") == 0o600
    assert _mode(data / "esatui.sqlite-lock") == 0o600
    with Store.open(data / "esatui.sqlite") as store:  # the WAL and its index, while open
        store.register("good", [THING])
        row = EntityRow("thing", "a", {}, {"ops": 1})
        store.write(Interval("good", "n1", START_US, START_US + 10**6, 10**6, (row,)))
        assert _mode(data / "esatui.sqlite-wal") == 0o600
        assert _mode(data / "esatui.sqlite-shm") == 0o600
    capsys.readouterr()


def test_an_existing_mode_is_kept_and_backups_take_it(db_path: Path) -> None:
    Store.open(db_path).close()
    db_path.chmod(0o640)  # the owner shares it with a group
    with Store.open(db_path) as store:
        store.register("good", [THING])
        assert _mode(db_path.with_name(db_path.name + "-wal")) == 0o640
        store.vacuum()
    assert _mode(db_path) == 0o640
    Store.open(
        db_path, migrations={SCHEMA_VERSION: lambda c: None}, version=SCHEMA_VERSION + 1
    ).close()
    backup = db_path.with_name(f"{db_path.name}.schema{SCHEMA_VERSION}.bak")
    assert _mode(backup) == 0o640 and _mode(db_path) == 0o640


def test_a_backup_is_never_written_through_a_planted_link(db_path: Path, tmp_path: Path) -> None:
    Store.open(db_path).close()
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    backup = db_path.with_name(f"{db_path.name}.schema{SCHEMA_VERSION}.bak")
    backup.symlink_to(victim)
    Store.open(
        db_path, migrations={SCHEMA_VERSION: lambda c: None}, version=SCHEMA_VERSION + 1
    ).close()
    assert victim.read_text() == "keep me" and not backup.is_symlink()


def test_an_explicit_database_in_a_missing_directory_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: sim --db /nonexistent/x.sqlite created /nonexistent/."""
    target = tmp_path / "nonexistent" / "x.sqlite"
    code = main(["sim", "--scenario", "mode-vm-day", "--duration", "2m", "--db", str(target)])
    err = capsys.readouterr().err
    assert code == 1 and "does not exist" in err and len(err.strip().splitlines()) == 1
    assert not target.parent.exists()


@pytest.mark.parametrize("name", ["file:run.sqlite", ":memory:", "file:run.sqlite?mode=memory"])
def test_a_name_sqlite_would_read_as_a_uri_is_a_plain_file(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: 'file:run.sqlite' wrote into run.sqlite (beside the recorder writing it, whose
    lock is on run.sqlite-lock) and ':memory:' recorded into memory, nothing on disk."""
    monkeypatch.chdir(tmp_path)
    with Store.open(Path("run.sqlite")):  # a recorder writes run.sqlite meanwhile
        code = main(["sim", "--scenario", "mode-vm-day", "--duration", "2m", "--db", name])
    assert code == 0
    assert sql(tmp_path / name, "SELECT count(*) FROM interval")[0][0] > 0
    assert sql(tmp_path / "run.sqlite", "SELECT count(*) FROM interval") == [(0,)]
    assert (tmp_path / f"{name}-lock").exists()
    assert main(["db", "info", "--db", name]) == 0


# --- damaged databases ---------------------------------------------------------------------


def test_collecting_into_a_database_whose_tables_are_gone_fails_in_one_line(
    db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: every interval failed to write and the run exited 0."""
    Store.open(db_path).close()
    conn = sqlite3.connect(db_path)
    conn.execute("DROP TABLE interval")
    conn.close()
    code = main(["collect", "--db", str(db_path), "--source", "host", "--interval", "0.2",
                 "--count", "1"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and "damaged" in err and "interval table is missing" in err
