"""``esatui db merge``: the recordings of other databases written into one, node by node.

Every interval of every node and source of a database is read back (its rows, flags and
the configuration its source reported) and written through the store, as the recorder
writes it: the hourly rollups follow, an interval the target already holds is recorded
once, and the kinds keep the fields their recording declared. So recordings of several
systems (or monitor imports of several z/VM systems) become one database that ESANODE and
``--node`` read together.

An interval the target already holds (same node, source and end) is compared with the one
there: the same data is a database merged again; other data is another system recorded
under the same node name, which the caller warns of (:class:`Skipped`).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from esatui.collectors.model import Field, Kind, Role
from esatui.db.database import StoreError, damaged, database_files
from esatui.db.reading import DamagedData, Queries, stored_json
from esatui.db.records import EntityRow, Interval
from esatui.db.sqlite_reader import SqliteReader
from esatui.db.store import Store

BATCH = 500  # intervals read at a time


@dataclass
class Skipped:
    """The intervals of one merged database the target held already, by node: with the
    same data (merged before) or with other data (another system under the same name)."""

    path: Path
    same: Counter[str] = field(default_factory=Counter)
    other: Counter[str] = field(default_factory=Counter)


@dataclass
class MergeStats:
    intervals: int = 0
    written: int = 0  # the others were in the target already
    nodes: set[str] | None = None
    skipped: list[Skipped] = field(default_factory=list)  # one per database merged


def declared_kinds(queries: Queries) -> dict[str, Kind]:
    """The kinds a database declares, as its recording declared them."""
    kinds: dict[str, Kind] = {}
    docs = queries.kind_docs()
    for name, fields in queries.kind_fields().items():
        try:
            declared = tuple(
                Field(
                    str(f["name"]),
                    Role(f["role"]),
                    str(f.get("unit", "")),
                    str(f.get("doc", "")),
                    bool(f.get("provisional", False)),
                )
                for f in fields
            )
        except (TypeError, KeyError, ValueError):
            raise DamagedData(f"kind {name}'s fields") from None
        kinds[name] = Kind(name, docs.get(name, ""), declared)
    return kinds


def intervals_of(reader: SqliteReader) -> Iterator[Interval]:
    """Every interval the database holds, node by node and source by source, oldest first,
    each with its rows and its source's configuration at its end."""
    queries = reader.queries
    for node in queries.nodes():
        node_id = queries.node_id(node)
        assert node_id is not None
        for source in sorted({s.source for s in queries.info()[1] if s.node == node}):
            kinds = queries.kinds_of(source)
            after: int | None = None
            while True:
                batch = queries.intervals(
                    node_id, [source], after, None, limit=BATCH, newest_first=False
                )
                if not batch:
                    break
                rows: dict[int, list[EntityRow]] = {i.id: [] for i in batch}
                for kind in kinds:
                    for row in queries.kind_rows(kind, batch):
                        rows[row.interval.id].append(
                            EntityRow(kind, row.key, row.attrs, row.values, row.flags, row.hf_n)
                        )
                for info in batch:
                    data = queries.config_data(node_id, source, info.end_us)
                    config = None if data is None else stored_json(data, f"{source}'s config")
                    yield Interval(
                        source,
                        node,
                        info.start_us,
                        info.end_us,
                        info.duration_us,
                        tuple(rows[info.id]),
                        info.flags,
                        config,
                    )
                after = batch[-1].end_us


RowContent = tuple[str, str, tuple[tuple[str, str], ...], tuple[tuple[str, float], ...], int, int]


def _content(rows: Iterable[EntityRow]) -> Counter[RowContent]:
    """An interval's rows, comparable whatever their order (and the kinds' other columns)."""
    return Counter(
        (
            r.kind,
            r.key,
            tuple(sorted(r.attrs.items())),
            tuple(sorted((k, v) for k, v in r.values.items() if v is not None)),
            int(r.flags),
            r.hf_n,
        )
        for r in rows
    )


def _joins(pending: list[Interval], interval: Interval) -> bool:
    """Whether ``interval`` is compared with ``pending``: same node and source, room left."""
    if not pending:
        return True
    first = pending[0]
    return len(pending) < BATCH and (first.node, first.source) == (interval.node, interval.source)


def _compare(target: Queries, pending: list[Interval], skipped: Skipped) -> None:
    """Count ``pending`` (intervals of one node and source the target held already) as the
    same as the target's or other, reading the target's in one pass."""
    if not pending:
        return
    node, source = pending[0].node, pending[0].source
    node_id = target.node_id(node)
    assert node_id is not None  # it holds this node's intervals
    ends = [i.end_us for i in pending]
    held = target.intervals(node_id, [source], min(ends) - 1, max(ends), newest_first=False)
    rows: dict[int, list[EntityRow]] = {i.id: [] for i in held}
    for kind in target.kinds_of(source):
        for row in target.kind_rows(kind, held):
            rows[row.interval.id].append(
                EntityRow(kind, row.key, row.attrs, row.values, row.flags, row.hf_n)
            )
    there = {i.end_us: i for i in held}
    for interval in pending:
        info = there.get(interval.end_us)
        same = (
            info is not None
            and (info.start_us, info.duration_us, info.flags)
            == (interval.start_us, interval.duration_us, int(interval.flags))
            and _content(rows[info.id]) == _content(interval.rows)
        )
        (skipped.same if same else skipped.other)[node] += 1
    pending.clear()


def merge(
    target: Path,
    sources: list[Path],
    progress: Callable[[str], None] | None = None,
    committed: Callable[[], None] | None = None,
) -> MergeStats:
    """Write every interval of ``sources`` into ``target`` (created when missing). Every
    source is opened before anything is written (a source that is no esatui database is
    refused first); all of it is one transaction, so a merge that fails leaves the target as
    it was, and a target this merge created goes again. ``committed`` is called once the
    transaction is: from there on the merge is done (closing the store, which checkpoints
    the whole merge out of the write-ahead log, may take seconds), and nothing undoes it."""
    for path in sources:
        if path.resolve() == target.resolve():
            raise ValueError(f"{path} is the database merged into")
    with contextlib.ExitStack() as readers:
        opened = [readers.enter_context(SqliteReader.open(path)) for path in sources]
        for path, reader in zip(sources, opened, strict=True):
            # what no recorder writes (a negative counter, an interval of no positive
            # duration) is not copied on: the merge would spread the damage
            what = reader.queries.damage()
            if what is not None:
                raise StoreError(damaged(path, what))
        made = not target.exists()
        done: list[bool] = []

        def commit() -> None:
            done.append(True)
            if committed is not None:
                committed()

        try:
            return _merge_into(target, list(zip(sources, opened, strict=True)), progress, commit)
        except BaseException:
            if made and not done:
                for part in database_files(target):
                    with contextlib.suppress(OSError):
                        part.unlink()
            raise


def _merge_into(
    target: Path,
    sources: list[tuple[Path, SqliteReader]],
    progress: Callable[[str], None] | None,
    committed: Callable[[], None],
) -> MergeStats:
    stats = MergeStats(nodes=set())
    with Store.open(target) as store:
        # one transaction: a merge that fails or is interrupted leaves the target as it was
        with store.all_or_nothing():
            _merge_sources(store, sources, stats, progress)
        committed()
    return stats


def _merge_sources(
    store: Store,
    sources: list[tuple[Path, SqliteReader]],
    stats: MergeStats,
    progress: Callable[[str], None] | None,
) -> None:
    """Every interval of ``sources`` written into ``store`` (compared, where it holds one
    already, with what it holds: what this merge wrote too, not yet committed)."""
    for path, reader in sources:
        skipped = Skipped(path)
        stats.skipped.append(skipped)
        pending: list[Interval] = []  # skipped, to compare: of one node and source
        kinds = declared_kinds(reader.queries)
        for source in {s.source for s in reader.queries.info()[1]}:
            store.register(
                source, [kinds[k] for k in reader.queries.kinds_of(source) if k in kinds]
            )
        for interval in intervals_of(reader):
            stats.intervals += 1
            assert stats.nodes is not None
            stats.nodes.add(interval.node)
            if store.write(interval) is not None:
                stats.written += 1
                continue
            if not _joins(pending, interval):
                _compare(store.queries, pending, skipped)
            pending.append(interval)
        _compare(store.queries, pending, skipped)
        if progress is not None:
            progress(f"{path}: merged")
