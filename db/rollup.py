"""Hourly rollups: kept by the store in the same transaction as each interval it writes.

An interval belongs to the UTC hour its end falls in, (H - 1 h, H], recorded as
``hour_end_us`` = H: the rule ``load_slots`` uses to put intervals into buckets. Writing an
interval adds it to its hour's ``interval_hour`` row and adds each of its entity rows to the
hour's ``h_<kind>`` row by an SQL upsert that reads the row just stored, so the rollup sees
exactly the values a reader of ``k_<kind>`` sees. Gauges are rolled up as the sum of
average x ``hf_n`` over the rows that have both (their weight summed beside it) and the
maximum; the sum is accumulated in interval-end order, one double addition per interval,
which ``db/buckets.py`` repeats on raw rows so both give the same bits. An interval written
out of order (its hour already holds a later one of the same source) makes the store
rebuild that hour from the raw rows, in order. Retention deletes whole hours' rollups and
rebuilds the hour it cut into.

A database written before rollups existed has no ``rollups`` key in ``meta``: opening it for
writing backfills every hour (:func:`backfill`); until then readers use the raw rows.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from esatui.db.records import max_column
from esatui.db.schema import (
    INTERVAL_HOUR,
    ROLLUP_META,
    ensure_rollup,
    existing_columns,
    kind_tables,
    rollup_columns,
    rollup_table,
    rollup_tables,
    table_name,
    wn_column,
    wsum_column,
)

HOUR_US = 3_600_000_000
READY_KEY = "rollups"
READY_VALUE = "hourly"

_INTERVAL_UPSERT = (
    "INSERT INTO interval_hour (node_id, source, hour_end_us, n, duration_us, flags,"
    " last_end_us) VALUES (?, ?, ?, 1, ?, ?, ?)"
    " ON CONFLICT (node_id, source, hour_end_us) DO UPDATE SET n = n + 1,"
    " duration_us = duration_us + excluded.duration_us, flags = flags | excluded.flags,"
    " last_end_us = max(last_end_us, excluded.last_end_us)"
)


def hour_end(time_us: int) -> int:
    """The end of the UTC hour ``time_us`` belongs to: (H - 1 h, H] -> H."""
    return -(-time_us // HOUR_US) * HOUR_US


def roles_of(conn: sqlite3.Connection, kind: str) -> list[tuple[str, str]]:
    """(field, role) as the kind was last declared, in declaration order."""
    row = conn.execute("SELECT fields FROM kind WHERE name = ?", (kind,)).fetchone()
    return [] if row is None else [(f["name"], f["role"]) for f in json.loads(row[0])]


def upsert_sql(kind: str, roles: Sequence[tuple[str, str]]) -> str:
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
        if role == "counter":
            select.append(name)
            updates.append(f"{name} = coalesce({name} + excluded.{name}, {name}, excluded.{name})")
        elif role == "gauge":
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

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._sql: dict[str, str] = {}
        self._source_kinds: dict[str, list[str]] = {}

    def forget(self, kind: str | None = None) -> None:
        """Drop cached statements (a kind gained fields, or a source a kind)."""
        if kind is None:
            self._sql.clear()
        else:
            self._sql.pop(kind, None)
        self._source_kinds.clear()

    def _statement(self, kind: str) -> str:
        sql = self._sql.get(kind)
        if sql is None:
            sql = self._sql[kind] = upsert_sql(kind, roles_of(self._conn, kind))
        return sql

    def kinds_of(self, source: str) -> list[str]:
        found = self._source_kinds.get(source)
        if found is None:
            found = self._source_kinds[source] = [
                r[0]
                for r in self._conn.execute(
                    "SELECT kind FROM kind_source WHERE source = ? ORDER BY kind", (source,)
                )
            ]
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
        for table in ("interval_hour", *rollup_tables(self._conn)):
            self._conn.execute(f"DELETE FROM {table} WHERE {where}", params)

    def rebuild(self, node_id: int, source: str, hour: int) -> None:
        """The hour's rollups again from its raw rows, in interval-end order."""
        self.delete(node_id, source, hour - HOUR_US, hour)
        self._replay(node_id, source, hour - HOUR_US, hour)

    def trim(self, node_id: int, source: str, hour: int) -> None:
        """After retention deleted this source's intervals up to some time in ``hour``: no
        rollup for older hours, and this one from what is left of it."""
        self.delete(node_id, source, None, hour)
        self._replay(node_id, source, hour - HOUR_US, hour)

    def _replay(self, node_id: int, source: str, after_us: int, until_us: int) -> int:
        kinds = self.kinds_of(source)
        rows = self._conn.execute(
            "SELECT id, end_us, duration_us, flags FROM interval WHERE node_id = ? AND"
            " source = ? AND end_us > ? AND end_us <= ? ORDER BY end_us",
            (node_id, source, after_us, until_us),
        ).fetchall()
        for interval_id, end_us, duration_us, flags in rows:
            self.add(node_id, source, interval_id, end_us, duration_us, flags, kinds)
        return len(rows)

    # --- databases written before rollups ----------------------------------------------

    def backfill_steps(self, chunk_hours: int = 24) -> Iterator[Callable[[], None]]:
        """Steps that together roll up every interval of the database (each to be run in a
        transaction of its own, so a reader is never blocked long): make the tables, clear
        what an interrupted backfill left, then a day of one source at a time."""
        conn = self._conn

        def prepare() -> None:
            conn.execute(INTERVAL_HOUR)
            for table in kind_tables(conn):
                kind = table[2:]
                ensure_rollup(conn, kind, roles_of(conn, kind))
            for table in ("interval_hour", *rollup_tables(conn)):
                conn.execute(f"DELETE FROM {table}")
            self.forget()

        yield prepare
        spans = conn.execute(
            "SELECT node_id, source, MIN(end_us), MAX(end_us) FROM interval"
            " GROUP BY node_id, source"
        ).fetchall()
        step = chunk_hours * HOUR_US
        for node_id, source, first, last in spans:
            start = hour_end(first) - HOUR_US
            while start < last:

                def one(node_id: int = node_id, source: str = source, start: int = start) -> None:
                    self._replay(node_id, source, start, start + step)

                yield one
                start += step

        def done() -> None:
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (READY_KEY, READY_VALUE)
            )

        yield done


def ready(conn: sqlite3.Connection) -> bool:
    """Whether every interval of the database is rolled up."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (READY_KEY,)).fetchone()
    except sqlite3.OperationalError:
        return False
    return row is not None and row[0] == READY_VALUE


def rollup_rows(conn: sqlite3.Connection) -> dict[str, int]:
    """Rows per kind's rollup table, for ``esatui db info``."""
    return {
        table[2:]: int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
        for table in rollup_tables(conn)
    }


# --- reading: hours summed into buckets --------------------------------------------------

# The bucket of an hour: as ``query.bucket_end`` for any end in the hour, when the local
# offset is a whole number of hours and the same over the hour.
_BUCKET = "((hour_end_us + :off + :len - 1) / :len) * :len - :off"
_RANGE = "node_id = :node AND source = :source AND hour_end_us >= :first AND hour_end_us <= :last"


def _params(
    node_id: int, source: str, first: int, last: int, offset_us: int, length_us: int
) -> dict[str, object]:
    return {
        "node": node_id,
        "source": source,
        "first": first,
        "last": last,
        "off": offset_us,
        "len": length_us,
    }


def interval_buckets(
    conn: sqlite3.Connection,
    node_id: int,
    source: str,
    first: int,
    last: int,
    offset_us: int,
    length_us: int,
) -> list[tuple[int, int, int, str]]:
    """(bucket end, intervals, summed duration, distinct flags "a,b") of the hours
    first..last (hour ends) of one source."""
    return conn.execute(
        f"SELECT {_BUCKET} AS b, SUM(n), SUM(duration_us), group_concat(DISTINCT flags)"
        f" FROM interval_hour WHERE {_RANGE} GROUP BY b",
        _params(node_id, source, first, last, offset_us, length_us),
    ).fetchall()


def rollup_has(conn: sqlite3.Connection, kind: str, columns: Sequence[str]) -> bool:
    found = set(existing_columns(conn, rollup_table(kind)))
    return bool(found) and set(columns) <= found


def kind_buckets(
    conn: sqlite3.Connection,
    kind: str,
    counters: Sequence[str],
    gauges: Sequence[str],
    params: tuple[int, str, int, int, int, int],
) -> list[tuple[Any, ...]]:
    """Per bucket and entity: (bucket end, entity_id, rows, distinct flags, distinct
    interval flags, hf_n, newest end, *counter sums, *gauge weights, *gauge maxima).

    ``params``: node_id, source, first and last hour end, UTC offset, bucket length."""
    select = [
        f"{_BUCKET} AS b",
        "entity_id",
        "SUM(rows_n)",
        "group_concat(DISTINCT flags)",
        "group_concat(DISTINCT iflags)",
        "SUM(hf_n)",
        "MAX(last_end_us)",
        *(f"SUM({c})" for c in counters),
        *(f"SUM({wn_column(g)})" for g in gauges),
        *(f"MAX({max_column(g)})" for g in gauges),
    ]
    return conn.execute(
        f"SELECT {', '.join(select)} FROM {rollup_table(kind)} WHERE {_RANGE}"
        " GROUP BY b, entity_id",
        _params(*params),
    ).fetchall()


def gauge_hours(
    conn: sqlite3.Connection,
    kind: str,
    gauges: Sequence[str],
    params: tuple[int, str, int, int, int, int],
) -> list[tuple[Any, ...]]:
    """(bucket end, entity_id, *weighted sums) of every hour that has one: the parts a
    bucket's weighted sums are made of (added with ``math.fsum``, never in SQL, whose
    float sums depend on its version and the order it reads in)."""
    sums = [wsum_column(g) for g in gauges]
    return conn.execute(
        f"SELECT {_BUCKET} AS b, entity_id, {', '.join(sums)} FROM {rollup_table(kind)}"
        f" WHERE {_RANGE} AND ({' OR '.join(f'{s} IS NOT NULL' for s in sums)})",
        _params(*params),
    ).fetchall()
