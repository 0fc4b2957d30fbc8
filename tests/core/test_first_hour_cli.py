"""Issue 15, the command line as a newcomer meets it: each test failed before its fix."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from esatui.cli import main
from esatui.db.sqlite_reader import SqliteReader
from tests.fixtures.recording import host_recording


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def interval_count(db_path: Path) -> int:
    with SqliteReader.open(db_path) as reader:
        return reader.queries.interval_count()


def test_db_prune_dry_run_says_what_it_would_delete_and_deletes_nothing(
    capsys: pytest.CaptureFixture[str], db_path: Path
) -> None:
    host_recording(db_path, n_intervals=5)
    before = interval_count(db_path)
    code, out, err = run(capsys, "db", "prune", "--dry-run", "--db", str(db_path), "--keep", "1h")
    assert code == 0, err
    assert out.startswith("dry run: would delete ") and "nothing deleted" in out
    assert "older than --keep" in out
    assert interval_count(db_path) == before
    # a bound the data already fits: nothing to say but that
    keep = f"{int(time.time()) // 86400 + 1}d"  # longer than since the fixture's day
    code, out, _ = run(capsys, "db", "prune", "--dry-run", "--db", str(db_path), "--keep", keep)
    assert code == 0 and out.startswith("dry run: nothing would be deleted")


def test_db_prune_dry_run_by_size_counts_what_a_prune_would_delete(
    capsys: pytest.CaptureFixture[str], db_path: Path
) -> None:
    host_recording(db_path, n_intervals=200)
    args = ("db", "prune", "--db", str(db_path), "--max-size", "64KB")
    code, said, err = run(capsys, *args, "--dry-run")
    assert code == 0, err
    assert "more to fit --max-size" in said
    assert interval_count(db_path) == 400  # host and esatui, untouched
    code, _, err = run(capsys, *args)
    assert code == 0, err
    deleted = 400 - interval_count(db_path)
    assert deleted > 0 and f"would delete {deleted:,} of 400 intervals" in said


def test_db_vacuum_says_what_it_did(capsys: pytest.CaptureFixture[str], db_path: Path) -> None:
    host_recording(db_path, n_intervals=3)
    code, out, _ = run(capsys, "db", "vacuum", "--db", str(db_path))
    assert code == 0 and out.startswith(f"vacuumed {db_path}: file ") and "deleted" not in out
