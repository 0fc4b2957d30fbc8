"""What ``esatui sim`` says it recorded: the range the database holds (whole intervals, on
the recorder's boundaries), what was new and what was there already, and the node."""

from __future__ import annotations

from pathlib import Path

import pytest

from esatui.cli import main
from esatui.db.sqlite_reader import SqliteReader
from esatui.timeparse import iso
from tests.core.test_rollups import set_zone
from tests.sim.recorded import START, sim

POLLING = ("--scenario", "seed002-t3-polling")
ALL_SOURCES = "sources: host, zcrypt, vmcp, smapi, monitor, esatui"


def recorded_range(db: Path) -> str:
    """The first start and last end the database holds, as ``db info`` prints them."""
    with SqliteReader.open(db) as reader:
        sources = reader.info().sources
    return f"({iso(min(s.first_us for s in sources))} to {iso(max(s.last_us for s in sources))}"


def test_first_run_message_is_unchanged(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "first.sqlite"
    out = sim(capsys, db, *POLLING, duration="2m")
    assert out.startswith(
        "2 intervals of seed002-t3-polling "
        "(2026-01-05T00:00:00+00:00 to 2026-01-05T00:02:00+00:00) "
        f"recorded in {db} in "
    )
    assert out.splitlines()[0].endswith(ALL_SOURCES)


def test_running_again_says_nothing_new_was_recorded(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = tmp_path / "again.sqlite"
    sim(capsys, db, *POLLING, duration="2m")
    out = sim(capsys, db, *POLLING, duration="2m").splitlines()[0]
    assert out == (
        f"nothing new recorded in {db}: its 2 intervals of seed002-t3-polling "
        "(2026-01-05T00:00:00+00:00 to 2026-01-05T00:02:00+00:00) were already there"
    )


def test_another_run_at_the_same_times_is_refused_not_said_to_be_there(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Before: 'its 2 intervals of ... poll_timeout_us=50 were already there', exit 0, with
    only the default run's in the file; a longer run added its intervals to the other's."""
    db = tmp_path / "again.sqlite"
    sim(capsys, db, *POLLING, duration="2m")
    before = db.read_bytes()
    for duration in ("2m", "5m"):
        argv = ["sim", *POLLING, "--set", "poll_timeout_us=50", "--duration", duration]
        assert main([*argv, "--start", START, "--db", str(db)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1
        assert "already holds node SIMVM" in err[0] and "'seed002-t3-polling'" in err[0]
        assert "give another --db, another --node, or a --start after it" in err[0]
        assert db.read_bytes() == before
    out = sim(
        capsys, db, *POLLING, "--set", "poll_timeout_us=50", "--node", "POLL50", duration="2m"
    )
    assert out.startswith("2 intervals of seed002-t3-polling poll_timeout_us=50 ")


def test_partly_recorded_before_says_how_much_was_new(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = tmp_path / "longer.sqlite"
    sim(capsys, db, *POLLING, duration="2m")
    out = sim(capsys, db, *POLLING, duration="3m").splitlines()[0]
    assert out.startswith(
        "3 intervals of seed002-t3-polling "
        "(2026-01-05T00:00:00+00:00 to 2026-01-05T00:03:00+00:00) "
        f"recorded in {db} in "
    )
    # six sources an interval: the third interval's new, the first two's there already
    assert out.endswith(f": 6 source intervals new, 12 already there; {ALL_SOURCES}")


@pytest.mark.parametrize(
    ("args", "duration", "zone", "said"),
    [
        ((), "30s", "UTC", "(2026-01-05T00:00:00+00:00 to 2026-01-05T00:01:00+00:00"),
        ((), "90s", "UTC", "(2026-01-05T00:00:00+00:00 to 2026-01-05T00:02:00+00:00"),
        # the first boundary is at least half an interval after the start
        (
            ("--start", "2026-01-05T00:00:40Z"),
            "90s",
            "UTC",
            "(2026-01-05T00:00:40+00:00 to 2026-01-05T00:03:00+00:00",
        ),
        # boundaries on local time: India's hours begin at half past UTC's
        (
            ("--interval", "1h"),
            "1h",
            "Asia/Kolkata",
            "(2026-01-05T05:30:00+05:30 to 2026-01-05T07:00:00+05:30",
        ),
    ],
)
def test_the_range_said_is_the_range_recorded(
    args: tuple[str, ...],
    duration: str,
    zone: str,
    said: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    set_zone(monkeypatch, zone)
    db = tmp_path / "part.sqlite"
    out = sim(capsys, db, "--scenario", "mode-vm-day", *args, duration=duration)
    assert recorded_range(db) == said
    assert said in out
    assert "rounded up to an interval boundary" in out


def test_a_whole_number_of_intervals_is_not_said_to_be_rounded(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = sim(capsys, tmp_path / "whole.sqlite", *POLLING, duration="2m")
    assert "rounded" not in out


def test_node_names_the_simulated_system(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = tmp_path / "lnx01.sqlite"
    sim(capsys, db, "--scenario", "mode-vm-day", "--node", "LNX01", duration="2m")
    with SqliteReader.open(db) as reader:
        assert reader.nodes() == ["LNX01"]
        node = reader.queries.node_id("LNX01")
        assert node is not None
        # the simulated monitor names its z/VM system alike
        assert reader.queries.config_at(node, 2**62)["system_name"] == "LNX01"


@pytest.mark.parametrize("name", ["", "TOOLONGNAME", "A B", "ÄBC"])
def test_a_node_the_monitor_cannot_name_is_a_usage_error(
    name: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = tmp_path / "x.sqlite"
    argv = ["sim", "--scenario", "mode-vm-day", "--node", name, "--duration", "1m"]
    code = main([*argv, "--db", str(db)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "--node" in err
    assert not db.exists()
