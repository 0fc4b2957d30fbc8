"""Slots: timelines, aggregation into longer intervals, sources on other clocks."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from esatui.collectors.model import Kind, Reading, Sample, counter, gauge
from esatui.db import query
from esatui.db.calendar import bucket_end
from esatui.db.reader import Span, Timeline, Window
from esatui.db.records import Flag
from esatui.db.slots import Slot
from esatui.db.sqlite_reader import SqliteReader
from esatui.db.store import Store
from tests.fixtures.reading import load_slots
from tests.fixtures.recording import START_US, host_recording, write

MINUTE = 60_000_000
OTHER = Kind("other", "test", (counter("ops", "count"), gauge("depth", "count")))


def other_samples(offset_us: int, n: int, every_us: int = MINUTE) -> list[Sample]:
    return [
        Sample(
            "other",
            START_US + offset_us + i * every_us,
            (Reading("other", "x", {"ops": i * 10, "depth": float(i)}),),
        )
        for i in range(n + 1)
    ]


def test_natural_slots_newest_first(db_path: Path) -> None:
    host_recording(db_path, n_intervals=5)
    with SqliteReader.open(db_path) as reader:
        slots = load_slots(reader, ["cpu"], [], None, None)
        assert [s.end_us for s in slots] == [START_US + i * MINUTE for i in range(5, 0, -1)]
        cpu = slots[0].get("cpu")
        assert cpu is not None and sorted(cpu.rows) == ["0", "1", "2", "3"]
        assert cpu.duration_us == MINUTE


def test_limit_and_range(db_path: Path) -> None:
    host_recording(db_path, n_intervals=10)
    with SqliteReader.open(db_path) as reader:
        slots = load_slots(reader, ["cpu"], [], None, START_US + 7 * MINUTE, limit=3)
        assert [s.end_us for s in slots] == [START_US + m * MINUTE for m in (7, 6, 5)]
        slots = load_slots(reader, ["cpu"], [], START_US + 2 * MINUTE, START_US + 4 * MINUTE)
        assert [s.end_us for s in slots] == [START_US + 4 * MINUTE, START_US + 3 * MINUTE]


def test_a_source_sampled_microseconds_later_lands_in_the_same_slot(db_path: Path) -> None:
    host_recording(db_path, n_intervals=4)
    with Store.open(db_path) as store:
        write(store, "other", [OTHER], other_samples(200, 4))
    with SqliteReader.open(db_path) as reader:
        slots = load_slots(reader, ["cpu"], ["other"], None, None)
        for i, slot in enumerate(slots):
            other = slot.get("other")
            assert other is not None
            assert other.rows["x"].values["depth"] == float(4 - i)


def test_a_source_on_its_own_clock_goes_where_it_overlaps_most(db_path: Path) -> None:
    host_recording(db_path, n_intervals=4)
    with Store.open(db_path) as store:
        write(store, "other", [OTHER], other_samples(20_000_000, 4))  # 20 s later
    with SqliteReader.open(db_path) as reader:
        slots = load_slots(reader, ["cpu"], ["other"], None, None)
        depths = [s.get("other") for s in slots]
        # the interval ending 14:01:20 overlaps 14:00-14:01 by 40 s: it goes there
        assert depths[-1] is not None and depths[-1].rows["x"].values["depth"] == 1.0


def test_a_slice_holds_each_of_its_intervals_time_and_flags_once(db_path: Path) -> None:
    """A source every 30 s beside 1-minute frames: two of its intervals in each slot, one
    of them flagged. The slice's time is the two intervals' (not once per row), its flags
    both intervals' (the other slots' none), and the entity's two rows are one."""
    host_recording(db_path, n_intervals=4)
    with Store.open(db_path) as store:
        write(store, "other", [OTHER], other_samples(100, 8, every_us=MINUTE // 2))
        write(store, "more", [OTHER], other_samples(200, 8, every_us=MINUTE // 2))
    flagged_end = START_US + 100 + 3 * MINUTE // 2  # the second minute's first half
    with sqlite3.connect(db_path) as conn:
        conn.execute(
            "UPDATE interval SET flags = ? WHERE source = 'other' AND end_us = ?",
            (Flag.RESET, flagged_end),
        )
    with SqliteReader.open(db_path) as reader:
        slots = load_slots(reader, ["cpu"], ["other"], None, None)
        assert [s.end_us for s in slots] == [START_US + m * MINUTE for m in (4, 3, 2, 1)]
        for slot in slots:
            other = slot.get("other", ("other",))
            assert other is not None and other.source == "other"
            assert other.duration_us == MINUTE
            assert other.flags == (Flag.RESET if slot.end_us == START_US + 2 * MINUTE else 0)
            assert list(other.rows) == ["x"]
            # the counter's two deltas added: 10 ops every 30 s
            assert other.rows["x"].values["ops"] == 20


def test_a_kind_read_from_one_source_holds_the_source_a_reader_takes(db_path: Path) -> None:
    """Two sources of a kind, one of them only in the first two minutes: slots that read the
    kind from one source (``Timeline.one_source``) hold the source ``Slot.get`` takes with
    the same preference, the same slice, and no other; without it, both."""
    host_recording(db_path, n_intervals=4)
    with Store.open(db_path) as store:
        write(store, "other", [OTHER], other_samples(100, 4))
        write(store, "early", [OTHER], other_samples(200, 2))
    with SqliteReader.open(db_path) as reader:
        every = load_slots(reader, ["cpu"], ["other"], None, None)
        assert [sorted(s.data["other"]) for s in every] == [
            ["other"],
            ["other"],
            ["early", "other"],
            ["early", "other"],
        ]
        for prefer, held in (
            (("early",), ["other", "other", "early", "early"]),
            (("other",), ["other"] * 4),
            ((), ["other", "other", "early", "early"]),  # else the first by name
        ):
            one = load_slots(reader, ["cpu"], ["other"], None, None, one_source=[("other", prefer)])
            assert [list(s.data["other"]) for s in one] == [[source] for source in held]
            for slot, whole in zip(one, every, strict=True):
                taken = slot.get("other", prefer)
                assert taken is not None and taken == whole.get("other", prefer)


def test_aggregation_sums_deltas_and_weights_gauges(db_path: Path) -> None:
    host_recording(db_path, n_intervals=30)
    with Store.open(db_path) as store:
        write(store, "other", [OTHER], other_samples(100, 30))
    with SqliteReader.open(db_path) as reader:
        natural = load_slots(reader, ["cpu"], ["other"], None, None)
        coarse = load_slots(reader, ["cpu"], ["other"], None, None, interval_len_us=15 * MINUTE)
        assert [s.end_us for s in coarse] == [START_US + 30 * MINUTE, START_US + 15 * MINUTE]
        assert coarse[0].duration_us == 15 * MINUTE
        for bucket in coarse:
            members = [s for s in natural if bucket.start_us < s.end_us <= bucket.end_us]
            assert len(members) == 15
            cpu = bucket.get("cpu")
            assert cpu is not None
            for key, entity in cpu.rows.items():
                for name, value in entity.values.items():
                    parts = [m.get("cpu").rows[key].values[name] for m in members]  # type: ignore[union-attr]
                    assert value == sum(p for p in parts if isinstance(p, int))
            # in a bucketed view every source's intervals go to the bucket their end falls in
            # (as the hourly rollups are kept): "other" ends 100 us after the host, so the
            # interval that closes at 14:15:00.0001 counts in the next bucket
            other = bucket.get("other")
            assert other is not None
            depth = [
                float(i)  # interval i of "other" recorded depth i
                for i in range(1, 31)
                if bucket.start_us < START_US + i * MINUTE + 100 <= bucket.end_us
            ]
            assert other.rows["x"].values["depth"] == sum(depth) / len(depth)
            assert other.rows["x"].values["depth_max"] == max(depth)
            assert other.duration_us == len(depth) * MINUTE


def test_buckets_align_to_local_time(monkeypatch: object) -> None:
    assert bucket_end(START_US + 1, 15 * MINUTE) == START_US + 15 * MINUTE
    assert bucket_end(START_US, 15 * MINUTE) == START_US


def one_slot(
    reader: SqliteReader, kinds: list[str], one_source: tuple[tuple[str, tuple[str, ...]], ...] = ()
) -> Slot:
    """The slot ``compare.range_model`` reads: every interval of the recording as one."""
    timeline = Timeline(reader.node(None), ("cpu",), one_source=one_source)
    window = reader.window(timeline, None, None)
    whole = Span(
        window.spans[0].start_us,
        window.spans[-1].end_us,
        sum(s.duration_us for s in window.spans),
        0,
    )
    (slot,) = reader.slots(replace(window, spans=(whole,)), kinds)
    return slot


def test_one_slot_over_a_range_merges_its_rows_in_the_order_they_end(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A comparison's slot over eight intervals stored out of order (the later four first):
    the counter is their sum, the gauge their average weighted by the sample counts added
    left to right in the order the intervals end (values whose sum that order decides), the
    maximum the greatest; read all at once or two intervals at a time, the same."""
    host_recording(db_path, n_intervals=8)
    samples = other_samples(100, 8)
    with Store.open(db_path) as store:
        write(store, "other", [OTHER], samples[4:])
        write(store, "other", [OTHER], samples[:5])
    # in end order: each 1.0 after 1e16 is lost to rounding, the four first in id order not
    depth = [1e16, 1.0, 1.0, 1.0, 0.5, None, 0.7, 1.0]
    hf_n = [1, 1, 1, 1, 2, 3, 0, 1]  # the 7th weighs nothing
    ops = [10, 10, None, 10, 10, 10, 10, 10]
    depth_max = [2.0, 1.5, None, 4.0, 2.5, 9.0, 99.0, 0.5]
    with sqlite3.connect(db_path) as conn:
        ids = [
            i
            for (i,) in conn.execute(
                "SELECT id FROM interval WHERE source = 'other' ORDER BY end_us"
            )
        ]
        assert ids != sorted(ids)  # stored out of order
        for i, values in enumerate(zip(depth, hf_n, ops, depth_max, strict=True)):
            conn.execute(
                "UPDATE k_other SET depth = ?, hf_n = ?, ops = ?, depth_max = ?"
                " WHERE interval_id = ?",
                (*values, ids[i]),
            )
    weighed, weights = 0.0, 0
    for value, n in zip(depth, hf_n, strict=True):  # the witness: added one by one
        if value is not None and n > 0:
            weighed += value * n
            weights += n
    in_id_order = sorted(zip(ids, depth, hf_n, strict=True))
    assert sum(v * n for _, v, n in in_id_order if v is not None and n > 0) != weighed
    with SqliteReader.open(db_path) as reader:
        slots = [one_slot(reader, ["other"])]
        monkeypatch.setattr(query, "_MERGE_CHUNK", 2)
        slots.append(one_slot(reader, ["other"]))
    for slot in slots:
        other = slot.get("other")
        assert other is not None and other.duration_us == 8 * MINUTE
        row = other.rows["x"]
        assert row.values == {
            "ops": 70,
            "depth": weighed / weights,
            "depth_max": 99.0,
        }
        assert row.hf_n == sum(hf_n)


def test_one_slot_over_a_range_reads_a_kind_from_the_source_a_reader_takes(db_path: Path) -> None:
    """As slots of their own intervals, a slot over the range that reads a kind from one
    source holds the first of the preference that has rows there, the same slice as when
    every source is read."""
    host_recording(db_path, n_intervals=4)
    with Store.open(db_path) as store:
        write(store, "other", [OTHER], other_samples(100, 4))
        write(store, "early", [OTHER], other_samples(200, 2))
    with SqliteReader.open(db_path) as reader:
        every = one_slot(reader, ["other"])
        assert sorted(every.data["other"]) == ["early", "other"]
        for prefer, held in ((("early",), "early"), (("other",), "other"), ((), "early")):
            one = one_slot(reader, ["other"], one_source=(("other", prefer),))
            assert list(one.data["other"]) == [held]
            assert one.get("other", prefer) == every.get("other", prefer)


def test_a_range_places_the_intervals_slots_of_their_own_would(db_path: Path) -> None:
    """The intervals a window of one frame reads (SQLite's conditions) are the ones
    :func:`query._place` puts in that frame, whatever the frame and the sources' clocks: the
    frame's own source only in its range or at its end, another where it overlaps."""
    host_recording(db_path, n_intervals=12)
    with Store.open(db_path) as store:
        write(store, "other", [OTHER], other_samples(20_000_000, 12))  # 20 s later
        write(store, "half", [OTHER], other_samples(100, 24, every_us=MINUTE // 2))
    with SqliteReader.open(db_path) as reader:
        queries, node_id = reader.queries, queries_node(reader)
        timeline = Timeline(reader.node(None), ("cpu",))
        frames = [
            (START_US, START_US + 12 * MINUTE, None, None),
            (START_US + 2 * MINUTE, START_US + 7 * MINUTE, START_US + 2 * MINUTE, None),
            (START_US + 3 * MINUTE, START_US + 4 * MINUTE, START_US + 3 * MINUTE + 1, None),
            (START_US + 3 * MINUTE + 30_000_000, START_US + 5 * MINUTE, None, START_US),
        ]
        for start, end, after, until in frames:
            span = Span(start, end, end - start, 0)
            window = Window(timeline, "host", (span,), after, until)
            for source in ("host", "other", "half"):
                placed, infos = query._place(queries, node_id, window, source)
                expected = sorted(placed, key=lambda i: infos[i].end_us)
                spanned = query._spanned(queries, node_id, window, source)
                assert list(spanned.ids) == expected, (start, end, after, until, source)
                assert list(spanned.durations) == [infos[i].duration_us for i in expected]
                assert list(spanned.flags) == [infos[i].flags for i in expected]


def queries_node(reader: SqliteReader) -> int:
    node_id = reader.queries.node_id(None)
    assert node_id is not None
    return node_id


def test_one_slot_over_a_range_merges_an_entity_whose_attributes_changed(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entity recorded under two sets of attributes in turn (two entity ids, one key) is
    one row of a slot over the range: its rows added in the order they end, with the
    attributes it last had, also when a chunk of intervals holds both."""
    host_recording(db_path, n_intervals=7)
    samples = [
        Sample(
            "other",
            START_US + 100 + i * MINUTE,
            (Reading("other", "x", {"ops": i * i, "depth": 1.0}, {"mode": "ab"[i % 2]}),),
        )
        for i in range(8)
    ]
    with Store.open(db_path) as store:
        write(store, "other", [OTHER], samples)
    for chunk in (480, 2):
        monkeypatch.setattr(query, "_MERGE_CHUNK", chunk)
        with SqliteReader.open(db_path) as reader:
            other = one_slot(reader, ["other"]).get("other")
        assert other is not None and list(other.rows) == ["x"]
        row = other.rows["x"]
        assert row.attrs == {"mode": "b"}  # the first attributes' entity id, the lower
        assert row.values["ops"] == 49  # the counter's deltas: 7 * 7 - 0
