"""Windows and slots of a timeline as recorded (SQLite): one slot per interval.

A screen's timeline comes from one kind (the CPUs for ESALNXC, say): the intervals of the
first of its kinds and sources that has data in the range. The rows of every other kind the
screen needs are placed into the slot their interval overlaps most, whatever source wrote
them, so sources sampled a few microseconds apart or on their own clock (the z/VM monitor)
line up. Within a slot, counters are summed and gauges are averaged weighted by their sample
counts, which is what one longer interval would have recorded. Buckets of a chosen length
are ``db/buckets.py``.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Mapping, Sequence

from esatui.collectors.role import Role
from esatui.db.reader import Span, Timeline, Window
from esatui.db.reading import IntervalInfo, KindRow, Queries, RawRow
from esatui.db.records import Value, max_column
from esatui.db.slots import EntityData, KindSlice, Slot


def timeline_sources(queries: Queries, kind: str, prefer: Sequence[str]) -> list[str]:
    """The sources that recorded ``kind``, preferred ones first."""
    sources = queries.sources_of(kind)
    return sorted(sources, key=lambda s: (prefer.index(s) if s in prefer else len(prefer), s))


def window(
    queries: Queries,
    node_id: int,
    timeline: Timeline,
    after_us: int | None,
    until_us: int | None,
    limit: int | None,
    newest_first: bool,
    snap: bool,
) -> Window:
    """The intervals of the first timeline kind and source with data in the range."""
    for kind in timeline.kinds:
        for source in timeline_sources(queries, kind, timeline.prefer):
            if snap and after_us is not None and until_us is not None:
                base = _matching_intervals(queries, node_id, source, after_us, until_us)
            else:
                base = queries.intervals(
                    node_id, [source], after_us, until_us, limit=limit, newest_first=newest_first
                )
            if base:
                spans = tuple(
                    Span(i.start_us, i.end_us, i.duration_us, i.flags)
                    for i in sorted(base, key=lambda i: i.end_us)
                )
                return Window(timeline, source, spans, after_us, until_us)
    return Window(timeline, "", (), after_us, until_us)


def timeline_kind(
    queries: Queries,
    node_id: int,
    timeline: Timeline,
    after_us: int | None,
    until_us: int | None,
) -> tuple[str, str] | None:
    """The kind and source :func:`window` takes its intervals from in (after_us,
    until_us]: the first of the timeline's kinds and sources with one ending there."""
    low = -(1 << 62) if after_us is None else after_us
    high = 1 << 62 if until_us is None else until_us
    for kind in timeline.kinds:
        for source in timeline_sources(queries, kind, timeline.prefer):
            if queries.any_interval(node_id, source, low, high):
                return kind, source
    return None


def _matching_intervals(
    queries: Queries, node_id: int, source: str, start_us: int, end_us: int
) -> list[IntervalInfo]:
    span = end_us - start_us
    candidates = queries.intervals(node_id, [source], start_us, end_us + span)
    return [
        i
        for i in candidates
        if 2 * (min(i.end_us, end_us) - max(i.start_us, start_us)) >= (i.end_us - i.start_us)
    ]


def slots(queries: Queries, node_id: int, window: Window, kinds: Sequence[str]) -> list[Slot]:
    """One slot per interval (or span) of the window, newest first, each holding the rows
    of every kind whose interval overlaps it most; of the window's own source, only the
    frames, each in its own slot, and its intervals in the window's range (another overlaps
    one of them only where a recording was merged with itself shifted or at another length,
    and is not the range's)."""
    frames = window.spans
    sliced: list[dict[str, dict[str, KindSlice]]] = [{} for _ in frames]
    wanted = dict.fromkeys([*window.timeline.kinds, *kinds])
    fields = dict(window.timeline.fields)  # the kinds whose slots carry only these
    one_source = dict(window.timeline.one_source)  # and those whose slots carry one source
    # a source's intervals and the frame each is placed in, the same for each of its kinds
    placements: dict[str, tuple[dict[int, int], dict[int, IntervalInfo]]] = {}
    for kind in wanted:
        layout = queries.layout(kind)
        if kind in fields:
            layout = layout.only(fields[kind])
        columns, roles = layout.columns, layout.roles
        prefer = one_source.get(kind)
        sources = queries.sources_of(kind)
        taken: set[int] | None = None  # the frames a source before has rows of the kind in
        if prefer is not None:
            sources, taken = timeline_sources(queries, kind, prefer), set()
        for source in sources:
            if source not in placements:
                placements[source] = _place(queries, node_id, window, source)
            placed, infos = placements[source]
            if not placed:
                continue
            ids = list(infos) if taken is None else [i for i in infos if placed[i] not in taken]
            stored_rows = queries.raw_rows(kind, ids, columns)
            # each entity's key and attributes, looked up once (the same few every slot)
            entities = {e: queries.entity(e) for e in dict.fromkeys(map(_ENTITY_ID, stored_rows))}
            parts = _by_frame(stored_rows, placed, infos)
            for index, part in parts.items():
                sliced[index].setdefault(kind, {})[source] = _slice(
                    source, part, columns, infos, entities, roles
                )
            if taken is not None:
                taken.update(parts)
    out = [
        Slot(frame.start_us, frame.end_us, frame.duration_us, frame.flags, data)
        for frame, data in zip(frames, sliced, strict=True)
    ]
    out.reverse()
    return out


def _place(
    queries: Queries, node_id: int, window: Window, source: str
) -> tuple[dict[int, int], dict[int, IntervalInfo]]:
    """The source's intervals placed in the window's frames: the index of each one's frame,
    and the intervals, by id."""
    frames = window.spans
    ends = [f.end_us for f in frames]
    framed = {end: index for index, end in enumerate(ends)}
    lo = min(f.start_us for f in frames)
    # a margin of one frame catches intervals that end just past the range
    margin = max(f.end_us - f.start_us for f in frames)
    found = queries.intervals(node_id, [source], lo, max(ends) + margin, newest_first=False)
    placed: dict[int, int] = {}  # interval id -> frame index
    for info in found:
        index = None
        if source == window.source:
            if not _own(window, framed, info.end_us):
                continue  # the frames' own source: only the frames or the range's
            # a frame is its own slot, though it lies inside another frame (merged
            # recordings of two lengths: the tie would go to the later one)
            index = framed.get(info.end_us)
        if index is None:
            index = _best_frame(frames, ends, info)
        if index is not None:
            placed[info.id] = index
    return placed, {i.id: i for i in found if i.id in placed}


_INTERVAL_ID = operator.itemgetter(0)  # of a stored row (reading.ROW_META)
_ENTITY_ID = operator.itemgetter(1)


class _FramePart:
    """A kind's stored rows of one source placed in one frame, with the recorded time and
    the flags of the intervals they came from."""

    __slots__ = ("duration_us", "flags", "rows")

    def __init__(self) -> None:
        self.rows: list[RawRow] = []
        self.duration_us = 0
        self.flags = 0


def _by_frame(
    stored_rows: list[RawRow], placed: Mapping[int, int], infos: Mapping[int, IntervalInfo]
) -> dict[int, _FramePart]:
    """The rows (stored by interval: :meth:`Queries.raw_rows`) by the frame their interval
    is placed in."""
    parts: dict[int, _FramePart] = {}
    for interval_id, of_interval in itertools.groupby(stored_rows, _INTERVAL_ID):
        index = placed[interval_id]
        part = parts.get(index)
        if part is None:
            part = parts[index] = _FramePart()
        part.rows.extend(of_interval)
        info = infos[interval_id]
        part.duration_us += info.duration_us
        part.flags |= info.flags
    return parts


def _own(window: Window, framed: Mapping[int, int], end_us: int) -> bool:
    """Whether an interval of the window's source ending at ``end_us`` is the window's: a
    frame (a drill's snapped interval may end just past the range), or one ending in the
    range (``compare``'s one slot over many)."""
    after, until = window.after_us, window.until_us
    in_range = (after is None or end_us > after) and (until is None or end_us <= until)
    return in_range or end_us in framed


def _best_frame(frames: Sequence[Span], ends: list[int], info: IntervalInfo) -> int | None:
    """The frame the interval overlaps most (ties go to the later frame)."""
    i = bisect.bisect_left(ends, info.end_us)
    best, best_overlap = None, 0
    for j in (i - 1, i, i + 1):
        if 0 <= j < len(frames):
            frame = frames[j]
            overlap = min(frame.end_us, info.end_us) - max(frame.start_us, info.start_us)
            if overlap > best_overlap or (overlap == best_overlap and overlap > 0):
                best, best_overlap = j, overlap
    return best


def _slice(
    source: str,
    part: _FramePart,
    columns: Sequence[str],
    infos: Mapping[int, IntervalInfo],
    entities: Mapping[int, tuple[str, Mapping[str, str]]],
    roles: Mapping[str, Role],
) -> KindSlice:
    """One kind's rows of one source in a slot, an entity's rows merged into one."""
    data: dict[str, EntityData] = {}
    several: dict[str, None] = {}  # entities with more than one row (merged below)
    for row in part.rows:
        key, attrs = entities[row[1]]
        if key in data:
            several[key] = None
        else:
            data[key] = EntityData(
                key, attrs, dict(zip(columns, row[4:], strict=True)), row[2], row[3]
            )
    if several:  # not the rule: several intervals of the source
        by_key: dict[str, list[RawRow]] = {key: [] for key in several}
        for row in part.rows:
            of_key = by_key.get(entities[row[1]][0])
            if of_key is not None:
                of_key.append(row)
        for key, rows in by_key.items():  # one entity's rows made and merged at a time
            data[key] = _merge([_kind_row(r, columns, infos, entities) for r in rows], roles)
            rows.clear()
    return KindSlice(source, part.duration_us, part.flags, data)


def _kind_row(
    row: RawRow,
    columns: Sequence[str],
    infos: Mapping[int, IntervalInfo],
    entities: Mapping[int, tuple[str, Mapping[str, str]]],
) -> KindRow:
    key, attrs = entities[row[1]]
    return KindRow(
        infos[row[0]], key, attrs, dict(zip(columns, row[4:], strict=True)), row[2], row[3]
    )


def _merge(rows: list[KindRow], roles: Mapping[str, Role]) -> EntityData:
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
        if role is Role.GAUGE:
            values[name], values[max_column(name)] = _gauge(rows, name)
        elif role is Role.COUNTER:
            parts = [r.values.get(name) for r in rows]
            present = [p for p in parts if p is not None]
            values[name] = sum(present) if present else None
    return EntityData(rows[-1].key, rows[-1].attrs, values, flags, hf_n)


def _gauge(rows: list[KindRow], name: str) -> tuple[float | None, Value]:
    """A gauge's average weighted by the rows' sample counts, and its maximum."""
    weighted = [(r.values.get(name), r.hf_n) for r in rows]
    known = [(v, n) for v, n in weighted if v is not None and n > 0]
    total_n = sum(n for _, n in known)
    average = sum(v * n for v, n in known) / total_n if total_n else None
    maxima = [r.values.get(max_column(name)) for r in rows]
    present = [m for m in maxima if m is not None]
    return average, max(present) if present else None
