"""The SQLite backend of the reading interface (:class:`~esatui.db.reader.Reader`).

It opens a database read-only and answers through the queries of ``db/reading.py``: windows
and slots as recorded come from ``db/query.py``, in buckets of a chosen length from
``db/buckets.py``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from esatui.db import query
from esatui.db.database import connect, file_bytes, file_uri
from esatui.db.reader import EntityRows, KindEntityRows, Timeline, Window, as_one_span
from esatui.db.reading import Queries, SourceInfo
from esatui.db.schema import SCHEMA_VERSION
from esatui.db.slots import Slot


@dataclass(frozen=True)
class DatabaseInfo:
    """What ``esatui db info`` prints."""

    meta: dict[str, str]  # the meta table, the schema version, file and data bytes
    sources: list[SourceInfo]
    rows: dict[str, int]  # rows per kind
    rollup_rows: dict[str, int]  # hourly rollup rows per kind
    quarter_rows: dict[str, int]  # quarter-hour rollup rows per kind
    day_rows: dict[str, int]  # daily rollup rows per kind


_NEAR_US = 86_400_000_000  # a slot takes intervals that end up to one interval past it


class SqliteReader:
    """A database opened for reading (``with``, or :meth:`close` after use)."""

    def __init__(self, conn: sqlite3.Connection, path: Path, *, keep_buckets: bool = False) -> None:
        self._conn = conn
        self.path = path
        self.queries = Queries(conn)
        # keep the buckets read, for reading them again (the monitor's keys): an export or
        # a command reads each once
        self.keep_buckets = keep_buckets

    @classmethod
    def open(
        cls, path: Path | str, *, version: int = SCHEMA_VERSION, keep_buckets: bool = False
    ) -> SqliteReader:
        path = Path(path)
        return cls(connect(path, readonly=True, version=version), path, keep_buckets=keep_buckets)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> SqliteReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the Reader interface ---------------------------------------------------------

    def nodes(self) -> list[str]:
        return self.queries.nodes()

    def node(self, name: str | None) -> str | None:
        node_id = self.queries.node_id(name)
        return None if node_id is None else self.queries.node_name(node_id)

    def window(
        self,
        timeline: Timeline,
        after_us: int | None,
        until_us: int | None,
        *,
        limit: int | None = None,
        newest_first: bool = True,
        snap: bool = False,
    ) -> Window:
        node_id = self.queries.node_id(timeline.node)
        if node_id is None:
            return Window(timeline, "", (), after_us, until_us)
        if timeline.length_us is None:
            make = query.window
        else:
            from esatui.db import buckets  # an export as recorded starts without it

            make = buckets.window
        return make(self.queries, node_id, timeline, after_us, until_us, limit, newest_first, snap)

    def range_window(
        self, timeline: Timeline, after_us: int | None, until_us: int | None
    ) -> Window:
        node_id = self.queries.node_id(timeline.node)
        if node_id is None or timeline.length_us is not None:
            return as_one_span(self.window(timeline, after_us, until_us))
        return query.range_window(self.queries, node_id, timeline, after_us, until_us)

    def slots(self, window: Window, kinds: Sequence[str]) -> list[Slot]:
        node_id = self.queries.node_id(window.timeline.node)
        if node_id is None or not window.spans:
            return []
        if window.timeline.length_us is None:
            return query.slots(self.queries, node_id, window, kinds)
        from esatui.db import buckets

        return buckets.slots(self.queries, node_id, window, kinds, keep=self.keep_buckets)

    def config_at(self, node: str, time_us: int) -> dict[str, str]:
        node_id = self.queries.node_id(node)
        return {} if node_id is None else self.queries.config_at(node_id, time_us)

    def entity_rows(
        self,
        timeline: Timeline,
        kind: str,
        key: str,
        fields: Sequence[str],
        after_us: int | None,
        until_us: int | None,
        *,
        duration: bool = False,
        keyed_by: Sequence[str] = (),
    ) -> EntityRows | None:
        found = self._sole_source(timeline, kind, after_us, until_us, keyed_by)
        if found is None:
            return None
        node_id, source = found
        entities = self.queries.entities_keyed(node_id, kind, key)
        if len(entities) != 1:  # none, or its attributes changed: one slot may show either
            return None
        ((entity_id, attrs),) = entities
        rows = self.queries.entity_rows(
            kind, source, node_id, entity_id, fields, after_us, until_us, duration=duration
        )
        return EntityRows(source, tuple(fields), rows, attrs)

    def kind_entity_rows(
        self,
        timeline: Timeline,
        kind: str,
        fields: Sequence[str],
        after_us: int | None,
        until_us: int | None,
        *,
        duration: bool = False,
        keyed_by: Sequence[str] = (),
    ) -> KindEntityRows | None:
        found = self._sole_source(timeline, kind, after_us, until_us, keyed_by)
        if found is None:
            return None
        node_id, source = found
        rows = self.queries.every_entity_rows(
            kind, source, node_id, fields, after_us, until_us, duration=duration
        )
        entities = self.queries.kind_entities(node_id, kind)
        return KindEntityRows(source, tuple(fields), rows, entities)

    def _sole_source(
        self,
        timeline: Timeline,
        kind: str,
        after_us: int | None,
        until_us: int | None,
        keyed_by: Sequence[str],
    ) -> tuple[int, str] | None:
        """(node id, source) when the timeline as recorded takes its intervals in the range
        from one source, the only one that recorded ``kind`` for the node near the range (a
        slot there may merge its rows), nor recorded any the kinds ``keyed_by``: ``kind``
        the timeline's, or another of its kinds (ESACRYQ's APQNs beside its cards)."""
        node_id = self.queries.node_id(timeline.node)
        if node_id is None or timeline.length_us is not None:
            return None
        found = query.timeline_kind(self.queries, node_id, timeline, after_us, until_us)
        if found is None or (found[0] != kind and kind not in timeline.kinds):
            return None
        near = (
            None if after_us is None else after_us - _NEAR_US,
            None if until_us is None else until_us + _NEAR_US,
        )
        others = [(kind, s) for s in self.queries.sources_of(kind) if s != found[1]]
        others += [(k, s) for k in keyed_by for s in self.queries.sources_of(k)]
        if any(self.queries.recorded_in(k, node_id, s, *near) for k, s in others):
            return None
        return node_id, found[1]

    # --- SQLite only ------------------------------------------------------------------

    def copy_to(self, path: Path) -> None:
        """A consistent copy of the database at ``path`` (SQLite's online backup)."""
        target = sqlite3.connect(file_uri(path, "rwc"), uri=True)
        try:
            self._conn.backup(target)
        finally:
            target.close()

    def info(self) -> DatabaseInfo:
        meta, sources, rows, tiers = self.queries.info()
        meta["file_bytes"] = str(file_bytes(self.path))
        meta["data_bytes"] = str(self.queries.data_bytes())
        return DatabaseInfo(meta, sources, rows, tiers["h"], tiers["q"], tiers["d"])
