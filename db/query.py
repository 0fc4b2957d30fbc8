"""Reading a time range as *slots*: the rows a screen shows, one per interval or bucket.

A screen's timeline comes from one kind (the CPUs for ESALNXC, say): its intervals, or, with
``interval_len_us``, buckets of that length aligned to the local clock (``db/buckets.py``,
which reads whole hours from the store's hourly rollups). In a view of recorded intervals
the rows of every other kind the screen needs are placed into the slot their interval
overlaps most, whatever source wrote them, so sources sampled a few microseconds apart or on
their own clock (the z/VM monitor) line up; in a bucketed view every source's intervals go
to the bucket their end falls in, as the rollups are kept. Within a slot, counters are
summed and gauges are averaged weighted by their sample counts, which is what one longer
interval would have recorded.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence

from esatui.db.buckets import bucket_end, bucketed_slots
from esatui.db.records import Value, max_column
from esatui.db.slots import EntityData, KindSlice, Slot
from esatui.db.store import IntervalInfo, KindRow, Store

__all__ = ["EntityData", "KindSlice", "Slot", "bucket_end", "load_slots", "timeline_source"]


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
    use_rollups: bool = True,
) -> list[Slot]:
    """Slots, newest first, for the first of ``timeline_kinds`` that has data in the range.

    With ``snap``, (after, until] is one interval of another source (a drill-down): the
    slots are this timeline's intervals that overlap it for at least half their length (in
    a bucketed view, the buckets of the intervals that end in it). ``use_rollups=False``
    reads a bucketed view from the raw rows only (the same result, slower: for tests).
    """
    if interval_len_us is not None:
        return bucketed_slots(
            store,
            node_id,
            [(kind, timeline_source(store, node_id, kind, prefer)) for kind in timeline_kinds],
            kinds,
            after_us,
            until_us,
            interval_len_us,
            None if snap else limit,
            use_rollups=use_rollups,
        )
    base: list[IntervalInfo] = []
    for kind in timeline_kinds:
        for source in timeline_source(store, node_id, kind, prefer):
            if snap and after_us is not None and until_us is not None:
                base = _matching_intervals(store, node_id, source, after_us, until_us)
            else:
                base = store.intervals(node_id, [source], after_us, until_us, limit=limit)
            if base:
                break
        if base:
            break
    if not base:
        return []
    frames = [(i.start_us, i.end_us, [i]) for i in sorted(base, key=lambda i: i.end_us)]
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
