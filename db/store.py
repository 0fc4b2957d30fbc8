"""The writer: registering kinds, writing intervals, deleting old ones, vacuuming.

One recorder writes, any number of viewers read (``db/sqlite_reader.py``): WAL mode, one
transaction per interval, so a recorder killed at any instant leaves every committed interval
and a database that opens. The hourly rollups (``db/rollup.py``) of a source's hours that
are over are written in the transaction of its first interval of a later hour. What the
writer needs to look up, it asks its own :class:`~esatui.db.reading.Queries`; the
connection stays inside this module.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from esatui.collectors.model import Kind
from esatui.db.database import StoreError, Transaction, claim_for_writing, connect, rest
from esatui.db.reading import ROW_META, Queries
from esatui.db.records import EntityRow, Interval
from esatui.db.rollup import Rollups
from esatui.db.schema import (
    MIGRATIONS,
    READY_VALUE,
    SCHEMA_VERSION,
    Migration,
    added_columns,
    hour_end,
    kind_columns,
    kind_ddl,
    kind_roles,
    table_name,
)

__all__ = ["Store", "StoreError"]

AUTO_VACUUM_INCREMENTAL = 2


class Store:
    """A database opened for writing (``with``, or :meth:`close` after use)."""

    def __init__(
        self,
        path: Path,
        *,
        create: bool,
        make_dirs: bool = False,
        migrations: Mapping[int, Migration],
        version: int,
    ) -> None:
        made = not path.exists()
        self._writer = claim_for_writing(path, create=create, make_dirs=make_dirs)
        try:
            self._conn = connect(
                path, readonly=False, create=create, migrations=migrations, version=version
            )
        except BaseException:
            if made:  # no partial database: the file this writer made goes
                with contextlib.suppress(OSError):
                    path.unlink()
            self._writer.release(unused=True)
            raise
        self.path = path
        self._lock = threading.Lock()
        self._queries = Queries(self._conn)
        self._rollups = Rollups(self._conn, self._queries)
        self._nodes: dict[str, int] = {}
        self._entities: dict[tuple[int, str, str, str], int] = {}
        self._last_entity: dict[tuple[int, str, str], tuple[dict[str, str], int]] = {}
        self._known_kinds: dict[str, tuple[str, ...]] = {}
        self._last_config: dict[tuple[int, str], str] = {}
        self._last_config_seen: dict[tuple[int, str], dict[str, str]] = {}
        self._last_end: dict[tuple[int, str], int] = {}  # newest end written per node, source
        if self._queries.rollups_kept() != READY_VALUE:  # none, or hours only: afresh
            self._backfill()

    @classmethod
    def open(
        cls,
        path: Path | str,
        *,
        create: bool = True,
        make_dirs: bool = False,
        migrations: Mapping[int, Migration] = MIGRATIONS,
        version: int = SCHEMA_VERSION,
    ) -> Store:
        """Open (or create: 0600, and with ``make_dirs`` its missing directories 0700) a
        database for writing, as its one writer; an older schema is migrated in place after
        a backup copy, one written before rollups is rolled up (:class:`StoreError` in one
        line when it cannot be used or another process writes it)."""
        return cls(
            Path(path),
            create=create,
            make_dirs=make_dirs,
            migrations=migrations,
            version=version,
        )

    def _backfill(self) -> None:
        """Roll up a database written before rollups existed (or whose rollups were kept
        another way), a day of a source per transaction; readers use the raw rows until
        the last step marks it done."""
        for step in self._rollups.backfill_steps():
            with Transaction(self._conn):
                step()

    def close(self) -> None:
        try:
            with self._lock:
                rest(self._conn)
                self._conn.close()
        finally:
            self._writer.release()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def queries(self) -> Queries:
        """Reading through the writer's own connection: what it wrote, committed or not."""
        return self._queries

    @contextlib.contextmanager
    def all_or_nothing(self) -> Iterator[None]:
        """Every write inside is one transaction, committed at the end and rolled back on
        an exception (an interrupt included): nothing of it is kept, or all. The log holds
        every page written until then."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._conn.execute("ROLLBACK")
            self._forget_written()
            raise
        self._conn.execute("COMMIT")

    # --- writing ---------------------------------------------------------------------

    def register(self, source: str, kinds: Iterable[Kind]) -> None:
        """Make sure every kind a source writes has its table, with all its fields."""
        with self._lock, Transaction(self._conn):
            for kind in kinds:
                self._ensure(kind)
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

    def _ensure(self, kind: Kind) -> None:
        """Create the kind's table and its rollup, or add the columns of fields it gained."""
        table = table_name(kind.name)
        self._conn.execute(kind_ddl(kind))
        have = self._queries.table_columns(table)
        for statement in added_columns(table, kind_columns(kind), have):
            self._conn.execute(statement)
        self._rollups.ensure(kind.name, kind_roles(kind))

    def write(self, interval: Interval) -> int | None:
        """Commit one interval with all its rows; ``None`` if it was already recorded."""
        return self.write_all([interval])[0]

    def write_all(self, intervals: Sequence[Interval]) -> list[int | None]:
        """Commit several intervals (of any sources) in one transaction, all or none: the
        id of each, ``None`` for one that was already recorded."""
        with self._lock:
            try:
                with Transaction(self._conn):
                    ids = [self._write_one(interval) for interval in intervals]
                    self._rollups.settle()
                    return ids
            except BaseException:
                self._forget_written()  # what the rolled-back transaction had added
                raise

    def _forget_written(self) -> None:
        self._nodes.clear()  # a node first inserted by the rolled-back transaction is not there
        self._entities.clear()
        self._last_entity.clear()
        self._last_config.clear()
        self._last_config_seen.clear()
        self._last_end.clear()
        self._rollups.forget_marks()

    def _write_one(self, interval: Interval) -> int | None:
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
        newest = self._last_end.get((node_id, interval.source))
        hour = hour_end(interval.end_us)
        if self._rollups.holds(node_id, interval.source, hour):
            if late:  # the hour's weighted gauge sums must be added in end order: redo it
                self._rollups.rebuild(node_id, interval.source, hour)
            else:
                self._rollups.add(
                    node_id,
                    interval.source,
                    interval_id,
                    interval.end_us,
                    interval.duration_us,
                    int(interval.flags),
                    # every kind of the source: those the interval lacks are absent from it
                    list(dict.fromkeys([*self._rollups.kinds_of(interval.source), *by_kind])),
                )
            self._rollups.touch(node_id, interval.source, hour)
        elif newest is not None:  # the hour is rolled up once the source writes in a later one
            self._rollups.roll_up_before(node_id, interval.source, hour, newest)
        if newest is None or interval.end_us > newest:
            self._last_end[(node_id, interval.source)] = interval.end_us
        if interval.config:
            self._write_config(node_id, interval.source, interval.end_us, interval.config)
        return interval_id

    def _written_later(self, node_id: int, source: str, end_us: int) -> bool:
        """Whether the hour of ``end_us`` already holds a later interval of the source."""
        last = self._last_end.get((node_id, source))
        if last is None:
            last = self._queries.newest_end(node_id, source)
            if last is None:
                return False
            self._last_end[(node_id, source)] = last
        if last <= end_us:
            return False
        return self._queries.any_interval(node_id, source, end_us, hour_end(end_us))

    def _insert_rows(
        self, node_id: int, interval_id: int, kind: str, rows: list[EntityRow]
    ) -> None:
        columns = self._known_kinds.get(kind)
        if columns is None:
            raise StoreError(f"kind {kind!r} was not registered before writing")
        names = ", ".join((*ROW_META, *columns))
        marks = ", ".join("?" * (len(ROW_META) + len(columns)))
        sql = f"INSERT INTO {table_name(kind)} ({names}) VALUES ({marks})"
        self._conn.executemany(
            sql,
            [
                (
                    interval_id,
                    self._entity_id(node_id, kind, row.key, row.attrs),
                    int(row.flags),
                    row.hf_n,
                    *map(row.values.get, columns),
                )
                for row in rows
            ],
        )

    def _node_id(self, name: str) -> int:
        found = self._nodes.get(name)
        if found is None:
            self._conn.execute("INSERT OR IGNORE INTO node (name) VALUES (?)", (name,))
            found = self._queries.node_id(name)
            assert found is not None
            self._nodes[name] = found
        return found

    def _entity_id(self, node_id: int, kind: str, key: str, attrs: Mapping[str, str]) -> int:
        # the entity's last attributes and id: compared, not serialised, interval after
        # interval (attributes rarely change)
        last = self._last_entity.get((node_id, kind, key))
        if last is not None and last[0] == attrs:
            return last[1]
        attrs_json = json.dumps(dict(attrs), sort_keys=True, separators=(",", ":"))
        ident = (node_id, kind, key, attrs_json)
        found = self._entities.get(ident)
        if found is None:
            self._conn.execute(
                "INSERT OR IGNORE INTO entity (node_id, kind, key, attrs) VALUES (?, ?, ?, ?)",
                ident,
            )
            found = self._queries.entity_id(*ident)
            assert found is not None
            self._entities[ident] = found
        self._last_entity[(node_id, kind, key)] = (dict(attrs), found)
        return found

    def _write_config(
        self, node_id: int, source: str, time_us: int, config: Mapping[str, str]
    ) -> None:
        key = (node_id, source)
        if self._last_config_seen.get(key) == config:
            return  # as last written (compared, not serialised)
        data = json.dumps(dict(config), sort_keys=True, separators=(",", ":"))
        if self._last_config.get(key) is None:
            before = self._queries.config_data(node_id, source, time_us)
            if before is not None:
                self._last_config[key] = before
        if self._last_config.get(key) != data:
            self._conn.execute(
                "INSERT OR REPLACE INTO config (node_id, source, time_us, data)"
                " VALUES (?, ?, ?, ?)",
                (node_id, source, time_us, data),
            )
            self._last_config[key] = data
        self._last_config_seen[key] = dict(config)

    # --- retention -------------------------------------------------------------------

    def delete_oldest(self, until_us: int | None, count: int) -> int:
        """Delete up to ``count`` oldest intervals (ending before ``until_us``) with their
        rows; the rollups of the hours emptied go, the hour cut into is rolled up again."""
        with self._lock, Transaction(self._conn):
            ids = self._queries.oldest_ids(until_us, count)
            if not ids:
                return 0
            marks = ",".join("?" * len(ids))
            # oldest first, so each source loses every interval up to its newest one deleted
            cut = self._queries.newest_ends(ids)
            for table in self._queries.kind_tables():
                self._conn.execute(f"DELETE FROM {table} WHERE interval_id IN ({marks})", ids)
            self._conn.execute(f"DELETE FROM interval WHERE id IN ({marks})", ids)
            for node_id, source, last_us in cut:
                self._rollups.trim(node_id, source, hour_end(last_us))
            self._rollups.settle()
        return len(ids)

    def interval_count(self) -> int:
        return self._queries.interval_count()

    def source_count(self) -> int:
        return self._queries.source_count()

    def data_bytes(self) -> int:
        """Bytes the database uses (pages in use; free pages are not counted)."""
        return self._queries.data_bytes()

    def release_free_pages(self) -> None:
        """Give the pages freed by deletions back to the file system (every free page: the
        pragma frees one page per step, and ``execute`` steps a statement without result
        columns once, so it goes through ``executescript``, which steps it to its end), and
        the WAL with them."""
        with self._lock:
            if self._queries.auto_vacuum() == AUTO_VACUUM_INCREMENTAL:
                self._conn.executescript("PRAGMA incremental_vacuum;")
            else:  # a file made without incremental vacuum shrinks only by a rebuild
                self._conn.execute("VACUUM")
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def vacuum(self) -> None:
        """Rebuild the file to its smallest size."""
        with self._lock:
            self._conn.execute("VACUUM")
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def checkpoint(self) -> None:
        """Move the write-ahead log into the database file."""
        with self._lock:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def bound_wal(self, wal_bytes: int) -> None:
        """Keep the write-ahead log near ``wal_bytes``: checkpoint when it holds that much,
        and cut the file back to it after each checkpoint."""
        pages = max(1, wal_bytes // self._queries.page_size())
        with self._lock:
            self._conn.execute(f"PRAGMA wal_autocheckpoint = {int(pages)}").fetchall()
            self._conn.execute(f"PRAGMA journal_size_limit = {int(wal_bytes)}").fetchall()
