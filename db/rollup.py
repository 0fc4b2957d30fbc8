"""Hourly rollups: written by the store when a source's hour is over.

An interval belongs to the UTC hour its end falls in, (H - 1 h, H], recorded as
``hour_end_us`` = H: the rule ``db/buckets.py`` uses to put intervals into buckets. A
source's hours are rolled up up to a mark, the newest ``hour_end_us`` of its
``interval_hour`` rows: every hour up to the mark is, no hour after it is. The hour a
source is writing in stays after the mark; when the source's first interval of a later hour
is written, the hours after the mark are rolled up in the same transaction, interval by
interval in end order, each adding its hour's ``interval_hour`` row and each of its entity
rows to the hour's ``h_<kind>`` row by an SQL upsert that reads the rows stored, so the
rollup sees exactly the values a reader of ``k_<kind>`` sees. Readers take the hours after
the mark from the raw rows. Rolling up an hour at once, not with every interval, saves a
recorder a statement per kind and the rollups' pages in every commit (issue 16). An
interval written into an hour already rolled up is added to it as it comes (or the hour
rebuilt, below). Gauges are rolled up as the sum of
average x ``hf_n`` over the rows that have both (their weight summed beside it) and the
maximum; the sum is accumulated in interval-end order, one double addition per interval,
which ``db/buckets.py`` repeats on raw rows so both give the same bits. An interval written
out of order (its hour already holds a later one of the same source) makes the store
rebuild that hour from the raw rows, in order. Retention deletes whole hours' rollups and
rebuilds the hour it cut into.

An interval that carries none of the rows of one of its source's kinds (those registered
for the source: ``kind_source``) is added to ``absent_hour`` (``absent_quarter``) for that
kind instead, so a reader takes a kind's time in a bucket as its source's less those
intervals'. An hour rolled up before a kind was registered for its source has no absence
of that kind; it is rolled up with it when it is rebuilt.

Each interval is added to its quarter of an hour as well (``q_<kind>``,
``interval_quarter``, by the same upserts: the buckets of 15 minutes, whatever the zone,
since every zone's offset is whole quarters). Over the hours, each local day of the
writer's zone whose hours are all rolled up is added up once more (``d_<kind>``,
``interval_day``: the day's start and end with it, so a reader in another zone, whose days
differ, knows it is not its own): 24 rows an entity fewer to read for a day. A day holds
the sums of its hours' rows (counters, weights, rows, maxima, flags OR-ed), not the gauges'
weighted sums, which readers add hour by hour with ``math.fsum``. A day is rolled up once
its last hour is; whatever changes an hour of a day rolled up (a late
interval, an hour rebuilt, retention) marks that day, and the store rolls the marked days up
again before it commits (:meth:`Rollups.settle`). Days that do not start and end on a UTC
hour (a zone of +5:30) are not kept: their readers add the hours.

A database written before rollups existed has no ``rollups`` key in ``meta``: opening it for
writing backfills every hour (:meth:`Rollups.backfill_steps`); until then readers use the raw
rows. One whose rollups were kept another way (hours only) is rolled up afresh the same way
when a writer opens it, its readers reading the raw rows meanwhile. This is the writing
side; the rollups are read in ``db/reading.py``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence

from esatui.collectors.model import Role
from esatui.db.calendar import DAY_US, bucket_end, bucket_start
from esatui.db.reading import Queries, or_flags
from esatui.db.records import max_column
from esatui.db.schema import (
    HOUR_US,
    INTERVAL_ROLLUPS,
    READY_KEY,
    READY_VALUE,
    ROLLUP_META,
    TIER_ABSENT,
    TIER_END,
    TIER_INTERVALS,
    added_columns,
    hour_end,
    quarter_end,
    rollup_columns,
    rollup_ddl,
    rollup_table,
    table_name,
    wn_column,
    wsum_column,
)

_INTERVAL_UPSERT = {
    tier: (
        f"INSERT INTO {TIER_INTERVALS[tier]} (node_id, source, {TIER_END[tier]}, n, duration_us,"
        " flags, last_end_us) VALUES (?, ?, ?, 1, ?, ?, ?)"
        f" ON CONFLICT (node_id, source, {TIER_END[tier]}) DO UPDATE SET n = n + 1,"
        " duration_us = duration_us + excluded.duration_us, flags = flags | excluded.flags,"
        " last_end_us = max(last_end_us, excluded.last_end_us)"
    )
    for tier in ("h", "q")
}
# an interval that carried none of a kind's rows, added to its hour's (quarter's) absences
_ABSENT_UPSERT = {
    tier: (
        f"INSERT INTO {TIER_ABSENT[tier]} (node_id, source, {TIER_END[tier]}, kind, n,"
        " duration_us) VALUES (?, ?, ?, ?, 1, ?)"
        f" ON CONFLICT (node_id, source, {TIER_END[tier]}, kind) DO UPDATE SET n = n + 1,"
        " duration_us = duration_us + excluded.duration_us"
    )
    for tier in ("h", "q")
}


def local_day(hour: int) -> tuple[int, int] | None:
    """(start, end) of the writer's local day that holds the UTC hour ending at ``hour``;
    ``None`` when that day does not start and end on UTC hours (its hours are then split)."""
    end = bucket_end(hour, DAY_US)
    start = bucket_start(end, DAY_US)
    if start % HOUR_US or end % HOUR_US:
        return None
    return start, end


def day_sql(kind: str, roles: Sequence[tuple[str, Role]]) -> str:
    """Per entity, the sums of the kind's hourly rollup rows over a day's hours (node, source,
    day start, day end): rows, distinct flags and interval flags ("a,b"), HF samples, the
    newest end, then the rollup's columns in order, the gauges' weighted sums left out."""
    select = [
        "entity_id",
        "SUM(rows_n)",
        "group_concat(DISTINCT flags)",
        "group_concat(DISTINCT iflags)",
        "SUM(hf_n)",
        "MAX(last_end_us)",
    ]
    for name, role in roles:
        if role is Role.COUNTER:
            select.append(f"SUM({name})")
        elif role is Role.GAUGE:
            select += ["NULL", f"SUM({wn_column(name)})", f"MAX({max_column(name)})"]
    return (
        f"SELECT {', '.join(select)} FROM {rollup_table(kind)} WHERE node_id = ? AND source = ?"
        " AND hour_end_us > ? AND hour_end_us <= ? GROUP BY entity_id"
    )


def upsert_sql(kind: str, roles: Sequence[tuple[str, Role]], tier: str = "h") -> str:
    """Adds every row of one interval (``interval_id``) of ``k_<kind>`` to its hour's (or
    quarter's) rollup.

    Parameters: node_id, source, the hour's (quarter's) end, the interval's flags, its end,
    its id."""
    select = ["?", "?", "?", "entity_id", "1", "flags", "?", "hf_n", "?"]
    updates = [
        "rows_n = rows_n + excluded.rows_n",
        "flags = flags | excluded.flags",
        "iflags = iflags | excluded.iflags",
        "hf_n = hf_n + excluded.hf_n",
        "last_end_us = max(last_end_us, excluded.last_end_us)",
    ]
    for name, role in roles:
        if role is Role.COUNTER:
            select.append(name)
            updates.append(f"{name} = coalesce({name} + excluded.{name}, {name}, excluded.{name})")
        elif role is Role.GAUGE:
            known = f"{name} IS NOT NULL AND hf_n > 0"
            ws, wn, mx = wsum_column(name), wn_column(name), max_column(name)
            select += [
                f"CASE WHEN {known} THEN {name} * hf_n END",
                f"CASE WHEN {known} THEN hf_n ELSE 0 END",
                mx,
            ]
            updates += [
                f"{ws} = coalesce({ws} + excluded.{ws}, {ws}, excluded.{ws})",
                f"{wn} = coalesce({wn}, 0) + coalesce(excluded.{wn}, 0)",
                f"{mx} = coalesce(max({mx}, excluded.{mx}), {mx}, excluded.{mx})",
            ]
    columns = [*_meta_columns(tier), *(c for c, _ in rollup_columns(roles))]
    return (
        f"INSERT INTO {rollup_table(kind, tier)} ({', '.join(columns)})"
        f" SELECT {', '.join(select)} FROM {table_name(kind)} WHERE interval_id = ?"
        f" ON CONFLICT (node_id, source, {TIER_END[tier]}, entity_id) DO UPDATE SET "
        + ", ".join(updates)
    )


def _meta_columns(tier: str) -> list[str]:
    """The columns a rollup row of the tier has before its values."""
    return [TIER_END[tier] if c == "hour_end_us" else c for c in ROLLUP_META]


class Rollups:
    """The rollup statements of one connection (one per kind, built when first needed)."""

    def __init__(self, conn: sqlite3.Connection, queries: Queries) -> None:
        self._conn = conn
        self._queries = queries
        self._sql: dict[tuple[str, str], str] = {}
        self._source_kinds: dict[str, list[str]] = {}
        self._marks: dict[tuple[int, str], int | None] = {}
        # days to roll up again before the commit: (node, source, end) -> start
        self._stale_days: dict[tuple[int, str, int], int] = {}

    def forget(self, kind: str | None = None) -> None:
        """Drop cached statements (a kind gained fields, or a source a kind)."""
        if kind is None:
            self._sql.clear()
        else:
            for tier in ("h", "q"):
                self._sql.pop((kind, tier), None)
        self._source_kinds.clear()

    def forget_marks(self) -> None:
        """Drop the cached marks and the days marked (a transaction that moved them was
        rolled back)."""
        self._marks.clear()
        self._stale_days.clear()

    def mark(self, node_id: int, source: str) -> int | None:
        """The source's newest hour rolled up (every hour up to it is); ``None``: none."""
        key = (node_id, source)
        if key not in self._marks:
            self._marks[key] = self._queries.rolled_until(node_id, source)
        return self._marks[key]

    def holds(self, node_id: int, source: str, hour: int) -> bool:
        """Whether the source's ``hour`` is rolled up (it is no later than the mark)."""
        mark = self.mark(node_id, source)
        return mark is not None and hour <= mark

    def roll_up_before(self, node_id: int, source: str, hour: int, newest_before_us: int) -> None:
        """The source writes in ``hour``, which is not rolled up, and its newest interval
        before ended at ``newest_before_us``: if that lies in an earlier hour not rolled up,
        that hour is over, and every hour after the mark before this one is rolled up."""
        mark = self.mark(node_id, source)
        newest_hour = hour_end(newest_before_us)
        if newest_hour < hour and (mark is None or newest_hour > mark):
            self.delete(node_id, source, mark, hour - HOUR_US)  # nothing, unless a stale mark
            self._replay(node_id, source, mark, hour - HOUR_US)
            self._marks[(node_id, source)] = hour - HOUR_US
            self._days_over(node_id, source, mark, hour - HOUR_US)

    def _days_over(self, node_id: int, source: str, after: int | None, until: int) -> None:
        """Mark the days whose last hour is in (after, until]: they are over."""
        first = after if after is not None else self._queries.first_hour(node_id, source)
        if first is None:
            return
        t = first + (HOUR_US if after is not None else 0)
        while t <= until:
            day = local_day(t)
            if day is None:
                t += HOUR_US
                continue
            if day[1] <= until:
                self._stale_days[(node_id, source, day[1])] = day[0]
            t = day[1] + HOUR_US

    def touch(self, node_id: int, source: str, hour: int) -> None:
        """The rollup of ``hour`` changed: the days that hold it are rolled up again."""
        day = local_day(hour)
        if day is not None:
            self._stale_days[(node_id, source, day[1])] = day[0]
        for end, start in self._queries.days_holding(node_id, source, hour - HOUR_US, hour):
            self._stale_days[(node_id, source, end)] = start

    def settle(self) -> None:
        """Roll up again the days marked (:meth:`touch`, or over), those whose hours are
        all rolled up; the others are dropped."""
        for (node_id, source, end), start in sorted(self._stale_days.items()):
            self._delete_day(node_id, source, end)
            mark = self.mark(node_id, source)
            if mark is not None and end <= mark:
                self._roll_up_day(node_id, source, start, end)
        self._stale_days.clear()

    def _delete_day(self, node_id: int, source: str, end: int) -> None:
        where = "WHERE node_id = ? AND source = ? AND day_end_us = ?"
        for table in ("interval_day", TIER_ABSENT["d"], *self._queries.tier_tables("d")):
            self._conn.execute(f"DELETE FROM {table} {where}", (node_id, source, end))

    def _roll_up_day(self, node_id: int, source: str, start: int, end: int) -> None:
        """The day's rows from its hours' (nothing where it has none; nothing either where
        a sum is beyond 64 bits: readers then add the hours)."""
        span = (node_id, source, start, end)
        n, duration, flags, last = self._conn.execute(
            "SELECT SUM(n), SUM(duration_us), group_concat(DISTINCT flags), MAX(last_end_us)"
            " FROM interval_hour WHERE node_id = ? AND source = ? AND hour_end_us > ?"
            " AND hour_end_us <= ?",
            span,
        ).fetchone()
        if not n:
            return
        self._conn.execute(
            "INSERT INTO interval_day (node_id, source, day_end_us, day_start_us, n,"
            " duration_us, flags, last_end_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (node_id, source, end, start, n, duration, or_flags(flags), last),
        )
        self._conn.execute(
            "INSERT INTO absent_day (node_id, source, day_end_us, kind, n, duration_us)"
            " SELECT node_id, source, ?, kind, SUM(n), SUM(duration_us) FROM absent_hour"
            " WHERE node_id = ? AND source = ? AND hour_end_us > ? AND hour_end_us <= ?"
            " GROUP BY kind",
            (end, *span),
        )
        try:
            for kind in self.kinds_of(source):
                roles = self._queries.declared(kind)
                rows = self._conn.execute(day_sql(kind, roles), span).fetchall()
                columns = [*_meta_columns("d"), *(c for c, _ in rollup_columns(roles))]
                self._conn.executemany(
                    f"INSERT INTO {rollup_table(kind, 'd')} ({', '.join(columns)})"
                    f" VALUES ({', '.join('?' * len(columns))})",
                    [
                        (node_id, source, end, entity, rows_n, or_flags(f), or_flags(i), *rest)
                        for entity, rows_n, f, i, *rest in rows
                    ],
                )
        except sqlite3.OperationalError as exc:
            if "overflow" not in str(exc):
                raise
            self._delete_day(node_id, source, end)

    def roll_up_days(self) -> None:
        """Every day over of every source, afresh (the last step of a backfill)."""
        for table in ("interval_day", TIER_ABSENT["d"], *self._queries.tier_tables("d")):
            self._conn.execute(f"DELETE FROM {table}")
        for node_id, source in self._queries.rolled_sources():
            mark = self.mark(node_id, source)
            if mark is not None:
                self._days_over(node_id, source, None, mark)
        self.settle()

    def _statement(self, kind: str, tier: str) -> str:
        sql = self._sql.get((kind, tier))
        if sql is None:
            sql = self._sql[(kind, tier)] = upsert_sql(kind, self._queries.declared(kind), tier)
        return sql

    def ensure(self, kind: str, roles: Sequence[tuple[str, Role]]) -> None:
        """Create the kind's rollup tables, or add the columns of fields it gained."""
        for tier in ("h", "q", "d"):
            table = rollup_table(kind, tier)
            self._conn.execute(rollup_ddl(kind, roles, tier))
            have = self._queries.table_columns(table)
            for statement in added_columns(table, rollup_columns(roles), have):
                self._conn.execute(statement)

    def kinds_of(self, source: str) -> list[str]:
        found = self._source_kinds.get(source)
        if found is None:
            found = self._source_kinds[source] = self._queries.kinds_of(source)
        return found

    def add(
        self,
        node_id: int,
        source: str,
        interval_id: int,
        end_us: int,
        duration_us: int,
        flags: int,
        kinds: Sequence[str],
    ) -> None:
        """Adds one stored interval and its rows of ``kinds`` to their hour and quarter."""
        for tier, end in (("h", hour_end(end_us)), ("q", quarter_end(end_us))):
            self._conn.execute(
                _INTERVAL_UPSERT[tier], (node_id, source, end, duration_us, flags, end_us)
            )
            for kind in kinds:
                added = self._conn.execute(
                    self._statement(kind, tier), (node_id, source, end, flags, end_us, interval_id)
                ).rowcount
                if not added:  # the interval carried none of the kind's rows
                    self._conn.execute(
                        _ABSENT_UPSERT[tier], (node_id, source, end, kind, duration_us)
                    )

    def delete(self, node_id: int, source: str, after_hour: int | None, until_hour: int) -> None:
        """Deletes the rollups of hours in (after_hour, until_hour] of one node and source
        (the days that hold them are rolled up again, :meth:`settle`)."""
        params: list[object] = [node_id, source, until_hour]
        if after_hour is not None:
            params.append(after_hour)
        for tier in ("h", "q"):  # an hour is whole quarters
            column = TIER_END[tier]
            where = f"node_id = ? AND source = ? AND {column} <= ?"
            if after_hour is not None:
                where += f" AND {column} > ?"
            tables = (TIER_INTERVALS[tier], TIER_ABSENT[tier], *self._queries.tier_tables(tier))
            for table in tables:
                self._conn.execute(f"DELETE FROM {table} WHERE {where}", params)
        after = after_hour if after_hour is not None else -(1 << 62)
        for end, start in self._queries.days_holding(node_id, source, after, until_hour):
            self._stale_days[(node_id, source, end)] = start

    def rebuild(self, node_id: int, source: str, hour: int) -> None:
        """The hour's rollups again from its raw rows, in interval-end order."""
        self.delete(node_id, source, hour - HOUR_US, hour)
        self._replay(node_id, source, hour - HOUR_US, hour)

    def trim(self, node_id: int, source: str, hour: int) -> None:
        """After retention deleted this source's intervals up to some time in ``hour``: no
        rollup for older hours, and this one from what is left of it if it was rolled up
        (an hour after the mark stays to be rolled up when it is over)."""
        mark = self.mark(node_id, source)
        self.delete(node_id, source, None, hour)
        self._marks.pop((node_id, source), None)
        if mark is not None and hour <= mark:
            self._replay(node_id, source, hour - HOUR_US, hour)

    def _replay(self, node_id: int, source: str, after_us: int | None, until_us: int) -> int:
        kinds = self.kinds_of(source)
        infos = self._queries.intervals(node_id, [source], after_us, until_us, newest_first=False)
        for i in infos:
            self.add(node_id, source, i.id, i.end_us, i.duration_us, i.flags, kinds)
        return len(infos)

    def claim(self) -> None:
        """Name this way of keeping the rollups in ``meta`` (``schema.READY_VALUE``)."""
        self._conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (READY_KEY, READY_VALUE)
        )

    # --- databases written before rollups ----------------------------------------------

    def backfill_steps(self, chunk_hours: int = 24) -> Iterator[Callable[[], None]]:
        """Steps that together roll up every interval of the database (each to be run in a
        transaction of its own, so a reader is never blocked long): make the tables, clear
        what an interrupted backfill left, then a day of one source at a time."""
        conn = self._conn

        def prepare() -> None:
            # readers read the raw rows until the last step names the way again
            conn.execute("DELETE FROM meta WHERE key = ?", (READY_KEY,))
            for ddl in INTERVAL_ROLLUPS:
                conn.execute(ddl)
            for table in self._queries.kind_tables():
                kind = table[2:]
                self.ensure(kind, self._queries.declared(kind))
            for tier in ("h", "q", "d"):
                for table in (
                    TIER_INTERVALS[tier],
                    TIER_ABSENT[tier],
                    *self._queries.tier_tables(tier),
                ):
                    conn.execute(f"DELETE FROM {table}")
            self.forget()

        yield prepare
        spans = self._queries.source_spans()
        step = chunk_hours * HOUR_US
        for node_id, source, first, last in spans:
            start = hour_end(first) - HOUR_US
            while start < last:

                def one(node_id: int = node_id, source: str = source, start: int = start) -> None:
                    self._replay(node_id, source, start, start + step)

                yield one
                start += step

        def days_and_claim() -> None:
            self._marks.clear()
            self.roll_up_days()
            self.claim()

        yield days_and_claim
