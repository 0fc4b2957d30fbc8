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

import array
import bisect
import itertools
import operator
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from esatui.collectors.role import Role
from esatui.db.reader import Span, Timeline, Window
from esatui.db.reading import ROW_META, IntervalInfo, KindLayout, Queries, RawRow
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


def range_window(
    queries: Queries,
    node_id: int,
    timeline: Timeline,
    after_us: int | None,
    until_us: int | None,
) -> Window:
    """:func:`window`'s intervals in the range as one span, added up by SQLite."""
    found = timeline_kind(queries, node_id, timeline, after_us, until_us)
    if found is None:
        return Window(timeline, "", (), after_us, until_us)
    _, source = found
    span = queries.interval_span(node_id, source, after_us, until_us)
    return Window(timeline, source, () if span is None else (span,), after_us, until_us)


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
    if len(frames) == 1:
        return [_range_slot(queries, node_id, window, kinds)]
    sliced: list[dict[str, dict[str, KindSlice]]] = [{} for _ in frames]
    # a source's intervals and the frame each is placed in, the same for each of its kinds
    placements: dict[str, tuple[dict[int, int], dict[int, IntervalInfo]]] = {}
    for kind, layout, sources, one_source in _kinds_read(queries, window, kinds):
        taken: set[int] = set()  # the frames a source before has rows of the kind in
        for source in sources:
            if source not in placements:
                placements[source] = _place(queries, node_id, window, source)
            placed, infos = placements[source]
            if not placed:
                continue
            ids = [i for i in infos if placed[i] not in taken] if taken else list(infos)
            stored_rows = queries.raw_rows(kind, ids, layout.columns)
            # each entity's key and attributes, looked up once (the same few every slot)
            entities = {e: queries.entity(e) for e in dict.fromkeys(map(_ENTITY_ID, stored_rows))}
            parts = _by_frame(stored_rows, placed, infos)
            for index, part in parts.items():
                sliced[index].setdefault(kind, {})[source] = _slice(
                    source, part, layout.columns, infos, entities, layout.roles
                )
            if one_source:
                taken.update(parts)
    out = [
        Slot(frame.start_us, frame.end_us, frame.duration_us, frame.flags, data)
        for frame, data in zip(frames, sliced, strict=True)
    ]
    out.reverse()
    return out


def _range_slot(queries: Queries, node_id: int, window: Window, kinds: Sequence[str]) -> Slot:
    """:func:`slots` of a window of one frame (a comparison's range): its rows merged as
    they are read."""
    (frame,) = window.spans
    data: dict[str, dict[str, KindSlice]] = {}
    spanned: dict[str, _Spanned] = {}  # each source's intervals, the same for its kinds
    for kind, layout, sources, one_source in _kinds_read(queries, window, kinds):
        for source in sources:
            if source not in spanned:
                spanned[source] = _spanned(queries, node_id, window, source)
            merged = _merged_slice(queries, kind, source, spanned[source], layout)
            if merged is not None:
                data.setdefault(kind, {})[source] = merged
                if one_source:
                    break
    return Slot(frame.start_us, frame.end_us, frame.duration_us, frame.flags, data)


def _kinds_read(
    queries: Queries, window: Window, kinds: Sequence[str]
) -> Iterator[tuple[str, KindLayout, list[str], bool]]:
    """Each kind the window's slots hold: its layout as read (only the fields the timeline
    names, where it names them), its sources in the order they are read, and whether a slot
    holds one of them (the first with rows there: ``Timeline.one_source``)."""
    fields = dict(window.timeline.fields)
    one_source = dict(window.timeline.one_source)
    for kind in dict.fromkeys([*window.timeline.kinds, *kinds]):
        layout = queries.layout(kind)
        if kind in fields:
            layout = layout.only(fields[kind])
        prefer = one_source.get(kind)
        if prefer is None:
            yield kind, layout, queries.sources_of(kind), False
        else:
            yield kind, layout, timeline_sources(queries, kind, prefer), True


def _place(
    queries: Queries, node_id: int, window: Window, source: str
) -> tuple[dict[int, int], dict[int, IntervalInfo]]:
    """The source's intervals placed in the window's frames: the index of each one's frame,
    and the intervals, by id. Of the window's own source, only the frames and the range's
    intervals, a frame in its own slot, though it lies inside another frame (merged
    recordings of two lengths: the tie would go to the later one); of another, the frame
    each overlaps most."""
    frames = window.spans
    starts = [f.start_us for f in frames]
    ends = [f.end_us for f in frames]
    found = queries.intervals(node_id, [source], *_placing_range(frames), newest_first=False)
    placed: dict[int, int] = {}  # interval id -> frame index
    if source == window.source:
        framed = {end: index for index, end in enumerate(ends)}
        for info in found:
            if _own(window, framed, info.end_us):
                index = framed.get(info.end_us)
                if index is None:
                    index = _best_frame(starts, ends, info.start_us, info.end_us)
                if index is not None:
                    placed[info.id] = index
    else:
        for info in found:
            index = _best_frame(starts, ends, info.start_us, info.end_us)
            if index is not None:
                placed[info.id] = index
    return placed, {i.id: i for i in found if i.id in placed}


def _placing_range(frames: Sequence[Span]) -> tuple[int, int]:
    """The ends (after, until] of the intervals that may be placed in the frames: a margin
    of one frame catches intervals that end just past the range."""
    margin = max(f.end_us - f.start_us for f in frames)
    return min(f.start_us for f in frames), max(f.end_us for f in frames) + margin


class _Spanned:
    """A source's intervals placed in a window of one frame, in the order they end (a source
    has one interval an end), as arrays: a comparison's range may hold a year of them."""

    __slots__ = ("durations", "flags", "ids")

    def __init__(self) -> None:
        self.ids = array.array("q")
        self.durations = array.array("q")
        self.flags = array.array("q")


def _spanned(queries: Queries, node_id: int, window: Window, source: str) -> _Spanned:
    """The source's intervals placed in the window's one frame, as :func:`_place` places
    them (each that overlaps it, as the frame it overlaps most; of the window's own source,
    only the range's and the frame's own), read by SQLite a batch at a time."""
    (frame,) = window.spans
    out = _Spanned()
    if frame.end_us <= frame.start_us:
        return out  # nothing overlaps it
    own = (window.after_us, window.until_us) if source == window.source else None
    _, until = _placing_range(window.spans)
    found = queries.intervals_overlapping(node_id, source, frame.start_us, frame.end_us, until, own)
    for batch in found:
        out.ids.extend(map(_INTERVAL_ID, batch))
        out.durations.extend(map(_DURATION, batch))
        out.flags.extend(map(_FLAGS, batch))
    return out


_DURATION = operator.itemgetter(2)  # of a raw interval (reading.RawInterval)
_FLAGS = operator.itemgetter(3)


_INTERVAL_ID = operator.itemgetter(0)  # of a stored row (reading.ROW_META)
_ENTITY_ID = operator.itemgetter(1)
_STORED_AT = operator.itemgetter(0, 1)  # its place in the table's order


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


def _best_frame(starts: list[int], ends: list[int], start_us: int, end_us: int) -> int | None:
    """The index of the frame (``starts``, ``ends``: theirs, by end) that the interval
    overlaps most; ties go to the later frame. Called for every interval a slot reads."""
    i = bisect.bisect_left(ends, end_us)
    best, best_overlap = None, 0
    for j in range(i - 1 if i else 0, min(i + 2, len(ends))):
        frame_end, frame_start = ends[j], starts[j]
        overlap = (frame_end if frame_end < end_us else end_us) - (
            frame_start if frame_start > start_us else start_us
        )
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
        plan = _MergePlan(columns, roles)
        for key, rows in by_key.items():
            rows.sort(key=lambda r: infos[r[0]].end_us)  # stable: ties keep the stored order
            merging = _Merging(plan)
            merging.add(rows)
            data[key] = merging.entity_data(entities)
    return KindSlice(source, part.duration_us, part.flags, data)


_MERGE_CHUNK = 480  # intervals read at a time for one slot over a range (8 CPUs: ~4,000 rows)


def _merged_slice(
    queries: Queries,
    kind: str,
    source: str,
    spanned: _Spanned,
    layout: KindLayout,
) -> KindSlice | None:
    """What :func:`_slice` makes of the source's intervals in a window's one frame, read a
    chunk of intervals at a time in the order they end and each entity's rows merged as
    they come (a comparison's one slot over a month holds a month of rows: never all at
    once). ``None`` when the intervals have no rows of the kind."""
    plan = _MergePlan(layout.columns, layout.roles)
    merging: dict[str, _Merging] = {}
    entities: dict[int, tuple[str, Mapping[str, str]]] = {}
    duration_us = flags = 0
    for start in range(0, len(spanned.ids), _MERGE_CHUNK):
        stop = start + _MERGE_CHUNK
        chunk = spanned.ids[start:stop]
        rows = queries.raw_rows(kind, chunk, layout.columns)  # by interval id, then entity
        if not rows:
            continue
        with_rows = set(map(_INTERVAL_ID, rows))
        for interval_id, duration, interval_flags in zip(
            chunk, spanned.durations[start:stop], spanned.flags[start:stop], strict=True
        ):
            if interval_id in with_rows:
                duration_us += duration
                flags |= interval_flags
        if list(chunk) != sorted(chunk):  # ids not in the order the intervals end
            position = {interval_id: i for i, interval_id in enumerate(chunk)}
            rows.sort(key=lambda row: position[row[0]])  # stable: by entity within one
        for entity_id in dict.fromkeys(map(_ENTITY_ID, rows)):
            if entity_id not in entities:
                entities[entity_id] = queries.entity(entity_id)
        for key, of_key in _by_key(rows, entities):
            found = merging.get(key)
            if found is None:
                found = merging[key] = _Merging(plan)
            found.add(of_key)
    if not merging:
        return None
    # in the order of each key's first stored row, as a slice of the rows read at once
    made = [m.entity_data(entities) for m in sorted(merging.values(), key=lambda m: m.first)]
    return KindSlice(source, duration_us, flags, {data.key: data for data in made})


def _by_key(
    rows: list[RawRow], entities: Mapping[int, tuple[str, Mapping[str, str]]]
) -> Iterator[tuple[str, list[RawRow]]]:
    """The rows (in the order their intervals end) of each entity key, in that order: an
    entity id's, or those of every entity id with the key (its attributes changed)."""
    keys = {entity_id: entities[entity_id][0] for entity_id in dict.fromkeys(map(_ENTITY_ID, rows))}
    if len(set(keys.values())) == len(keys):  # the rule: a key is one entity id
        for entity_id, of_entity in itertools.groupby(sorted(rows, key=_ENTITY_ID), _ENTITY_ID):
            yield keys[entity_id], list(of_entity)
        return
    by_key = sorted(rows, key=lambda row: keys[row[1]])  # stable: still in end order
    for key, of_key in itertools.groupby(by_key, lambda row: keys[row[1]]):
        yield key, list(of_key)


class _MergePlan:
    """Where a kind's counters, gauges and their maxima are in its stored rows, and the
    order a merged row's values take (as the stored columns, a gauge's maximum beside it)."""

    __slots__ = ("columns", "counters", "gauges", "order")

    def __init__(self, columns: Sequence[str], roles: Mapping[str, Role]) -> None:
        at = {name: len(ROW_META) + i for i, name in enumerate(columns)}
        self.columns = tuple(columns)
        self.counters: list[int] = []
        self.gauges: list[tuple[int, int | None]] = []  # (value, its maximum's, if read)
        self.order: list[tuple[str, Role, int]] = []  # (name, role, its counter or gauge)
        for name in columns:
            role = roles.get(name)
            if role is Role.COUNTER:
                self.order.append((name, role, len(self.counters)))
                self.counters.append(at[name])
            elif role is Role.GAUGE:
                self.order.append((name, role, len(self.gauges)))
                self.gauges.append((at[name], at.get(max_column(name))))


class _Merging:
    """One entity's rows in one slot, merged as they come, in the order their intervals end:
    what one interval as long as them all would have recorded. Counters are summed, gauges
    averaged weighted by their sample counts, with the greatest maximum; the sums are the
    left-to-right sums of the values in that order however the rows are given in pieces
    (``sum`` goes on from the sum so far)."""

    __slots__ = (
        "count",
        "first",
        "flags",
        "hf_n",
        "last",
        "maxima",
        "plan",
        "sums",
        "weighed",
        "weights",
    )

    def __init__(self, plan: _MergePlan) -> None:
        self.plan = plan
        self.count = 0
        self.flags = 0
        self.hf_n = 0
        self.first: tuple[int, int] = (0, 0)  # its first row's place in the table's order
        self.last: RawRow = ()
        self.sums: list[Any] = [None] * len(plan.counters)  # None: no value yet
        self.weighed: list[Any] = [0] * len(plan.gauges)  # sum of value x sample count
        self.weights: list[int] = [0] * len(plan.gauges)
        self.maxima: list[Any] = [None] * len(plan.gauges)

    def add(self, rows: Sequence[RawRow]) -> None:
        """The entity's next rows, in their intervals' end order."""
        first = _STORED_AT(min(rows, key=_STORED_AT))
        if not self.count or first < self.first:
            self.first = first
        self.count += len(rows)
        self.last = rows[-1]
        for row in rows:
            self.flags |= row[2]
        self.hf_n = sum([row[3] for row in rows], self.hf_n)
        sums = self.sums
        for j, at in enumerate(self.plan.counters):
            present = [row[at] for row in rows if row[at] is not None]
            if present:
                total = sums[j]
                sums[j] = sum(present) if total is None else sum(present, total)
        for j, (at, max_at) in enumerate(self.plan.gauges):
            known = [row for row in rows if row[at] is not None and row[3] > 0]
            if known:
                self.weighed[j] = sum([row[at] * row[3] for row in known], self.weighed[j])
                self.weights[j] = sum([row[3] for row in known], self.weights[j])
            if max_at is None:
                continue
            maxima = [row[max_at] for row in rows if row[max_at] is not None]
            if maxima:
                most = self.maxima[j]
                self.maxima[j] = max(maxima) if most is None else max(most, *maxima)

    def entity_data(self, entities: Mapping[int, tuple[str, Mapping[str, str]]]) -> EntityData:
        """The merged row (a single row as stored), with the key and the attributes of its
        last interval's entity (``entities``: each entity id's)."""
        last = self.last
        key, attrs = entities[last[1]]
        if self.count == 1:
            return EntityData(
                key, attrs, dict(zip(self.plan.columns, last[4:], strict=True)), last[2], last[3]
            )
        values: dict[str, Value] = {}
        for name, role, j in self.plan.order:
            if role is Role.COUNTER:
                values[name] = self.sums[j]
            else:
                weights = self.weights[j]
                weighed = self.weighed[j]
                values[name] = weighed / weights if weights else None
                values[max_column(name)] = self.maxima[j]
        return EntityData(key, attrs, values, self.flags, self.hf_n)
