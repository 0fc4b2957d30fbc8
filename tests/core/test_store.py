"""The store: round trips, versions, migrations, concurrency and crash safety."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from esatui.collectors.model import Kind, Role, counter, gauge
from esatui.db.maintenance import prune, vacuum
from esatui.db.records import EntityRow, Interval
from esatui.db.schema import SCHEMA_VERSION
from esatui.db.sqlite_reader import SqliteReader
from esatui.db.store import Store, StoreError
from tests.fixtures.reading import sql
from tests.fixtures.recording import START_US, host_recording

KIND = Kind("thing", "test", (counter("ops", "count"), gauge("queue", "count")))


def interval(end_s: int, ops: int = 1, attrs: dict[str, str] | None = None) -> Interval:
    row = EntityRow(
        "thing", "a", attrs or {"type": "A"}, {"ops": ops, "queue": 1.5, "queue_max": 3.0}, 0, 2
    )
    return Interval("test", "n1", (end_s - 1) * 10**6, end_s * 10**6, 10**6, (row,))


def test_round_trip(db_path: Path) -> None:
    with Store.open(db_path) as store:
        store.register("test", [KIND])
        assert store.write(interval(10, ops=7)) is not None
        assert store.write(interval(11, ops=8, attrs={"type": "B"})) is not None
    with SqliteReader.open(db_path) as reader:
        queries = reader.queries
        node = queries.node_id("n1")
        assert node is not None
        infos = queries.intervals(node, ["test"])
        assert [i.end_us for i in infos] == [11 * 10**6, 10 * 10**6]
        rows = queries.kind_rows("thing", infos)
        assert sorted((r.values["ops"], r.attrs["type"]) for r in rows) == [(7, "A"), (8, "B")]
        assert rows[0].hf_n == 2
        assert queries.layout("thing").roles == {"ops": Role.COUNTER, "queue": Role.GAUGE}
        assert queries.sources_of("thing") == ["test"]


def test_wal_mode_and_incremental_vacuum(db_path: Path) -> None:
    """WAL while the writer has it open; at rest in rollback mode, so readers need no
    -wal or -shm file next to it."""
    with Store.open(db_path):
        conn = sqlite3.connect(db_path)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.close()
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_the_same_interval_twice_is_recorded_once(db_path: Path) -> None:
    with Store.open(db_path) as store:
        store.register("test", [KIND])
        assert store.write(interval(10)) is not None
        assert store.write(interval(10)) is None


def test_intervals_written_together_commit_together(db_path: Path) -> None:
    with Store.open(db_path) as store:
        store.register("test", [KIND])
        assert store.write(interval(10)) is not None
        ids = store.write_all([interval(10), interval(11), interval(12, attrs={"type": "B"})])
        assert ids[0] is None and None not in ids[1:]
        broken = Interval("test", "n1", 12 * 10**6, 13 * 10**6, 10**6, (interval(13).rows[0],))
        unknown = Interval("test", "n1", 13 * 10**6, 14 * 10**6, 10**6, ())
        bad_row = EntityRow("nope", "x", {}, {}, 0, 0)  # a kind never registered
        with pytest.raises(StoreError):
            store.write_all([broken, Interval("test", "n1", 0, 15 * 10**6, 1, (bad_row,))])
        # nothing of the failed batch is there, and what it had cached (the entity of
        # attributes "C") is forgotten with it
        c_row = EntityRow("thing", "a", {"type": "C"}, {"ops": 1}, 0, 0)
        with pytest.raises(StoreError):
            store.write_all([Interval("test", "n1", 0, 16 * 10**6, 1, (c_row, bad_row))])
        assert store.write(Interval("test", "n1", 0, 16 * 10**6, 1, (c_row,))) is not None
        assert store.write(unknown) is not None
        # a failed batch that was a node's first write: the node is written with the next one
        with pytest.raises(StoreError):
            store.write_all([Interval("test", "n2", 0, 10**6, 1, (interval(1).rows[0], bad_row))])
        assert store.write(Interval("test", "n2", 0, 10**6, 1, interval(1).rows)) is not None
    with SqliteReader.open(db_path) as reader:
        assert reader.nodes() == ["n1", "n2"]
        node = reader.queries.node_id("n1")
        assert node is not None
        infos = reader.queries.intervals(node, ["test"])
        assert [i.end_us // 10**6 for i in infos] == [16, 14, 12, 11, 10]
        rows = reader.queries.kind_rows("thing", infos)
        assert sorted(r.attrs["type"] for r in rows) == ["A", "A", "B", "C"]


def test_a_kind_that_gains_a_field_gains_a_column(db_path: Path) -> None:
    with Store.open(db_path) as store:
        store.register("test", [KIND])
        store.write(interval(10))
        bigger = Kind("thing", "test", (*KIND.fields, counter("extra", "count")))
        store.register("test", [bigger])
        store.write(
            Interval(
                "test",
                "n1",
                10**7,
                11 * 10**6,
                10**6,
                (EntityRow("thing", "a", {}, {"ops": 1, "extra": 5}),),
            )
        )
    with SqliteReader.open(db_path) as reader:
        queries = reader.queries
        node = queries.node_id("n1")
        assert node is not None
        rows = queries.kind_rows("thing", queries.intervals(node, ["test"]))
        assert sorted(str(r.values.get("extra")) for r in rows) == ["5", "None"]


def test_a_newer_schema_is_a_one_line_error(db_path: Path) -> None:
    Store.open(db_path).close()
    conn = sqlite3.connect(db_path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError, match="newer than this esatui reads") as err:
        Store.open(db_path)
    assert "\n" not in str(err.value)


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"this is not SQLite at all" * 100)
    with pytest.raises(StoreError, match="not a usable esatui database"):
        Store.open(path)


def test_another_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    with pytest.raises(StoreError, match="not an esatui one"):
        Store.open(path)


def test_missing_database_for_readers(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no database"):
        SqliteReader.open(tmp_path / "nope.sqlite")


def test_older_schema_is_migrated_in_place_after_a_backup(db_path: Path) -> None:
    calls: list[int] = []

    def to_next(conn: sqlite3.Connection) -> None:
        calls.append(1)
        conn.execute("CREATE TABLE added_in_next (x)")

    Store.open(db_path).close()
    Store.open(db_path, migrations={SCHEMA_VERSION: to_next}, version=SCHEMA_VERSION + 1).close()
    assert sql(db_path, "PRAGMA user_version") == [(SCHEMA_VERSION + 1,)]
    assert calls == [1]
    backup = db_path.with_name(f"{db_path.name}.schema{SCHEMA_VERSION}.bak")
    assert backup.exists()
    old = sqlite3.connect(backup)
    assert old.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_readers_cannot_migrate(db_path: Path) -> None:
    Store.open(db_path).close()
    with pytest.raises(StoreError, match="open it once for writing"):
        SqliteReader.open(db_path, version=SCHEMA_VERSION + 1)


def test_a_reader_sees_what_the_writer_commits(db_path: Path) -> None:
    writer = Store.open(db_path)
    writer.register("test", [KIND])
    reader = SqliteReader.open(db_path)
    writer.write(interval(10))
    queries = reader.queries
    node = queries.node_id("n1")
    assert node is not None
    assert len(queries.intervals(node, ["test"])) == 1
    writer.write(interval(11))
    assert len(queries.intervals(node, ["test"])) == 2
    with pytest.raises(sqlite3.OperationalError):
        reader._conn.execute("DELETE FROM interval")  # a reader's connection is query-only
    writer.close()
    reader.close()


WRITER = textwrap.dedent(
    """
    import sys
    from esatui.collectors.model import Kind, counter
    from esatui.db.records import EntityRow, Interval
    from esatui.db.store import Store

    kind = Kind("thing", "t", tuple(counter(f"c{i}", "count") for i in range(20)))
    store = Store.open(sys.argv[1])
    store.register("test", [kind])
    n = 0
    while True:
        n += 1
        rows = tuple(EntityRow("thing", str(k), {"k": str(k)},
                               {f"c{i}": n * i for i in range(20)}) for k in range(50))
        store.write(Interval("test", "n1", n * 10**6, (n + 1) * 10**6, 10**6, rows))
        print(n, flush=True)
    """
)


@pytest.mark.slow
def test_sigkill_mid_write_loses_no_committed_interval(tmp_path: Path, db_path: Path) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(db_path)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    committed = 0
    for line in proc.stdout:
        committed = int(line)
        if committed >= 60:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert sql(db_path, "PRAGMA integrity_check") == [("ok",)]
    with SqliteReader.open(db_path) as reader:
        queries = reader.queries
        node = queries.node_id("n1")
        assert node is not None
        infos = queries.intervals(node, ["test"])
        assert len(infos) >= committed
        rows = queries.kind_rows("thing", infos)
        assert len(rows) == 50 * len(infos)  # no interval without its rows


def test_prune_by_age_and_by_size(db_path: Path) -> None:
    host_recording(db_path, n_intervals=3000)
    ends = "SELECT end_us FROM interval WHERE source = 'host'"
    with Store.open(db_path) as store:
        before = len(sql(db_path, ends))
        now = START_US / 1e6 + 3000 * 60
        result = prune(store, keep_s=2000 * 60, now=now)
        remaining = sql(db_path, ends)
        assert result.intervals_deleted > 0
        assert len(remaining) == 2001 < before  # the one ending exactly at the cutoff stays
        assert min(end for (end,) in remaining) >= (now - 2000 * 60) * 1e6
        assert sql(db_path, "SELECT COUNT(*) FROM k_cpu") == [(4 * len(remaining),)]
        target = store.data_bytes() // 2
        prune(store, max_bytes=target)
        assert store.data_bytes() <= target
        assert sql(db_path, ends)  # the newest are kept
        vacuum(store)
    with SqliteReader.open(db_path) as reader:
        found = reader.info()
    assert found.meta["schema_version"] == str(SCHEMA_VERSION)
    assert {s.source for s in found.sources} == {"host", "esatui"}
    assert found.rows["cpu"] > 0


def test_bytes_per_interval_of_a_host_recording(db_path: Path) -> None:
    """Far below the 2 KB per interval budget for 8 CPUs (the benchmark measures it)."""
    host_recording(db_path, n_intervals=500, cpus=range(8))
    with Store.open(db_path) as store:
        store.vacuum()
        assert store.data_bytes() / 500 < 2048


@pytest.mark.parametrize("found", [-1, -(2**31)])
def test_an_impossible_schema_version_is_damage_for_readers_and_writers(
    db_path: Path, found: int
) -> None:
    """Before: readers said "open it once for writing to migrate it", writers "no migration
    from schema version -1 to 0", leaving a .schema-1.bak at every attempt."""
    host_recording(db_path, n_intervals=2)
    conn = sqlite3.connect(db_path)
    conn.execute(f"PRAGMA user_version = {found}")
    conn.commit()
    conn.close()
    said = f"{db_path} is damaged: its schema version is {found}, which no esatui writes; "
    for open_it in (SqliteReader.open, Store.open):
        with pytest.raises(StoreError) as caught:
            open_it(db_path).close()
        assert str(caught.value) == said + "restore it from a backup"
    assert sorted(p.name for p in db_path.parent.iterdir() if "bak" in p.name) == []


def test_a_writer_without_a_migration_makes_no_backup(db_path: Path) -> None:
    Store.open(db_path).close()
    with pytest.raises(StoreError, match="no migration from schema version"):
        Store.open(db_path, version=SCHEMA_VERSION + 1).close()
    assert not [p for p in db_path.parent.iterdir() if p.name.endswith(".bak")]
