"""Hourly rollups: bucketed slots read from them are the slots read from the raw rows, bit for
bit, and both are what the aggregation rules say (an independent model below); the rollups
the store keeps through late writes, retention and backfill are what a replay gives."""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import shutil
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esatui.collectors.model import Kind, counter, gauge
from esatui.db import buckets
from esatui.db.buckets import hourly_offsets, plan
from esatui.db.calendar import bucket_end, utc_offset_us
from esatui.db.maintenance import prune
from esatui.db.reading import HourRun
from esatui.db.records import EntityRow, Flag, Interval, max_column
from esatui.db.schema import HOUR_US, READY_KEY, READY_VALUE, ROLLED_AS_WRITTEN, hour_end
from esatui.db.slots import EntityData, KindSlice, Slot
from esatui.db.sqlite_reader import SqliteReader
from esatui.db.store import Store
from tests.fixtures.local_calendar import Buckets
from tests.fixtures.reading import load_slots, sql

MINUTE = 60_000_000
DAY = 24 * HOUR_US
NODE = "n1"
THING = Kind(
    "thing",
    "test",
    (counter("ops", "count"), gauge("depth", "count"), counter("bytes", "B"), gauge("load", "%")),
)
OTHER = Kind("other", "test", (gauge("level", "count"), counter("events", "count")))
KINDS = {k.name: k for k in (THING, OTHER)}
# 2026-11-21 14:00 UTC; 2026-03-28 12:00 and 2026-10-24 12:00 UTC, a day before Europe's
# clocks change
STARTS = (1_795_269_600_000_000, 1_774_699_200_000_000, 1_792_843_200_000_000)
ZONES = ("UTC", "Europe/Berlin", "Europe/Berlin", "America/New_York", "Asia/Kolkata")


@contextlib.contextmanager
def local_zone(name: str) -> Iterator[None]:
    """TZ for the block (hypothesis runs many examples in one test: no monkeypatch)."""
    saved = os.environ.get("TZ")
    os.environ["TZ"] = name
    time.tzset()
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = saved
        time.tzset()


def set_zone(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv("TZ", name)
    time.tzset()


# --- recordings ------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceSpec:
    name: str
    period_s: int
    phase_us: int
    kinds: tuple[str, ...]


def random_rows(rng: random.Random, kinds: Sequence[str]) -> tuple[EntityRow, ...]:
    """An interval's rows: entities that come and go, attributes that change, values
    missing, gauges with no samples, resets (drawn from a seed: hypothesis draws are slow)."""

    def gauge_value() -> float | None:
        pick = rng.random()
        if pick < 0.2:
            return None
        if pick < 0.3:
            return rng.choice([0.0, 1.0, 2.5, 1 / 3])
        return rng.uniform(-1e3, 1e9) * 10.0 ** rng.randint(-8, 0)

    def counter_value() -> int | None:
        return None if rng.random() < 0.15 else rng.randint(0, 2**40)

    entities = [(kind, key) for kind in kinds for key in ("a", "b", "c")]
    rows = []
    for kind, key in rng.sample(entities, rng.randint(1, min(4, len(entities)))):
        values: dict[str, int | float | None] = {}
        for f in KINDS[kind].fields:
            if f.role.value == "counter":
                values[f.name] = counter_value()
            else:
                values[f.name] = gauge_value()
                values[max_column(f.name)] = gauge_value()
        rows.append(
            EntityRow(
                kind,
                key,
                rng.choice([{"t": "A"}, {"t": "A"}, {"t": "B"}]),
                values,
                rng.choice([0, 0, 0, Flag.RESET, Flag.NEW, Flag.GAP | Flag.RESET]),
                rng.choice([0, 1, 1, 2, 5]),
            )
        )
    return tuple(rows)


@st.composite
def recordings(
    draw: st.DrawFn, starts: Sequence[int] = STARTS
) -> tuple[list[SourceSpec], list[Interval]]:
    start = draw(st.sampled_from(starts)) + draw(st.integers(0, 3)) * 1_234_567
    n_sources = draw(st.integers(1, 3))
    specs = [
        SourceSpec(
            f"s{i}",
            draw(st.sampled_from([60, 420, 1800, 3600, 5400])),
            draw(st.sampled_from([0, 100, 20_000_000, 1_799_999_999])),
            tuple(draw(st.sampled_from([("thing",), ("other",), ("thing", "other")]))),
        )
        for i in range(n_sources)
    ]
    intervals: list[Interval] = []
    rng = random.Random(draw(st.integers(0, 2**32)))
    for spec in specs:
        n = draw(st.integers(12, 50))
        gaps = draw(st.sets(st.integers(1, n - 1), max_size=n // 4))
        period = spec.period_s * 1_000_000
        for i in range(n):
            if i in gaps:
                continue
            end = start + spec.phase_us + (i + 1) * period
            intervals.append(
                Interval(
                    spec.name,
                    NODE,
                    end - period,
                    end,
                    period - rng.randint(0, 999),
                    random_rows(rng, spec.kinds),
                    rng.choice([0, 0, Flag.GAP, Flag.RESET]),
                )
            )
    # sources write in turn, mostly in time order; some intervals arrive late
    order = sorted(range(len(intervals)), key=lambda i: intervals[i].end_us)
    swaps = draw(st.lists(st.integers(0, max(0, len(order) - 2)), max_size=3))
    for s in swaps:
        order[s], order[s + 1] = order[s + 1], order[s]
    return specs, [intervals[i] for i in order]


def record(path: Path, specs: Sequence[SourceSpec], intervals: Sequence[Interval]) -> None:
    with Store.open(path) as store:
        for spec in specs:
            store.register(spec.name, [KINDS[k] for k in spec.kinds])
        for interval in intervals:
            store.write(interval)


# --- the rules, written out on the intervals themselves --------------------------------


def reference(  # noqa: PLR0912 - the independent model of the bucket rules, kept literal on purpose
    specs: Sequence[SourceSpec],
    intervals: Sequence[Interval],
    timeline: str,
    kinds: Sequence[str],
    after: int | None,
    until: int | None,
    length: int,
    limit: int | None,
    zone: str,
) -> list[Slot]:
    cut = Buckets(zone, length, [i.end_us for i in intervals], limit or 0)
    end_of = cut.end

    def within(i: Interval) -> bool:
        return (after is None or i.end_us > after) and (until is None or i.end_us <= until)

    sources = sorted(s.name for s in specs if timeline in s.kinds)
    candidates = [
        (source, [i for i in intervals if i.source == source and within(i)]) for source in sources
    ]
    chosen = next(((s, found) for s, found in candidates if found), None)
    if chosen is None:
        return []
    _, members = chosen
    if limit is not None:
        floor = cut.back(end_of(max(i.end_us for i in members)), limit)
        after = floor if after is None else max(after, floor)
        members = [i for i in members if within(i)]
    frames: dict[int, list[Interval]] = {}
    for i in members:
        frames.setdefault(end_of(i.end_us), []).append(i)
    data: dict[int, dict[str, dict[str, KindSlice]]] = {b: {} for b in frames}
    for kind in dict.fromkeys([timeline, *kinds]):
        for src in sorted(s.name for s in specs if kind in s.kinds):
            placed: dict[int, list[Interval]] = {}
            for i in intervals:
                if i.source == src and within(i) and end_of(i.end_us) in frames:
                    placed.setdefault(end_of(i.end_us), []).append(i)
            for b, found in placed.items():
                rows = [
                    (i, r)
                    for i in sorted(found, key=lambda i: i.end_us)
                    for r in i.rows
                    if r.kind == kind
                ]
                if not rows:
                    continue
                iflags = 0
                for i, _ in rows:
                    iflags |= i.flags
                by_key: dict[str, list[tuple[Interval, EntityRow]]] = {}
                for i, r in rows:
                    by_key.setdefault(r.key, []).append((i, r))
                entities = {key: entity(KINDS[kind], group) for key, group in by_key.items()}
                # the kind's own time: its source's intervals that carried its rows
                measured = sum(i.duration_us for i in found if any(r.kind == kind for r in i.rows))
                data[b].setdefault(kind, {})[src] = KindSlice(src, measured, iflags, entities)
    slots = []
    for b in sorted(frames, reverse=True):
        flags = 0
        for i in frames[b]:
            flags |= i.flags
        covered = sum(i.duration_us for i in frames[b])
        start = cut.start(b)  # the bucket's real length: 23 or 25 hours on a change day
        # partial: short of the bucket by more than half of one of its intervals
        partial = covered < (b - start) - covered / len(frames[b]) / 2
        slots.append(Slot(start, b, covered, flags, data[b], partial))
    return slots


def stored(kind: Kind, row: EntityRow) -> dict[str, int | float | None]:
    """A row's values as the store gives them back: every column, gauges as floats."""
    out: dict[str, int | float | None] = {}
    for f in kind.fields:
        v = row.values.get(f.name)
        if f.role.value == "counter":
            out[f.name] = v
        else:
            m = row.values.get(max_column(f.name))
            out[f.name] = None if v is None else float(v)
            out[max_column(f.name)] = None if m is None else float(m)
    return out


def entity(kind: Kind, group: list[tuple[Interval, EntityRow]]) -> EntityData:
    if len(group) == 1:
        _, r = group[0]
        return EntityData(r.key, dict(r.attrs), stored(kind, r), r.flags, r.hf_n)
    rows = [stored(kind, r) for _, r in group]
    values: dict[str, int | float | None] = {}
    for f in kind.fields:
        if f.role.value == "counter":
            present = [v[f.name] for v in rows if v[f.name] is not None]
            values[f.name] = sum(present) if present else None  # type: ignore[arg-type]
            continue
        # products added in end order within each (UTC hour, entity), hours with fsum
        parts: dict[tuple[int, str], float] = {}
        weight = 0
        for (i, r), v in zip(group, rows, strict=True):
            avg = v[f.name]
            if avg is not None and r.hf_n > 0:
                part = (hour_end(i.end_us), json.dumps(dict(r.attrs), sort_keys=True))
                product = avg * r.hf_n
                parts[part] = parts[part] + product if part in parts else product
                weight += r.hf_n
        values[f.name] = math.fsum(parts.values()) / weight if weight else None
        maxima = [v[max_column(f.name)] for v in rows if v[max_column(f.name)] is not None]
        values[max_column(f.name)] = max(maxima) if maxima else None  # type: ignore[type-var]
    flags = 0
    for _, r in group:
        flags |= r.flags
    newest = group[-1][1]
    return EntityData(newest.key, dict(newest.attrs), values, flags, sum(r.hf_n for _, r in group))


# --- the property --------------------------------------------------------------------


@settings(max_examples=30)
@given(
    recording=recordings(),
    zone_name=st.sampled_from(ZONES),
    # sub-hour lengths read raw rows: summed by SQL (5, 15, 30 min), or in Python where a
    # bucket holds one or two intervals (2 min)
    length=st.sampled_from(
        [
            *(HOUR_US, 2 * HOUR_US, 3 * HOUR_US, DAY, DAY, 7 * DAY),
            *(m * MINUTE for m in (15, 5, 30, 2)),
        ]
    ),
    limit=st.one_of(st.none(), st.integers(1, 40)),
    data=st.data(),
)
def test_rollups_and_raw_rows_give_the_same_slots_as_the_rules(
    tmp_path_factory: pytest.TempPathFactory,
    recording: tuple[list[SourceSpec], list[Interval]],
    zone_name: str,
    length: int,
    limit: int | None,
    data: st.DataObject,
) -> None:
    specs, intervals = recording
    path = tmp_path_factory.mktemp("roll") / "db.sqlite"
    # the writer's zone (its local days) is the reader's, or another
    writer_zone = data.draw(st.sampled_from([zone_name, *ZONES]))
    with local_zone(writer_zone):
        record(path, specs, intervals)
    timeline = data.draw(st.sampled_from(sorted({k for s in specs for k in s.kinds})))
    # the window's ends: none, on an hour, or anywhere in the recording
    first = min(i.end_us for i in intervals) - MINUTE
    last = max(i.end_us for i in intervals)
    point = st.one_of(
        st.none(),
        st.integers(first, last).map(lambda t: t // HOUR_US * HOUR_US),
        st.integers(first, last),
    )
    after, until = data.draw(st.tuples(point, point))
    if after is not None and until is not None and after > until:
        after, until = until, after
    with local_zone(zone_name):
        with SqliteReader.open(path) as reader:
            assert reader.queries.rollups_ready()
            kinds = ["thing", "other"]
            args = ([timeline], kinds, after, until)
            rolled = load_slots(reader, *args, interval_len_us=length, limit=limit, node=NODE)
            raw = load_slots(
                reader, *args, interval_len_us=length, limit=limit, node=NODE, use_rollups=False
            )
        expected = reference(
            specs, intervals, timeline, kinds, after, until, length, limit, zone_name
        )
    assert raw == expected
    assert rolled == expected
    with local_zone(writer_zone):
        assert rollup_dump(path) == up_to_marks(replayed(path), path)
    # a screen that reads some fields gets those of the same slots
    fields = data.draw(
        st.lists(st.sampled_from(["ops", "depth", "depth_max", "load", "level", "events"]))
    )
    by_kind = (("thing", tuple(fields)), ("other", tuple(fields)))
    with local_zone(zone_name), SqliteReader.open(path) as reader:
        for use_rollups in (True, False):
            only = load_slots(
                reader,
                *args,
                interval_len_us=length,
                limit=limit,
                node=NODE,
                use_rollups=use_rollups,
                fields=by_kind,
            )
            assert only == projected(expected, set(fields))


@settings(max_examples=30)
@given(
    recording=recordings(),
    zone_name=st.sampled_from(ZONES),
    length=st.sampled_from([HOUR_US, 3 * HOUR_US, DAY, 5 * MINUTE, 15 * MINUTE]),
    limit=st.integers(1, 8),
    steps=st.lists(st.sampled_from([-3, -1, 1, 2]), min_size=1, max_size=4),
    rows_kept=st.sampled_from([buckets._Kept.LIMIT, 5]),
)
def test_buckets_kept_across_windows_are_those_read_afresh(
    tmp_path_factory: pytest.TempPathFactory,
    recording: tuple[list[SourceSpec], list[Interval]],
    zone_name: str,
    length: int,
    limit: int,
    steps: list[int],
    rows_kept: int,
) -> None:
    """A reader keeps the buckets it read (moving along a timeline, back to a length): a
    window read after others on one connection is the window a new connection reads, with
    the oldest forgotten past the rows it keeps."""
    specs, intervals = recording
    path = tmp_path_factory.mktemp("kept") / "db.sqlite"
    record(path, specs, intervals)
    timeline = sorted({k for s in specs for k in s.kinds})[0]
    last = max(i.end_us for i in intervals)
    args = ([timeline], ["thing", "other"], None)
    with (
        local_zone(zone_name),
        mock.patch.object(buckets._Kept, "LIMIT", rows_kept),
        SqliteReader.open(path, keep_buckets=True) as kept,
    ):
        until = last - length // 3  # inside a bucket: the window's newest is partial
        for step in [0, *steps]:
            until += step * length // 2  # whole buckets and halves, past either end
            again = load_slots(kept, *args, until, interval_len_us=length, limit=limit, node=NODE)
            with SqliteReader.open(path) as fresh:
                assert again == load_slots(
                    fresh, *args, until, interval_len_us=length, limit=limit, node=NODE
                )


def projected(slots: list[Slot], fields: set[str]) -> list[Slot]:
    """The slots with only ``fields`` of every entity's values (a gauge's average or
    maximum bringing the other)."""
    wanted = set(fields)
    for kind in KINDS.values():
        for g in kind.gauges:
            if g.name in wanted or max_column(g.name) in wanted:
                wanted |= {g.name, max_column(g.name)}
    return [
        replace(
            slot,
            data={
                kind: {
                    source: replace(
                        part,
                        rows={
                            key: replace(
                                e, values={n: v for n, v in e.values.items() if n in wanted}
                            )
                            for key, e in part.rows.items()
                        },
                    )
                    for source, part in by_source.items()
                }
                for kind, by_source in slot.data.items()
            },
        )
        for slot in slots
    ]


@settings(max_examples=20)
@given(
    recording=recordings(),
    zone_name=st.sampled_from(ZONES),
    length=st.sampled_from([5 * MINUTE, 15 * MINUTE, 30 * MINUTE, 2 * HOUR_US]),
    data=st.data(),
)
def test_raw_rows_summed_by_sql_are_those_summed_in_python(
    tmp_path_factory: pytest.TempPathFactory,
    recording: tuple[list[SourceSpec], list[Interval]],
    zone_name: str,
    length: int,
    data: st.DataObject,
) -> None:
    """The raw rows' fold in SQL (integers) and Python (the gauges' weighted sums) gives
    the slots of the fold in Python alone, bit for bit."""
    specs, intervals = recording
    path = tmp_path_factory.mktemp("fold") / "db.sqlite"
    record(path, specs, intervals)
    timeline = data.draw(st.sampled_from(sorted({k for s in specs for k in s.kinds})))
    with local_zone(zone_name), SqliteReader.open(path) as reader:
        args = ([timeline], ["thing", "other"], None, None)
        fast = load_slots(reader, *args, interval_len_us=length, node=NODE, use_rollups=False)
        with python_fold():
            slow = load_slots(reader, *args, interval_len_us=length, node=NODE, use_rollups=False)
    assert fast == slow


@contextlib.contextmanager
def python_fold() -> Iterator[None]:
    """Buckets read raw rows into Python only (what SQL does not sum, as when it cannot)."""
    from esatui.db import buckets

    saved = buckets._Reader._fold_raw_sql
    buckets._Reader._fold_raw_sql = lambda *args: False  # type: ignore[method-assign]
    try:
        yield
    finally:
        buckets._Reader._fold_raw_sql = saved  # type: ignore[method-assign]


def test_counters_beyond_64_bits_are_summed_in_python(db_path: Path) -> None:
    """SQLite's integer sums stop at 64 bits: beyond, the raw fold is Python's, exact."""
    big = 2**62
    base = STARTS[0] // 10**6
    with Store.open(db_path) as store:
        store.register("test", (THING,))
        for n in range(10):
            store.write(thing_interval(base + 60 * (n + 1), big, 1.5))
    with SqliteReader.open(db_path) as reader:
        slots = load_slots(
            reader,
            ["thing"],
            ["thing"],
            None,
            None,
            interval_len_us=5 * MINUTE,
            node=NODE,
            use_rollups=False,
        )
    sums = [s.data["thing"]["test"].rows["a"].values["ops"] for s in slots]
    assert sums == [5 * big, 5 * big]


# --- what the store keeps -------------------------------------------------------------


def rollup_dump(path: Path) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(path)
    try:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND"
                " (name IN ('interval_hour', 'interval_day', 'absent_hour', 'absent_day')"
                " OR name LIKE 'h\\_%' ESCAPE '\\'"
                " OR name LIKE 'd\\_%' ESCAPE '\\') ORDER BY name"
            )
        ]
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall()) for t in tables}
    finally:
        conn.close()


def marks(path: Path) -> dict[str, int]:
    """Each source's mark: its newest hour rolled up (``db/rollup.py``)."""
    rows = sql(path, "SELECT source, MAX(hour_end_us) FROM interval_hour GROUP BY source")
    return {str(source): int(hour) for source, hour in rows}


def up_to_marks(
    dump: dict[str, list[tuple[object, ...]]], path: Path
) -> dict[str, list[tuple[object, ...]]]:
    """The rows of a dump (node_id, source, hour_end_us ...) of the hours up to their
    source's mark in the database at ``path``: what its writer has rolled up so far."""
    up_to = marks(path)
    return {
        table: [r for r in rows if int(str(r[2])) <= up_to.get(str(r[1]), -1)]
        for table, rows in dump.items()
    }


def replayed(path: Path, writer: Store | None = None) -> dict[str, list[tuple[object, ...]]]:
    """The rollups a backfill computes from the raw rows alone, in a copy (``writer``: the
    store that has the database open, the one writer there may be)."""
    copy = path.with_name(path.name + ".replay")
    if writer is not None:
        writer.checkpoint()
    else:
        with Store.open(path) as store:
            store.checkpoint()
    shutil.copyfile(path, copy)
    conn = sqlite3.connect(copy)
    conn.execute("DELETE FROM meta WHERE key = ?", (READY_KEY,))
    for (table,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'h\\_%' ESCAPE '\\'"
    ).fetchall():
        conn.execute(f"UPDATE {table} SET rows_n = 999")  # stale rows must not survive
    conn.commit()
    conn.close()
    Store.open(copy).close()
    return rollup_dump(copy)


def thing_interval(end_s: int, ops: int, depth: float, hf_n: int = 2, key: str = "a") -> Interval:
    row = EntityRow(
        "thing", key, {"t": "A"}, {"ops": ops, "depth": depth, "depth_max": depth * 2}, 0, hf_n
    )
    return Interval("test", NODE, (end_s - 60) * 10**6, end_s * 10**6, 60 * 10**6, (row,))


def test_an_hour_is_rolled_up_when_its_source_writes_in_a_later_one(db_path: Path) -> None:
    base = STARTS[0] // 10**6
    h = (base + 3600) * 10**6

    def rolled() -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
        rows = sql(
            db_path,
            "SELECT hour_end_us, rows_n, hf_n, ops, depth_wsum, depth_wn, depth_max, last_end_us"
            " FROM h_thing ORDER BY hour_end_us",
        )
        hours = sql(
            db_path, "SELECT hour_end_us, n, duration_us FROM interval_hour ORDER BY hour_end_us"
        )
        return rows, hours

    with Store.open(db_path) as store:
        store.register("test", [THING])
        store.write(thing_interval(base + 60, 5, 0.1, 3))
        store.write(thing_interval(base + 3600, 7, 0.2, 0))  # ends on the hour: same hour
        assert rolled() == ([], [])  # the hour being written in is not rolled up
        store.write(thing_interval(base + 3660, 11, 0.3))
        first = (h, 2, 3, 12, 0.1 * 3, 3, 0.4, h)
        assert rolled() == ([first], [(h, 2, 120 * 10**6)])
    with Store.open(db_path) as store:  # another writer goes on where this one stopped
        store.register("test", [THING])
        store.write(thing_interval(base + 3720, 13, 0.5))
        assert rolled() == ([first], [(h, 2, 120 * 10**6)])
        store.write(thing_interval(base + 3 * 3600 + 60, 17, 0.7))  # after an empty hour
    second = (h + HOUR_US, 2, 4, 24, 0.3 * 2 + 0.5 * 2, 4, 1.0, h + 120 * 10**6)
    assert rolled() == ([first, second], [(h, 2, 120 * 10**6), (h + HOUR_US, 2, 120 * 10**6)])
    with SqliteReader.open(db_path) as reader:  # what `esatui db info` says
        assert [s.rolled_until_us for s in reader.info().sources] == [h + HOUR_US]


def test_late_writes_and_retention_keep_the_rollups_a_replay_gives(db_path: Path) -> None:
    base = STARTS[0] // 10**6
    with Store.open(db_path) as store:
        store.register("test", [THING])
        for m in range(1, 400):
            if m % 7:
                store.write(thing_interval(base + 60 * m, m, m / 7, m % 3, key="ab"[m % 2]))
        for m in range(7, 400, 7):  # the gaps, filled late
            store.write(thing_interval(base + 60 * m, m, m / 3, 1))
        assert rollup_dump(db_path) == up_to_marks(replayed(db_path, store), db_path)
        prune(store, keep_s=(400 - 150) * 60, now=base + 400 * 60)  # cuts into an hour
        ((oldest,),) = sql(db_path, "SELECT MIN(end_us) FROM interval")
        assert oldest % HOUR_US  # the cut is inside an hour
        assert rollup_dump(db_path) == up_to_marks(replayed(db_path, store), db_path)
        ((newest,),) = sql(db_path, "SELECT MAX(end_us) FROM interval")
        assert marks(db_path) == {"test": hour_end(newest) - HOUR_US}
        assert sql(db_path, "SELECT MIN(hour_end_us) FROM h_thing") == [(hour_end(oldest),)]
    with SqliteReader.open(db_path) as reader:
        found = reader.info()
    assert found.meta[READY_KEY] == READY_VALUE
    assert found.rollup_rows["thing"] > 0 < found.rows["thing"]


def test_retention_into_the_hour_being_written_leaves_it_to_be_rolled_up(db_path: Path) -> None:
    base = STARTS[0] // 10**6
    with Store.open(db_path) as store:
        store.register("test", [THING])
        for m in range(1, 100):  # 09:01 to 10:39: the hour to 11:00 is being written in
            store.write(thing_interval(base + 60 * m, m, m / 7, m % 3))
        assert marks(db_path) == {"test": (base + 3600) * 10**6}
        prune(store, keep_s=10 * 60, now=base + 100 * 60)  # keeps the last ten minutes
        empty: dict[str, list[tuple[object, ...]]] = {
            table: []
            for table in ("h_thing", "interval_hour", "absent_hour", "absent_day", "d_thing")
        }
        assert rollup_dump(db_path) == {**empty, "interval_day": []}
        store.write(thing_interval(base + 60 * 130, 130, 1.5))  # in the next hour
        assert marks(db_path) == {"test": (base + 2 * 3600) * 10**6}
        assert rollup_dump(db_path) == up_to_marks(replayed(db_path, store), db_path)
    with SqliteReader.open(db_path) as reader:
        args: tuple[list[str], list[str], None, None] = (["thing"], ["thing"], None, None)
        rolled = load_slots(reader, *args, interval_len_us=HOUR_US, node=NODE)
        assert rolled == load_slots(
            reader, *args, interval_len_us=HOUR_US, node=NODE, use_rollups=False
        )
        assert [s.duration_us for s in rolled] == [60 * 10**6, 10 * 60 * 10**6]


def test_rollups_kept_as_written_serve_and_the_next_writer_names_its_way(
    db_path: Path,
) -> None:
    """A database whose writer rolled up every interval as written (its newest hour
    included) reads from its rollups; a writer opening it names the way it keeps them, which
    an esatui of the first way does not know, so that one would roll it up afresh rather
    than add an interval to an hour its rollup holds only part of."""
    base = STARTS[0] // 10**6
    with Store.open(db_path) as store:
        store.register("test", [THING])
        for m in range(1, 100):
            store.write(thing_interval(base + 60 * m, m, m / 7, m % 3))
    conn = sqlite3.connect(db_path)
    conn.execute("UPDATE meta SET value = ? WHERE key = ?", (ROLLED_AS_WRITTEN, READY_KEY))
    conn.commit()
    conn.close()
    with SqliteReader.open(db_path) as reader:
        assert reader.queries.rollups_ready()
        assert reader.queries.rollups_kept() == ROLLED_AS_WRITTEN
    Store.open(db_path).close()
    with SqliteReader.open(db_path) as reader:
        assert reader.queries.rollups_kept() == READY_VALUE


def test_a_database_from_before_rollups_reads_raw_until_opened_for_writing(
    db_path: Path,
) -> None:
    base = STARTS[0] // 10**6
    with Store.open(db_path) as store:
        store.register("test", [THING])
        for m in range(1, 200):
            store.write(thing_interval(base + 60 * m, m, m / 7, m % 3))
    hourly: tuple[list[str], list[str], None, None] = (["thing"], [], None, None)
    with SqliteReader.open(db_path) as reader:
        before = load_slots(reader, *hourly, interval_len_us=HOUR_US)
    # what a database written before rollups looks like
    conn = sqlite3.connect(db_path)
    for table in ("interval_hour", "h_thing"):
        conn.execute(f"DROP TABLE {table}")
    conn.execute("DELETE FROM meta WHERE key = ?", (READY_KEY,))
    conn.commit()
    conn.close()
    with SqliteReader.open(db_path) as reader:
        assert not reader.queries.rollups_ready()
        assert load_slots(reader, *hourly, interval_len_us=HOUR_US) == before
    Store.open(db_path).close()  # opening for writing backfills
    with SqliteReader.open(db_path) as reader:
        assert reader.queries.rollups_ready()
        assert reader.info().rollup_rows == {"thing": 4}
        assert load_slots(reader, *hourly, interval_len_us=HOUR_US) == before


def test_a_kind_that_gains_a_field_gains_rollup_columns(db_path: Path) -> None:
    with Store.open(db_path) as store:
        store.register("test", [THING])
        store.write(thing_interval(STARTS[0] // 10**6 + 60, 1, 1.0))
        bigger = Kind("thing", "test", (*THING.fields, gauge("extra", "count")))
        store.register("test", [bigger])
        columns = [c for _, c, *_ in sql(db_path, "PRAGMA table_info(h_thing)")]
        assert {"extra_wsum", "extra_wn", "extra_max"} <= set(columns)
        row = EntityRow("thing", "a", {"t": "A"}, {"extra": 2.0, "extra_max": 3.0}, 0, 4)
        end = STARTS[0] + 2 * MINUTE
        store.write(Interval("test", NODE, end - MINUTE, end, MINUTE, (row,)))
        store.write(thing_interval(STARTS[0] // 10**6 + 2 * 3600, 1, 1.0))  # the hour is over
        got = sql(
            db_path,
            "SELECT rows_n, extra_wsum, extra_wn, extra_max FROM h_thing ORDER BY hour_end_us",
        )
        assert got[0] == (2, 8.0, 4, 3.0)


# --- which hours come from the rollups ---------------------------------------------------


def test_plan_reads_whole_hours_from_rollups_and_edges_raw(monkeypatch: pytest.MonkeyPatch) -> None:
    set_zone(monkeypatch, "UTC")
    h = STARTS[0]
    p = plan(h - 10 * MINUTE, h + 3 * HOUR_US + 5, DAY, rolled=True)
    assert p.runs == ((h + HOUR_US, h + 3 * HOUR_US, 0),)
    assert p.raw == ((h - 10 * MINUTE, h), (h + 3 * HOUR_US, h + 3 * HOUR_US + 5))
    assert plan(h, h + 2 * HOUR_US, 15 * MINUTE, rolled=True).runs == ()
    assert plan(h, h + 2 * HOUR_US, HOUR_US, rolled=False).runs == ()


def test_plan_reads_raw_where_the_offset_is_not_whole_hours(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    set_zone(monkeypatch, "Asia/Kolkata")  # +5:30
    h = STARTS[0]
    p = plan(h, h + 48 * HOUR_US, DAY, rolled=True)
    assert p.runs == () and p.raw == ((h, h + 48 * HOUR_US),)


def test_plan_splits_at_a_daylight_saving_change(monkeypatch: pytest.MonkeyPatch) -> None:
    set_zone(monkeypatch, "Europe/Berlin")
    change = 1_774_746_000_000_000  # 2026-03-29 01:00 UTC: CET +1 becomes CEST +2
    p = plan(change - 5 * HOUR_US, change + 5 * HOUR_US, DAY, rolled=True)
    # the hour ending at the change has ends on both offsets: it is read raw
    assert p.runs == (
        (change - 4 * HOUR_US, change - HOUR_US, HOUR_US),
        (change + HOUR_US, change + 5 * HOUR_US, 2 * HOUR_US),
    )
    assert p.raw == ((change - HOUR_US, change),)


@pytest.mark.parametrize("name", ["Europe/Berlin", "America/New_York", "Asia/Kolkata", "UTC"])
def test_offsets_looked_up_a_day_apart_are_the_hourly_ones(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    set_zone(monkeypatch, name)
    first = 1_774_000_800_000_000  # 2026-03-20 10:00 UTC, a year of hours
    last = first + 370 * DAY + 5 * HOUR_US
    hourly = [utc_offset_us(t) for t in range(first, last + 1, HOUR_US)]
    assert hourly_offsets(first, last) == hourly
    assert hourly_offsets(first, first) == hourly[:1]


def test_an_open_reader_sees_the_fields_a_kind_gains_meanwhile(db_path: Path) -> None:
    """The reader keeps a kind's columns between keys, until another connection writes."""
    base = STARTS[0] // 10**6
    hourly: tuple[list[str], list[str], None, None] = (["thing"], ["thing"], None, None)
    with Store.open(db_path) as store:
        store.register("test", [THING])
        store.write(thing_interval(base + 60, 1, 1.0))
        with SqliteReader.open(db_path) as reader:
            before = load_slots(reader, *hourly, interval_len_us=HOUR_US, node=NODE)
            assert "extra" not in before[0].data["thing"]["test"].rows["a"].values
            bigger = Kind("thing", "test", (*THING.fields, gauge("extra", "count")))
            store.register("test", [bigger])
            row = EntityRow("thing", "a", {"t": "A"}, {"extra": 2.0, "extra_max": 3.0}, 0, 4)
            end = STARTS[0] + 2 * MINUTE
            store.write(Interval("test", NODE, end - MINUTE, end, MINUTE, (row,)))
            after = load_slots(reader, *hourly, interval_len_us=HOUR_US, node=NODE)
    values = after[0].data["thing"]["test"].rows["a"].values
    assert values["extra"] == 2.0 and values["extra_max"] == 3.0


def test_a_window_moved_within_its_buckets_reads_only_its_two_edges(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The buckets kept are not read again: a window moved by less than a bucket (the
    monitor's sparklines at each new newest row) reads its partial first and last buckets,
    each over its own range, and gives what a fresh reader gives."""
    set_zone(monkeypatch, "UTC")
    base = STARTS[0] // 10**6
    with Store.open(db_path) as store:
        store.register("test", [THING])
        for m in range(1, 6 * 60 + 1):
            store.write(thing_interval(base + 60 * m, m, 0.5, 2))
    read: list[tuple[int, int]] = []
    entities = buckets._Reader.entities

    def spied(
        self: buckets._Reader, kind: str, source: str, after: int, until: int, *a: object
    ) -> object:
        read.append((after, until))
        return entities(self, kind, source, after, until, *a)  # type: ignore[arg-type]

    monkeypatch.setattr(buckets._Reader, "entities", spied)
    start = STARTS[0] + 10 * MINUTE
    args = (["thing"], ["thing"])
    with SqliteReader.open(db_path, keep_buckets=True) as kept:
        load_slots(kept, *args, start, start + 4 * HOUR_US, interval_len_us=HOUR_US)
        read.clear()
        moved = (start + 7 * MINUTE, start + 4 * HOUR_US + 7 * MINUTE)
        again = load_slots(kept, *args, *moved, interval_len_us=HOUR_US)
    assert read == [(moved[0], hour_end(moved[0])), (hour_end(moved[1]) - HOUR_US, moved[1])]
    with SqliteReader.open(db_path) as fresh:
        assert again == load_slots(fresh, *args, *moved, interval_len_us=HOUR_US)


@pytest.mark.parametrize("with_row_flag", [True, False])
@pytest.mark.parametrize("length", [15 * MINUTE, DAY])
def test_a_flag_among_many_rows_is_in_its_bucket(
    db_path: Path, monkeypatch: pytest.MonkeyPatch, length: int, with_row_flag: bool
) -> None:
    """Flags are read apart, where a bucket's sums say some row or interval has them: one
    row's flag and one interval's flag among a day of unflagged ones reach their bucket, from
    the raw rows (15 minutes) and from the rollups (a day); and the interval's alone."""
    set_zone(monkeypatch, "UTC")
    day = STARTS[0] // DAY * DAY // 10**6
    with Store.open(db_path) as store:
        store.register("test", [THING])
        for m in range(1, 24 * 60 + 1):
            interval = thing_interval(day + 60 * m, m, 0.5, 2)
            if m == 100 and with_row_flag:
                interval = replace(interval, rows=(replace(interval.rows[0], flags=Flag.RESET),))
            if m == 200:
                interval = replace(interval, flags=Flag.GAP)
            store.write(interval)
    with SqliteReader.open(db_path) as reader:
        slots = load_slots(reader, ["thing"], ["thing"], None, None, interval_len_us=length)
    flagged = {
        s.end_us: (part.flags, part.rows["a"].flags)
        for s in slots
        if (part := s.data["thing"]["test"]).flags or part.rows["a"].flags
    }
    row_flag, interval_flag = ((day + 6000) * 10**6, (day + 12000) * 10**6)
    reset = Flag.RESET if with_row_flag else 0
    if length == DAY:
        assert flagged == {(day * 10**6) + DAY: (Flag.GAP, reset)}
    else:
        expected: dict[int, tuple[int, int]] = {bucket_end(interval_flag, length): (Flag.GAP, 0)}
        if with_row_flag:
            expected[bucket_end(row_flag, length)] = (0, Flag.RESET)
        assert flagged == expected


# --- the writer's local days -----------------------------------------------------------


def day_rows(path: Path) -> list[tuple[int, int, int]]:
    """(start, end, intervals) of every day rolled up."""
    return [
        (int(s), int(e), int(n))
        for e, s, n in sql(
            path, "SELECT day_end_us, day_start_us, n FROM interval_day ORDER BY day_end_us"
        )
    ]


def test_days_serve_day_buckets_with_the_bits_of_the_hours(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A day whose hours are all rolled up is rolled up too, in the writer's zone; buckets
    of a day in that zone read its rows and give the slots the raw rows give, bit for bit,
    through late intervals and retention; in another zone the hours serve as before."""
    set_zone(monkeypatch, "Europe/Berlin")
    base = STARTS[2] // 10**6  # 2026-10-24 12:00 UTC: Berlin's clocks go back on the 25th
    served: list[int] = []
    fold_days = buckets._Reader._fold_days

    def counted(self: buckets._Reader, kind: str, source: str, p: buckets.Plan, *a: object) -> None:
        served.extend(end for _, end, *_ in p.days)
        fold_days(self, kind, source, p, *a)  # type: ignore[arg-type]

    monkeypatch.setattr(buckets._Reader, "_fold_days", counted)
    args: tuple[list[str], list[str], None, None] = (["thing"], ["thing"], None, None)

    def same_as_raw() -> list[Slot]:
        with SqliteReader.open(db_path) as reader:
            rolled = load_slots(reader, *args, interval_len_us=DAY, node=NODE)
            raw = load_slots(reader, *args, interval_len_us=DAY, node=NODE, use_rollups=False)
        assert rolled == raw
        return rolled

    with Store.open(db_path) as store:
        store.register("test", [THING])
        for m in range(1, 6 * 24 * 6):  # six days of 10-minute intervals, every 9th late
            if m % 9:
                store.write(thing_interval(base + 600 * m, m, m / 7, m % 3, key="ab"[m % 2]))
        days = day_rows(db_path)
        # the Sunday of the change has 25 hours; every day ends at a Berlin midnight
        assert [(e - s) // HOUR_US for s, e, _ in days] == [24, 25, 24, 24, 24, 24]
        assert all(bucket_end(e, DAY) == e for _, e, _ in days)
        same_as_raw()
        assert served and set(served) <= {e for _, e, _ in days}
        assert DAY + HOUR_US not in {e - s for s in served for e in served}  # 25 h: hours
        before = {e: n for _, e, n in day_rows(db_path)}
        for m in range(9, 6 * 24 * 6, 9):  # the gaps, filled late
            store.write(thing_interval(base + 600 * m, m, m / 3, 1))
        after = {e: n for _, e, n in day_rows(db_path)}
        assert sum(after.values()) > sum(before.values())
        assert set(after) == set(before)
        assert rollup_dump(db_path) == up_to_marks(replayed(db_path, store), db_path)
        same_as_raw()
        prune(store, keep_s=4 * 86400 + 3600 * 5 + 600, now=base + 6 * 86400)  # into a day
        ((oldest,),) = sql(db_path, "SELECT MIN(end_us) FROM interval")
        first = day_rows(db_path)[0]
        assert first[0] < oldest <= first[1]  # the day cut into is rolled up from what is left
        assert rollup_dump(db_path) == up_to_marks(replayed(db_path, store), db_path)
        served.clear()
        same_as_raw()
        assert served
    set_zone(monkeypatch, "America/New_York")
    served.clear()
    same_as_raw()
    assert not served  # Berlin's days are not New York's


def quarter_hours(path: Path, days: int) -> None:
    """``days`` days of 15-minute intervals from STARTS[0], written in the present zone."""
    base = STARTS[0] // 10**6
    with Store.open(path) as store:
        store.register("test", [THING])
        for m in range(1, days * 24 * 4):
            store.write(thing_interval(base + 900 * m, m, m / 7, m % 3))


def test_a_zone_whose_midnight_is_inside_an_hour_keeps_no_days(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_zone(monkeypatch, "Asia/Kolkata")
    quarter_hours(db_path, 3)
    assert sql(db_path, "SELECT COUNT(*) FROM h_thing") != [(0,)]
    assert day_rows(db_path) == []


def test_rollups_kept_without_quarters_and_days_get_them_when_a_writer_opens_the_database(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database whose writer kept hours only (or an older esatui's, which rolled the hours
    up afresh and named its own way: quarters and days it never kept may be stale) reads its
    hours, not its quarters' and days' tables, until a writer opens it and rolls everything
    up anew."""
    from esatui.db.schema import ROLLED_HOURLY

    set_zone(monkeypatch, "UTC")
    quarter_hours(db_path, 4)
    kept = day_rows(db_path)
    assert len(kept) == 4
    conn = sqlite3.connect(db_path)
    conn.execute("UPDATE meta SET value = ? WHERE key = ?", (ROLLED_HOURLY, READY_KEY))
    for table in ("d_thing", "q_thing"):  # what an older writer left stale
        conn.execute(f"UPDATE {table} SET ops = ops + 1")
    conn.commit()
    conn.close()
    args: tuple[list[str], list[str], None, None] = (["thing"], ["thing"], None, None)
    lengths = (DAY, 15 * MINUTE)
    with SqliteReader.open(db_path) as reader:
        assert not reader.queries.tiers_kept()
        rolled = [load_slots(reader, *args, interval_len_us=n, node=NODE) for n in lengths]
        assert rolled == [
            load_slots(reader, *args, interval_len_us=n, node=NODE, use_rollups=False)
            for n in lengths
        ]
    Store.open(db_path).close()
    with SqliteReader.open(db_path) as reader:
        assert reader.queries.tiers_kept()
        assert [load_slots(reader, *args, interval_len_us=n, node=NODE) for n in lengths] == rolled
        found = reader.info()  # what `esatui db info` prints
        assert found.day_rows == {"thing": 4} and found.quarter_rows["thing"] > 4 * 24
    assert day_rows(db_path) == kept
    assert rollup_dump(db_path) == up_to_marks(replayed(db_path), db_path)


@pytest.mark.parametrize("zone", ["UTC", "Asia/Kathmandu", "Europe/Berlin"])
def test_quarters_serve_15_minute_buckets_with_the_bits_of_the_rows(
    db_path: Path, monkeypatch: pytest.MonkeyPatch, zone: str
) -> None:
    """Every interval is added to its quarter of an hour as well; buckets of 15 minutes are
    those quarters in every zone (Kathmandu's +5:45 too), read a row an entity each, and
    give what the raw rows give, bit for bit, through late writes and retention."""
    set_zone(monkeypatch, zone)
    base = STARTS[2] // 10**6  # the day before Berlin's clocks go back
    quarters: list[int] = []
    fold_hours = buckets._Reader._fold_hours

    def counted(self: buckets._Reader, kind: str, run: HourRun, *a: object) -> None:
        if run.tier == "q":
            quarters.extend(range(run.first, run.last + 1, 15 * MINUTE))
        fold_hours(self, kind, run, *a)  # type: ignore[arg-type]

    monkeypatch.setattr(buckets._Reader, "_fold_hours", counted)
    args: tuple[list[str], list[str]] = (["thing"], ["thing"])

    def same_as_raw(after: int | None, until: int | None) -> None:
        with SqliteReader.open(db_path) as reader:
            kw = {"interval_len_us": 15 * MINUTE, "node": NODE, "limit": 200}
            rolled = load_slots(reader, *args, after, until, **kw)  # type: ignore[arg-type]
            raw = load_slots(reader, *args, after, until, use_rollups=False, **kw)  # type: ignore[arg-type]
        assert rolled == raw
        assert rolled

    with Store.open(db_path) as store:
        store.register("test", [THING])
        for m in range(1, 2 * 24 * 30):  # two days of 2-minute intervals, every 7th late
            if m % 7:
                store.write(thing_interval(base + 120 * m, m, m / 7, m % 3, key="ab"[m % 2]))
        for m in range(7, 2 * 24 * 30, 7):
            store.write(thing_interval(base + 120 * m, m, m / 3, 1))
        assert rollup_dump(db_path) == up_to_marks(replayed(db_path, store), db_path)
        end = (base + 2 * 86400) * 10**6
        for after, until in ((None, None), (end - 86400 * 10**6 + 7 * MINUTE, end - 3 * MINUTE)):
            quarters.clear()
            same_as_raw(after, until)
            assert quarters  # served by the quarters' rollups
        prune(store, keep_s=86400 + 600, now=base + 2 * 86400)
        assert rollup_dump(db_path) == up_to_marks(replayed(db_path, store), db_path)
        same_as_raw(None, None)
    q_rows = sql(db_path, "SELECT COUNT(*), SUM(rows_n) FROM q_thing")
    h_rows = sql(db_path, "SELECT COUNT(*), SUM(rows_n) FROM h_thing")
    assert q_rows[0][1] == h_rows[0][1] and q_rows[0][0] > 3 * h_rows[0][0]


def test_an_open_reader_sees_a_writer_roll_the_database_up_afresh(db_path: Path) -> None:
    """A writer rolling a database up afresh empties the rollups first: a reader opened
    before reads the raw rows from then on, not the rollups being made."""
    quarter_hours(db_path, 1)
    with SqliteReader.open(db_path) as reader:
        assert reader.queries.rollups_ready() and reader.queries.tiers_kept()
        conn = sqlite3.connect(db_path)
        conn.execute("DELETE FROM meta WHERE key = ?", (READY_KEY,))  # the backfill's first step
        conn.commit()
        assert not reader.queries.rollups_ready() and not reader.queries.tiers_kept()
        conn.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (READY_KEY, READY_VALUE))
        conn.commit()
        conn.close()
        assert reader.queries.rollups_ready() and reader.queries.tiers_kept()


def other_now_and_then(db_path: Path) -> None:
    """Three hours of a minute's "tick" (source t) and of half minutes of "thing" (source s),
    "other" (of s too) only in the second half of each minute and not in the first hour."""
    base = STARTS[0] // 10**6
    tick = Kind("tick", "test", (counter("n", "count"),))
    with Store.open(db_path) as store:
        store.register("t", [tick])
        store.register("s", [THING, OTHER])
        for m in range(1, 3 * 60 + 1):  # three hours of minutes, and of half minutes
            end = base + 60 * m
            store.write(Interval("t", NODE, (end - 60) * 10**6, end * 10**6, 60 * 10**6, (
                EntityRow("tick", "x", {}, {"n": 1}, 0, 0),
            )))  # fmt: skip
            for half in (30, 0):
                thing = EntityRow("thing", "a", {}, {"ops": 30}, 0, 0)
                # "other" only in the second half of each minute, and not in the first hour
                rows = (thing,) if half or m <= 60 else (
                    thing, EntityRow("other", "b", {}, {"events": 30}, 0, 0)
                )  # fmt: skip
                at = (end - half) * 10**6
                store.write(Interval("s", NODE, at - 30 * 10**6, at, 30 * 10**6, rows))


def test_a_kind_s_time_is_that_of_the_intervals_that_carried_its_rows(db_path: Path) -> None:
    """A source whose intervals carry a kind only now and then (a monitor whose storage
    domain is enabled mid-recording: no D3R2 before): the kind's rate in a slot or bucket is
    over those intervals' time, not its source's. Before: over the source's, so a bucket
    read 14/15 of each minute's rate where one minute of 15 lacked the kind."""
    other_now_and_then(db_path)
    with SqliteReader.open(db_path) as reader:
        minutes = load_slots(reader, ["tick"], ["thing", "other"], None, None, limit=5, node=NODE)
        for slot in minutes:  # two intervals of "s" in each minute, "other" in one
            every, some = slot.get("thing"), slot.get("other")
            assert every is not None and some is not None
            assert (every.duration_us, some.duration_us) == (60 * 10**6, 30 * 10**6)
        for length in (15 * MINUTE, HOUR_US, 3 * HOUR_US, DAY, 7 * DAY):
            args: tuple[list[str], list[str], None, None] = (["tick"], ["other"], None, None)
            ways = [
                load_slots(reader, *args, interval_len_us=length, node=NODE, use_rollups=rolled)
                for rolled in (True, False)
            ]
            assert ways[0] == ways[1], length
            # the calendar's buckets (a week's ends on a Monday), not SQL's arithmetic alone
            assert all(slot.end_us == bucket_end(slot.end_us, length) for slot in ways[0])
            for found, use_rollups in zip(ways, (True, False), strict=True):
                assert any(slot.get("other") for slot in found)
                for slot in found:
                    sliced = slot.get("other")
                    if sliced is None:
                        continue
                    # its rate: the events over its own time, 1 a second
                    events = sliced.rows["b"].values["events"]
                    assert isinstance(events, int)
                    assert events / (sliced.duration_us / 10**6) == 1.0, (length, use_rollups)


def test_rollups_kept_without_absences_get_them_when_a_writer_opens_the_database(
    db_path: Path,
) -> None:
    """A database an esatui before the absences rolled up (quarters and days, no
    ``absent_<tier>``) reads its rollups as before, every kind's time in a whole hour its
    source's, until a writer opens it and rolls it up afresh with them."""
    from esatui.db.schema import ROLLED_TIERED

    other_now_and_then(db_path)
    conn = sqlite3.connect(db_path)
    conn.execute("UPDATE meta SET value = ? WHERE key = ?", (ROLLED_TIERED, READY_KEY))
    for tier in ("hour", "quarter", "day"):
        conn.execute(f"DROP TABLE absent_{tier}")  # an older esatui made none
    conn.commit()
    conn.close()
    args: tuple[list[str], list[str], None, None] = (["tick"], ["other"], None, None)

    def other_time(reader: SqliteReader, use_rollups: bool) -> list[int]:
        found = load_slots(
            reader, *args, interval_len_us=3 * HOUR_US, node=NODE, use_rollups=use_rollups
        )
        return [s.duration_us for slot in found if (s := slot.get("other")) is not None]

    with SqliteReader.open(db_path) as reader:
        assert reader.queries.tiers_kept() and not reader.queries.absences_kept()
        # the bucket 15:00-18:00 UTC: its rolled-up hour at its source's time, as before, the
        # hour being written (raw) at "other"'s own
        assert other_time(reader, True) == [HOUR_US + HOUR_US // 2]
        assert other_time(reader, False) == [HOUR_US]  # two hours, half of each minute
    Store.open(db_path).close()
    with SqliteReader.open(db_path) as reader:
        assert reader.queries.absences_kept()
        assert other_time(reader, True) == other_time(reader, False) == [HOUR_US]
    assert rollup_dump(db_path) == up_to_marks(replayed(db_path), db_path)
