"""A bucket on the local calendar that holds a change of the clock (a 23- or 25-hour day) says
so in the notes: a CSV or JSON row shows only its end, and ``interval_len_s`` the nominal
length."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from esatui.cli import main
from esatui.db.sqlite_reader import SqliteReader
from esatui.screens import catalog
from esatui.screens.catalog import calendar_note, repeated_note
from tests.core.test_rollups import set_zone
from tests.sim.recorded import sim

HOUR_US = 3_600_000_000
DAY_US = 24 * HOUR_US


def test_only_the_buckets_of_another_length_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    set_zone(monkeypatch, "Europe/Berlin")
    spring = 1_774_821_600_000_000  # 2026-03-30 00:00 CEST: the end of a 23-hour day
    days = [(spring - 23 * HOUR_US, spring), (spring, spring + DAY_US)]
    assert calendar_note(days[1:], DAY_US) is None
    assert calendar_note(days, None) is None
    assert calendar_note(days, DAY_US) == (
        "Buckets on the local calendar: the one ending 03/30 00:00 is 23h"
        " (the local clock changed in it)."
    )


def export(capsys: pytest.CaptureFixture[str], db: Path, *args: str) -> str:
    assert main(["export", "ESACPUU", "--db", str(db), *args]) == 0
    out: str = capsys.readouterr().out
    return out


@pytest.mark.parametrize(
    ("start", "note"),
    [
        ("2026-03-28T23:00Z", "the one ending 03/30 00:00 is 23h"),
        ("2026-10-24T22:00Z", "the one ending 10/26 00:00 is 25h"),
    ],
)
def test_an_export_over_a_change_names_its_day(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    start: str,
    note: str,
) -> None:
    """By day and by 3 hours, streamed (text, JSON) and in the whole model the monitor shows:
    the change's bucket is named; by hour (no bucket of another length) nothing is."""
    set_zone(monkeypatch, "Europe/Berlin")
    db = tmp_path / "change.sqlite"
    sim(capsys, db, "--set", "lpar_cpus=1CP+2IFL", "--start", start, duration="4h")
    text = export(capsys, db, "--interval-len", "1d")
    assert note in text
    notes = json.loads(export(capsys, db, "--interval-len", "1d", "--format", "json"))["notes"]
    assert any(note in n for n in notes)
    three = json.loads(export(capsys, db, "--interval-len", "3h", "--format", "json"))["notes"]
    assert any("Buckets on the local calendar" in n for n in three)
    hourly = json.loads(export(capsys, db, "--interval-len", "1h", "--format", "json"))["notes"]
    assert not any("Buckets on the local calendar" in n for n in hourly)
    with SqliteReader.open(db) as reader:  # the whole model (the monitor's), as the stream
        model = catalog.build_model(reader, "ESACPUU", catalog.Query(interval_len_us=DAY_US))
    assert [n for n in model.notes if note in n] == [n for n in notes if note in n]


NEW_YORK_AUTUMN = 1_793_512_800_000_000  # 2026-11-01 06:00Z: 02:00 EDT, back to 01:00 EST


def test_the_repeated_times_of_an_autumn_change_are_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rows on both sides of the change within the hour it repeats: their times (the clock's,
    with no offset) show twice. Before: nothing said that the second 01:15 is an hour later."""
    set_zone(monkeypatch, "America/New_York")
    quarter = HOUR_US // 4
    around = [NEW_YORK_AUTUMN + k * quarter for k in range(-4, 4)]
    assert repeated_note(around) == (
        "The local clock went back on 11/01 at 02:00 to 01:00: times from 01:00 to 02:00"
        " show twice, first at -04:00, then at -05:00."
    )
    assert repeated_note(around[:4]) is None  # only before it: nothing shows twice
    assert repeated_note(around[4:]) is None
    assert repeated_note([NEW_YORK_AUTUMN - 2 * HOUR_US, NEW_YORK_AUTUMN + HOUR_US]) is None
    assert repeated_note([]) is None
    set_zone(monkeypatch, "Asia/Kolkata")  # no change there
    assert repeated_note(around) is None


def test_an_export_over_the_autumn_change_says_which_times_repeat(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """As recorded and by hour (two rows at 01:00), streamed and in the whole model; by day
    no time repeats."""
    set_zone(monkeypatch, "America/New_York")
    db = tmp_path / "autumn.sqlite"
    sim(capsys, db, "--set", "lpar_cpus=1CP+2IFL", "--start", "2026-11-01T04:00Z", duration="4h")
    note = "The local clock went back on 11/01 at 02:00 to 01:00"
    assert note in export(capsys, db)  # the text, as recorded
    for length in ((), ("--interval-len", "1h")):
        notes = json.loads(export(capsys, db, "--format", "json", *length))["notes"]
        assert any(n.startswith(note) for n in notes)
    daily = json.loads(export(capsys, db, "--interval-len", "1d", "--format", "json"))["notes"]
    assert not any(n.startswith(note) for n in daily)
    with SqliteReader.open(db) as reader:
        model = catalog.build_model(reader, "ESACPUU", catalog.Query(interval_len_us=HOUR_US))
    assert any(n.startswith(note) for n in model.notes)
