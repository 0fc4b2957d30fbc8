"""Slots of a chosen length (``interval_len_us``): buckets aligned to the local clock.

What a bucket holds: every interval, of every source, whose end lies in the bucket and in the
range asked for, the rule the hourly rollups are kept by (an interval belongs to the hour its
end falls in). The screen's timeline source decides which buckets exist: those where it has
an interval. Within a bucket, per kind, source and entity key:

- counters are summed (integers, exact), flags OR-ed, ``hf_n`` summed;
- a gauge's average is its averages weighted by ``hf_n`` (rows where it is known and
  ``hf_n`` > 0): the products are added one per row in interval-end order within each UTC
  hour and entity (the store's rollup does the same additions), the hours' sums added with
  ``math.fsum`` (exactly rounded, so in any order), then divided by the summed weight; the
  maximum is the maxima's maximum;
- an entity with a single row in the bucket shows that row as recorded;
- attributes are those of the newest row.

Two ways of reading give the same bits: whole UTC hours inside the range that fall into one
bucket (the local offset is a whole number of hours and the same over the hour) come from
the rollups, summed into buckets by SQL (integers only); the rest comes from the raw rows:
the range's partial first and last hours, the hour in which the local offset changes, every
hour when the offset is not whole hours (India's +5:30) or the length is not, and everything
in a database not rolled up yet.
"""

from __future__ import annotations

import math
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from esatui.db import rollup
from esatui.db.records import max_column
from esatui.db.rollup import HOUR_US, hour_end
from esatui.db.schema import wn_column, wsum_column
from esatui.db.slots import EntityData, KindSlice, Slot
from esatui.db.store import IntervalInfo, Store


def bucket_end(end_us: int, length_us: int) -> int:
    """The end of the bucket of ``length_us`` containing ``end_us``, aligned to local time
    (15-minute buckets end at :00, :15 ...; daily ones at local midnight)."""
    offset = utc_offset_us(end_us)
    local = end_us + offset
    return -((-local) // length_us) * length_us - offset


def utc_offset_us(time_us: int) -> int:
    return int(time.localtime(time_us // 1_000_000).tm_gmtoff) * 1_000_000


@dataclass(frozen=True)
class Plan:
    """How a range (after, until] is read: ``runs`` of whole hours from the rollups
    (first and last hour end, the local offset over them), ``raw`` ranges from the rows."""

    runs: tuple[tuple[int, int, int], ...]
    raw: tuple[tuple[int, int], ...]


def plan(after_us: int, until_us: int, length_us: int, rolled: bool) -> Plan:
    if not rolled or length_us % HOUR_US or until_us <= after_us:
        return Plan((), ((after_us, until_us),))
    first = hour_end(after_us) + HOUR_US  # the first hour wholly after ``after_us``
    last = until_us // HOUR_US * HOUR_US
    if first > last:
        return Plan((), ((after_us, until_us),))
    # the offset at each hour boundary; an end in (H - 1 h, H] takes the offset of a second
    # in [H - 1 h, H], so an hour is whole in one bucket if both ends agree (offsets change
    # at most once an hour) and the offset is whole hours
    offsets = hourly_offsets(first - HOUR_US, last)
    runs: list[list[int]] = []
    raw: list[tuple[int, int]] = []
    cursor = after_us
    for i, hour in enumerate(range(first, last + 1, HOUR_US)):
        offset = offsets[i + 1]
        if offsets[i] != offset or offset % HOUR_US:
            continue
        if cursor < hour - HOUR_US:
            raw.append((cursor, hour - HOUR_US))
        cursor = hour
        if runs and runs[-1][1] == hour - HOUR_US and runs[-1][2] == offset:
            runs[-1][1] = hour
        else:
            runs.append([hour, hour, offset])
    if cursor < until_us:
        raw.append((cursor, until_us))
    return Plan(tuple((a, b, c) for a, b, c in runs), tuple(raw))


def hourly_offsets(first_us: int, last_us: int) -> list[int]:
    """The local offset at every hour boundary from first to last: looked up a day apart,
    and hour by hour only in a day whose ends differ (a zone changes its offset at most
    once a day)."""
    out: list[int] = []
    day = 24 * HOUR_US
    t = first_us
    before = utc_offset_us(t)
    while t <= last_us:
        step_end = min(t + day, last_us)
        after = utc_offset_us(step_end)
        hours = (step_end - t) // HOUR_US
        if after == before:
            out += [before] * hours
        else:
            out += [utc_offset_us(t + i * HOUR_US) for i in range(hours)]
        if step_end == last_us:
            out.append(after)
            break
        t, before = step_end, after
    return out


class _Acc:
    """One entity (entity id) of one kind and source in one bucket, summed so far."""

    __slots__ = (
        "flags",
        "hf_n",
        "hour",
        "iflags",
        "last_end",
        "mx",
        "n",
        "parts",
        "single",
        "sums",
        "wn",
    )

    def __init__(self, n_counters: int, n_gauges: int) -> None:
        self.n = 0
        self.flags = 0
        self.iflags = 0
        self.hf_n = 0
        self.last_end = 0
        self.sums: list[Any] = [None] * n_counters
        self.wn = [0] * n_gauges
        self.mx: list[Any] = [None] * n_gauges
        self.parts: list[list[Any]] = [[] for _ in range(n_gauges)]
        self.hour = 0  # the hour of the raw rows being added to the parts' last element
        self.single: tuple[Any, ...] | None = None  # the raw row, while it is the only one


def _or_flags(distinct: str | None) -> int:
    flags = 0
    for part in (distinct or "0").split(","):
        flags |= int(part)
    return flags


@dataclass
class _Layout:
    """Where a kind's values are: its raw columns, and which are counters and gauges."""

    columns: list[str]
    roles: Mapping[str, str]
    counters: list[str]
    gauges: list[str]
    counter_at: list[int]  # index in a raw row (interval_id, entity_id, flags, hf_n, *columns)
    gauge_at: list[tuple[int, int]]  # (average, maximum) indexes in a raw row

    @classmethod
    def of(cls, store: Store, kind: str) -> _Layout:
        columns = store.value_columns(kind)
        roles = store.field_roles(kind)
        at = {c: 4 + i for i, c in enumerate(columns)}
        counters = [c for c in columns if roles.get(c) == "counter"]
        gauges = [c for c in columns if roles.get(c) == "gauge" and max_column(c) in at]
        return cls(
            columns,
            roles,
            counters,
            gauges,
            [at[c] for c in counters],
            [(at[g], at[max_column(g)]) for g in gauges],
        )

    @property
    def rollup_columns(self) -> list[str]:
        return [
            *self.counters,
            *(c for g in self.gauges for c in (wsum_column(g), wn_column(g), max_column(g))),
        ]


class _Reader:
    """Reads one node's intervals and rows for bucketed slots, from the rollups where they
    serve and the raw rows elsewhere."""

    def __init__(self, store: Store, node_id: int, length_us: int, rolled: bool) -> None:
        self.store = store
        self.node_id = node_id
        self.length_us = length_us
        self.rolled = rolled
        self._plans: dict[tuple[int, int, bool], Plan] = {}
        self._totals: dict[tuple[str, int, int], tuple[dict[int, list[int]], list[Any]]] = {}
        self._bucket_of: dict[int, int] = {}

    def plan(self, after_us: int, until_us: int, rolled: bool = True) -> Plan:
        key = (after_us, until_us, rolled and self.rolled)
        found = self._plans.get(key)
        if found is None:
            found = self._plans[key] = plan(after_us, until_us, self.length_us, key[2])
        return found

    def bucket(self, end_us: int) -> int:
        found = self._bucket_of.get(end_us)
        if found is None:
            found = self._bucket_of[end_us] = bucket_end(end_us, self.length_us)
        return found

    def intervals(
        self, source: str, after_us: int, until_us: int, rolled: bool = True
    ) -> tuple[dict[int, list[int]], list[IntervalInfo]]:
        """Per bucket [intervals, duration, flags] of one source in (after, until], and the
        intervals read raw."""
        key = (source, after_us, until_us) if rolled else (source + "\0raw", after_us, until_us)
        found = self._totals.get(key)
        if found is not None:
            return found
        p = self.plan(after_us, until_us, rolled)
        totals: dict[int, list[int]] = {}
        conn = self.store.connection
        for first, last, offset in p.runs:
            for b, n, duration, flags in rollup.interval_buckets(
                conn, self.node_id, source, first, last, offset, self.length_us
            ):
                t = totals.setdefault(b, [0, 0, 0])
                t[0] += n
                t[1] += duration
                t[2] |= _or_flags(flags)
        raw: list[IntervalInfo] = []
        for lo, hi in p.raw:
            infos = self.store.intervals(self.node_id, [source], lo, hi, newest_first=False)
            for info in infos:
                t = totals.setdefault(self.bucket(info.end_us), [0, 0, 0])
                t[0] += 1
                t[1] += info.duration_us
                t[2] |= info.flags
            raw += infos
        self._totals[key] = (totals, raw)
        return totals, raw

    def entities(
        self,
        kind: str,
        source: str,
        after_us: int,
        until_us: int,
        frames: Mapping[int, object],
        layout: _Layout,
    ) -> dict[tuple[int, int], _Acc]:
        """Per (bucket, entity id) the kind's rows of one source in (after, until]."""
        rolled = self.rolled and rollup.rollup_has(
            self.store.connection, kind, layout.rollup_columns
        )
        if rolled:
            try:
                return self._entities(kind, source, after_us, until_us, frames, layout, True)
            except sqlite3.OperationalError:  # a sum beyond 64 bits: Python's integers
                pass
        return self._entities(kind, source, after_us, until_us, frames, layout, False)

    def _entities(
        self,
        kind: str,
        source: str,
        after_us: int,
        until_us: int,
        frames: Mapping[int, object],
        layout: _Layout,
        rolled: bool,
    ) -> dict[tuple[int, int], _Acc]:
        accs: dict[tuple[int, int], _Acc] = {}
        n_c, n_g = len(layout.counters), len(layout.gauges)
        p = self.plan(after_us, until_us, rolled)
        conn = self.store.connection
        for first, last, offset in p.runs:
            params = (self.node_id, source, first, last, offset, self.length_us)
            for row in rollup.kind_buckets(conn, kind, layout.counters, layout.gauges, params):
                if row[0] not in frames:
                    continue
                acc = accs.get((row[0], row[1]))
                if acc is None:
                    acc = accs[(row[0], row[1])] = _Acc(n_c, n_g)
                acc.n += row[2]
                acc.flags |= _or_flags(row[3])
                acc.iflags |= _or_flags(row[4])
                acc.hf_n += row[5]
                acc.last_end = max(acc.last_end, row[6])
                for j in range(n_c):
                    v = row[7 + j]
                    if v is not None:
                        s = acc.sums[j]
                        acc.sums[j] = v if s is None else s + v
                for j in range(n_g):
                    acc.wn[j] += row[7 + n_c + j] or 0
                    m = row[7 + n_c + n_g + j]
                    if m is not None and (acc.mx[j] is None or m > acc.mx[j]):
                        acc.mx[j] = m
            if n_g:
                for row in rollup.gauge_hours(conn, kind, layout.gauges, params):
                    acc = accs.get((row[0], row[1]))
                    if acc is None:
                        continue
                    for j in range(n_g):
                        if row[2 + j] is not None:
                            acc.parts[j].append(row[2 + j])
        _, raw = self.intervals(source, after_us, until_us, rolled)
        if raw:
            self._fold_raw(kind, raw, frames, layout, accs)
        return accs

    def _fold_raw(
        self,
        kind: str,
        raw: list[IntervalInfo],
        frames: Mapping[int, object],
        layout: _Layout,
        accs: dict[tuple[int, int], _Acc],
    ) -> None:
        by_id = {i.id: i for i in raw}
        rows = self.store.raw_rows(kind, list(by_id), layout.columns)
        rows.sort(key=lambda r: by_id[r[0]].end_us)
        n_c, n_g = len(layout.counters), len(layout.gauges)
        counter_at, gauge_at = layout.counter_at, layout.gauge_at
        for row in rows:
            info = by_id[row[0]]
            b = self.bucket(info.end_us)
            if b not in frames:
                continue
            acc = accs.get((b, row[1]))
            if acc is None:
                acc = accs[(b, row[1])] = _Acc(n_c, n_g)
            acc.n += 1
            acc.single = row if acc.n == 1 else None
            acc.flags |= row[2]
            acc.iflags |= info.flags
            hf_n = row[3]
            acc.hf_n += hf_n
            acc.last_end = max(acc.last_end, info.end_us)
            for j, at in enumerate(counter_at):
                v = row[at]
                if v is not None:
                    s = acc.sums[j]
                    acc.sums[j] = v if s is None else s + v
            if not n_g:
                continue
            hour = hour_end(info.end_us)
            if hour != acc.hour:
                acc.hour = hour
                for part in acc.parts:
                    part.append(None)
            for j, (at, max_at) in enumerate(gauge_at):
                v = row[at]
                if v is not None and hf_n > 0:
                    product = v * hf_n
                    parts = acc.parts[j]
                    total = parts[-1]
                    parts[-1] = product if total is None else total + product
                    acc.wn[j] += hf_n
                m = row[max_at]
                if m is not None and (acc.mx[j] is None or m > acc.mx[j]):
                    acc.mx[j] = m


def bucketed_slots(
    store: Store,
    node_id: int,
    timelines: Iterable[tuple[str, Sequence[str]]],
    kinds: Iterable[str],
    after_us: int | None,
    until_us: int | None,
    length_us: int,
    limit: int | None,
    *,
    use_rollups: bool = True,
) -> list[Slot]:
    """Slots, newest first, of the first timeline source with an interval in the range;
    ``timelines`` is (kind, its sources in order of preference)."""
    source = None
    newest: list[IntervalInfo] = []
    timelines = list(timelines)
    timeline_kinds = [kind for kind, _ in timelines]  # all of them are read, not only the one
    for _, sources in timelines:
        for candidate in sources:
            newest = store.intervals(node_id, [candidate], after_us, until_us, limit=1)
            if newest:
                source = candidate
                break
        if source is not None:
            break
    if source is None:
        return []
    top = newest[0].end_us
    if limit is not None:
        floor = bucket_end(top, length_us) - limit * length_us
        after_us = floor if after_us is None else max(after_us, floor)
    lo = after_us
    if lo is None:
        oldest = store.intervals(node_id, [source], None, until_us, limit=1, newest_first=False)
        lo = hour_end(oldest[0].end_us) - HOUR_US
    hi = until_us if until_us is not None else hour_end(top)
    reader = _Reader(store, node_id, length_us, use_rollups and store.rollups_ready())
    frames = {b: t for b, t in reader.intervals(source, lo, hi)[0].items() if t[0]}
    if not frames:
        return []
    first_start = min(frames) - length_us
    last_end = max(frames)
    a = first_start if after_us is None else max(after_us, first_start)
    z = last_end if until_us is None else min(until_us, last_end)

    data: dict[int, dict[str, dict[str, KindSlice]]] = {b: {} for b in frames}
    for kind in dict.fromkeys([*timeline_kinds, *kinds]):
        layout: _Layout | None = None
        for src in store.sources_of(kind):
            if layout is None:
                layout = _Layout.of(store, kind)
            # the timeline source's intervals in the frames are those it was read for
            after, until = (lo, hi) if src == source else (a, z)
            totals, _ = reader.intervals(src, after, until)
            accs = reader.entities(kind, src, after, until, frames, layout)
            for b, rows, iflags in _entity_data(store, kind, src, node_id, layout, accs):
                data[b].setdefault(kind, {})[src] = KindSlice(src, totals[b][1], iflags, rows)
    return [
        Slot(b - length_us, b, frames[b][1], frames[b][2], data[b])
        for b in sorted(frames, reverse=True)
    ]


def _entity_data(
    store: Store,
    kind: str,
    source: str,
    node_id: int,
    layout: _Layout,
    accs: dict[tuple[int, int], _Acc],
) -> Iterable[tuple[int, dict[str, EntityData], int]]:
    """Per bucket: entity key -> EntityData, and the OR of the interval flags."""
    by_bucket: dict[int, dict[str, list[tuple[int, _Acc]]]] = {}
    for b, entity_id in sorted(accs):
        key, _ = store.entity(entity_id)
        by_bucket.setdefault(b, {}).setdefault(key, []).append((entity_id, accs[(b, entity_id)]))
    columns, roles = layout.columns, layout.roles
    gauge_index = {g: j for j, g in enumerate(layout.gauges)}
    counter_index = {c: j for j, c in enumerate(layout.counters)}
    for b, keys in by_bucket.items():
        rows: dict[str, EntityData] = {}
        iflags = 0
        for key, group in keys.items():
            for _, acc in group:
                iflags |= acc.iflags
            if len(group) == 1 and group[0][1].n == 1:
                entity_id, acc = group[0]
                raw = acc.single or store.raw_row_at(
                    kind, node_id, source, acc.last_end, entity_id, columns
                )
                if raw is not None:
                    _, attrs = store.entity(entity_id)
                    rows[key] = EntityData(
                        key, attrs, dict(zip(columns, raw[4:], strict=True)), raw[2], raw[3]
                    )
                    continue
            newest_id = max(group, key=lambda g: g[1].last_end)[0]
            _, attrs = store.entity(newest_id)
            accs_ = [acc for _, acc in group]
            values: dict[str, Any] = {}
            for name in columns:
                role = roles.get(name)
                if role == "gauge" and name in gauge_index:
                    j = gauge_index[name]
                    weight = sum(acc.wn[j] for acc in accs_)
                    parts = [p for acc in accs_ for p in acc.parts[j] if p is not None]
                    values[name] = math.fsum(parts) / weight if weight else None
                    maxima = [acc.mx[j] for acc in accs_ if acc.mx[j] is not None]
                    values[max_column(name)] = max(maxima) if maxima else None
                elif role == "counter":
                    j = counter_index[name]
                    sums = [acc.sums[j] for acc in accs_ if acc.sums[j] is not None]
                    values[name] = sum(sums) if sums else None
            flags = 0
            for acc in accs_:
                flags |= acc.flags
            rows[key] = EntityData(key, attrs, values, flags, sum(acc.hf_n for acc in accs_))
        yield b, rows, iflags
