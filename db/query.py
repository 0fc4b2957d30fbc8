"""Reading a time range as *slots*: the rows a screen shows, one per interval or bucket.

A screen's timeline comes from one kind (the CPUs for ESALNXC, say): its intervals, or, with
``interval_len_us``, buckets of that length aligned to the local clock. The rows of every
other kind the screen needs are placed into the slot their interval overlaps most, whatever
source wrote them, so sources sampled a few microseconds apart or on their own clock (the
z/VM monitor) line up. Within a slot, counters are summed and gauges are averaged weighted by
their sample counts, which is what one longer interval would have recorded.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from esatui.db.records import Value, max_column
from esatui.db.store import IntervalInfo, KindRow, Store


@dataclass(frozen=True, slots=True)
class EntityData:
    key: str
    attrs: Mapping[str, str]
    values: Mapping[str, Value]
    flags: int
    hf_n: int


@dataclass(frozen=True, slots=True)
class KindSlice:
    """One kind, from one source, within one slot."""

    source: str
    duration_us: int  # total measured duration of the contributing intervals
    flags: int
    rows: Mapping[str, EntityData]  # entity key -> data


@dataclass(frozen=True, slots=True)
class Slot:
    start_us: int
    end_us: int  # the time a screen shows (interval end, or the bucket's nominal end)
    duration_us: int
    flags: int
    data: Mapping[str, Mapping[str, KindSlice]] = field(default_factory=dict)

    def get(self, kind: str, prefer: Sequence[str] = ()) -> KindSlice | None:
        """The kind's slice, from the first preferred source that has it (else any)."""
        by_source = self.data.get(kind)
        if not by_source:
            return None
        for source in prefer:
            if source in by_source:
                return by_source[source]
        return by_source[min(by_source)]


def bucket_end(end_us: int, length_us: int) -> int:
    """The end of the bucket of ``length_us`` containing ``end_us``, aligned to local time
    (15-minute buckets end at :00, :15 ...; daily ones at local midnight)."""
    offset = _utc_offset_us(end_us)
    local = end_us + offset
    return -((-local) // length_us) * length_us - offset


def _utc_offset_us(time_us: int) -> int:
    return int(time.localtime(time_us // 1_000_000).tm_gmtoff) * 1_000_000


def timeline_source(store: Store, node_id: int, kind: str, prefer: Sequence[str]) -> list[str]:
    sources = store.sources_of(kind)
    return sorted(sources, key=lambda s: (prefer.index(s) if s in prefer else len(prefer), s))


def load_slots(
    store: Store,
    node_id: int,
    timeline_kinds: Sequence[str],
    kinds: Iterable[str],
    after_us: int | None,
    until_us: int | None,
    *,
    interval_len_us: int | None = None,
    limit: int | None = None,
    prefer: Sequence[str] = (),
    snap: bool = False,
) -> list[Slot]:
    """Slots, newest first, for the first of ``timeline_kinds`` that has data in the range.

    With ``snap``, (after, until] is one interval of another source (a drill-down): the
    slots are this timeline's intervals that overlap it for at least half their length.
    """
    base: list[IntervalInfo] = []
    for kind in timeline_kinds:
        for source in timeline_source(store, node_id, kind, prefer):
            if snap and after_us is not None and until_us is not None:
                base = _matching_intervals(store, node_id, source, after_us, until_us)
            else:
                base = _base_intervals(
                    store, node_id, source, after_us, until_us, interval_len_us, limit
                )
            if base:
                break
        if base:
            break
    if not base:
        return []
    frames = _frames(base, interval_len_us)  # (start, end, members) oldest first
    lo = min(f[0] for f in frames)
    hi = max(f[1] for f in frames)
    margin = max(f[1] - f[0] for f in frames)
    data: list[dict[str, dict[str, list[KindRow]]]] = [{} for _ in frames]
    durations: list[dict[tuple[str, str], int]] = [{} for _ in frames]
    ends = [f[1] for f in frames]
    wanted = dict.fromkeys([*timeline_kinds, *kinds])
    cache: dict[str, list[IntervalInfo]] = {}
    for kind in wanted:
        for source in store.sources_of(kind):
            if source not in cache:
                # a margin of one frame catches intervals that end just past the range
                cache[source] = store.intervals(
                    node_id, [source], lo, hi + margin, newest_first=False
                )
            placed: dict[int, int] = {}
            for info in cache[source]:
                index = _best_frame(frames, ends, info)
                if index is not None:
                    placed[info.id] = index
            if not placed:
                continue
            infos = [i for i in cache[source] if i.id in placed]
            for row in store.kind_rows(kind, infos):
                data[placed[row.interval.id]].setdefault(kind, {}).setdefault(source, []).append(
                    row
                )
            for info in infos:
                key = (kind, source)
                index = placed[info.id]
                durations[index][key] = durations[index].get(key, 0) + info.duration_us
    slots: list[Slot] = []
    roles = {kind: store.field_roles(kind) for kind in wanted}
    for (start, end, members), kinds_rows, durs in zip(frames, data, durations, strict=True):
        sliced = {
            kind: {
                source: _slice(source, durs[(kind, source)], rows, roles[kind])
                for source, rows in by_source.items()
            }
            for kind, by_source in kinds_rows.items()
        }
        flags = 0
        for m in members:
            flags |= m.flags
        slots.append(Slot(start, end, sum(m.duration_us for m in members), flags, sliced))
    slots.reverse()
    return slots


def _base_intervals(
    store: Store,
    node_id: int,
    source: str,
    after_us: int | None,
    until_us: int | None,
    interval_len_us: int | None,
    limit: int | None,
) -> list[IntervalInfo]:
    if interval_len_us is None:
        return store.intervals(node_id, [source], after_us, until_us, limit=limit)
    if limit is not None:
        newest = store.intervals(node_id, [source], after_us, until_us, limit=1)
        if not newest:
            return []
        top = bucket_end(newest[0].end_us, interval_len_us)
        floor = top - limit * interval_len_us
        after_us = floor if after_us is None else max(after_us, floor)
    return store.intervals(node_id, [source], after_us, until_us)


def _matching_intervals(
    store: Store, node_id: int, source: str, start_us: int, end_us: int
) -> list[IntervalInfo]:
    span = end_us - start_us
    candidates = store.intervals(node_id, [source], start_us, end_us + span)
    return [
        i
        for i in candidates
        if 2 * (min(i.end_us, end_us) - max(i.start_us, start_us)) >= (i.end_us - i.start_us)
    ]


def _frames(
    base: list[IntervalInfo], interval_len_us: int | None
) -> list[tuple[int, int, list[IntervalInfo]]]:
    ordered = sorted(base, key=lambda i: i.end_us)
    if interval_len_us is None:
        return [(i.start_us, i.end_us, [i]) for i in ordered]
    frames: dict[int, list[IntervalInfo]] = {}
    for info in ordered:
        frames.setdefault(bucket_end(info.end_us, interval_len_us), []).append(info)
    return [(end - interval_len_us, end, members) for end, members in sorted(frames.items())]


def _best_frame(
    frames: list[tuple[int, int, list[IntervalInfo]]], ends: list[int], info: IntervalInfo
) -> int | None:
    """The frame the interval overlaps most (ties go to the later frame)."""
    i = bisect.bisect_left(ends, info.end_us)
    best, best_overlap = None, 0
    for j in (i - 1, i, i + 1):
        if 0 <= j < len(frames):
            start, end, _ = frames[j]
            overlap = min(end, info.end_us) - max(start, info.start_us)
            if overlap > best_overlap or (overlap == best_overlap and overlap > 0):
                best, best_overlap = j, overlap
    return best


def _slice(
    source: str, duration_us: int, rows: list[KindRow], roles: Mapping[str, str]
) -> KindSlice:
    flags = 0
    merged: dict[str, list[KindRow]] = {}
    for row in rows:
        merged.setdefault(row.key, []).append(row)
        flags |= row.interval.flags
    return KindSlice(
        source,
        duration_us,
        flags,
        {key: _merge(group, roles) for key, group in merged.items()},
    )


def _merge(rows: list[KindRow], roles: Mapping[str, str]) -> EntityData:
    if len(rows) == 1:
        r = rows[0]
        return EntityData(r.key, r.attrs, r.values, r.flags, r.hf_n)
    rows = sorted(rows, key=lambda r: r.interval.end_us)
    values: dict[str, Value] = {}
    flags = 0
    hf_n = sum(r.hf_n for r in rows)
    for r in rows:
        flags |= r.flags
    for name in rows[-1].values:
        role = roles.get(name)
        if role == "gauge":
            weighted = [(r.values.get(name), r.hf_n) for r in rows]
            known = [(v, n) for v, n in weighted if v is not None and n > 0]
            total_n = sum(n for _, n in known)
            values[name] = sum(v * n for v, n in known) / total_n if total_n else None
            maxima = [r.values.get(max_column(name)) for r in rows]
            present = [m for m in maxima if m is not None]
            values[max_column(name)] = max(present) if present else None
        elif role == "counter":
            parts = [r.values.get(name) for r in rows]
            present_c = [p for p in parts if p is not None]
            values[name] = sum(present_c) if present_c else None
    return EntityData(rows[-1].key, rows[-1].attrs, values, flags, hf_n)
