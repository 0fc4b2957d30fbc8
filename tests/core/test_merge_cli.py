"""``esatui db merge`` of databases that hold the same node at the same times: an interval
is kept once, and a merge that skips another system's data (recorded under the same node
name) says so on stderr, once per database, where merging a database again says nothing."""

from __future__ import annotations

import os
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from esatui.cli import main
from esatui.db.records import Interval
from esatui.db.sqlite_reader import SqliteReader
from tests.fixtures.reading import sql
from tests.sim.recorded import sim

MODE_VM = ("--scenario", "mode-vm-day")


def merge(capsys: pytest.CaptureFixture[str], target: Path, *dbs: Path) -> tuple[str, str]:
    code = main(["db", "merge", "--db", str(target), *map(str, dbs)])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out, err


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Three recordings of node VMMODEVM at the same times, seeds 1, 2 and 3."""
    tmp = tmp_path_factory.mktemp("seeds")
    dbs = [tmp / f"seed{n}.sqlite" for n in (1, 2, 3)]
    for n, db in enumerate(dbs, 1):
        argv = ["sim", *MODE_VM, "--seed", str(n), "--duration", "3m", "--db", str(db)]
        assert main([*argv, "--start", "2026-01-05T00:00Z"]) == 0
    return dbs


def test_other_systems_under_one_node_name_are_skipped_with_a_warning(
    seeds: list[Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    capsys.readouterr()
    fleet = tmp_path / "fleet.sqlite"
    out, err = merge(capsys, fleet, *seeds)
    # six sources, three intervals each: the first database's 18, the others' skipped
    assert out == f"18 intervals merged into {fleet} (36 already there); nodes: VMMODEVM\n"
    lines = err.splitlines()
    assert len(lines) == 2, err
    for db, line in zip(seeds[1:], lines, strict=True):
        # all 18 skipped; a seed changes nearly all (seed 2's first vmcp interval is seed 1's)
        assert line.startswith(f"esatui: {db}: 18 intervals of node VMMODEVM ")
        assert " not merged: " in line and "other data" in line and "--node" in line


def test_merging_a_database_again_warns_of_nothing(
    seeds: list[Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    capsys.readouterr()
    fleet = tmp_path / "fleet.sqlite"
    merge(capsys, fleet, seeds[0])
    out, err = merge(capsys, fleet, seeds[0], seeds[0])
    assert out == f"0 intervals merged into {fleet} (36 already there); nodes: VMMODEVM\n"
    assert err == ""


def test_a_database_holding_the_same_and_other_data_warns_of_the_other(
    seeds: list[Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Seed 1's three minutes, then a longer seed-2 recording: its first three minutes
    clash, its fourth is new."""
    capsys.readouterr()
    longer = tmp_path / "longer.sqlite"
    sim(capsys, longer, *MODE_VM, "--seed", "2", duration="4m")
    fleet = tmp_path / "fleet.sqlite"
    out, err = merge(capsys, fleet, seeds[0], longer)
    assert out == f"24 intervals merged into {fleet} (18 already there); nodes: VMMODEVM\n"
    assert err.startswith(f"esatui: {longer}: 18 intervals of node VMMODEVM ")
    assert err.count("\n") == 1


def test_each_system_under_its_own_node_name_merges_whole(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The README's fleet example with simulated systems: ``esatui sim --node``."""
    dbs = [tmp_path / f"lnx0{n}.sqlite" for n in (1, 2, 3)]
    for n, db in enumerate(dbs, 1):
        sim(capsys, db, *MODE_VM, "--seed", str(n), "--node", f"LNX0{n}", duration="2m")
    fleet = tmp_path / "fleet.sqlite"
    out, err = merge(capsys, fleet, *dbs)
    nodes = "nodes: LNX01, LNX02, LNX03"
    assert out == f"36 intervals merged into {fleet} (0 already there); {nodes}\n"
    assert err == ""
    code = main(["export", "ESANODE", "--db", str(fleet), "--format", "csv"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert all(f"LNX0{n}" in out for n in (1, 2, 3))


def test_a_source_that_is_no_database_is_refused_before_anything_is_written(
    seeds: list[Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Before: the first database merged, then the error, a half-merged target left."""
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database")
    target = tmp_path / "new.sqlite"
    assert main(["db", "merge", "--db", str(target), str(seeds[0]), str(junk)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "junk.sqlite is not a usable esatui database" in err[0]
    assert list(tmp_path.iterdir()) == [junk]  # no target, no lock file beside it


def test_a_failed_merge_into_a_new_file_leaves_none(
    seeds: list[Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from esatui.db import merge as merging

    target = tmp_path / "new.sqlite"

    def failing(*_args: object) -> None:
        raise OSError("disk full")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(merging, "_merge_into", failing)
        assert main(["db", "merge", "--db", str(target), str(seeds[0])]) == 1
    assert "disk full" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def _signal_after(patch: pytest.MonkeyPatch, signum: int, intervals: int) -> None:
    """The merge gets ``signum`` once it has read ``intervals`` intervals."""
    from esatui.db import merge as merging

    real = merging.intervals_of

    def interrupted(reader: SqliteReader) -> Iterator[Interval]:
        for n, interval in enumerate(real(reader)):
            if n == intervals:
                os.kill(os.getpid(), signum)
            yield interval

    patch.setattr(merging, "intervals_of", interrupted)


def _held(db: Path) -> list[tuple[object, ...]]:
    return sql(db, "SELECT node_id, source, start_us, end_us FROM interval ORDER BY 1, 2, 3")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_an_interrupted_merge_leaves_the_target_as_it_was(
    signum: int, seeds: list[Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Before: SIGINT into a database left it half merged, in silence; SIGTERM into a new one
    left it half made, in WAL mode (exit 143)."""
    name = signal.Signals(signum).name
    target = tmp_path / "fleet.sqlite"
    merge(capsys, target, seeds[0])
    before = _held(target)
    with pytest.MonkeyPatch.context() as patch:
        _signal_after(patch, signum, 10)
        assert main(["db", "merge", "--db", str(target), str(seeds[1]), str(seeds[2])]) == 1
        fresh = tmp_path / "new.sqlite"
        assert main(["db", "merge", "--db", str(fresh), str(seeds[1])]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"esatui: error: interrupted by {name}: nothing merged; {target} is as it was",
        f"esatui: error: interrupted by {name}: nothing merged; the new database {fresh} "
        "was removed",
    ]
    assert _held(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fleet.sqlite", "fleet.sqlite-lock"]
    assert sql(target, "PRAGMA journal_mode") == [("delete",)]


def test_a_database_given_twice_into_a_new_target_is_merged_once_without_a_warning(
    seeds: list[Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The merge is one transaction: what it wrote of the first is compared, uncommitted."""
    fleet = tmp_path / "fleet.sqlite"
    out, err = merge(capsys, fleet, seeds[0], seeds[0])
    assert out == f"18 intervals merged into {fleet} (18 already there); nodes: VMMODEVM\n"
    assert err == ""


@pytest.mark.parametrize("new", [True, False])
def test_a_signal_after_the_merge_committed_keeps_it(
    new: bool, seeds: list[Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Review: a signal while the committed merge was closed (its checkpoint, seconds on a
    big merge) said "nothing merged" of a merged database, and removed a new one whole."""
    from esatui.db.store import Store

    target = tmp_path / "fleet.sqlite"
    if not new:
        merge(capsys, target, seeds[0])
    real = Store.close

    def close(store: Store) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        real(store)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Store, "close", close)
        assert main(["db", "merge", "--db", str(target), str(seeds[1])]) == 0
    assert "intervals merged into" in capsys.readouterr().out
    assert target.exists() and _held(target)
    assert sql(target, "PRAGMA journal_mode") == [("delete",)]


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (
            "UPDATE k_cpu SET steal_us = -60000000",
            "a row of k_cpu holds a negative counter (steal_us -60000000)",
        ),
        ("UPDATE interval SET duration_us = -60000000", "duration_us -60000000"),
    ],
)
def test_a_damaged_source_is_not_merged(
    edit: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the negative values were copied into the target, shown there as negative
    rates."""
    from tests.fixtures.recording import host_recording

    damaged = tmp_path / "damaged.sqlite"
    host_recording(damaged, n_intervals=3)
    conn = sqlite3.connect(damaged)
    conn.execute(edit)
    conn.commit()
    conn.close()
    target = tmp_path / "fresh.sqlite"
    assert main(["db", "merge", str(damaged), "--db", str(target)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"esatui: error: {damaged} is damaged: ")
    assert said in err[0] and err[0].endswith("; restore it from a backup")
    assert not list(tmp_path.glob("fresh.sqlite*"))
