"""Buckets over daylight-saving changes: on the local calendar (a day of 23 or 25 hours is
one bucket), lengths that divide an hour as UTC pieces; every interval in one bucket, the
buckets tiling the range, their sums those of the raw rows that end in them."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esatui.db import buckets
from esatui.db.calendar import bucket_end, bucket_runs, bucket_start, bucket_starts, shifted
from esatui.db.records import Interval
from esatui.db.slots import Slot
from esatui.db.sqlite_reader import SqliteReader
from esatui.screens import catalog
from tests.core.test_rollups import (
    NODE,
    SourceSpec,
    local_zone,
    record,
    recordings,
    reference,
    set_zone,
)
from tests.fixtures.local_calendar import Buckets
from tests.fixtures.reading import load_slots
from tests.fixtures.recording import host_recording

MINUTE = 60_000_000
HOUR = 60 * MINUTE
DAY = 24 * HOUR

# (zone, the change: the first instant at the new offset); Berlin and New York in spring and
# autumn, Sydney's autumn (April) and spring (October), Kolkata none (its day of Berlin's),
# Troll's of 2 hours, St John's at -3:30 and -2:30, Lord Howe's of 30 minutes, Apia's
# skipped day (2011-12-30: the clock went from 29 December 23:59:59 -10 to 31 December +14)
BERLIN_SPRING = 1_774_746_000_000_000  # 2026-03-29 01:00 UTC: 02:00 CET becomes 03:00 CEST
BERLIN_AUTUMN = 1_792_890_000_000_000  # 2026-10-25 01:00 UTC: 03:00 CEST becomes 02:00 CET
LORD_HOWE_AUTUMN = 1_775_314_800_000_000  # 2026-04-04 15:00 UTC: 02:00 +11 becomes 01:30 +10:30
LORD_HOWE_SPRING = 1_791_041_400_000_000  # 2026-10-03 15:30 UTC: 02:00 +10:30 becomes 02:30 +11
APIA_SKIP = 1_325_239_200_000_000  # 2011-12-30 10:00 UTC
CHANGES = (
    ("Europe/Berlin", BERLIN_SPRING),
    ("Europe/Berlin", BERLIN_AUTUMN),
    ("America/New_York", 1_772_953_200_000_000),  # 2026-03-08 07:00 UTC
    ("America/New_York", 1_793_512_800_000_000),  # 2026-11-01 06:00 UTC
    ("Australia/Sydney", 1_775_318_400_000_000),  # 2026-04-04 16:00 UTC: AEDT to AEST
    ("Australia/Sydney", 1_791_043_200_000_000),  # 2026-10-03 16:00 UTC: AEST to AEDT
    ("Asia/Kolkata", BERLIN_SPRING),
    ("Antarctica/Troll", BERLIN_SPRING),  # +00 to +02: a change of 2 hours
    ("Antarctica/Troll", BERLIN_AUTUMN),
    ("America/St_Johns", 1_772_947_800_000_000),  # 2026-03-08 05:30 UTC
    ("America/St_Johns", 1_793_507_400_000_000),  # 2026-11-01 04:30 UTC
    ("Australia/Lord_Howe", LORD_HOWE_AUTUMN),
    ("Australia/Lord_Howe", LORD_HOWE_SPRING),
    ("Pacific/Apia", APIA_SKIP),
)
LENGTHS = (30 * MINUTE, HOUR, 2 * HOUR, 3 * HOUR, DAY)


def utc(day: str, hour: int) -> int:
    return int(datetime.fromisoformat(day).replace(hour=hour, tzinfo=UTC).timestamp()) * 10**6


@pytest.mark.parametrize(
    ("zone", "at", "length", "start", "end"),
    [
        # a day of 23 and of 25 hours, local midnight to local midnight
        ("Europe/Berlin", BERLIN_SPRING, DAY, utc("2026-03-28", 23), utc("2026-03-29", 22)),
        ("Europe/Berlin", BERLIN_AUTUMN, DAY, utc("2026-10-24", 22), utc("2026-10-25", 23)),
        (
            "America/New_York",
            utc("2026-03-08", 12),
            DAY,
            utc("2026-03-08", 5),
            utc("2026-03-09", 4),
        ),
        (
            "Australia/Sydney",
            utc("2026-04-05", 0),
            DAY,
            utc("2026-04-04", 13),
            utc("2026-04-05", 14),
        ),
        (
            "Australia/Sydney",
            utc("2026-10-04", 0),
            DAY,
            utc("2026-10-03", 14),
            utc("2026-10-04", 13),
        ),
        (
            "Asia/Kolkata",
            BERLIN_SPRING,
            DAY,
            utc("2026-03-28", 18) + 30 * MINUTE,
            utc("2026-03-29", 18) + 30 * MINUTE,
        ),
        # 3 hours: 00:00-03:00 local holds 2 hours in spring (the end at the change is the
        # last of CET), 4 in autumn
        ("Europe/Berlin", BERLIN_SPRING, 3 * HOUR, utc("2026-03-28", 23), BERLIN_SPRING),
        ("Europe/Berlin", BERLIN_SPRING + 1, 3 * HOUR, BERLIN_SPRING, utc("2026-03-29", 4)),
        ("Europe/Berlin", BERLIN_AUTUMN, 3 * HOUR, utc("2026-10-24", 22), utc("2026-10-25", 2)),
        # 2 hours: 02:00-04:00 local is 1 hour in spring, 3 in autumn
        ("Europe/Berlin", BERLIN_SPRING + 1, 2 * HOUR, BERLIN_SPRING, utc("2026-03-29", 2)),
        ("Europe/Berlin", BERLIN_AUTUMN, 2 * HOUR, utc("2026-10-25", 0), utc("2026-10-25", 3)),
        # 1 hour: the repeated hour is two buckets, never one of two hours
        ("Europe/Berlin", BERLIN_AUTUMN, HOUR, utc("2026-10-25", 0), BERLIN_AUTUMN),
        ("Europe/Berlin", BERLIN_AUTUMN + 1, HOUR, BERLIN_AUTUMN, utc("2026-10-25", 2)),
        (
            "Asia/Kolkata",
            BERLIN_SPRING,
            HOUR,
            BERLIN_SPRING - 30 * MINUTE,
            BERLIN_SPRING + 30 * MINUTE,
        ),
        # an hour over Lord Howe's 30-minute change, on the calendar: 01:00-02:00 whole and
        # the half hour left of 02:00-03:00 in spring; 01:00-02:00 of 90 minutes in autumn
        (
            "Australia/Lord_Howe",
            LORD_HOWE_SPRING,
            HOUR,
            LORD_HOWE_SPRING - HOUR,
            LORD_HOWE_SPRING,
        ),
        (
            "Australia/Lord_Howe",
            LORD_HOWE_SPRING + 1,
            HOUR,
            LORD_HOWE_SPRING,
            LORD_HOWE_SPRING + 30 * MINUTE,
        ),
        (
            "Australia/Lord_Howe",
            LORD_HOWE_AUTUMN,
            HOUR,
            LORD_HOWE_AUTUMN - HOUR,
            LORD_HOWE_AUTUMN + 30 * MINUTE,
        ),
        # Apia's skipped 30 December: 29 December ends at the change, 31 December is next
        ("Pacific/Apia", APIA_SKIP, DAY, APIA_SKIP - DAY, APIA_SKIP),
        ("Pacific/Apia", APIA_SKIP + 1, DAY, APIA_SKIP, APIA_SKIP + DAY),
    ],
)
def test_the_bucket_holding_a_change(
    monkeypatch: pytest.MonkeyPatch, zone: str, at: int, length: int, start: int, end: int
) -> None:
    set_zone(monkeypatch, zone)
    assert bucket_end(at, length) == end
    assert bucket_start(end, length) == start
    assert bucket_end(start, length) == start  # the previous bucket ends where it starts
    assert bucket_end(start + 1, length) == end
    assert shifted(start, 1, length) == end
    assert shifted(end, -1, length) == start


@pytest.mark.parametrize(("zone", "change"), CHANGES)
@pytest.mark.parametrize("length", [*LENGTHS, 45 * MINUTE, 5 * MINUTE])
def test_bucket_ends_are_the_calendars_over_two_days(
    monkeypatch: pytest.MonkeyPatch, zone: str, change: int, length: int
) -> None:
    """An end every 7 minutes (and one a microsecond after) over the change's two days, and
    at the change: its bucket, the bucket's start, the bucket a few on and the runs of ends
    in one bucket, as the zone's own rules say."""
    set_zone(monkeypatch, zone)
    cut = Buckets(zone, length, [change - DAY, change + DAY], back=5)
    ends = []
    every_7 = [e for t in range(change - DAY, change + DAY, 7 * MINUTE) for e in (t, t + 1)]
    recorded = sorted({*every_7, change - 1, change, change + 1})  # and at the change
    # the distribution view's runs (its buckets of recorded ends)
    for b, first, stop in bucket_runs(recorded, length):
        assert {cut.end(e) for e in recorded[first:stop]} == {b}
    for end in recorded:
        b = bucket_end(end, length)
        assert b == cut.end(end), end
        assert bucket_start(b, length) == cut.start(b)
        assert shifted(b, -3, length) == cut.back(b, 3)
        assert shifted(cut.back(b, 3), 3, length) == b
        ends.append(b)
    ends = sorted(set(ends))
    assert bucket_starts(ends, length) == [cut.start(b) for b in ends]


@settings(max_examples=60, deadline=None)
@given(
    change=st.sampled_from(CHANGES),
    # and lengths that are not whole hours: the raw path whose SQL buckets the fixer maps
    length=st.sampled_from([*LENGTHS, 45 * MINUTE, 90 * MINUTE]),
    before_h=st.sampled_from([1, 3, 14, 27]),
    limit=st.one_of(st.none(), st.integers(1, 6)),
    data=st.data(),
)
def test_buckets_over_a_change_tile_the_range_and_hold_their_rows(
    tmp_path_factory: pytest.TempPathFactory,
    change: tuple[str, int],
    length: int,
    before_h: int,
    limit: int | None,
    data: st.DataObject,
) -> None:
    zone, at = change
    specs, intervals = data.draw(recordings(starts=(at - before_h * HOUR,)))
    path = tmp_path_factory.mktemp("dst") / "db.sqlite"
    record(path, specs, intervals)
    timeline = data.draw(st.sampled_from(sorted({k for s in specs for k in s.kinds})))
    ends = [i.end_us for i in intervals]
    point = st.one_of(
        st.none(),
        st.integers(min(ends) - MINUTE, max(ends)),
        st.sampled_from([at - 1, at, at + 1, at - HOUR, at + HOUR]),  # at the change
    )
    after, until = sorted(data.draw(st.tuples(point, point)), key=lambda t: t or 0)
    if after is not None and until is not None and after > until:
        after, until = until, after
    kinds = ["thing", "other"]
    args = ([timeline], kinds, after, until)
    with local_zone(zone), SqliteReader.open(path) as reader:
        rolled = load_slots(reader, *args, interval_len_us=length, limit=limit, node=NODE)
        raw = load_slots(
            reader, *args, interval_len_us=length, limit=limit, node=NODE, use_rollups=False
        )
    expected = reference(specs, intervals, timeline, kinds, after, until, length, limit, zone)
    assert raw == expected
    assert rolled == expected
    _tile(rolled, specs, intervals, timeline, after, until, length, _moved(zone, at))


def _moved(zone: str, at: int) -> int:
    """How far the clock moves at the change (zoneinfo's offsets either side)."""
    tz = ZoneInfo(zone)
    before = datetime.fromtimestamp(at / 1e6 - 1, tz).utcoffset()
    after = datetime.fromtimestamp(at / 1e6, tz).utcoffset()
    assert before is not None and after is not None
    return abs(int((after - before).total_seconds())) * 1_000_000


def _tile(
    slots: list[Slot],
    specs: list[SourceSpec],
    intervals: list[Interval],
    timeline: str,
    after: int | None,
    until: int | None,
    length: int,
    moved: int,
) -> None:
    """The buckets do not overlap, each is of its length give or take the time the clock
    ``moved``, and every interval of the shown source ending in the range and within the
    buckets' span is in exactly one."""
    oldest = sorted(slots, key=lambda s: s.end_us)
    for a, b in itertools.pairwise(oldest):
        assert a.end_us <= b.start_us
    for s in oldest:
        assert abs((s.end_us - s.start_us) - length) <= moved
    if not oldest:
        return

    def within(i: Interval) -> bool:
        return (after is None or i.end_us > after) and (until is None or i.end_us <= until)

    # the timeline's source: the first (by name) with an interval in the range
    sources = sorted(s.name for s in specs if timeline in s.kinds)
    source = next(src for src in sources if any(i.source == src and within(i) for i in intervals))
    for i in intervals:
        if i.source == source and within(i) and oldest[0].start_us < i.end_us <= oldest[-1].end_us:
            assert len([s for s in oldest if s.start_us < i.end_us <= s.end_us]) == 1


# --- recordings over a change: one row for the change day --------------------------------


@pytest.fixture
def berlin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    set_zone(monkeypatch, "Europe/Berlin")
    yield


def times(path: Path, length: int, screen: str = "ESALNXC") -> list[tuple[int, int, bool]]:
    """The (start, end, partial) of the screen's rows, oldest first, one per bucket."""
    with SqliteReader.open(path) as reader:
        model = catalog.build_model(reader, screen, catalog.Query(interval_len_us=length))
    return sorted({(r.start_us, r.end_us, r.partial) for r in model.rows})


def test_four_hours_over_the_spring_change_are_one_day(berlin: None, db_path: Path) -> None:
    """4 hours of 1-minute intervals over 2026-03-29 01:00 UTC: one daily row, the day of 23
    hours (local midnight to local midnight); 3-hour buckets of 2 hours (00:00-03:00 local)
    and 3 hours."""
    host_recording(db_path, n_intervals=240, interval_s=60, start_us=utc("2026-03-29", 0))
    day_start, day_end = utc("2026-03-28", 23), utc("2026-03-29", 22)
    assert times(db_path, DAY) == [(day_start, day_end, True)]
    assert times(db_path, DAY, "ESASSUM") == [(day_start, day_end, True)]
    assert times(db_path, 3 * HOUR) == [
        (day_start, BERLIN_SPRING, True),  # 00:00 to 03:00 local: 2 hours, 1 recorded
        (BERLIN_SPRING, utc("2026-03-29", 4), False),
    ]


def test_four_hours_over_the_autumn_change_are_one_day(berlin: None, db_path: Path) -> None:
    host_recording(db_path, n_intervals=240, interval_s=60, start_us=utc("2026-10-24", 23))
    day_start, day_end = utc("2026-10-24", 22), utc("2026-10-25", 23)
    assert times(db_path, DAY) == [(day_start, day_end, True)]
    assert times(db_path, 3 * HOUR) == [
        (day_start, utc("2026-10-25", 2), True),  # 00:00 to 03:00 local: 4 hours, 3 recorded
        (utc("2026-10-25", 2), utc("2026-10-25", 5), True),
    ]
    assert times(db_path, HOUR)[1:3] == [  # the repeated hour: two buckets
        (utc("2026-10-25", 0), BERLIN_AUTUMN, False),
        (BERLIN_AUTUMN, utc("2026-10-25", 2), False),
    ]


@pytest.mark.parametrize(
    ("start", "hours"), [(utc("2026-03-28", 23), 23), (utc("2026-10-24", 22), 25)]
)
def test_a_whole_change_day_is_whole_not_partial(
    berlin: None, db_path: Path, start: int, hours: int
) -> None:
    """A day of 23 or 25 hours that the recording covers is one bucket, not partial."""
    host_recording(db_path, n_intervals=hours * 12, interval_s=300, start_us=start)
    assert times(db_path, DAY) == [(start, start + hours * HOUR, False)]
    with SqliteReader.open(db_path) as reader:
        model = catalog.build_model(reader, "ESALNXC", catalog.Query(interval_len_us=DAY))
    assert {r.covered_us for r in model.rows} == {hours * HOUR}


@pytest.mark.parametrize("before", [1, 2, 0])
def test_raw_rows_read_from_a_microsecond_before_the_spring_change(
    berlin: None, db_path: Path, before: int
) -> None:
    """A raw piece (change - 1 µs, ...] holds the interval ending at the change, the end of
    the 2-hour bucket 00:00-03:00 local (1 hour): the piece has two offsets, so its rows
    are bucketed one by one and that interval stays in the bucket it ends."""
    host_recording(db_path, n_intervals=36, interval_s=300, start_us=utc("2026-03-29", 0))
    after = BERLIN_SPRING - before
    with SqliteReader.open(db_path) as reader:
        node = reader.node(None)
        node_id = reader.queries.node_id(node) if node is not None else None
        assert node_id is not None
        timeline = catalog.screen_timeline(catalog.get("ESALNXC"), node, 2 * HOUR)
        args = (reader.queries, node_id, timeline, after, None, 2, False, False)
        window = buckets.window(*args, use_rollups=False)
    spans = [(s.start_us, s.end_us, s.duration_us) for s in window.spans]
    change_bucket = (utc("2026-03-28", 23), BERLIN_SPRING, 5 * MINUTE)  # its last interval
    after_change = [
        (BERLIN_SPRING, utc("2026-03-29", 2), HOUR),
        (utc("2026-03-29", 2), utc("2026-03-29", 4), HOUR),
    ]
    assert spans == ([change_bucket, *after_change] if before else after_change)[:2]
