"""Windows and slots of a chosen length (SQLite): buckets aligned to the local clock (where
they end and start, across daylight-saving changes: ``db/calendar.py``).

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
bucket (the local offset is a whole number of hours and the same over the hour) and that
their source has rolled up (up to its mark: every hour but the one it is writing in) come
from the rollups, summed into buckets by SQL (integers only); the rest comes from the raw
rows: the range's partial first and last hours, the hours after the source's mark, the hour
in which the local offset changes, every hour when the offset is not whole hours (India's
+5:30) or the length is not, and everything in a database not rolled up yet. SQL puts rows
into the arithmetic buckets of their piece's one offset; near a daylight-saving change those
are mapped to the calendar's (:meth:`_Reader.fixer`). A bucket of a day read from the hours'
rollups whose day the writer rolled up too (the same start and end: written in this zone)
comes from that day's row (:meth:`_Reader.serve_days`), a row an entity instead of 24; its
gauges' weighted sums still come hour by hour, to be added by ``math.fsum`` as always.
Buckets of 15 minutes are the UTC hours' quarters in every zone (each offset is whole
quarters): whole quarters up to the mark come from the quarters' rollups, a row an entity
per bucket, the rest raw (:func:`quarter_plan`); a quarter's gauge sums are its bucket's
one part, as the raw rows' are.
"""

from __future__ import annotations

import math
import os
import sqlite3
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from esatui.db.calendar import (
    DAY_US,
    bucket_end,
    bucket_starts,
    near_change,
    shifted,
    utc_offset_us,
)
from esatui.db.query import timeline_sources
from esatui.db.reader import Span, Timeline, Window, partial_bucket
from esatui.db.reading import (
    HourRun,
    KindLayout,
    Queries,
    RawInterval,
    RawRow,
    RawRun,
    or_flags,
)
from esatui.db.records import Value, max_column
from esatui.db.schema import HOUR_US, QUARTER_US, hour_end, wn_column, wsum_column
from esatui.db.slots import EntityData, KindSlice, Slot


@dataclass(frozen=True)
class Plan:
    """How a range (after, until] is read: ``runs`` of whole hours from the rollups
    (first and last hour end, the local offset over them), ``raw`` ranges from the rows,
    ``days`` whole local days from the days' rollups (start, end, the offset over them,
    and the day's intervals: count, summed duration, flags)."""

    runs: tuple[tuple[int, int, int], ...]
    raw: tuple[tuple[int, int], ...]
    days: tuple[tuple[int, int, int, int, int, int], ...] = ()
    tier: str = "h"  # the runs' rollups: hours, or quarters ("q")


def quarter_plan(after_us: int, until_us: int, mark_us: int) -> Plan | None:
    """How (after, until] is read into buckets of 15 minutes: the whole quarters up to the
    mark from their rollups (a bucket each), the rest raw; ``None`` where an end's offset
    is not whole quarters (then the rows serve)."""
    if utc_offset_us(after_us) % QUARTER_US or utc_offset_us(until_us) % QUARTER_US:
        return None
    first = -(-(after_us + QUARTER_US) // QUARTER_US) * QUARTER_US
    last = min(until_us, mark_us) // QUARTER_US * QUARTER_US
    if first > last:
        return Plan((), ((after_us, until_us),))
    raw: list[tuple[int, int]] = []
    if first - QUARTER_US > after_us:
        raw.append((after_us, first - QUARTER_US))
    if last < until_us:
        raw.append((last, until_us))
    return Plan(((first, last, 0),), tuple(raw), tier="q")


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


def constant_offsets(
    ranges: Iterable[tuple[int, int]],
) -> Iterable[tuple[int, int, int | None]]:
    """The ranges cut into pieces (lo, hi] of at most a day, on UTC hours, each with the
    local offset every end in it has (``None`` where it changes inside: a zone changes its
    offset at most once a day, so a piece whose two ends agree has one offset throughout).
    The ends compared are lo and hi themselves: a piece starting a microsecond before a
    change holds an end at the change, a calendar boundary that is off the new offset's
    grid, so it is read interval by interval."""
    day = 24 * HOUR_US
    for lo, hi in ranges:
        t = lo
        while t < hi:
            end = min(hour_end(t + day), hi)
            first, last = utc_offset_us(t), utc_offset_us(end)
            yield t, end, first if first == last else None
            t = end


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


@dataclass(slots=True)
class _Acc:
    """One entity (entity id) of one kind and source in one bucket, summed so far."""

    sums: list[int | None]  # per counter
    wn: list[int]  # per gauge: the sample counts its weighted sum weighs
    mx: list[float | None]  # per gauge: the maximum
    parts: list[list[float | None]]  # per gauge: the weighted sum of each UTC hour
    n: int = 0
    flags: int = 0
    iflags: int = 0
    hf_n: int = 0
    last_end: int = 0
    hour: int = 0  # the hour of the raw rows being added to the parts' last element
    single: RawRow | None = field(default=None)  # the raw row, while it is the only one

    @classmethod
    def empty(cls, n_counters: int, n_gauges: int) -> _Acc:
        return cls(
            [None] * n_counters, [0] * n_gauges, [None] * n_gauges, [[] for _ in range(n_gauges)]
        )

    def add_counter(self, j: int, value: int | None) -> None:
        if value is not None:
            s = self.sums[j]
            self.sums[j] = value if s is None else s + value

    def add_max(self, j: int, value: float | None) -> None:
        m = self.mx[j]
        if value is not None and (m is None or value > m):
            self.mx[j] = value


_META = 6  # a row of sums: bucket, entity, rows, HF samples, last end, flagged; the values
_FLAGGED = 5


def _add_summed(accs: dict[tuple[int, int], _Acc], row: Sequence[Any], n_c: int, n_g: int) -> _Acc:
    """The accumulator of a row of sums (raw rows' or an hour's: bucket, entity, rows, HF
    samples, last end, whether any has flags, the counters, ...), with all of that but the
    flags and the gauges' columns added."""
    acc = accs.get((row[0], row[1]))
    if acc is None:  # its first sums are the row's
        acc = accs[(row[0], row[1])] = _Acc(
            list(row[_META : _META + n_c]),
            [0] * n_g,
            [None] * n_g,
            [[] for _ in range(n_g)],
            row[2],
            0,
            0,
            row[3],
            row[4],
        )
        return acc
    acc.n += row[2]
    acc.hf_n += row[3]
    acc.last_end = max(acc.last_end, row[4])
    for j in range(n_c):
        acc.add_counter(j, row[_META + j])
    return acc


def _add_flags(
    accs: dict[tuple[int, int], _Acc], rows: Iterable[tuple[int, int, int, int]]
) -> None:
    """Rows' flags and interval flags (bucket, entity, flags, interval flags) OR-ed into
    the accumulators they belong to."""
    for b, entity_id, flags, iflags in rows:
        acc = accs.get((b, entity_id))
        if acc is not None:
            acc.flags |= flags
            acc.iflags |= iflags


def _add_parts(accs: dict[tuple[int, int], _Acc], rows: Iterable[Sequence[Any]]) -> None:
    """Hours' weighted sums (bucket, entity, *one per gauge) added to the accumulators'
    parts, to be summed with ``math.fsum``."""
    for row in rows:
        found = accs.get((row[0], row[1]))
        if found is not None:
            for j, part in enumerate(row[2:]):
                if part is not None:
                    found.parts[j].append(part)


def _rollup_columns(layout: KindLayout) -> list[str]:
    return [
        *layout.counters,
        *(c for g in layout.gauges for c in (wsum_column(g), wn_column(g), max_column(g))),
    ]


def _fixed(
    rows: Sequence[tuple[Any, ...]], fix: Callable[[int], int] | None
) -> Sequence[tuple[Any, ...]]:
    """Rows whose first column is a bucket end, with it made the calendar's by ``fix``."""
    if fix is None:
        return rows
    return [(fix(row[0]), *row[1:]) for row in rows]


Totals = dict[int, list[int]]  # bucket end -> [intervals, summed duration, flags OR-ed]


class _Reader:
    """Reads one node's intervals and rows for buckets, from the rollups where they serve
    and the raw rows elsewhere."""

    def __init__(self, queries: Queries, node_id: int, length_us: int, rolled: bool) -> None:
        self.queries = queries
        self.node_id = node_id
        self.length_us = length_us
        self.rolled = rolled
        self._plans: dict[tuple[str, int, int, bool], Plan] = {}
        self._marks: dict[str, int | None] = {}
        self._totals: dict[tuple[str, int, int], Totals] = {}
        self._bucket_of: dict[int, int] = {}
        # the raw intervals of a piece (source, after, until), and how many: read whole
        # only where a piece's rows are folded one by one
        self._raw: dict[tuple[str, int, int], list[RawInterval]] = {}
        self._counts: dict[tuple[str, int, int], int] = {}
        self._absent: dict[tuple[str, str, int, int], dict[int, int]] = {}
        self._absent_runs: dict[HourRun, list[tuple[int, str, int]]] = {}

    def plan(self, source: str, after_us: int, until_us: int, rolled: bool = True) -> Plan:
        """How the source's (after, until] is read: the whole hours up to its mark (the
        newest hour it has rolled up, ``db/rollup.py``) that serve from the rollups, the
        rest (the hour it is writing in) raw."""
        key = (source, after_us, until_us, rolled and self.rolled)
        found = self._plans.get(key)
        if found is None:
            found = self._plans[key] = self._plan(source, after_us, until_us, key[3])
        return found

    def _plan(self, source: str, after_us: int, until_us: int, rolled: bool) -> Plan:
        mark = self._mark(source) if rolled else None
        if mark is None or mark <= after_us:
            return plan(after_us, until_us, self.length_us, False)
        if self.length_us == QUARTER_US and self.queries.tiers_kept():
            quarters = quarter_plan(after_us, until_us, mark)
            if quarters is not None:
                return quarters
        if mark >= until_us:
            return self.serve_days(source, plan(after_us, until_us, self.length_us, True))
        head = plan(after_us, mark, self.length_us, True)
        raw = list(head.raw)
        if raw and raw[-1][1] == mark:
            raw[-1] = (raw[-1][0], until_us)
        else:
            raw.append((mark, until_us))
        return self.serve_days(source, Plan(head.runs, tuple(raw)))

    def serve_days(self, source: str, p: Plan) -> Plan:
        """``p`` with the days its runs hold whole that the source's day rollups hold too,
        taken from the runs: buckets of a day whose start and end are those of a day the
        writer rolled up (local midnights at the run's one offset, 24 hours apart)."""
        if self.length_us != DAY_US or not p.runs or not self.queries.tiers_kept():
            return p
        lo, hi = p.runs[0][0] - HOUR_US, p.runs[-1][1]
        found = sorted(self.queries.day_totals(self.node_id, source, lo, hi))
        if not found:
            return p
        runs: list[tuple[int, int, int]] = []
        days: list[tuple[int, int, int, int, int, int]] = []
        for first, last, offset in p.runs:
            cursor = first - HOUR_US  # the hours up to it are placed
            for end, start, n, duration, flags in found:
                whole = cursor <= start and end <= last and end - start == DAY_US
                if not whole or (end + offset) % DAY_US:
                    continue
                if start > cursor:
                    runs.append((cursor + HOUR_US, start, offset))
                days.append((start, end, offset, n, duration, flags))
                cursor = end
            if cursor < last:
                runs.append((cursor + HOUR_US, last, offset))
        return Plan(tuple(runs), p.raw, tuple(days)) if days else p

    def day_runs(self, source: str, p: Plan) -> list[HourRun]:
        """The plan's days as runs of their hours (consecutive days at one offset in one)."""
        runs: list[list[int]] = []
        for start, end, offset, *_ in p.days:
            if runs and runs[-1][1] == start and runs[-1][2] == offset:
                runs[-1][1] = end
            else:
                runs.append([start, end, offset])
        return [
            HourRun(self.node_id, source, start + HOUR_US, end, offset, self.length_us)
            for start, end, offset in runs
        ]

    def _mark(self, source: str) -> int | None:
        if source not in self._marks:
            self._marks[source] = self.queries.rolled_until(self.node_id, source)
        return self._marks[source]

    def bucket(self, end_us: int) -> int:
        found = self._bucket_of.get(end_us)
        if found is None:
            found = self._bucket_of[end_us] = bucket_end(end_us, self.length_us)
        return found

    def fixer(self, after_us: int, until_us: int) -> Callable[[int], int] | None:
        """How a bucket SQL found for ends in (after, until] at their one local offset (the
        arithmetic bucket, :func:`reading._bucket`) becomes the calendar's, where a
        daylight-saving change is near; ``None`` where they are the same. Inside a piece
        of one offset every calendar boundary is an arithmetic one, so each arithmetic
        bucket lies in one calendar bucket: that of its last end in the piece."""
        if not near_change(after_us, until_us, self.length_us):
            return None

        def fix(b: int) -> int:
            return self.bucket(min(b, until_us))

        return fix

    def runs(self, source: str, p: Plan) -> Iterable[HourRun]:
        for first, last, offset in p.runs:
            yield HourRun(self.node_id, source, first, last, offset, self.length_us, p.tier)

    def intervals(self, source: str, after_us: int, until_us: int, rolled: bool = True) -> Totals:
        """Per bucket [intervals, duration, flags] of one source in (after, until]: whole
        hours from the rollups, the raw pieces summed by SQL at their one offset (and
        bucketed one by one where the offset changes inside)."""
        key = (source, after_us, until_us) if rolled else (source + "\0raw", after_us, until_us)
        found = self._totals.get(key)
        if found is not None:
            return found
        p = self.plan(source, after_us, until_us, rolled)
        totals: Totals = {}

        def add(b: int, n: int, duration: int, flags: int) -> None:
            total = totals.get(b)
            if total is None:
                totals[b] = [n, duration, flags]
            else:
                total[0] += n
                total[1] += duration
                total[2] |= flags

        for run in self.runs(source, p):
            fix = self.fixer(run.first - HOUR_US, run.last)
            for b, n, duration, flags in _fixed(self.queries.interval_buckets(run), fix):
                add(b, n, duration, or_flags(flags))
        for _, end, _, n, duration, flags in p.days:
            add(end, n, duration, flags)
        for lo, hi, offset in constant_offsets(p.raw):
            if offset is None:  # bucket_end looked up per end
                for _, end_us, duration_us, iflags in self.raw_piece(source, lo, hi):
                    add(self.bucket(end_us), 1, duration_us, iflags)
                continue
            count = 0
            piece = RawRun(self.node_id, source, lo, hi, offset, self.length_us)
            fix = self.fixer(lo, hi)
            for b, n, duration, flags in _fixed(self.queries.raw_interval_buckets(piece), fix):
                add(b, n, duration, or_flags(flags))
                count += n
            self._counts[(source, lo, hi)] = count
        self._totals[key] = totals
        return totals

    def absent(self, kind: str, source: str, after_us: int, until_us: int) -> dict[int, int]:
        """Per bucket, the summed duration of the source's intervals in (after, until] that
        carried none of the kind's rows: the kind's time in a bucket is the source's less
        that (a monitor whose storage domain was enabled mid-hour has no encrypted paging
        before). Whole hours, quarters and days from the rollups that keep it (none in a
        database rolled up by an esatui before them, until a writer rolls it up afresh),
        the raw pieces by SQL, as :meth:`intervals` reads the source's intervals."""
        key = (kind, source, after_us, until_us)
        found = self._absent.get(key)
        if found is not None:
            return found
        p = self.plan(source, after_us, until_us)
        absent: dict[int, int] = {}
        if (p.runs or p.days) and self.queries.absences_kept():
            parts = self._rolled_absences(kind, source, p)
        else:
            parts = []
        for lo, hi, offset in constant_offsets(p.raw):
            if offset is None:  # bucket_end looked up per end
                found_raw = self.queries.raw_absences(kind, self.node_id, source, lo, hi)
                parts += [(self.bucket(end_us), duration) for end_us, duration in found_raw]
                continue
            piece = RawRun(self.node_id, source, lo, hi, offset, self.length_us)
            parts += _fixed(self.queries.raw_absent_buckets(kind, piece), self.fixer(lo, hi))
        for b, duration in parts:
            absent[b] = absent.get(b, 0) + duration
        self._absent[key] = absent
        return absent

    def _rolled_absences(self, kind: str, source: str, p: Plan) -> list[tuple[int, int]]:
        """(bucket, duration) of the kind's absences in the plan's runs and days."""
        parts: list[tuple[int, int]] = []
        for run in self.runs(source, p):
            rows = self._absent_runs.get(run)
            if rows is None:  # every kind's at once: read again for the next kind
                rows = self._absent_runs[run] = self.queries.absent_buckets(run)
            fix = self.fixer(run.first - HOUR_US, run.last)
            parts += [(b, duration) for b, of, duration in _fixed(rows, fix) if of == kind]
        if p.days:
            served = {end for _, end, *_ in p.days}
            days = self.queries.day_absences(self.node_id, source, p.days[0][0], p.days[-1][1])
            parts += [(end, d) for end, of, d in days if of == kind and end in served]
        return parts

    def raw_piece(self, source: str, after_us: int, until_us: int) -> list[RawInterval]:
        """The source's intervals ending in (after, until], oldest first (id, end,
        duration, flags)."""
        key = (source, after_us, until_us)
        found = self._raw.get(key)
        if found is None:
            found = self._raw[key] = self.queries.raw_intervals(
                self.node_id, source, after_us, until_us
            )
            self._counts[key] = len(found)
        return found

    def piece_count(self, source: str, after_us: int, until_us: int) -> int:
        """How many of the source's intervals end in the piece (after, until]."""
        found = self._counts.get((source, after_us, until_us))
        return len(self.raw_piece(source, after_us, until_us)) if found is None else found

    def entities(
        self,
        kind: str,
        source: str,
        after_us: int,
        until_us: int,
        frames: Mapping[int, object],
        layout: KindLayout,
    ) -> dict[tuple[int, int], _Acc]:
        """Per (bucket, entity id) the kind's rows of one source in (after, until]."""
        if self.rolled and self._rolled_up(kind, layout):
            try:
                return self._entities(kind, source, after_us, until_us, frames, layout, True)
            except sqlite3.OperationalError:  # a sum beyond 64 bits: Python's integers
                pass
        return self._entities(kind, source, after_us, until_us, frames, layout, False)

    def _rolled_up(self, kind: str, layout: KindLayout) -> bool:
        """Whether the kind's rollups hold the layout's columns (those of quarters too,
        where buckets of 15 minutes read them)."""
        columns = _rollup_columns(layout)
        if not self.queries.rollup_has(kind, columns):
            return False
        quarters = self.length_us == QUARTER_US and self.queries.tiers_kept()
        return not quarters or self.queries.rollup_has(kind, columns, "q")

    def _entities(
        self,
        kind: str,
        source: str,
        after_us: int,
        until_us: int,
        frames: Mapping[int, object],
        layout: KindLayout,
        rolled: bool,
    ) -> dict[tuple[int, int], _Acc]:
        accs: dict[tuple[int, int], _Acc] = {}
        p = self.plan(source, after_us, until_us, rolled)
        for run in self.runs(source, p):
            self._fold_hours(kind, run, frames, layout, accs)
        if p.days:
            self._fold_days(kind, source, p, frames, layout, accs)
        self.intervals(source, after_us, until_us, rolled)  # the pieces' intervals counted
        for lo, hi, offset in constant_offsets(p.raw):
            count = self.piece_count(source, lo, hi)
            if not count:
                continue
            piece = RawRun(self.node_id, source, lo, hi, offset or 0, self.length_us)
            # buckets of one or two intervals mostly show a row as recorded (_single): read
            # whole, those rows are at hand
            few = count * self.length_us < 3 * (hi - lo)
            summed = not few and offset is not None
            if not summed or not self._fold_raw_sql(kind, piece, frames, layout, accs):
                self._fold_raw(kind, self.raw_piece(source, lo, hi), frames, layout, accs)
        return accs

    def _fold_hours(
        self,
        kind: str,
        run: HourRun,
        frames: Mapping[int, object],
        layout: KindLayout,
        accs: dict[tuple[int, int], _Acc],
    ) -> None:
        """The run's rollup sums per bucket and entity (see :meth:`Queries.kind_buckets`),
        their flags where some have any, and the gauges' weighted sums hour by hour."""
        counters, gauges = layout.counters, layout.gauges
        n_c, n_g = len(counters), len(gauges)
        fix = self.fixer(run.first - HOUR_US, run.last)
        flagged = False
        for row in _fixed(self.queries.kind_buckets(kind, counters, gauges, run), fix):
            if row[0] in frames:
                acc = _add_summed(accs, row, n_c, n_g)
                for j in range(n_g):
                    acc.wn[j] += row[_META + n_c + j] or 0
                    acc.add_max(j, row[_META + n_c + n_g + j])
                flagged = flagged or bool(row[_FLAGGED])
        if flagged:
            _add_flags(accs, _fixed(self.queries.kind_flags(kind, run), fix))
        if gauges:
            _add_parts(accs, _fixed(self.queries.gauge_hours(kind, gauges, run), fix))

    def _fold_days(
        self,
        kind: str,
        source: str,
        p: Plan,
        frames: Mapping[int, object],
        layout: KindLayout,
        accs: dict[tuple[int, int], _Acc],
    ) -> None:
        """The plan's days from their rollup rows (as :meth:`_fold_hours` adds an hour's
        sums), their flags and the gauges' weighted sums from the days' hours."""
        runs = self.day_runs(source, p)
        if not self.queries.rollup_has(kind, _rollup_columns(layout), "d"):
            for run in runs:  # a kind's day table not made yet: the hours
                self._fold_hours(kind, run, frames, layout, accs)
            return
        counters, gauges = layout.counters, layout.gauges
        n_c, n_g = len(counters), len(gauges)
        served = {end for _, end, *_ in p.days}
        rows = self.queries.day_rows(
            kind, counters, gauges, self.node_id, source, p.days[0][0], p.days[-1][1]
        )
        flagged = False
        for row in rows:
            if row[0] in served and row[0] in frames:
                acc = _add_summed(accs, row, n_c, n_g)
                for j in range(n_g):
                    acc.wn[j] += row[_META + n_c + j] or 0
                    acc.add_max(j, row[_META + n_c + n_g + j])
                flagged = flagged or bool(row[_FLAGGED])
        for run in runs:  # a day's hours at its one offset: their buckets are the day's
            if flagged:
                _add_flags(accs, self.queries.kind_flags(kind, run))
            if gauges:
                _add_parts(accs, self.queries.gauge_hours(kind, gauges, run))

    def _fold_raw_sql(
        self,
        kind: str,
        run: RawRun,
        frames: Mapping[int, object],
        layout: KindLayout,
        accs: dict[tuple[int, int], _Acc],
    ) -> bool:
        """:meth:`_fold_raw` with the integers summed by SQL (exact) and only the rows that
        weigh in a gauge's average read into Python, added as :meth:`_fold_raw` adds them.
        ``False``, with nothing folded, when a sum is beyond 64 bits."""
        counters, gauges = layout.counters, layout.gauges
        fix = self.fixer(run.after_us, run.until_us)
        try:
            sums = _fixed(self.queries.raw_buckets(kind, counters, gauges, run), fix)
        except sqlite3.OperationalError:
            return False
        n_c, n_g = len(counters), len(gauges)
        # whether a row or its interval has flags (in the same statement as the sums: a
        # recorder's write between two reads cannot part them): then the flags are read
        flagged = False
        for row in sums:
            if row[0] not in frames:
                continue
            acc = _add_summed(accs, row, n_c, n_g)
            acc.single = None  # a bucket's only row is read again by _single
            for j in range(n_g):
                acc.add_max(j, row[_META + n_c + j])
            flagged = flagged or bool(row[_FLAGGED])
        if flagged:
            _add_flags(accs, _fixed(self.queries.raw_flags(kind, run), fix))
        if gauges:
            self._fold_gauges(kind, gauges, run, accs, fix)
        return True

    def _fold_gauges(
        self,
        kind: str,
        gauges: Sequence[str],
        run: RawRun,
        accs: dict[tuple[int, int], _Acc],
        fix: Callable[[int], int] | None,
    ) -> None:
        """The gauges' weighted sums of the run's raw rows, added as :meth:`_fold_raw` adds
        them: the products (SQL's, as the rollups' are) in interval-end order within each UTC
        hour."""
        rows = _fixed(self.queries.raw_gauges(kind, gauges, run), fix)
        for b, hour, entity_id, hf_n, *products in rows:
            found = accs.get((b, entity_id))
            if found is None:
                continue  # a bucket not in the window
            if hour != found.hour:
                found.hour = hour
                for part in found.parts:
                    part.append(None)
            for j, product in enumerate(products):
                if product is not None:
                    parts = found.parts[j]
                    total = parts[-1]
                    parts[-1] = product if total is None else total + product
                    found.wn[j] += hf_n

    def _fold_raw(
        self,
        kind: str,
        raw: list[RawInterval],
        frames: Mapping[int, object],
        layout: KindLayout,
        accs: dict[tuple[int, int], _Acc],
    ) -> None:
        by_id = {i[0]: i for i in raw}
        rows = self.queries.raw_rows(kind, list(by_id), layout.columns)
        rows.sort(key=lambda r: by_id[r[0]][1])
        counters, gauges = layout.counters, layout.gauges
        counter_at = [layout.at(c) for c in counters]
        gauge_at = [(layout.at(g), layout.at(max_column(g))) for g in gauges]
        for row in rows:
            _, end_us, _, iflags = by_id[row[0]]
            b = self.bucket(end_us)
            if b not in frames:
                continue
            acc = accs.get((b, row[1]))
            if acc is None:
                acc = accs[(b, row[1])] = _Acc.empty(len(counters), len(gauges))
            acc.n += 1
            acc.single = row if acc.n == 1 else None
            acc.flags |= row[2]
            acc.iflags |= iflags
            hf_n = row[3]
            acc.hf_n += hf_n
            acc.last_end = max(acc.last_end, end_us)
            for j, at in enumerate(counter_at):
                acc.add_counter(j, row[at])
            if not gauges:
                continue
            hour = hour_end(end_us)
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
                acc.add_max(j, row[max_at])


def window(
    queries: Queries,
    node_id: int,
    timeline: Timeline,
    after_us: int | None,
    until_us: int | None,
    limit: int | None,
    newest_first: bool,
    snap: bool,
    *,
    use_rollups: bool = True,
) -> Window:
    """The buckets in (after, until] where the first timeline source with an interval in
    the range has one; with ``limit``, that many buckets' worth of time from the newest (or
    the oldest) of them. The window's range is what every source's intervals must end in."""
    length_us = timeline.length_us
    assert length_us is not None
    if snap:
        limit = None
    source, edge = _timeline_source(queries, node_id, timeline, after_us, until_us, newest_first)
    if source is None:
        return Window(timeline, "", (), after_us, until_us)
    top = edge if newest_first else None
    if limit is not None:
        if newest_first:
            floor = shifted(bucket_end(edge, length_us), -limit, length_us)
            after_us = floor if after_us is None else max(after_us, floor)
        else:
            ceiling = shifted(bucket_end(edge, length_us), limit - 1, length_us)
            until_us = ceiling if until_us is None else min(until_us, ceiling)
    lo = after_us
    if lo is None:
        oldest = edge if not newest_first else _oldest(queries, node_id, source, until_us)
        lo = hour_end(oldest) - HOUR_US
    if until_us is not None:
        hi = until_us
    else:
        newest = top if top is not None else _newest(queries, node_id, source)
        hi = hour_end(newest)
    reader = _Reader(queries, node_id, length_us, use_rollups and queries.rollups_ready())
    frames = {b: t for b, t in reader.intervals(source, lo, hi).items() if t[0]}
    if not frames:
        return Window(timeline, "", (), after_us, until_us)
    ends = sorted(frames)
    starts = bucket_starts(ends, length_us)  # a bucket's real length: 23 h on a change day
    spans = tuple(
        Span(a, b, frames[b][1], frames[b][2], partial_bucket(b - a, frames[b][1], frames[b][0]))
        for a, b in zip(starts, ends, strict=True)
    )
    first_start, last_end = starts[0], ends[-1]
    return Window(
        timeline,
        source,
        spans,
        first_start if after_us is None else max(after_us, first_start),
        last_end if until_us is None else min(until_us, last_end),
        _Found(reader, lo, hi),
    )


@dataclass(frozen=True)
class _Found:
    """How a window's buckets were found: the reader (its intervals cached) and the range
    the timeline source's intervals were read in."""

    reader: _Reader
    lo: int
    hi: int


def _timeline_source(
    queries: Queries,
    node_id: int,
    timeline: Timeline,
    after_us: int | None,
    until_us: int | None,
    newest_first: bool,
) -> tuple[str | None, int]:
    """The first timeline source with an interval in the range, and that interval's end
    (the newest, or the oldest)."""
    for kind in timeline.kinds:
        for candidate in timeline_sources(queries, kind, timeline.prefer):
            found = queries.intervals(
                node_id, [candidate], after_us, until_us, limit=1, newest_first=newest_first
            )
            if found:
                return candidate, found[0].end_us
    return None, 0


def _oldest(queries: Queries, node_id: int, source: str, until_us: int | None) -> int:
    return queries.intervals(node_id, [source], None, until_us, limit=1, newest_first=False)[
        0
    ].end_us


def _newest(queries: Queries, node_id: int, source: str) -> int:
    return queries.intervals(node_id, [source], None, None, limit=1)[0].end_us


def slots(
    queries: Queries,
    node_id: int,
    window: Window,
    kinds: Sequence[str],
    *,
    use_rollups: bool = True,
    keep: bool = False,
) -> list[Slot]:
    """The window's buckets, newest first, with every source's intervals that end in them
    and in the window's range. ``use_rollups=False`` reads the raw rows only (the same
    result, slower: for tests). ``keep``: buckets read before on this connection are not
    read again (:class:`_Kept`)."""
    length_us = window.timeline.length_us
    assert length_us is not None and window.after_us is not None and window.until_us is not None
    frames = {s.end_us: s for s in window.spans}
    a, z = window.after_us, window.until_us
    rolled = use_rollups and queries.rollups_ready()
    found = window.backend if isinstance(window.backend, _Found) else None
    if found is None or found.reader.rolled != rolled:
        found = _Found(_Reader(queries, node_id, length_us, rolled), a, z)
    reader = found.reader
    kept = _kept(queries) if keep else None
    data: dict[int, dict[str, dict[str, KindSlice]]] = {b: {} for b in frames}
    fields = dict(window.timeline.fields)
    for kind in dict.fromkeys([*window.timeline.kinds, *kinds]):
        layout: KindLayout | None = None
        for src in queries.sources_of(kind):
            if layout is None:
                layout = queries.layout(kind)
                if kind in fields:
                    layout = layout.only(fields[kind])
            # the timeline source's intervals in the buckets are those they were found by
            after, until = (found.lo, found.hi) if src == window.source else (a, z)
            what = (node_id, kind, src, length_us, fields.get(kind), rolled)
            known = kept.found(what, frames, after, until) if kept is not None else {}
            read: dict[int, KindSlice | None] = {}
            for run in _unknown_runs(frames, known):
                wanted: Mapping[int, Span] = frames
                lo, hi = after, until
                if known:  # only the range of these buckets not known
                    lo, hi = max(after, frames[run[0]].start_us), min(until, run[-1])
                    wanted = {b: frames[b] for b in run}
                totals = reader.intervals(src, lo, hi)
                absent = reader.absent(kind, src, lo, hi)
                accs = reader.entities(kind, src, lo, hi, wanted, layout)
                part: dict[int, KindSlice | None] = dict.fromkeys(run, None)
                for b, rows, iflags in _entity_data(queries, kind, src, node_id, layout, accs):
                    # the kind's own time: its source's intervals that carried its rows
                    part[b] = KindSlice(src, totals[b][1] - absent.get(b, 0), iflags, rows)
                if kept is not None:
                    kept.add(what, frames, part, lo, hi)
                read.update(part)
            known.update(read)
            for b, sliced in known.items():
                if sliced is not None:
                    data[b].setdefault(kind, {})[src] = sliced
    return [
        Slot(f.start_us, b, f.duration_us, f.flags, data[b], f.partial)
        for b, f in sorted(frames.items(), reverse=True)
    ]


def _unknown_runs(frames: Iterable[int], known: Mapping[int, object]) -> list[list[int]]:
    """The buckets not known, oldest first, cut where a known one lies between: each run
    is read over its own range (the edges of a window moved within a bucket, say, are two
    short runs, not the whole window again)."""
    runs: list[list[int]] = []
    current: list[int] = []
    for b in frames:
        if b in known:
            if current:
                runs.append(current)
                current = []
        else:
            current.append(b)
    if current:
        runs.append(current)
    return runs


class _Kept:
    """Buckets already read on one connection, per node, kind, source, length, fields and
    bucket end: a bucket wholly inside the range it was read in holds the same whatever
    range it is read in, so moving along a timeline or back to a length read before reads
    only the buckets it has not seen. Emptied when another connection has written (a
    recorder's new interval, retention) or the local time zone changed."""

    LIMIT = 50_000  # entity rows kept (about 650 bytes each; a screenful of ESASSUM is 1,000)

    def __init__(self) -> None:
        self.slices: dict[tuple[object, ...], KindSlice | None] = {}
        self.rows = 0  # entity rows in the slices
        self.version: tuple[object, ...] = ()

    def found(
        self, what: tuple[object, ...], frames: Mapping[int, Span], after: int, until: int
    ) -> dict[int, KindSlice | None]:
        """The buckets of ``frames`` known, of those wholly inside (after, until]."""
        out: dict[int, KindSlice | None] = {}
        for b, span in frames.items():
            key = (*what, b)
            if span.start_us >= after and b <= until and key in self.slices:
                out[b] = self.slices[key]
        return out

    def add(
        self,
        what: tuple[object, ...],
        frames: Mapping[int, Span],
        read: Mapping[int, KindSlice | None],
        after: int,
        until: int,
    ) -> None:
        """Keeps the buckets read in (after, until] that lie wholly inside it."""
        for b, part in read.items():
            key = (*what, b)
            if frames[b].start_us >= after and b <= until and key not in self.slices:
                self.slices[key] = part
                self.rows += _rows(part)
        while self.rows > self.LIMIT and self.slices:
            self.rows -= _rows(self.slices.pop(next(iter(self.slices))))  # the oldest first

    def clear(self) -> None:
        self.slices.clear()
        self.rows = 0


def _rows(part: KindSlice | None) -> int:
    return 1 if part is None else 1 + len(part.rows)


_KEPT: weakref.WeakKeyDictionary[Queries, _Kept] = weakref.WeakKeyDictionary()


def _kept(queries: Queries) -> _Kept:
    """The connection's kept buckets, emptied if they may be stale."""
    kept = _KEPT.get(queries)
    if kept is None:
        kept = _KEPT[queries] = _Kept()
    # the zone by name too: zones alike in offsets and names differ in their changes
    version = (
        queries.data_version(),
        os.environ.get("TZ"),
        time.timezone,
        time.altzone,
        time.tzname,
    )
    if version != kept.version:
        kept.clear()
        kept.version = version
    return kept


def _entity_data(
    queries: Queries,
    kind: str,
    source: str,
    node_id: int,
    layout: KindLayout,
    accs: dict[tuple[int, int], _Acc],
) -> Iterable[tuple[int, dict[str, EntityData], int]]:
    """Per bucket: entity key -> EntityData, and the OR of the interval flags."""
    # looked up once per entity id
    entities = {e: queries.entity(e) for e in dict.fromkeys(e for _, e in accs)}
    values_of = _values_maker(layout)
    if len({key for key, _ in entities.values()}) == len(entities):
        # one entity id per key (attributes unchanged): every bucket's rows are its own
        yield from _one_id_each(queries, kind, source, node_id, layout, accs, entities, values_of)
        return
    by_bucket: dict[int, dict[str, list[tuple[int, _Acc]]]] = {}
    for b, entity_id in sorted(accs):
        acc = accs[(b, entity_id)]
        key = entities[entity_id][0]
        keys = by_bucket.get(b)
        if keys is None:
            keys = by_bucket[b] = {}
        group = keys.get(key)
        if group is None:
            keys[key] = [(entity_id, acc)]
        else:
            group.append((entity_id, acc))
    for b, keys in by_bucket.items():
        rows: dict[str, EntityData] = {}
        iflags = 0
        for key, group in keys.items():
            if len(group) == 1:
                entity_id, acc = group[0]
                iflags |= acc.iflags
                if acc.n != 1:  # the common case: one entity id, rows added up
                    attrs = entities[entity_id][1]
                    rows[key] = EntityData(key, attrs, values_of(acc), acc.flags, acc.hf_n)
                    continue
            else:
                for _, acc in group:
                    iflags |= acc.iflags
            single = _single(queries, kind, source, node_id, layout, group)
            rows[key] = single or _summed(queries, key, layout, group)
        yield b, rows, iflags


def _one_id_each(
    queries: Queries,
    kind: str,
    source: str,
    node_id: int,
    layout: KindLayout,
    accs: dict[tuple[int, int], _Acc],
    entities: Mapping[int, tuple[str, dict[str, str]]],
    values_of: Callable[[_Acc], dict[str, Value]],
) -> Iterable[tuple[int, dict[str, EntityData], int]]:
    """:func:`_entity_data` where no two entity ids share a key, bucket by bucket."""
    rows: dict[str, EntityData] = {}
    iflags = 0
    current: int | None = None
    for b, entity_id in sorted(accs):
        if b != current:
            if current is not None:
                yield current, rows, iflags
            rows, iflags, current = {}, 0, b
        acc = accs[(b, entity_id)]
        key, attrs = entities[entity_id]
        iflags |= acc.iflags
        if acc.n != 1:  # the common case: rows added up
            rows[key] = EntityData(key, attrs, values_of(acc), acc.flags, acc.hf_n)
            continue
        group = [(entity_id, acc)]
        rows[key] = _single(queries, kind, source, node_id, layout, group) or _summed(
            queries, key, layout, group
        )
    if current is not None:
        yield current, rows, iflags


def _values_maker(layout: KindLayout) -> Callable[[_Acc], dict[str, Value]]:
    """The values of an entity with one entity id in a bucket, as one function per layout:
    a counter's sum; a gauge's weighted average (its hours' parts added with ``fsum``),
    then its maximum; in column order."""
    if not layout.gauges:  # the counters, in column order
        counters = layout.counters
        return lambda acc: dict(zip(counters, acc.sums, strict=True))
    names: list[str] = []
    at: list[int] = []  # in [*sums, *averages, *maxima]
    n_c, n_g = len(layout.counters), len(layout.gauges)
    for name, gauge, j in layout.summed:
        if gauge:
            names += [name, max_column(name)]
            at += [n_c + j, n_c + n_g + j]
        else:
            names.append(name)
            at.append(j)

    def values(acc: _Acc) -> dict[str, Value]:
        averages: list[Value] = [
            math.fsum([p for p in parts if p is not None]) / weight if weight else None
            for parts, weight in zip(acc.parts, acc.wn, strict=True)
        ]
        flat: list[Value] = [*acc.sums, *averages, *acc.mx]
        return {name: flat[i] for name, i in zip(names, at, strict=True)}

    return values


def _single(
    queries: Queries,
    kind: str,
    source: str,
    node_id: int,
    layout: KindLayout,
    group: list[tuple[int, _Acc]],
) -> EntityData | None:
    """An entity with a single row in the bucket: that row as recorded."""
    if len(group) != 1 or group[0][1].n != 1:
        return None
    entity_id, acc = group[0]
    raw = acc.single or queries.raw_row_at(
        kind, node_id, source, acc.last_end, entity_id, layout.columns
    )
    if raw is None:
        return None
    key, attrs = queries.entity(entity_id)
    return EntityData(key, attrs, dict(zip(layout.columns, raw[4:], strict=True)), raw[2], raw[3])


def _summed(
    queries: Queries, key: str, layout: KindLayout, group: list[tuple[int, _Acc]]
) -> EntityData:
    """An entity's rows in the bucket added up (attributes of the newest)."""
    if len(group) == 1:
        return _summed_one(queries, key, layout, *group[0])
    newest_id = max(group, key=lambda g: g[1].last_end)[0]
    _, attrs = queries.entity(newest_id)
    accs = [acc for _, acc in group]
    values: dict[str, Value] = {}
    for name, gauge, j in layout.summed:
        if gauge:
            weight = sum(acc.wn[j] for acc in accs)
            parts = [p for acc in accs for p in acc.parts[j] if p is not None]
            values[name] = math.fsum(parts) / weight if weight else None
            maxima = [m for acc in accs if (m := acc.mx[j]) is not None]
            values[max_column(name)] = max(maxima) if maxima else None
        elif len(accs) == 1:
            values[name] = accs[0].sums[j]
        else:
            sums = [c for acc in accs if (c := acc.sums[j]) is not None]
            values[name] = sum(sums) if sums else None
    flags = 0
    for acc in accs:
        flags |= acc.flags
    return EntityData(key, attrs, values, flags, sum(acc.hf_n for acc in accs))


def _summed_one(
    queries: Queries, key: str, layout: KindLayout, entity_id: int, acc: _Acc
) -> EntityData:
    """:func:`_summed` of an entity with one entity id in the bucket."""
    _, attrs = queries.entity(entity_id)
    return EntityData(key, attrs, _values_maker(layout)(acc), acc.flags, acc.hf_n)
