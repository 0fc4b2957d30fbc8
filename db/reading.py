"""Reading the store: every query that reads recorded data, raw and rolled up, is here.

:class:`Queries` holds them, over one connection: intervals, entity rows, entities, kinds,
configuration, the hourly rollups summed into buckets, and the facts ``esatui db info``
prints. The writer (``db/store.py``) looks up what it needs through its own
:class:`Queries`, the SQLite reader (``db/sqlite_reader.py``) through its; no other module
runs a query.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from typing import Any, NamedTuple

from esatui.collectors.role import Role
from esatui.db.calendar import origin_us
from esatui.db.reader import Span
from esatui.db.records import Value, max_column
from esatui.db.schema import (
    HOUR_US,
    READY_KEY,
    READY_VALUE,
    READY_VALUES,
    TIER_ABSENT,
    TIER_END,
    TIER_INTERVALS,
    TIERED_VALUES,
    TIERS,
    rollup_table,
    table_name,
    wn_column,
    wsum_column,
)


class DamagedData(Exception):
    """What the database holds cannot be read (a row damaged by hand or by the disk)."""

    def __init__(self, what: str, path: object = None) -> None:
        where = "the database" if path is None else str(path)
        super().__init__(f"{where} is damaged: {what} cannot be read; restore it from a backup")


class NegativeCounter(ValueError):
    """A counter's delta below 0 among the rows read, which no recorder writes (a reset
    starts afresh, a wrap is taken modulo): shown, it would be a negative rate. A
    ``ValueError``, so what reads it looks for the damage and names it
    (:meth:`Queries.damage`)."""

    def __init__(self, table: str) -> None:
        super().__init__(f"a negative counter in {table}")


# The times a screen can show (datetime's years 1 to 9999): a stored time outside them is
# damage, as is an interval of no positive duration (the recorder never writes one).
EARLIEST_US = -62_135_596_800_000_000
LATEST_US = 253_402_300_799_999_999
_NUMBER = "('integer', 'real', 'null')"
_KEEP_TEXT = {"source"}  # the rollups' only text column


def _quoted(name: str) -> str:
    """An identifier the file names (a table, a column), quoted for SQL."""
    return '"' + name.replace('"', '""') + '"'


def stored_json(text: str, what: str) -> Any:
    """The JSON a column holds, or :class:`DamagedData` naming what it was."""
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        raise DamagedData(what) from None


ROW_META = ("interval_id", "entity_id", "flags", "hf_n")
"""The columns of every kind row before its values."""

RawRow = tuple[Any, ...]
"""A kind row as stored: (interval_id, entity_id, flags, hf_n, *value columns)."""

RawInterval = tuple[int, int, int, int]
"""An interval as buckets read it: (id, end_us, duration_us, flags)."""

_CHUNK = 500  # interval ids per ``IN (...)``, well below SQLite's parameter limit
_BATCH = 2000  # rows fetched at a time where a range's rows are streamed


def _ending_in(
    column: str, after_us: int | None, until_us: int | None, params: list[object]
) -> str:
    """The conditions on ``column`` for a range (after_us, until_us] (either end open), their
    values appended to ``params``."""
    sql = ""
    if after_us is not None:
        sql += f" AND {column} > ?"
        params.append(after_us)
    if until_us is not None:
        sql += f" AND {column} <= ?"
        params.append(until_us)
    return sql


def _below_zero(columns: Iterable[str]) -> str:
    """The SQL condition that one of ``columns`` is below 0."""
    return " OR ".join(f"{c} < 0" for c in columns)


class IntervalInfo(NamedTuple):
    """A recorded interval. A tuple: a slot reading makes one for every interval of every
    source it places (a frozen dataclass's ``__init__`` cost three times as much)."""

    id: int
    source: str
    start_us: int
    end_us: int
    duration_us: int
    flags: int


@dataclass(frozen=True, slots=True)
class KindRow:
    """A recorded entity row together with its interval."""

    interval: IntervalInfo
    key: str
    attrs: Mapping[str, str]
    values: Mapping[str, Value]
    flags: int
    hf_n: int


@dataclass(frozen=True)
class KindLayout:
    """A kind's value columns as stored, and the role each field was declared with."""

    kind: str
    columns: tuple[str, ...]  # value columns of ``k_<kind>``, in table order
    roles: Mapping[str, Role]  # field -> role, as the kind was last declared

    @functools.cached_property
    def counters(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if self.roles.get(c) is Role.COUNTER)

    @functools.cached_property
    def gauges(self) -> tuple[str, ...]:
        """Gauges whose average and maximum are both stored."""
        have = set(self.columns)
        return tuple(
            c for c in self.columns if self.roles.get(c) is Role.GAUGE and max_column(c) in have
        )

    @functools.cached_property
    def summed(self) -> tuple[tuple[str, bool, int], ...]:
        """The columns a bucket adds up, in order: (name, is a gauge, index among them)."""
        gauges = {g: j for j, g in enumerate(self.gauges)}
        counters = {c: j for j, c in enumerate(self.counters)}
        return tuple(
            (name, name in gauges, gauges[name] if name in gauges else counters[name])
            for name in self.columns
            if name in gauges or name in counters
        )

    def at(self, column: str) -> int:
        """Where ``column`` is in a :data:`RawRow`."""
        return len(ROW_META) + self.columns.index(column)

    def only(self, fields: Collection[str]) -> KindLayout:
        """The layout of ``fields`` alone (a gauge's average or maximum brings the other)."""
        wanted = set(fields)
        for gauge in self.gauges:
            if gauge in wanted or max_column(gauge) in wanted:
                wanted |= {gauge, max_column(gauge)}
        return KindLayout(self.kind, tuple(c for c in self.columns if c in wanted), self.roles)


@dataclass(frozen=True)
class SourceInfo:
    node: str
    source: str
    intervals: int
    first_us: int
    last_us: int
    rolled_until_us: int | None = None  # the source's mark (db/rollup.py), None: none


# The bucket of an hour: the arithmetic bucket at the local offset, ``calendar.aligned``, of
# any end in the hour, when the offset is a whole number of hours and the same over the
# hour (``calendar.bucket_end`` unless a daylight-saving change is near: then
# ``buckets._Reader.fixer`` maps it to the calendar's).
def _bucket(tier: str) -> str:
    """The arithmetic bucket of a rollup row's hour (quarter) end at a constant offset."""
    end = TIER_END[tier]
    return f"(({end} + :off + :len - 1) / :len) * :len - :off"


def _ends(tier: str) -> str:
    """The rollup rows of a run: one node and source, its first to its last end."""
    end = TIER_END[tier]
    return f"node_id = :node AND source = :source AND {end} >= :first AND {end} <= :last"


@functools.cache
def or_flags(distinct: str | None) -> int:
    """The flags SQL's ``group_concat(DISTINCT flags)`` lists, OR-ed (few distinct lists)."""
    flags = 0
    for part in (distinct or "0").split(","):
        flags |= int(part)
    return flags


# The arithmetic bucket of an interval's end at a constant local offset (as ``_bucket``).
_RAW_BUCKET = "((i.end_us + :off + :len - 1) / :len) * :len - :off"
# The UTC hour of an interval's end (``schema.hour_end``)
_RAW_HOUR = "((i.end_us + :hour - 1) / :hour) * :hour"
_RAW = "i.node_id = :node AND i.source = :source AND i.end_us > :after AND i.end_us <= :until"


@dataclass(frozen=True)
class RawRun:
    """The raw rows of one source's intervals ending in (after, until], over which the
    local offset does not change, into buckets of a length."""

    node_id: int
    source: str
    after_us: int
    until_us: int
    offset_us: int
    length_us: int

    def params(self) -> dict[str, object]:
        return {
            "node": self.node_id,
            "source": self.source,
            "after": self.after_us,
            "until": self.until_us,
            "off": self.offset_us - origin_us(self.length_us),  # as calendar.aligned
            "len": self.length_us,
        }


@dataclass(frozen=True)
class HourRun:
    """Whole UTC hours (or their quarters, ``tier`` "q") of one source read from the rollups
    into buckets: the first and the last hour (quarter) end, the local offset over them, the
    bucket length."""

    node_id: int
    source: str
    first: int
    last: int
    offset_us: int
    length_us: int
    tier: str = "h"

    def params(self) -> dict[str, object]:
        return {
            "node": self.node_id,
            "source": self.source,
            "first": self.first,
            "last": self.last,
            "off": self.offset_us - origin_us(self.length_us),  # as calendar.aligned
            "len": self.length_us,
        }


class Queries:
    """The read queries of one connection (SQLite serialises them; callers share it under
    their own lock when they run in several threads)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._entity_by_id: dict[int, tuple[str, str, dict[str, str]]] = {}
        # layouts and rollup columns, while no other connection has written (data_version)
        self._shapes: dict[tuple[str, str], KindLayout | frozenset[str]] = {}
        self._shapes_version = -1

    # --- the database's shape --------------------------------------------------------

    def schema_version(self) -> int:
        return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    def empty(self) -> bool:
        """Whether the file holds no table at all (a database being created)."""
        return not self._conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone()

    def missing_tables(self, tables: Iterable[str]) -> list[str]:
        """Those of ``tables`` the file does not have."""
        rows = self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        have = {name for (name,) in rows}
        return [t for t in tables if t not in have]

    def missing_kind_tables(self) -> list[str]:
        """The tables of declared kinds the file does not have (each kind gets its table in
        the transaction that declares it, and no table is ever dropped)."""
        kinds = [r[0] for r in self._conn.execute("SELECT name FROM kind ORDER BY name")]
        return self.missing_tables(table_name(k) for k in kinds)

    def damage(self) -> str | None:
        """What of the file no recorder could have written (looked for once reading it
        failed, or found values that cannot be): a declared kind's table missing, an
        interval's times of another type, out of range or of no positive duration, a row's
        value that is no number; ``None`` when none is found."""
        missing = self.missing_kind_tables()
        if missing:
            tables = ", ".join(missing)
            return f"its {tables} {'tables are' if len(missing) > 1 else 'table is'} missing"
        row = self._conn.execute(
            "SELECT id, start_us, end_us, duration_us, flags FROM interval"
            " WHERE typeof(start_us) != 'integer' OR typeof(end_us) != 'integer'"
            " OR typeof(duration_us) != 'integer' OR typeof(flags) != 'integer'"
            " OR duration_us <= 0 OR start_us < ? OR end_us > ? LIMIT 1",
            (EARLIEST_US, LATEST_US),
        ).fetchone()
        if row is not None:
            return (
                f"interval {row[0]} cannot be read (start_us {row[1]!r}, end_us {row[2]!r}, "
                f"duration_us {row[3]!r}, flags {row[4]!r})"
            )
        for table in [*self.kind_tables(), *(t for x in TIERS for t in self.tier_tables(x))]:
            columns = [c for c in self.table_columns(table) if c not in _KEEP_TEXT]
            if not columns:
                continue
            names = [_quoted(c) for c in columns]
            where = " OR ".join(f"typeof({c}) NOT IN {_NUMBER}" for c in names)
            bad = self._conn.execute(
                f"SELECT {', '.join(names)} FROM {_quoted(table)} WHERE {where} LIMIT 1"
            ).fetchone()
            if bad is not None:
                column, value = next(
                    (c, v)
                    for c, v in zip(columns, bad, strict=True)
                    if not isinstance(v, int | float) and v is not None
                )
                return f"a row of {table} cannot be read ({column} {value!r})"
        return self.negative_counter()

    def negative_counter(self) -> str | None:
        """A counter's delta below 0 in a kind's table, which no recorder writes (a reset
        starts afresh, a wrap is taken modulo): shown, it was a negative rate."""
        present = {*self.kind_tables(), *(t for x in TIERS for t in self.tier_tables(x))}
        for kind, fields in self.kind_fields().items():
            counters = [
                str(f["name"])
                for f in fields
                if isinstance(f, dict) and f.get("role") == Role.COUNTER.value
            ]
            tables = (table_name(kind), *(rollup_table(kind, x) for x in TIERS))
            for table in (t for t in tables if t in present):  # a rollup holds their sums
                found = self._negative_in(table, counters)
                if found is not None:
                    return f"a row of {table} holds a negative counter ({found})"
        return None

    def _negative_in(self, table: str, counters: Sequence[str]) -> str | None:
        """The first of ``table``'s ``counters`` below 0, as "name value"."""
        stored = set(self.table_columns(table))
        names = [_quoted(c) for c in counters if c in stored]
        if not names:
            return None
        bad = self._conn.execute(
            f"SELECT {', '.join(names)} FROM {_quoted(table)} WHERE {_below_zero(names)} LIMIT 1"
        ).fetchone()
        if bad is None:
            return None
        column, value = next(
            (c, v) for c, v in zip(names, bad, strict=True) if v is not None and v < 0
        )
        return f"{column.strip(chr(34))} {value}"

    def table_columns(self, table: str) -> list[str]:
        return [row[1] for row in self._conn.execute(f"PRAGMA table_info({table})")]

    def kind_tables(self) -> list[str]:
        return self._tables("k")

    def tier_tables(self, tier: str) -> list[str]:
        """The kinds' rollup tables of a tier (``schema.TIERS``)."""
        return self._tables(tier)

    def _tables(self, prefix: str) -> list[str]:
        return [
            r[0]
            for r in self._conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ? ESCAPE '!'",
                (f"{prefix}!_%",),
            )
        ]

    # --- nodes, sources, kinds --------------------------------------------------------

    def nodes(self) -> list[str]:
        return [r[0] for r in self._conn.execute("SELECT name FROM node ORDER BY name")]

    def node_id(self, name: str | None) -> int | None:
        """The node's id; with ``None``, the only node (or the one most recently written)."""
        if name is not None:
            row = self._conn.execute("SELECT id FROM node WHERE name = ?", (name,)).fetchone()
            return None if row is None else int(row[0])
        row = self._conn.execute(
            "SELECT node_id FROM interval ORDER BY end_us DESC LIMIT 1"
        ).fetchone()
        return None if row is None else int(row[0])

    def node_name(self, node_id: int) -> str:
        row = self._conn.execute("SELECT name FROM node WHERE id = ?", (node_id,)).fetchone()
        return "" if row is None else str(row[0])

    def sources_of(self, kind: str) -> list[str]:
        return [
            r[0]
            for r in self._conn.execute(
                "SELECT source FROM kind_source WHERE kind = ? ORDER BY source", (kind,)
            )
        ]

    def kinds_of(self, source: str) -> list[str]:
        return [
            r[0]
            for r in self._conn.execute(
                "SELECT kind FROM kind_source WHERE source = ? ORDER BY kind", (source,)
            )
        ]

    def declared(self, kind: str) -> list[tuple[str, Role]]:
        """(field, role) as the kind was last declared, in declaration order."""
        row = self._conn.execute("SELECT fields FROM kind WHERE name = ?", (kind,)).fetchone()
        if row is None:
            return []
        fields = stored_json(row[0], f"kind {kind}'s fields")
        try:
            return [(f["name"], Role(f["role"])) for f in fields]
        except (TypeError, KeyError, ValueError):
            raise DamagedData(f"kind {kind}'s fields") from None

    def kind_fields(self) -> dict[str, list[dict[str, object]]]:
        """Every kind's declared fields, as stored."""
        return {
            name: stored_json(fields, f"kind {name}'s fields")
            for name, fields in self._conn.execute("SELECT name, fields FROM kind ORDER BY name")
        }

    def kind_docs(self) -> dict[str, str]:
        """Every kind's description, as declared."""
        return {str(n): str(d) for n, d in self._conn.execute("SELECT name, doc FROM kind")}

    def columns(self, kind: str) -> tuple[str, ...]:
        """The value columns of ``k_<kind>`` in table order (none if it was never written)."""
        table = table_name(kind)
        if not self._has_table(table):
            return ()
        return tuple(c for c in self.table_columns(table) if c not in ROW_META)

    def layout(self, kind: str) -> KindLayout:
        """The kind's stored value columns and declared roles (kept until another
        connection writes: a screen asks for them at every key)."""
        shapes = self._kept_shapes()
        found = shapes.get(("layout", kind))
        if not isinstance(found, KindLayout):
            found = KindLayout(kind, self.columns(kind), dict(self.declared(kind)))
            shapes[("layout", kind)] = found
        return found

    def data_version(self) -> int:
        """Changes when another connection commits (SQLite's ``data_version``): what a
        reader keeps of the data is stale then."""
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def _kept_shapes(self) -> dict[tuple[str, str], KindLayout | frozenset[str]]:
        """What :meth:`layout` and :meth:`rollup_has` keep, emptied when another connection
        has written since (a recorder may add a kind's columns while a reader is open)."""
        version = self.data_version()
        if version != self._shapes_version:
            self._shapes.clear()
            self._shapes_version = version
        return self._shapes

    def _has_table(self, table: str) -> bool:
        return bool(
            self._conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
            ).fetchone()
        )

    # --- intervals and rows -----------------------------------------------------------

    def bounds(self, node_id: int | None = None) -> tuple[int, int] | None:
        """Earliest interval start and latest interval end (of one node, or all)."""
        if node_id is None:
            row = self._conn.execute("SELECT MIN(start_us), MAX(end_us) FROM interval").fetchone()
        else:
            row = self._conn.execute(
                "SELECT MIN(start_us), MAX(end_us) FROM interval WHERE node_id = ?", (node_id,)
            ).fetchone()
        return None if row is None or row[0] is None else (int(row[0]), int(row[1]))

    def intervals(
        self,
        node_id: int,
        sources: Sequence[str],
        after_us: int | None = None,
        until_us: int | None = None,
        *,
        limit: int | None = None,
        newest_first: bool = True,
    ) -> list[IntervalInfo]:
        """Intervals of the given sources whose end lies in (after_us, until_us]."""
        if not sources:
            return []
        sql = (
            "SELECT id, source, start_us, end_us, duration_us, flags FROM interval"
            f" WHERE node_id = ? AND source IN ({','.join('?' * len(sources))})"
        )
        params: list[object] = [node_id, *sources]
        sql += _ending_in("end_us", after_us, until_us, params)
        sql += " ORDER BY end_us " + ("DESC" if newest_first else "ASC")
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return list(map(IntervalInfo._make, self._conn.execute(sql, params)))

    def interval_span(
        self, node_id: int, source: str, after_us: int | None, until_us: int | None
    ) -> Span | None:
        """The source's intervals ending in (after_us, until_us] as one span: the first
        one's start, the last one's end, their durations and flags added up."""
        params: list[object] = [node_id, source]
        where = "WHERE node_id = ? AND source = ?" + _ending_in(
            "end_us", after_us, until_us, params
        )
        end_us, duration_us = self._conn.execute(
            f"SELECT MAX(end_us), SUM(duration_us) FROM interval {where}", params
        ).fetchone()
        if end_us is None:
            return None
        (start_us,) = self._conn.execute(
            f"SELECT start_us FROM interval {where} ORDER BY end_us LIMIT 1", params
        ).fetchone()
        flags = 0
        for (value,) in self._conn.execute(f"SELECT DISTINCT flags FROM interval {where}", params):
            flags |= value
        return Span(start_us, end_us, duration_us, flags)

    def intervals_overlapping(
        self,
        node_id: int,
        source: str,
        start_us: int,
        end_us: int,
        until_us: int,
        own: tuple[int | None, int | None] | None = None,
    ) -> Iterator[list[RawInterval]]:
        """The source's intervals that overlap (start_us, end_us] (for some time of their own)
        and end by ``until_us``, oldest first, as (id, end_us, duration_us, flags), a batch
        at a time. With ``own`` (after_us, until_us), only those ending in that range
        or at ``end_us`` (a window's own source: its frames or its range's intervals)."""
        params: list[object] = [node_id, source, start_us, until_us, end_us]
        sql = (
            "SELECT id, end_us, duration_us, flags FROM interval WHERE node_id = ? AND"
            " source = ? AND end_us > ? AND end_us <= ? AND start_us < ? AND end_us > start_us"
        )
        if own is not None:
            params.append(end_us)
            sql += " AND (end_us = ? OR (1" + _ending_in("end_us", *own, params) + "))"
        cursor = self._conn.execute(sql + " ORDER BY end_us", params)
        while batch := cursor.fetchmany(_BATCH):
            yield batch

    def raw_intervals(
        self, node_id: int, source: str, after_us: int, until_us: int
    ) -> list[RawInterval]:
        """As :meth:`intervals`, oldest first, as tuples (many, and read for their numbers)."""
        return self._conn.execute(
            "SELECT id, end_us, duration_us, flags FROM interval WHERE node_id = ? AND source = ?"
            " AND end_us > ? AND end_us <= ? ORDER BY end_us",
            (node_id, source, after_us, until_us),
        ).fetchall()

    def newest_end(self, node_id: int, source: str) -> int | None:
        row = self._conn.execute(
            "SELECT MAX(end_us) FROM interval WHERE node_id = ? AND source = ?",
            (node_id, source),
        ).fetchone()
        return None if row[0] is None else int(row[0])

    def any_interval(self, node_id: int, source: str, after_us: int, until_us: int) -> bool:
        """Whether the source has an interval ending in (after_us, until_us]."""
        return bool(
            self._conn.execute(
                "SELECT 1 FROM interval WHERE node_id = ? AND source = ? AND end_us > ?"
                " AND end_us <= ? LIMIT 1",
                (node_id, source, after_us, until_us),
            ).fetchone()
        )

    def oldest_ids(self, until_us: int | None, count: int) -> list[int]:
        """Up to ``count`` oldest intervals (of every node and source) ending before
        ``until_us``."""
        if until_us is None:
            rows = self._conn.execute("SELECT id FROM interval ORDER BY end_us LIMIT ?", (count,))
        else:
            rows = self._conn.execute(
                "SELECT id FROM interval WHERE end_us < ? ORDER BY end_us LIMIT ?",
                (until_us, count),
            )
        return [r[0] for r in rows]

    def newest_ends(self, interval_ids: Sequence[int]) -> list[tuple[int, str, int]]:
        """(node_id, source, newest end) over the given intervals."""
        marks = ",".join("?" * len(interval_ids))
        return [
            (int(n), str(s), int(e))
            for n, s, e in self._conn.execute(
                f"SELECT node_id, source, MAX(end_us) FROM interval WHERE id IN ({marks})"
                " GROUP BY node_id, source",
                list(interval_ids),
            )
        ]

    def source_spans(self) -> list[tuple[int, str, int, int]]:
        """(node_id, source, oldest end, newest end) of every node's sources."""
        return self._conn.execute(
            "SELECT node_id, source, MIN(end_us), MAX(end_us) FROM interval"
            " GROUP BY node_id, source"
        ).fetchall()

    def interval_count(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM interval").fetchone()[0])

    def source_count(self) -> int:
        """How many sources (of every node) have intervals: a seek in the index per source
        (a ``DISTINCT`` scans it: 0.6 s for a year of four sources)."""
        count = 0
        for (node_id,) in self._conn.execute("SELECT id FROM node").fetchall():
            source = ""
            while found := self._conn.execute(
                "SELECT source FROM interval WHERE node_id = ? AND source > ?"
                " ORDER BY source LIMIT 1",
                (node_id, source),
            ).fetchone():
                count, source = count + 1, found[0]
        return count

    def ends_before(self, until_us: int) -> int:
        """How many intervals (of every node and source) end before ``until_us``."""
        row = self._conn.execute("SELECT COUNT(*) FROM interval WHERE end_us < ?", (until_us,))
        return int(row.fetchone()[0])

    def nth_oldest_end(self, n: int) -> int | None:
        """The end of the ``n``-th oldest interval (1: the oldest)."""
        row = self._conn.execute(
            "SELECT end_us FROM interval ORDER BY end_us LIMIT 1 OFFSET ?", (max(0, n - 1),)
        ).fetchone()
        return None if row is None else int(row[0])

    def kind_rows(self, kind: str, intervals: Sequence[IntervalInfo]) -> list[KindRow]:
        """Every row of ``kind`` recorded in the given intervals."""
        if not intervals or not self._has_table(table_name(kind)):
            return []
        columns = self.columns(kind)
        by_id = {i.id: i for i in intervals}
        out: list[KindRow] = []
        for r in self.raw_rows(kind, list(by_id), columns):
            key, attrs = self.entity(r[1])
            values = dict(zip(columns, r[4:], strict=True))
            out.append(KindRow(by_id[r[0]], key, attrs, values, r[2], r[3]))
        return out

    def raw_rows(
        self, kind: str, interval_ids: Sequence[int], columns: Sequence[str]
    ) -> list[RawRow]:
        """Every row of ``kind`` in the given intervals, as stored: by interval, then entity
        (the table's key, so SQLite sorts nothing)."""
        table = table_name(kind)
        if not interval_ids or not self._has_table(table):
            return []
        select = ", ".join((*ROW_META, *columns))
        counters = self.layout(kind).counters
        out: list[RawRow] = []
        ids = sorted(interval_ids)
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            where = f"interval_id IN ({','.join('?' * len(chunk))})"
            self._refuse_negative(f"{table} r WHERE {where}", table, counters, chunk)
            out += self._conn.execute(
                f"SELECT {select} FROM {table} WHERE {where} ORDER BY interval_id, entity_id",
                chunk,
            ).fetchall()
        return out

    def _refuse_negative(
        self,
        source: str,
        table: str,
        counters: Sequence[str],
        params: Sequence[object] | Mapping[str, object],
    ) -> None:
        """Raise :class:`NegativeCounter` if a row of ``source`` (``<table> r ... WHERE
        ...``, the rows about to be read) holds a counter below 0: SQLite looks over those
        rows for a few % of reading them, and no Python sees each value."""
        if (
            counters
            and self._conn.execute(
                f"SELECT 1 FROM {source} AND ({_below_zero(f'r.{c}' for c in counters)}) LIMIT 1",
                params,
            ).fetchone()
        ):
            raise NegativeCounter(table)

    def raw_row_at(
        self,
        kind: str,
        node_id: int,
        source: str,
        end_us: int,
        entity_id: int,
        columns: Sequence[str],
    ) -> RawRow | None:
        """As :meth:`raw_rows`, the one row of an entity in the source's interval ending at
        ``end_us``."""
        select = ", ".join(f"r.{c}" for c in (*ROW_META, *columns))
        row: RawRow | None = self._conn.execute(
            f"SELECT {select} FROM {table_name(kind)} r JOIN interval i ON i.id = r.interval_id"
            " WHERE i.node_id = ? AND i.source = ? AND i.end_us = ? AND r.entity_id = ?",
            (node_id, source, end_us, entity_id),
        ).fetchone()
        if row is None:
            return None
        counters = set(self.layout(kind).counters)
        at = [len(ROW_META) + i for i, c in enumerate(columns) if c in counters]
        self._no_negative([row], kind, at)
        return row

    def entity_rows(
        self,
        kind: str,
        source: str,
        node_id: int,
        entity_id: int,
        fields: Sequence[str],
        after_us: int | None,
        until_us: int | None,
        *,
        duration: bool = False,
    ) -> list[tuple[Any, ...]]:
        """(end_us, [duration_us,] *fields) of every row of the entity in ``source``'s
        intervals ending in (after_us, until_us], oldest first; a field the table lacks
        reads ``None``. Without the duration the intervals are read from their index alone."""
        if not self._has_table(table_name(kind)):
            return []
        sql, params = self._kind_rows_query(
            kind, source, node_id, entity_id, fields, after_us, until_us, duration=duration
        )
        rows: list[tuple[Any, ...]] = self._conn.execute(sql, params).fetchall()
        head = 1 + duration
        return self._no_negative(rows, kind, [head + i for i in self._counters_in(kind, fields)])

    def every_entity_rows(
        self,
        kind: str,
        source: str,
        node_id: int,
        fields: Sequence[str],
        after_us: int | None,
        until_us: int | None,
        *,
        duration: bool = False,
    ) -> Iterator[tuple[Any, ...]]:
        """As :meth:`entity_rows`, every entity's: (end_us, entity_id, [duration_us,]
        *fields), oldest first, then by entity id, read from SQLite as they are iterated
        (a batch at a time: memory holds a batch, not the range)."""
        if not self._has_table(table_name(kind)):
            return
        sql, params = self._kind_rows_query(
            kind, source, node_id, None, fields, after_us, until_us, duration=duration
        )
        cursor = self._conn.execute(sql, params)
        at = [2 + duration + i for i in self._counters_in(kind, fields)]
        while batch := cursor.fetchmany(_BATCH):
            yield from self._no_negative(batch, kind, at)

    def _counters_in(self, kind: str, fields: Sequence[str]) -> list[int]:
        """Where the kind's counters are among ``fields``."""
        counters = set(self.layout(kind).counters)
        return [i for i, f in enumerate(fields) if f in counters]

    @staticmethod
    def _no_negative(rows: list[tuple[Any, ...]], kind: str, at: Sequence[int]) -> list[Any]:
        """``rows``, unless a counter at ``at`` is below 0 (:class:`NegativeCounter`). Looked
        at in C (``itemgetter``, ``chain``, ``filter``, ``min``): a month of an entity's rows
        is 43,200, and ``d`` on them has 200 ms."""
        if not at or not rows:
            return rows
        get = itemgetter(*at)
        values = chain.from_iterable(map(get, rows)) if len(at) > 1 else map(get, rows)
        if min(filter(None, values), default=0) < 0:
            raise NegativeCounter(table_name(kind))
        return rows

    def _kind_rows_query(
        self,
        kind: str,
        source: str,
        node_id: int,
        entity_id: int | None,
        fields: Sequence[str],
        after_us: int | None,
        until_us: int | None,
        *,
        duration: bool,
    ) -> tuple[str, list[object]]:
        """The ``SELECT`` of :meth:`entity_rows` (``entity_id``) or :meth:`every_entity_rows`
        (``None``), and its parameters."""
        have = {*self.columns(kind), "flags", "hf_n"}  # a row's own flags and samples too
        picked = [f"r.{f}" if f in have else "NULL" for f in fields]
        every = entity_id is None
        head = ["i.end_us", *(["r.entity_id"] if every else [])]
        select = ", ".join([*head, *(["i.duration_us"] if duration else []), *picked])
        rows = f"interval i JOIN {table_name(kind)} r ON r.interval_id = i.id"
        rows += " WHERE i.node_id = ? AND i.source = ?"
        params: list[object] = [node_id, source]
        if not every:
            rows += " AND r.entity_id = ?"
            params.append(entity_id)
        rows += _ending_in("i.end_us", after_us, until_us, params)
        order = " ORDER BY i.end_us" + (", r.entity_id" if every else "")  # the key's order
        return f"SELECT {select} FROM {rows}{order}", params

    # --- entities and configuration ---------------------------------------------------

    def entity(self, entity_id: int) -> tuple[str, dict[str, str]]:
        """An entity's key and attributes (read once, then kept)."""
        found = self._entity_by_id.get(entity_id)
        if found is None:
            for eid, kind, key, attrs in self._conn.execute(
                "SELECT id, kind, key, attrs FROM entity WHERE id >= ?", (entity_id,)
            ):
                self._entity_by_id[eid] = (kind, key, stored_json(attrs, f"entity {eid}"))
            found = self._entity_by_id.get(entity_id, ("", "?", {}))
        return found[1], found[2]

    def recorded_in(
        self, kind: str, node_id: int, source: str, after_us: int | None, until_us: int | None
    ) -> bool:
        """Whether ``source`` recorded a row of ``kind`` for the node in an interval ending
        in (after_us, until_us]."""
        table = table_name(kind)
        if not self._has_table(table):
            return False
        params: list[object] = [node_id, source]
        sql = (
            f"SELECT 1 FROM interval i JOIN {table} r ON r.interval_id = i.id"
            " WHERE i.node_id = ? AND i.source = ?"
            + _ending_in("i.end_us", after_us, until_us, params)
        )
        return self._conn.execute(sql + " LIMIT 1", params).fetchone() is not None

    def kind_entities(self, node_id: int, kind: str) -> dict[int, tuple[str, dict[str, str]]]:
        """Each entity id of the kind recorded for the node, with its key and attributes."""
        return {
            int(eid): (str(key), stored_json(attrs, f"entity {eid}"))
            for eid, key, attrs in self._conn.execute(
                "SELECT id, key, attrs FROM entity WHERE node_id = ? AND kind = ?", (node_id, kind)
            )
        }

    def entities_keyed(self, node_id: int, kind: str, key: str) -> list[tuple[int, dict[str, str]]]:
        """(id, attributes) of every entity of the kind recorded under ``key``: more than
        one when its attributes changed."""
        return [
            (int(eid), stored_json(attrs, f"entity {eid}"))
            for eid, attrs in self._conn.execute(
                "SELECT id, attrs FROM entity WHERE node_id = ? AND kind = ? AND key = ?",
                (node_id, kind, key),
            )
        ]

    def entity_id(self, node_id: int, kind: str, key: str, attrs_json: str) -> int | None:
        row = self._conn.execute(
            "SELECT id FROM entity WHERE node_id = ? AND kind = ? AND key = ? AND attrs = ?",
            (node_id, kind, key, attrs_json),
        ).fetchone()
        return None if row is None else int(row[0])

    def config_data(self, node_id: int, source: str, time_us: int) -> str | None:
        """The configuration (JSON) the source last reported at or before ``time_us``."""
        row = self._conn.execute(
            "SELECT data FROM config WHERE node_id = ? AND source = ? AND time_us <= ?"
            " ORDER BY time_us DESC LIMIT 1",
            (node_id, source, time_us),
        ).fetchone()
        return None if row is None else str(row[0])

    def config_at(self, node_id: int, time_us: int) -> dict[str, str]:
        """The configuration every source last reported at or before ``time_us`` (merged;
        the first configuration recorded when there is none before)."""
        merged: dict[str, str] = {}
        sources = [
            r[0]
            for r in self._conn.execute(
                "SELECT DISTINCT source FROM config WHERE node_id = ? ORDER BY source", (node_id,)
            )
        ]
        for source in sources:
            data = self.config_data(node_id, source, time_us)
            if data is None:
                row = self._conn.execute(
                    "SELECT data FROM config WHERE node_id = ? AND source = ?"
                    " ORDER BY time_us ASC LIMIT 1",
                    (node_id, source),
                ).fetchone()
                data = None if row is None else row[0]
            if data is not None:
                found = stored_json(data, f"{source}'s configuration")
                if not isinstance(found, dict):
                    raise DamagedData(f"{source}'s configuration")
                merged.update(found)
        return merged

    # --- hourly rollups ---------------------------------------------------------------

    def rollups_ready(self) -> bool:
        """Whether the rollups serve readers (a database written before rollups does not
        until it is opened once for writing; nor one a writer is rolling up afresh)."""
        return "ready" in self._kept_way()

    def _kept_way(self) -> frozenset[str]:
        """How the rollups are kept, looked up again once another connection has written
        (a writer may be rolling them up afresh while a reader is open)."""
        shapes = self._kept_shapes()
        found = shapes.get(("rollups", ""))
        if not isinstance(found, frozenset):
            kept = self.rollups_kept()
            way = {"ready"} if kept in READY_VALUES else set()
            if kept in TIERED_VALUES:
                way.add("tiers")
            if kept == READY_VALUE:
                way.add("absences")
            found = shapes[("rollups", "")] = frozenset(way)
        return found

    def rollups_kept(self) -> str | None:
        """How the rollups are kept (``schema.READY_VALUES``); ``None`` before any."""
        try:
            row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (READY_KEY,))
            found = row.fetchone()
        except sqlite3.OperationalError:
            return None
        return None if found is None else str(found[0])

    def rolled_until(self, node_id: int, source: str) -> int | None:
        """The source's newest hour rolled up (``db/rollup.py``: every hour up to it is,
        none after it); ``None`` when none is."""
        row = self._conn.execute(
            "SELECT MAX(hour_end_us) FROM interval_hour WHERE node_id = ? AND source = ?",
            (node_id, source),
        ).fetchone()
        return None if row[0] is None else int(row[0])

    def first_hour(self, node_id: int, source: str) -> int | None:
        """The source's oldest hour rolled up."""
        row = self._conn.execute(
            "SELECT MIN(hour_end_us) FROM interval_hour WHERE node_id = ? AND source = ?",
            (node_id, source),
        ).fetchone()
        return None if row[0] is None else int(row[0])

    def rolled_sources(self) -> list[tuple[int, str]]:
        """(node, source) of every source with hours rolled up."""
        return [
            (int(n), str(s))
            for n, s in self._conn.execute("SELECT DISTINCT node_id, source FROM interval_hour")
        ]

    def tiers_kept(self) -> bool:
        """Whether the rollups hold quarters and the writer's local days beside the hours
        (``schema.READY_VALUE``)."""
        return "tiers" in self._kept_way()

    def absences_kept(self) -> bool:
        """Whether the rollups hold the intervals each kind was absent from
        (``absent_<tier>``, ``schema.READY_VALUE``)."""
        return "absences" in self._kept_way()

    def days_holding(
        self, node_id: int, source: str, after_us: int, until_us: int
    ) -> list[tuple[int, int]]:
        """(end, start) of the source's days rolled up that hold a time in (after, until]."""
        if not self._has_table("interval_day"):
            return []
        return self._conn.execute(
            "SELECT day_end_us, day_start_us FROM interval_day WHERE node_id = ? AND source = ?"
            " AND day_end_us > ? AND day_start_us < ?",
            (node_id, source, after_us, until_us),
        ).fetchall()

    def day_totals(
        self, node_id: int, source: str, after_us: int, until_us: int
    ) -> list[tuple[int, int, int, int, int]]:
        """(end, start, intervals, summed duration, flags) of the source's days rolled up
        that end in (after, until]."""
        return self._conn.execute(
            "SELECT day_end_us, day_start_us, n, duration_us, flags FROM interval_day"
            " WHERE node_id = ? AND source = ? AND day_end_us > ? AND day_end_us <= ?",
            (node_id, source, after_us, until_us),
        ).fetchall()

    def day_rows(
        self,
        kind: str,
        counters: Sequence[str],
        gauges: Sequence[str],
        node_id: int,
        source: str,
        after_us: int,
        until_us: int,
    ) -> list[tuple[Any, ...]]:
        """As :meth:`kind_buckets`, a row per day rolled up that ends in (after, until] and
        entity: (day end, entity_id, rows, hf_n, newest end, whether any row has flags,
        *counter sums, *gauge weights, *gauge maxima)."""
        select = [
            "day_end_us",
            "entity_id",
            "rows_n",
            "hf_n",
            "last_end_us",
            "flags != 0 OR iflags != 0",
            *counters,
            *(wn_column(g) for g in gauges),
            *(max_column(g) for g in gauges),
        ]
        table = rollup_table(kind, "d")
        days = "node_id = ? AND source = ? AND day_end_us > ? AND day_end_us <= ?"
        params = (node_id, source, after_us, until_us)
        self._refuse_negative(f"{table} r WHERE {days}", table, counters, params)
        return self._conn.execute(
            f"SELECT {', '.join(select)} FROM {table} WHERE {days}", params
        ).fetchall()

    def rollup_has(self, kind: str, columns: Sequence[str], tier: str = "h") -> bool:
        shapes = self._kept_shapes()
        found = shapes.get((tier, kind))
        if not isinstance(found, frozenset):
            table = rollup_table(kind, tier)
            found = shapes[(tier, kind)] = frozenset(self.table_columns(table))
        return bool(found) and set(columns) <= found

    def interval_buckets(self, run: HourRun) -> list[tuple[int, int, int, str]]:
        """(bucket end, intervals, summed duration, distinct flags "a,b") of the run's
        hours."""
        return self._conn.execute(
            f"SELECT {_bucket(run.tier)} AS b, SUM(n), SUM(duration_us),"
            f" group_concat(DISTINCT flags) FROM {TIER_INTERVALS[run.tier]}"
            f" WHERE {_ends(run.tier)} GROUP BY b",
            run.params(),
        ).fetchall()

    def raw_interval_buckets(self, run: RawRun) -> list[tuple[int, int, int, str]]:
        """As :meth:`interval_buckets`, of the intervals ending in the run."""
        return self._conn.execute(
            f"SELECT {_RAW_BUCKET} AS b, COUNT(*), SUM(i.duration_us),"
            f" group_concat(DISTINCT i.flags) FROM interval i WHERE {_RAW} GROUP BY b",
            run.params(),
        ).fetchall()

    def absent_buckets(self, run: HourRun) -> list[tuple[int, str, int]]:
        """(bucket end, kind, summed duration) of the run's intervals that carried none of a
        kind's rows (``absent_hour``, ``absent_quarter``)."""
        return self._conn.execute(
            f"SELECT {_bucket(run.tier)} AS b, kind, SUM(duration_us)"
            f" FROM {TIER_ABSENT[run.tier]} WHERE {_ends(run.tier)} GROUP BY b, kind",
            run.params(),
        ).fetchall()

    def day_absences(
        self, node_id: int, source: str, after_us: int, until_us: int
    ) -> list[tuple[int, str, int]]:
        """(day end, kind, summed duration) of the source's days rolled up that end in
        (after, until]: the intervals that carried none of a kind's rows."""
        return self._conn.execute(
            "SELECT day_end_us, kind, duration_us FROM absent_day"
            " WHERE node_id = ? AND source = ? AND day_end_us > ? AND day_end_us <= ?",
            (node_id, source, after_us, until_us),
        ).fetchall()

    def raw_absent_buckets(self, kind: str, run: RawRun) -> list[tuple[int, int]]:
        """(bucket end, summed duration) of the run's intervals that carried none of the
        kind's rows."""
        return self._conn.execute(
            f"SELECT {_RAW_BUCKET} AS b, SUM(i.duration_us) FROM interval i WHERE {_RAW}"
            f" AND NOT EXISTS (SELECT 1 FROM {table_name(kind)} k WHERE k.interval_id = i.id)"
            " GROUP BY b",
            run.params(),
        ).fetchall()

    def raw_absences(
        self, kind: str, node_id: int, source: str, after_us: int, until_us: int
    ) -> list[tuple[int, int]]:
        """(end, duration) of the source's intervals ending in (after, until] that carried
        none of the kind's rows."""
        return self._conn.execute(
            "SELECT i.end_us, i.duration_us FROM interval i WHERE i.node_id = ?"
            " AND i.source = ? AND i.end_us > ? AND i.end_us <= ? AND NOT EXISTS"
            f" (SELECT 1 FROM {table_name(kind)} k WHERE k.interval_id = i.id)",
            (node_id, source, after_us, until_us),
        ).fetchall()

    def kind_buckets(
        self, kind: str, counters: Sequence[str], gauges: Sequence[str], run: HourRun
    ) -> list[tuple[Any, ...]]:
        """Per bucket and entity: (bucket end, entity_id, rows, hf_n, newest end, whether
        any row has flags, *counter sums, *gauge weights, *gauge maxima). The flags
        themselves: :meth:`kind_flags`."""
        select = [
            f"{_bucket(run.tier)} AS b",
            "entity_id",
            "SUM(rows_n)",
            "SUM(hf_n)",
            "MAX(last_end_us)",
            "MAX(flags != 0 OR iflags != 0)",
            *(f"SUM({c})" for c in counters),
            *(f"SUM({wn_column(g)})" for g in gauges),
            *(f"MAX({max_column(g)})" for g in gauges),
        ]
        table = rollup_table(kind, run.tier)
        self._refuse_negative(f"{table} r WHERE {_ends(run.tier)}", table, counters, run.params())
        return self._conn.execute(
            f"SELECT {', '.join(select)} FROM {table} WHERE {_ends(run.tier)}"
            " GROUP BY b, entity_id",
            run.params(),
        ).fetchall()

    def raw_buckets(
        self, kind: str, counters: Sequence[str], gauges: Sequence[str], run: RawRun
    ) -> list[tuple[Any, ...]]:
        """As :meth:`kind_buckets`, from the raw rows of the intervals ending in the run:
        per bucket and entity (bucket end, entity_id, rows, hf_n, newest end, whether any
        row or its interval has flags, *counter sums, *gauge maxima). Integer sums and
        maxima only (exact in SQL); a sum beyond 64 bits raises ``OperationalError``. The
        flags themselves: :meth:`raw_flags`."""
        select = [
            f"{_RAW_BUCKET} AS b",
            "r.entity_id",
            "COUNT(*)",
            "SUM(r.hf_n)",
            "MAX(i.end_us)",
            "MAX(r.flags != 0 OR i.flags != 0)",
            *(f"SUM(r.{c})" for c in counters),
            *(f"MAX(r.{max_column(g)})" for g in gauges),
        ]
        table = table_name(kind)
        rows = f"{table} r JOIN interval i ON i.id = r.interval_id WHERE {_RAW}"
        self._refuse_negative(rows, table, counters, run.params())
        return self._conn.execute(
            f"SELECT {', '.join(select)} FROM {rows} GROUP BY b, r.entity_id", run.params()
        ).fetchall()

    def kind_flags(self, kind: str, run: HourRun) -> list[tuple[int, int, int, int]]:
        """(bucket end, entity_id, flags, interval flags) of the run's hours that have any
        (few: read apart, and only when :meth:`kind_buckets` says there are some)."""
        return self._conn.execute(
            f"SELECT {_bucket(run.tier)} AS b, entity_id, flags, iflags"
            f" FROM {rollup_table(kind, run.tier)}"
            f" WHERE {_ends(run.tier)} AND (flags != 0 OR iflags != 0)",
            run.params(),
        ).fetchall()

    def raw_flags(self, kind: str, run: RawRun) -> list[tuple[int, int, int, int]]:
        """As :meth:`kind_flags`, of the raw rows of the intervals ending in the run."""
        return self._conn.execute(
            f"SELECT {_RAW_BUCKET} AS b, r.entity_id, r.flags, i.flags FROM {table_name(kind)} r"
            f" JOIN interval i ON i.id = r.interval_id WHERE {_RAW}"
            " AND (r.flags != 0 OR i.flags != 0)",
            run.params(),
        ).fetchall()

    def raw_gauges(self, kind: str, gauges: Sequence[str], run: RawRun) -> list[tuple[Any, ...]]:
        """(bucket end, hour end, entity_id, hf_n, *gauge x hf_n) of the run's raw rows that
        weigh in a gauge's average (a value and samples), oldest first: the products are
        SQL's, as the rollups' (``db/rollup.py``), and a bucket's weighted sums are added in
        this order, in Python (never in SQL, see :meth:`gauge_hours`)."""
        known = " OR ".join(f"r.{g} IS NOT NULL" for g in gauges)
        products = ", ".join(f"r.{g} * r.hf_n" for g in gauges)
        return self._conn.execute(
            f"SELECT {_RAW_BUCKET} AS b, {_RAW_HOUR}, r.entity_id, r.hf_n, {products}"
            f" FROM {table_name(kind)} r JOIN interval i ON i.id = r.interval_id"
            f" WHERE {_RAW} AND r.hf_n > 0 AND ({known}) ORDER BY i.end_us",
            {**run.params(), "hour": HOUR_US},
        ).fetchall()

    def gauge_hours(self, kind: str, gauges: Sequence[str], run: HourRun) -> list[tuple[Any, ...]]:
        """(bucket end, entity_id, *weighted sums) of every hour that has one: the parts a
        bucket's weighted sums are made of (added with ``math.fsum``, never in SQL, whose
        float sums depend on its version and the order it reads in)."""
        sums = [wsum_column(g) for g in gauges]
        return self._conn.execute(
            f"SELECT {_bucket(run.tier)} AS b, entity_id, {', '.join(sums)}"
            f" FROM {rollup_table(kind, run.tier)}"
            f" WHERE {_ends(run.tier)} AND ({' OR '.join(f'{s} IS NOT NULL' for s in sums)})",
            run.params(),
        ).fetchall()

    # --- the database as a whole ------------------------------------------------------

    def page_size(self) -> int:
        return int(self._conn.execute("PRAGMA page_size").fetchone()[0])

    def auto_vacuum(self) -> int:
        """0 none, 1 full, 2 incremental."""
        return int(self._conn.execute("PRAGMA auto_vacuum").fetchone()[0])

    def data_bytes(self) -> int:
        """Bytes the database uses (pages in use; free pages are not counted)."""
        pages = self._conn.execute("PRAGMA page_count").fetchone()[0]
        free = self._conn.execute("PRAGMA freelist_count").fetchone()[0]
        size = self._conn.execute("PRAGMA page_size").fetchone()[0]
        return int((pages - free) * size)

    def info(
        self,
    ) -> tuple[dict[str, str], list[SourceInfo], dict[str, int], dict[str, dict[str, int]]]:
        """Meta facts, intervals per node and source, rows per kind and rollup rows per
        tier and kind."""
        conn = self._conn
        meta = dict(conn.execute("SELECT key, value FROM meta ORDER BY key"))
        meta["schema_version"] = str(self.schema_version())
        mark = (
            "(SELECT MAX(h.hour_end_us) FROM interval_hour h"
            " WHERE h.node_id = i.node_id AND h.source = i.source)"
            if self._has_table("interval_hour")
            else "NULL"
        )
        sources = [
            SourceInfo(*r)
            for r in conn.execute(
                f"SELECT n.name, i.source, COUNT(*), MIN(i.start_us), MAX(i.end_us), {mark}"
                " FROM interval i JOIN node n ON n.id = i.node_id"
                " GROUP BY n.name, i.source ORDER BY n.name, i.source"
            )
        ]
        tiers = {tier: self._counts(self.tier_tables(tier)) for tier in TIERS}
        return meta, sources, self._counts(self.kind_tables()), tiers

    def _counts(self, tables: Iterable[str]) -> dict[str, int]:
        return {
            table[2:]: int(self._conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
            for table in tables
        }
