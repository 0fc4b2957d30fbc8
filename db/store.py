"""The SQLite store: opening (version check, migration), writing intervals, reading rows.

One recorder writes, any number of viewers read: WAL mode, one transaction per interval, so a
recorder killed at any instant leaves every committed interval and a database that opens.
The interval's hourly rollups (``db/rollup.py``) are kept in the same transaction.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from esatui import __version__
from esatui.collectors.model import Kind
from esatui.db.records import EntityRow, Interval, Value
from esatui.db.rollup import READY_KEY, READY_VALUE, Rollups, hour_end, ready
from esatui.db.schema import (
    FRAMEWORK,
    MIGRATIONS,
    SCHEMA_VERSION,
    Migration,
    ensure_kind,
    existing_columns,
    kind_columns,
    table_name,
)

_ROW_META = ("interval_id", "entity_id", "flags", "hf_n")


class StoreError(Exception):
    """A database that cannot be used, in one line."""


@dataclass(frozen=True, slots=True)
class IntervalInfo:
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


class Store:
    """A connection to one esatui database."""

    def __init__(self, conn: sqlite3.Connection, path: Path, readonly: bool) -> None:
        self._conn = conn
        self.path = path
        self.readonly = readonly
        self._lock = threading.Lock()
        self._nodes: dict[str, int] = {}
        self._entities: dict[tuple[int, str, str, str], int] = {}
        self._entity_by_id: dict[int, tuple[str, str, dict[str, str]]] = {}
        self._known_kinds: dict[str, tuple[str, ...]] = {}
        self._last_config: dict[tuple[int, str], str] = {}
        self._rollups = Rollups(conn)
        self._last_end: dict[tuple[int, str], int] = {}  # newest end written per node, source
        self._rollups_ready = False

    # --- opening ---------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: Path | str,
        *,
        create: bool = True,
        readonly: bool = False,
        migrations: Mapping[int, Migration] = MIGRATIONS,
        version: int = SCHEMA_VERSION,
    ) -> Store:
        path = Path(path)
        if not path.exists():
            if readonly or not create:
                raise StoreError(f"no database at {path}")
            path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(
                path, timeout=10.0, check_same_thread=False, isolation_level=None
            )
            store = cls(conn, path, readonly)
            store._prepare(migrations, version)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path} is not a usable esatui database ({exc})") from None
        return store

    def _prepare(self, migrations: Mapping[int, Migration], version: int) -> None:
        conn = self._conn
        conn.execute("PRAGMA busy_timeout = 10000")
        found = conn.execute("PRAGMA user_version").fetchone()[0]
        fresh = found == 0 and not conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone()
        if fresh:
            if self.readonly:
                raise StoreError(f"{self.path} is empty, not an esatui database")
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
            conn.execute("PRAGMA journal_mode = WAL")
            with self.transaction():
                self._create_framework(version)
            found = version
        elif found == 0:
            raise StoreError(f"{self.path} is an SQLite database but not an esatui one")
        if found > version:
            raise StoreError(
                f"{self.path} has schema version {found}, newer than this esatui reads "
                f"({version}): upgrade esatui"
            )
        if found < version:
            if self.readonly:
                raise StoreError(
                    f"{self.path} has schema version {found}; open it once for writing "
                    f"to migrate it to {version}"
                )
            self._migrate(found, version, migrations)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        if self.readonly:
            conn.execute("PRAGMA query_only = 1")
        elif not ready(conn):
            self._backfill()

    def _backfill(self) -> None:
        """Roll up a database written before rollups existed, a day of a source per
        transaction; readers use the raw rows until the last step marks it done."""
        for step in self._rollups.backfill_steps():
            with self.transaction():
                step()

    def _create_framework(self, version: int) -> None:
        for statement in FRAMEWORK.split(";"):
            if statement.strip():
                self._conn.execute(statement)
        self._conn.executemany(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            [
                ("created_by", f"esatui {__version__}"),
                ("schema_version", str(version)),
                (READY_KEY, READY_VALUE),
            ],
        )
        self._conn.execute(f"PRAGMA user_version = {int(version)}")

    def _migrate(self, found: int, version: int, migrations: Mapping[int, Migration]) -> None:
        backup = self.path.with_name(f"{self.path.name}.schema{found}.bak")
        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        shutil.copy2(self.path, backup)
        with self.transaction():
            for v in range(found, version):
                step = migrations.get(v)
                if step is None:
                    raise StoreError(f"no migration from schema version {v} to {v + 1}")
                step(self._conn)
            self._conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
                (str(version),),
            )
            self._conn.execute(f"PRAGMA user_version = {int(version)}")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def transaction(self) -> _Transaction:
        return _Transaction(self._conn)

    # --- writing ---------------------------------------------------------------------

    def register(self, source: str, kinds: Iterable[Kind]) -> None:
        """Make sure every kind a source writes has its table, with all its fields."""
        with self._lock, self.transaction():
            for kind in kinds:
                ensure_kind(self._conn, kind)
                fields = json.dumps(
                    [
                        {
                            "name": f.name,
                            "role": f.role.value,
                            "unit": f.unit,
                            "provisional": f.provisional,
                            "doc": f.doc,
                        }
                        for f in kind.fields
                    ]
                )
                self._conn.execute(
                    "INSERT OR REPLACE INTO kind (name, doc, fields) VALUES (?, ?, ?)",
                    (kind.name, kind.doc, fields),
                )
                self._conn.execute(
                    "INSERT OR IGNORE INTO kind_source (kind, source) VALUES (?, ?)",
                    (kind.name, source),
                )
                self._known_kinds[kind.name] = tuple(c for c, _ in kind_columns(kind))
                self._rollups.forget(kind.name)

    def write(self, interval: Interval) -> int | None:
        """Commit one interval with all its rows; ``None`` if it was already recorded."""
        with self._lock, self.transaction():
            node_id = self._node_id(interval.node)
            late = self._written_later(node_id, interval.source, interval.end_us)
            cur = self._conn.execute(
                "INSERT OR IGNORE INTO interval (node_id, source, start_us, end_us, duration_us,"
                " flags) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    node_id,
                    interval.source,
                    interval.start_us,
                    interval.end_us,
                    interval.duration_us,
                    int(interval.flags),
                ),
            )
            if not cur.rowcount:
                return None
            interval_id = cur.lastrowid
            assert interval_id is not None
            by_kind: dict[str, list[EntityRow]] = {}
            for row in interval.rows:
                by_kind.setdefault(row.kind, []).append(row)
            for kind, rows in by_kind.items():
                self._insert_rows(node_id, interval_id, kind, rows)
            if late:
                # the hour's weighted gauge sums must be added in end order: redo it
                self._rollups.rebuild(node_id, interval.source, hour_end(interval.end_us))
            else:
                self._rollups.add(
                    node_id,
                    interval.source,
                    interval_id,
                    interval.end_us,
                    interval.duration_us,
                    int(interval.flags),
                    list(by_kind),
                )
                self._last_end[(node_id, interval.source)] = interval.end_us
            if interval.config:
                self._write_config(node_id, interval.source, interval.end_us, interval.config)
            return interval_id

    def _written_later(self, node_id: int, source: str, end_us: int) -> bool:
        """Whether the hour of ``end_us`` already holds a later interval of the source."""
        last = self._last_end.get((node_id, source))
        if last is None:
            row = self._conn.execute(
                "SELECT MAX(end_us) FROM interval WHERE node_id = ? AND source = ?",
                (node_id, source),
            ).fetchone()
            last = row[0]
            if last is None:
                return False
            self._last_end[(node_id, source)] = last
        if last <= end_us:
            return False
        return bool(
            self._conn.execute(
                "SELECT 1 FROM interval WHERE node_id = ? AND source = ? AND end_us > ?"
                " AND end_us <= ? LIMIT 1",
                (node_id, source, end_us, hour_end(end_us)),
            ).fetchone()
        )

    def _insert_rows(
        self, node_id: int, interval_id: int, kind: str, rows: list[EntityRow]
    ) -> None:
        columns = self._known_kinds.get(kind)
        if columns is None:
            raise StoreError(f"kind {kind!r} was not registered before writing")
        names = ", ".join((*_ROW_META, *columns))
        marks = ", ".join("?" * (len(_ROW_META) + len(columns)))
        sql = f"INSERT INTO {table_name(kind)} ({names}) VALUES ({marks})"
        self._conn.executemany(
            sql,
            [
                (
                    interval_id,
                    self._entity_id(node_id, kind, row.key, row.attrs),
                    int(row.flags),
                    row.hf_n,
                    *(row.values.get(c) for c in columns),
                )
                for row in rows
            ],
        )

    def _node_id(self, name: str) -> int:
        if name in self._nodes:
            return self._nodes[name]
        self._conn.execute("INSERT OR IGNORE INTO node (name) VALUES (?)", (name,))
        node_id = int(
            self._conn.execute("SELECT id FROM node WHERE name = ?", (name,)).fetchone()[0]
        )
        self._nodes[name] = node_id
        return node_id

    def _entity_id(self, node_id: int, kind: str, key: str, attrs: Mapping[str, str]) -> int:
        attrs_json = json.dumps(dict(attrs), sort_keys=True, separators=(",", ":"))
        ident = (node_id, kind, key, attrs_json)
        found = self._entities.get(ident)
        if found is not None:
            return found
        self._conn.execute(
            "INSERT OR IGNORE INTO entity (node_id, kind, key, attrs) VALUES (?, ?, ?, ?)", ident
        )
        entity_id = int(
            self._conn.execute(
                "SELECT id FROM entity WHERE node_id = ? AND kind = ? AND key = ? AND attrs = ?",
                ident,
            ).fetchone()[0]
        )
        self._entities[ident] = entity_id
        return entity_id

    def _write_config(
        self, node_id: int, source: str, time_us: int, config: Mapping[str, str]
    ) -> None:
        data = json.dumps(dict(config), sort_keys=True, separators=(",", ":"))
        if self._last_config.get((node_id, source)) is None:
            row = self._conn.execute(
                "SELECT data FROM config WHERE node_id = ? AND source = ? AND time_us <= ?"
                " ORDER BY time_us DESC LIMIT 1",
                (node_id, source, time_us),
            ).fetchone()
            if row is not None:
                self._last_config[(node_id, source)] = row[0]
        if self._last_config.get((node_id, source)) == data:
            return
        self._conn.execute(
            "INSERT OR REPLACE INTO config (node_id, source, time_us, data) VALUES (?, ?, ?, ?)",
            (node_id, source, time_us, data),
        )
        self._last_config[(node_id, source)] = data

    # --- reading ---------------------------------------------------------------------

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
        if after_us is not None:
            sql += " AND end_us > ?"
            params.append(after_us)
        if until_us is not None:
            sql += " AND end_us <= ?"
            params.append(until_us)
        sql += " ORDER BY end_us " + ("DESC" if newest_first else "ASC")
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [IntervalInfo(*r) for r in self._conn.execute(sql, params)]

    def kind_rows(self, kind: str, intervals: Sequence[IntervalInfo]) -> list[KindRow]:
        """Every row of ``kind`` recorded in the given intervals."""
        table = table_name(kind)
        if not intervals or not self._has_table(table):
            return []
        columns = [c for c in existing_columns(self._conn, table) if c not in _ROW_META]
        by_id = {i.id: i for i in intervals}
        out: list[KindRow] = []
        ids = sorted(by_id)
        for chunk_start in range(0, len(ids), 500):
            chunk = ids[chunk_start : chunk_start + 500]
            sql = (
                f"SELECT {', '.join((*_ROW_META, *columns))} FROM {table}"
                f" WHERE interval_id IN ({','.join('?' * len(chunk))})"
            )
            for r in self._conn.execute(sql, chunk):
                _, key, attrs = self._entity(r[1])
                out.append(
                    KindRow(
                        by_id[r[0]], key, attrs, dict(zip(columns, r[4:], strict=True)), r[2], r[3]
                    )
                )
        return out

    def trim_rollups(self, node_id: int, source: str, deleted_until_us: int) -> None:
        """After retention deleted a source's intervals ending up to ``deleted_until_us``
        (inside a transaction): drop the rollups of the hours deleted, redo the one cut."""
        self._rollups.trim(node_id, source, hour_end(deleted_until_us))

    def value_columns(self, kind: str) -> list[str]:
        """The value columns of ``k_<kind>`` in table order (none if it was never written)."""
        table = table_name(kind)
        if not self._has_table(table):
            return []
        return [c for c in existing_columns(self._conn, table) if c not in _ROW_META]

    def raw_rows(
        self, kind: str, interval_ids: Sequence[int], columns: Sequence[str]
    ) -> list[tuple[Any, ...]]:
        """(interval_id, entity_id, flags, hf_n, *columns) of every row of ``kind`` in the
        given intervals, as stored."""
        table = table_name(kind)
        if not interval_ids or not self._has_table(table):
            return []
        select = ", ".join((*_ROW_META, *columns))
        out: list[tuple[Any, ...]] = []
        ids = sorted(interval_ids)
        for chunk_start in range(0, len(ids), 500):
            chunk = ids[chunk_start : chunk_start + 500]
            out += self._conn.execute(
                f"SELECT {select} FROM {table} WHERE interval_id IN ({','.join('?' * len(chunk))})",
                chunk,
            ).fetchall()
        return out

    def raw_row_at(
        self,
        kind: str,
        node_id: int,
        source: str,
        end_us: int,
        entity_id: int,
        columns: Sequence[str],
    ) -> tuple[Any, ...] | None:
        """As :meth:`raw_rows`, the one row of an entity in the source's interval ending at
        ``end_us``."""
        select = ", ".join(f"r.{c}" for c in (*_ROW_META, *columns))
        row: tuple[Any, ...] | None = self._conn.execute(
            f"SELECT {select} FROM {table_name(kind)} r JOIN interval i ON i.id = r.interval_id"
            " WHERE i.node_id = ? AND i.source = ? AND i.end_us = ? AND r.entity_id = ?",
            (node_id, source, end_us, entity_id),
        ).fetchone()
        return row

    def entity(self, entity_id: int) -> tuple[str, dict[str, str]]:
        """An entity's key and attributes."""
        _, key, attrs = self._entity(entity_id)
        return key, attrs

    def rollups_ready(self) -> bool:
        """Whether every interval is rolled up by hour (a database written before rollups
        is not until it is opened once for writing)."""
        if not self._rollups_ready:
            self._rollups_ready = ready(self._conn)
        return self._rollups_ready

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
            row = (
                self._conn.execute(
                    "SELECT data FROM config WHERE node_id = ? AND source = ? AND time_us <= ?"
                    " ORDER BY time_us DESC LIMIT 1",
                    (node_id, source, time_us),
                ).fetchone()
                or self._conn.execute(
                    "SELECT data FROM config WHERE node_id = ? AND source = ?"
                    " ORDER BY time_us ASC LIMIT 1",
                    (node_id, source),
                ).fetchone()
            )
            if row is not None:
                merged.update(json.loads(row[0]))
        return merged

    def field_roles(self, kind: str) -> dict[str, str]:
        """Field name -> role ("counter" or "gauge") as declared when the kind was written."""
        row = self._conn.execute("SELECT fields FROM kind WHERE name = ?", (kind,)).fetchone()
        return {} if row is None else {f["name"]: f["role"] for f in json.loads(row[0])}

    def kind_fields(self) -> dict[str, list[dict[str, object]]]:
        return {
            name: json.loads(fields)
            for name, fields in self._conn.execute("SELECT name, fields FROM kind ORDER BY name")
        }

    def _has_table(self, table: str) -> bool:
        return bool(
            self._conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
            ).fetchone()
        )

    def _entity(self, entity_id: int) -> tuple[str, str, dict[str, str]]:
        found = self._entity_by_id.get(entity_id)
        if found is None:
            for eid, kind, key, attrs in self._conn.execute(
                "SELECT id, kind, key, attrs FROM entity WHERE id >= ?", (entity_id,)
            ):
                self._entity_by_id[eid] = (kind, key, json.loads(attrs))
            found = self._entity_by_id.get(entity_id, ("", "?", {}))
        return found

    @property
    def connection(self) -> sqlite3.Connection:
        """The raw connection, for maintenance (retention, info)."""
        return self._conn


class _Transaction:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self._conn.execute("COMMIT")
        else:
            self._conn.execute("ROLLBACK")
