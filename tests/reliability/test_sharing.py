"""Issue 13 item 11: sharing a recording with users who may only read it. Readers create no
file next to the database; the failures are one sentence saying what to do. As root the
other user is ``nobody`` (``setpriv``); otherwise the reader is this user in a directory it
cannot write."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from esatui.db.store import Store, StoreError
from tests.fixtures.recording import host_recording

ROOT = os.geteuid() == 0
NOBODY = 65534


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory other users can reach (pytest's own temporary directories are 0700)."""
    path = Path(tempfile.mkdtemp(prefix="esatui-share-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    path.chmod(0o755)
    shutil.rmtree(path)


def _as_reader(argv: list[str], directory: Path) -> subprocess.CompletedProcess[str]:
    """``esatui ARGV`` as a user who may read the recording but not write its directory."""
    command = [sys.executable, "-m", "esatui", *argv]
    if ROOT:
        command = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                   *command]  # fmt: skip
    else:
        directory.chmod(0o555)
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    finally:
        directory.chmod(0o755)


def _shared_recording(directory: Path) -> Path:
    db = directory / "esatui.sqlite"
    host_recording(db, n_intervals=5)
    db.chmod(0o644)  # the owner shares it
    return db


def test_a_reader_without_write_access_reads_a_recording_at_rest(shared_dir: Path) -> None:
    """Before: without a running recorder it could not open it at all."""
    db = _shared_recording(shared_dir)
    before = sorted(p.name for p in shared_dir.iterdir())
    done = _as_reader(["export", "ESALNXC", "--db", str(db)], shared_dir)
    assert done.returncode == 0, done.stderr
    assert "ESALNXC" in done.stdout
    assert sorted(p.name for p in shared_dir.iterdir()) == before  # created nothing


def test_a_reader_reads_while_the_recorder_writes_and_leaves_nothing(shared_dir: Path) -> None:
    """Before: a viewer of another uid left -wal/-shm files of its own, and the recorder
    then failed with 'attempt to write a readonly database'."""
    db = _shared_recording(shared_dir)
    with Store.open(db) as store:
        store.checkpoint()
        files = {p.name: p.stat().st_uid for p in shared_dir.iterdir()}
        done = _as_reader(["export", "ESALNXC", "--db", str(db)], shared_dir)
        assert done.returncode == 0, done.stderr
        assert {p.name: p.stat().st_uid for p in shared_dir.iterdir()} == files
    with Store.open(db):  # and the recorder goes on writing
        pass


@pytest.mark.skipif(not ROOT, reason="needs a file of another user: run as root (CI does)")
def test_a_recorder_that_finds_another_users_wal_says_what_to_do(shared_dir: Path) -> None:
    db = _shared_recording(shared_dir)
    os.chown(shared_dir, NOBODY, NOBODY)
    os.chown(db, NOBODY, NOBODY)
    os.chown(db.with_name(db.name + "-lock"), NOBODY, NOBODY)
    wal = db.with_name(db.name + "-wal")
    wal.touch(mode=0o600)  # left by another user (root here)
    command = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
               sys.executable, "-m", "esatui", "collect", "--db", str(db), "--source", "host",
               "--interval", "0.2", "--count", "1"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert "belongs to uid 0" in lines[0] and "remove that file" in lines[0]


def test_a_database_on_a_read_only_file_system_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: 'it belongs to uid 0 (mode 0600); record as its owner', to uid 0 itself.
    The mount is faked (mounting needs privileges a test should not count on)."""
    db = host_recording(tmp_path / "ro.sqlite", n_intervals=2)
    access, statvfs = os.access, os.statvfs

    def no_write(path: object, mode: int, **kwargs: object) -> bool:
        return False if Path(str(path)) == db and mode == os.W_OK else access(path, mode, **kwargs)  # type: ignore[arg-type]

    def read_only(path: object) -> object:
        found = statvfs(path)  # type: ignore[arg-type]
        if Path(str(path)) != db:
            return found
        return type("ReadOnly", (), {"f_flag": found.f_flag | os.ST_RDONLY})()

    monkeypatch.setattr(os, "access", no_write)
    monkeypatch.setattr(os, "statvfs", read_only)
    with pytest.raises(StoreError) as raised:
        Store.open(db)
    assert str(raised.value) == f"cannot write {db}: its file system is mounted read-only"
