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
    args = ("db", "prune", "--db", str(db_path), "--max-size", "200KB")
    code, said, err = run(capsys, *args, "--dry-run")
    assert code == 0, err
    assert "more to fit --max-size" in said
    assert interval_count(db_path) == 400  # host and esatui, untouched
    code, _, err = run(capsys, *args)
    assert code == 0, err
    deleted = 400 - interval_count(db_path)
    assert deleted > 0 and f"would delete {deleted:,} of 400 source intervals" in said


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


def test_from_minus_90m_as_the_readme_writes_it(
    capsys: pytest.CaptureFixture[str], db_path: Path
) -> None:
    """Before: ``--from -90m`` was taken for an option ("expected one argument")."""
    now_us = int(time.time()) // 60 * 60_000_000
    host_recording(db_path, n_intervals=5, start_us=now_us - 10 * 60_000_000)
    code, out, err = run(capsys, "export", "ESALNXC", "--db", str(db_path), "--from", "-90m")
    assert code == 0, err
    assert out.startswith("Screen: ESALNXC")


@pytest.mark.parametrize(("name", "screen"), [("cpuu", "ESACPUU"), ("usr2", "ESAUSR2")])
def test_export_takes_screen_names_as_the_monitor_does(
    capsys: pytest.CaptureFixture[str], db_path: Path, name: str, screen: str
) -> None:
    """Before: ``export cpuu`` was refused though the monitor's ``:cpuu`` opened it."""
    from tests.fixtures.hypervisor import guests_recording

    guests_recording(db_path)
    code, out, err = run(capsys, "export", name, "--db", str(db_path))
    assert code == 0, err
    assert out.startswith(f"Screen: {screen}")


@pytest.mark.parametrize(
    ("screen", "args", "said"),
    [
        ("ESACPUU", ("--option", "foo"), "ESACPUU has no view option 'foo' (options: normalized)"),
        ("ESALNXC", ("--width", "20"), "argument --width: '20': screens need at least 40 columns"),
        ("ESALNXC", ("--width", "0"), "argument --width: '0': screens need at least 40 columns"),
        (
            "ESALNXC",
            ("--interval-len", "7s"),
            "--interval-len 7s is shorter than the recorded intervals (1m): give 1m or longer",
        ),
    ],
)
def test_export_refuses_what_it_cannot_do_in_one_line(
    capsys: pytest.CaptureFixture[str],
    db_path: Path,
    screen: str,
    args: tuple[str, str],
    said: str,
) -> None:
    """Before: --option foo was ignored, --width 20 printed 50,000 lines, --interval-len 7s
    gave unaligned rows past --to."""
    host_recording(db_path, n_intervals=3)
    code, out, err = run(capsys, "export", screen, "--db", str(db_path), *args)
    assert code == 2 and not out
    assert err.startswith(f"esatui: error: {said}") and len(err.strip().splitlines()) == 1


def test_machine_type_from_cpuinfo_when_sysinfo_is_absent(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, db_path: Path
) -> None:
    """Before: a KVM guest without /proc/sysinfo showed no machine type, though every line
    of /proc/cpuinfo names it (``machine = 2817``)."""
    import shutil

    from tests.conftest import DATA

    root = tmp_path / "kvm"
    shutil.copytree(DATA / "host" / "trees" / "util-linux-s390-kvm", root)
    (root / "proc" / "sysinfo").unlink()
    (root / "proc" / "stat").write_text(Path("/proc/stat").read_text(encoding="ascii"))
    argv = ("collect", "--source", "host", "--root", str(root), "--db", str(db_path))
    code, _, err = run(capsys, *argv, "--interval", "0.2", "--count", "2")
    assert code == 0, err
    code, out, err = run(capsys, "export", "ESALNXC", "--db", str(db_path))
    assert code == 0, err
    assert out.splitlines()[1].split()[-1] == "2817"


def test_csv_and_json_carry_the_marks_the_text_shows(
    capsys: pytest.CaptureFixture[str], db_path: Path
) -> None:
    """Before: a value marked ``*`` or ``!`` on screen lost its mark in CSV and JSON, and
    data rows had no ``row`` key."""
    host_recording(db_path, n_intervals=4)
    base = ("export", "ESALNXC", "--db", str(db_path), "--threshold", "steal=5,20")
    code, text, _ = run(capsys, *base)
    assert code == 0 and "*" in text and "!" in text
    code, out, _ = run(capsys, *base, "--format", "json")
    rows = json.loads(out)["rows"]
    assert {r["row"] for r in rows} == {"data", "total"}
    assert {r["steal_mark"] for r in rows} == {None, "warn", "crit"}
    for r in (r for r in rows if r["row"] == "data"):  # (the all row is judged per CPU)
        level = None if r["steal"] < 5 else "warn" if r["steal"] < 20 else "crit"
        assert r["steal_mark"] == level, r
    code, out, _ = run(capsys, *base, "--format", "csv")
    head, *lines = out.splitlines()
    mark = head.split(",").index("steal_mark")
    assert sorted({ln.split(",")[mark] for ln in lines}) == ["", "crit", "warn"]


def test_a_partial_bucket_says_the_time_it_holds_in_minutes_and_seconds(
    capsys: pytest.CaptureFixture[str], db_path: Path
) -> None:
    from tests.fixtures.recording import START_US

    # 10-s intervals from 14:02:10 to 14:20:00: 14:15 holds 12m50s, 14:30 holds 5m
    host_recording(db_path, n_intervals=107, interval_s=10, start_us=START_US + 130_000_000)
    argv = ("export", "ESALNXC", "--db", str(db_path), "--interval-len", "15m")
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert "~ partial: the recording covers only part of the 15m: 14:30:00 holds 5m;" in out
    assert "14:15:00 holds 12m50s." in out
    code, out, err = run(capsys, *argv, "--format", "json")
    covered = {r["time"][11:19]: r["covered_s"] for r in json.loads(out)["rows"]}
    assert covered == {"14:30:00": 300, "14:15:00": 770}


def test_partial_buckets_of_several_days_are_dated(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: two days' partial buckets both said ``00:00:00 holds ...``."""
    from esatui.screens.catalog import partial_note
    from esatui.screens.model import Row
    from tests.core.test_rollups import set_zone

    set_zone(monkeypatch, "UTC")
    day_us, hour_us = 86_400_000_000, 3_600_000_000
    end = 1_774_742_400_000_000  # 2026-03-29 00:00 UTC

    def row(end_us: int, hours: int) -> Row:
        return Row(end_us - day_us, end_us, {}, partial=True, covered_us=hours * hour_us)

    one = partial_note([row(end, 11)], day_us)  # outside check: was 00:00:00, no date
    assert one is not None and one.endswith(": 03/29 00:00 holds 11h.")
    hours = partial_note(
        [Row(end - hour_us, end, {}, partial=True, covered_us=hour_us // 2)], hour_us
    )
    assert hours is not None and hours.endswith(": 00:00:00 holds 30m.")
    two = partial_note([row(end + day_us, 14), row(end, 11)], day_us)
    assert two is not None and two.endswith(": 03/30 00:00 holds 14h; 03/29 00:00 holds 11h.")
    # outside check: a --from/--to inside a bucket was blamed on the recording
    assert "partial: the recording covers" in two
    cut = partial_note([row(end, 11)], day_us, until_us=end - 13 * hour_us)
    assert cut is not None and "partial: the range asked for covers" in cut
    both = partial_note([row(end + day_us, 14), row(end, 11)], day_us, after_us=end - 20 * hour_us)
    assert both is not None and "partial: the range asked for or the recording covers" in both


@pytest.mark.parametrize("command", ["collect", "live"])
def test_a_gauge_rate_longer_than_the_interval_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    """Before: ``--interval 2 --hf 120`` recorded, sampling gauges once an interval, not
    every 2 minutes as asked; nothing said so."""
    db = tmp_path / "x.sqlite"
    code, out, err = run(capsys, command, "--interval", "2", "--hf", "120", "--db", str(db))
    assert code == 2 and not out and not db.exists()
    assert err == (
        "esatui: error: --hf 2m is longer than the interval (2s): gauges are sampled at least "
        "once an interval; give an --hf of at most the interval, or leave it out\n"
    )


def test_a_gauge_rate_of_the_interval_or_less_records(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The default rate (2 s) under a shorter interval, and a rate equal to the interval."""
    import shutil

    from tests.conftest import DATA

    root = tmp_path / "kvm"
    shutil.copytree(DATA / "host" / "trees" / "util-linux-s390-kvm", root)
    (root / "proc" / "stat").write_text(Path("/proc/stat").read_text(encoding="ascii"))
    for args in (("--interval", "0.2"), ("--interval", "0.2", "--hf", "0.2")):
        db = tmp_path / f"x{len(args)}.sqlite"
        code, _, err = run(
            capsys, "collect", *args, "--count", "1", "--source", "host",
            "--root", str(root), "--db", str(db),
        )  # fmt: skip
        assert code == 0, err
