"""Issue 15, the command line as a newcomer meets it: each test failed before its fix."""

from __future__ import annotations

import json
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


def test_a_named_source_that_is_absent_is_refused_and_nothing_is_created(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, db_path: Path
) -> None:
    """Before: ``collect --source zcrypt`` without an AP bus recorded empty intervals and
    exited 0 without a word."""
    root = tmp_path / "root"  # a system without /sys/bus/ap
    root.mkdir()
    argv = ("collect", "--source", "zcrypt", "--root", str(root), "--db", str(db_path))
    code, out, err = run(capsys, *argv, "--count", "1", "--interval", "0.2")
    assert code == 1 and not out
    assert err.startswith("esatui: error: zcrypt is not available here: ")
    assert "/sys/bus/ap" in err and len(err.strip().splitlines()) == 1
    assert not db_path.exists()


def test_esassum_crypto_rate_is_what_its_help_says(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """ESASSUM's crypto_ops_s is ESACRYPT's guest NQ rate, and its help says NQ, not
    completed (before: the help said completed, the value was the NQ rate)."""
    from esatui.screens import catalog
    from tests.screens import crypto_data as D
    from tests.tui.test_snapshots import imported

    db = imported(tmp_path, D.seed000_file)
    capsys.readouterr()
    docs = {c.id: c.doc for c in catalog.get("ESASSUM").columns}
    assert "NQ" in docs["crypto_ops_s"] and "started" in docs["crypto_ops_s"]
    rows = {}
    for screen in ("ESASSUM", "ESACRYPT"):
        code, out, err = run(capsys, "export", screen, "--db", str(db), "--format", "json")
        assert code == 0, err
        rows[screen] = {r["time"]: r for r in json.loads(out)["rows"] if r["row"] == "data"}
    assert rows["ESASSUM"].keys() == rows["ESACRYPT"].keys()
    for t, summary in rows["ESASSUM"].items():
        assert summary["crypto_ops_s"] == rows["ESACRYPT"][t]["nq_virt"]
