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

A database written before rollups existed has no ``rollups`` key in ``meta``: opening it for
writing backfills every hour (:meth:`Rollups.backfill_steps`); until then readers use the raw
rows. This is the writing side; the rollups are read in ``db/reading.py``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence

from esatui.collectors.model import Role
from esatui.db.reading import Queries
from esatui.db.records import max_column
from esatui.db.schema import (
    HOUR_US,
    INTERVAL_HOUR,
    READY_KEY,
    READY_VALUE,
    ROLLUP_META,
    added_columns,
    hour_end,
    rollup_columns,
    rollup_ddl,
    rollup_table,
    table_name,
    wn_column,
    wsum_column,
)

_INTERVAL_UPSERT = (
    "INSERT INTO interval_hour (node_id, source, hour_end_us, n, duration_us, flags,"
    " last_end_us) VALUES (?, ?, ?, 1, ?, ?, ?)"
    " ON CONFLICT (node_id, source, hour_end_us) DO UPDATE SET n = n + 1,"
    " duration_us = duration_us + excluded.duration_us, flags = flags | excluded.flags,"
    " last_end_us = max(last_end_us, excluded.last_end_us)"
)


def upsert_sql(kind: str, roles: Sequence[tuple[str, Role]]) -> str:
    """Adds every row of one interval (``interval_id``) of ``k_<kind>`` to its hour's rollup.

    Parameters: node_id, source, hour_end_us, the interval's flags, its end, its id."""
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
    columns = [*ROLLUP_META, *(c for c, _ in rollup_columns(roles))]
    return (
        f"INSERT INTO {rollup_table(kind)} ({', '.join(columns)})"
        f" SELECT {', '.join(select)} FROM {table_name(kind)} WHERE interval_id = ?"
        " ON CONFLICT (node_id, source, hour_end_us, entity_id) DO UPDATE SET " + ", ".join(updates)
    )


class Rollups:
    """The rollup statements of one connection (one per kind, built when first needed)."""

    def __init__(self, conn: sqlite3.Connection, queries: Queries) -> None:
        self._conn = conn
        self._queries = queries
        self._sql: dict[str, str] = {}
        self._source_kinds: dict[str, list[str]] = {}
        self._marks: dict[tuple[int, str], int | None] = {}

    def forget(self, kind: str | None = None) -> None:
        """Drop cached statements (a kind gained fields, or a source a kind)."""
        if kind is None:
            self._sql.clear()
        else:
            self._sql.pop(kind, None)
        self._source_kinds.clear()

    def forget_marks(self) -> None:
        """Drop the cached marks (a transaction that moved them was rolled back)."""
        self._marks.clear()

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

    def _statement(self, kind: str) -> str:
        sql = self._sql.get(kind)
        if sql is None:
            sql = self._sql[kind] = upsert_sql(kind, self._queries.declared(kind))
        return sql

    def ensure(self, kind: str, roles: Sequence[tuple[str, Role]]) -> None:
        """Create the kind's rollup table, or add the columns of fields it gained."""
        table = rollup_table(kind)
        self._conn.execute(rollup_ddl(kind, roles))
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
        """Adds one stored interval and its rows of ``kinds`` to their hour."""
        hour = hour_end(end_us)
        self._conn.execute(_INTERVAL_UPSERT, (node_id, source, hour, duration_us, flags, end_us))
        for kind in kinds:
            self._conn.execute(
                self._statement(kind), (node_id, source, hour, flags, end_us, interval_id)
            )

    def delete(self, node_id: int, source: str, after_hour: int | None, until_hour: int) -> None:
        """Deletes the rollups of hours in (after_hour, until_hour] of one node and source."""
        where = "node_id = ? AND source = ? AND hour_end_us <= ?"
        params: list[object] = [node_id, source, until_hour]
        if after_hour is not None:
            where += " AND hour_end_us > ?"
            params.append(after_hour)
        for table in ("interval_hour", *self._queries.rollup_tables()):
            self._conn.execute(f"DELETE FROM {table} WHERE {where}", params)

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
            conn.execute(INTERVAL_HOUR)
            for table in self._queries.kind_tables():
                kind = table[2:]
                self.ensure(kind, self._queries.declared(kind))
            for table in ("interval_hour", *self._queries.rollup_tables()):
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

        yield self.claim
