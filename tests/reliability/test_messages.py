"""Issue 13 item 12: every bad input gives one sentence and the documented exit code."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from esatui.cli import main
from tests.fixtures.recording import host_recording


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "Traceback" not in err[0] and "Errno" not in err[0]
    return err[0]


@pytest.fixture
def recorded(db_path: Path) -> Path:
    host_recording(db_path, n_intervals=5)
    return db_path


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["replay", "--screen", "NOPE"], "no screen 'NOPE'"),
        (["export", "ESALNXC", "--width", "99999999999999999999"], "at most 4096 columns"),
        (["export", "ESALNXC", "--width", "1000000000"], "at most 4096 columns"),
        (["collect", "--interval", "99999999999d", "--count", "1"], "at most 1d"),
        (["export", "ESALNXC", "--threshold", "steal=50,10"], "WARN (50) is above CRIT (10)"),
        (["export", "ESALNXC", "--threshold", "steal=nan,10"], "give NAME=WARN,CRIT"),
        (
            ["sim", "--scenario", "mode-vm-day", "--duration", "2h", "--start", "9999-12-31T23:00"],
            "TOD clock's range",
        ),
        # before: any --node of collect and live was recorded, and shown raw on a terminal
        (["collect", "--node", "\x1b[31mX\nY", "--count", "1"], "'\\x1b[31mX\\nY': a node"),
        (["live", "--node", ""], "'': a node name is 1 to 64 letters"),
        (["collect", "--node", "a" * 100_000], "'aaaaaaaaaaaaaaaaaaaaaaaa'...: a node name"),
        (["export", "ESALNXC", "--node", "a b"], "'a b': a node name is 1 to 64"),
        (["sim", "--scenario", "mode-vm-day", "--node", "NINECHARS"], "1 to 8 letters"),
        # before: db prune deleted all but each source's newest interval, exit 0
        (["db", "prune", "--max-size", "2"], "'2' is 2 bytes: no esatui database fits"),
        (["db", "prune", "--max-size", "0"], "no esatui database fits"),
        (["collect", "--max-size", "1K", "--count", "1"], "give at least 64KB"),
        # before: replay took a range that ends before it starts (export and compare refused it)
        (
            ["replay", "--from", "2026-11-21T15:00Z", "--to", "2026-11-21T14:00Z"],
            "--from must be before --to",
        ),
        (["serve", "--web", "1", "--from", "15:00", "--to", "14:00"], "--from must be before"),
    ],
)
def test_bad_input_is_one_sentence_and_exit_2(
    argv: list[str], says: str, recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([*argv, "--db", str(recorded)])
    line = _one_line(capsys)
    assert code == 2 and says in line
    assert not line.startswith('esatui: error: "')  # no message in quotes


@pytest.mark.parametrize(
    ("damage", "command"),
    [
        ("UPDATE kind SET fields = '{bad json'", "export"),
        ("UPDATE config SET data = '[1,'", "export"),
        ("UPDATE entity SET attrs = 'nope'", "export"),
        ("UPDATE kind SET fields = '{bad json'", "replay"),
    ],
)
def test_a_damaged_database_is_one_sentence_and_exit_1(
    damage: str, command: str, recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: raw JSON messages, and on replay a 2,810-line traceback."""
    conn = sqlite3.connect(recorded)
    conn.execute(damage)
    conn.commit()
    conn.close()
    argv = ["export", "ESALNXC"] if command == "export" else ["replay", "--screen", "ESALNXC"]
    code = main([*argv, "--db", str(recorded)])
    line = _one_line(capsys)
    assert code == 1 and "the database is damaged" in line


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        ("DROP TABLE k_cpu", "its k_cpu table is missing"),
        ("UPDATE k_cpu SET user_us = 'abc'", "a row of k_cpu cannot be read (user_us 'abc')"),
        (  # shown, it was a negative rate
            "UPDATE k_cpu SET user_us = -500000"
            " WHERE interval_id = (SELECT max(interval_id) FROM k_cpu)",
            "a row of k_cpu holds a negative counter (user_us -500000)",
        ),
        ("UPDATE interval SET duration_us = 'x'", "interval 1 cannot be read ("),
        (
            "UPDATE interval SET end_us = 9223372036854775807"
            " WHERE id = (SELECT max(id) FROM interval WHERE source = 'host')",
            "interval ",
        ),
    ],
)
@pytest.mark.parametrize("command", [["export", "ESALNXC"], ["replay", "--screen", "ESALNXC"]])
def test_a_damaged_row_or_table_names_the_database_in_one_sentence(
    damage: str,
    says: str,
    command: list[str],
    recorded: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: 'unsupported operand type(s) for +', 'year 294247 is out of range', a traceback
    from replay, and for the dropped table 'no ESALNXC data in this range'."""
    conn = sqlite3.connect(recorded)
    conn.execute(damage)
    conn.commit()
    conn.close()
    code = main([*command, "--db", str(recorded)])
    line = _one_line(capsys)
    assert code == 1
    assert line.startswith(f"esatui: error: {recorded} is damaged: {says}")
    assert "restore it from a backup" in line


@pytest.mark.parametrize(
    ("table", "key", "how"),
    [
        ("k_cpu", "interval_id", ()),
        ("k_cpu", "interval_id", ("--interval-len", "5m")),  # summed by SQL from the rows
        ("k_cpu", "interval_id", ("--interval-len", "5m", "--stats", "p99,max")),
        ("h_cpu", "hour_end_us", ("--interval-len", "3h")),  # from the hourly rollup
        ("q_cpu", "quarter_end_us", ("--interval-len", "15m")),  # quarters: 15-minute buckets
    ],
)
def test_a_negative_counter_is_damage_in_every_way_of_reading(
    table: str,
    key: str,
    how: tuple[str, ...],
    db_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A counter below 0, which no recorder writes (docs/RELIABILITY.md), among the rows
    read: before, ESALNXC showed user -0.8% (a negative rate), and a bucket's sum with it."""
    host_recording(db_path, n_intervals=150)  # two and a half hours: rollups too
    conn = sqlite3.connect(db_path)
    conn.execute(f"UPDATE {table} SET user_us = -5 WHERE {key} = (SELECT min({key}) FROM {table})")
    conn.commit()
    conn.close()
    code = main(["export", "ESALNXC", "--db", str(db_path), "--format", "csv", *how])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert err == (
        f"esatui: error: {db_path} is damaged: a row of {table} holds a negative counter"
        " (user_us -5); restore it from a backup\n"
    )


def test_a_truncated_database_is_one_sentence(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cut = tmp_path / "cut.sqlite"
    shutil.copyfile(recorded, cut)
    with cut.open("r+b") as f:
        f.truncate(cut.stat().st_size // 3)
    code = main(["export", "ESALNXC", "--db", str(cut)])
    line = _one_line(capsys)
    assert code == 1 and "not a usable esatui database" in line


def _zero_page_of(db: Path, name: str) -> None:
    """The b-tree root page of the index ``name`` overwritten with zeros, as a disk's error
    or a copy's hole leaves it; the tables' rows are untouched."""
    conn = sqlite3.connect(db)
    (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    (size,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    with db.open("r+b") as f:
        f.seek((root - 1) * size)
        f.write(bytes(size))


@pytest.mark.parametrize("index", ["interval_by_end", "interval_by_source"])
def test_a_damaged_index_names_the_database(
    index: str, recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: 'esatui: error: database disk image is malformed', naming no database (the
    look at the tables' rows found nothing; only the index the export's query used was)."""
    _zero_page_of(recorded, index)
    code = main(["export", "ESALNXC", "--db", str(recorded)])
    line = _one_line(capsys)
    assert code == 1
    assert line.startswith(f"esatui: error: {recorded} is damaged: SQLite's check finds it")
    assert "restore it from a backup" in line and "***" not in line


@pytest.mark.slow
def test_collect_into_a_damaged_database_stops_with_the_damage_named(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found from outside: every interval said 'interval ending ... not written: database
    disk image is malformed', the run went on for nothing and ended 'nothing was recorded
    from host (no interval ended)'."""
    _zero_page_of(recorded, "interval_by_end")
    args = ["collect", "--db", str(recorded), "--interval", "1", "--count", "3", "--source", "host"]
    code = main(args)
    err = capsys.readouterr().err.splitlines()
    assert code == 1
    assert err[-1].startswith(f"esatui: error: {recorded} is damaged: SQLite's check finds it")
    assert not [line for line in err if "not written" in line], err


@pytest.mark.parametrize("command", [["export", "ESALNXC"], ["db", "info"], ["replay"]])
def test_schema_text_that_is_not_utf8_is_one_sentence(
    command: list[str], recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a traceback (UnicodeDecodeError): SQLite's message on the malformed schema
    quotes its bytes, and the look for damage after the failure opened it again."""
    conn = sqlite3.connect(recorded)
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute(
        "UPDATE sqlite_master SET name = CAST(x'645f637075ff' AS TEXT) WHERE name = 'd_cpu'"
    )
    conn.commit()
    conn.close()
    code = main([*command, "--db", str(recorded)])
    line = _one_line(capsys)
    assert code == 1
    assert line == (
        f"esatui: error: {recorded} is not a usable esatui database"
        " (it holds text that is not UTF-8)"
    )


@pytest.mark.parametrize("command", [["export", "ESALNXC"], ["db", "info"], ["replay"]])
def test_a_directory_given_as_the_database_is_named_so(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: '... is not a usable esatui database (disk I/O error)'."""
    code = main([*command, "--db", str(tmp_path)])
    line = _one_line(capsys)
    assert code == 1
    assert (
        line
        == f"esatui: error: {tmp_path} is a directory, not an esatui database; give a file name"
    )


@pytest.mark.parametrize(
    "command",
    [
        ["export", "ESACPUU"],
        ["db", "info"],
        ["db", "prune", "--dry-run", "--keep", "1d"],
        ["compare", "ESACPUU", "--with-from", "00:00"],
        ["collect", "--source", "host", "--count", "1"],
        ["serve", "--web", "127.0.0.1:1"],
    ],
)
def test_a_fifo_or_a_device_given_as_the_database_is_named_so(
    command: list[str], tmp_path: Path
) -> None:
    """Before: every reader hung on the FIFO, forever; /dev/zero 'is empty'."""
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    for db, what in ((fifo, "a named pipe (FIFO)"), (Path("/dev/zero"), "a character device")):
        done = subprocess.run(
            [sys.executable, "-m", "esatui", *command, "--db", str(db)],
            check=False, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert done.returncode == 1
        assert done.stderr == f"esatui: error: {db} is {what}, not an esatui database\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]


def test_a_database_locked_past_the_timeout_is_no_damage() -> None:
    """Review: every reading error looked at every table for damage, a lock held past the
    busy timeout too (minutes on a big database, for nothing)."""
    import sqlite3

    from esatui.db.database import may_be_damage

    assert not may_be_damage(sqlite3.OperationalError("database is locked"))
    assert not may_be_damage(sqlite3.OperationalError("database table is locked: k_cpu"))
    assert may_be_damage(sqlite3.OperationalError("no such table: k_cpu"))
    assert may_be_damage(TypeError("unsupported operand type(s) for +: 'int' and 'str'"))


def test_every_reader_of_an_entitys_rows_refuses_a_negative_counter(db_path: Path) -> None:
    """The rows ``d``, ``--stats`` and graphs read an entity at a time, or every entity of a
    kind as a stream: a negative counter among them is refused, wherever it is in the row."""
    from esatui.db.reading import NegativeCounter, Queries

    host_recording(db_path, n_intervals=5)
    conn = sqlite3.connect(db_path)
    entity = conn.execute("SELECT max(entity_id) FROM k_cpu").fetchone()[0]
    node = conn.execute("SELECT id FROM node").fetchone()[0]
    fields = ["user_us", "system_us", "steal_us"]
    queries = Queries(conn)

    def rows() -> list[object]:
        one = queries.entity_rows("cpu", "host", node, entity, fields, None, None, duration=True)
        every = list(queries.every_entity_rows("cpu", "host", node, fields, None, None))
        return [*one, *every]

    assert len(rows()) == 5 + 20
    conn.execute(
        "UPDATE k_cpu SET steal_us = -1 WHERE entity_id = ?"
        " AND interval_id = (SELECT max(interval_id) FROM k_cpu)",
        (entity,),
    )
    with pytest.raises(NegativeCounter, match="a negative counter in k_cpu"):
        queries.entity_rows("cpu", "host", node, entity, fields, None, None, duration=True)
    with pytest.raises(NegativeCounter):
        list(queries.every_entity_rows("cpu", "host", node, fields, None, None))
    end = conn.execute(
        "SELECT end_us FROM interval WHERE id = (SELECT max(interval_id) FROM k_cpu)"
    )
    with pytest.raises(NegativeCounter):  # a bucket's single row, read as recorded
        queries.raw_row_at("cpu", node, "host", end.fetchone()[0], entity, fields)
    # a field that is no counter is not looked at: the interval's own flags
    assert queries.entity_rows("cpu", "host", node, entity, ["flags"], None, None)
    conn.close()
