"""ESAOVHD's figures can be trusted: per-source CPU from nanosecond thread clocks (short work
is seen), CPU used rather than wanted (the stolen share taken off), and bytes that are the
store's own writes."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from esatui.collectors.base import SourceContext
from esatui.collectors.host import HostSource
from esatui.collectors.selfmon import StealShare
from esatui.db.records import Interval
from esatui.db.sqlite_reader import SqliteReader
from esatui.db.store import Store
from esatui.sampling.recorder import Recorder
from esatui.screens import catalog
from esatui.sim.clock import SimClock
from tests.conftest import DATA
from tests.fixtures.reading import load_slots

START_US = 1_790_000_040_000_000  # on a minute boundary


def _host(tmp_path: Path) -> HostSource:
    root = tmp_path / "root"
    shutil.copytree(DATA / "host" / "trees" / "util-linux-s390-zvm", root)
    shutil.copy("/proc/stat", root / "proc" / "stat")
    return HostSource(SourceContext(root))


def _files(db: Path) -> int:
    return sum(p.stat().st_size for p in (db, db.with_name(db.name + "-wal")) if p.exists())


def _record(
    db: Path, tmp_path: Path, count: int, steal: float | None = None
) -> tuple[Recorder, int]:
    """The recorder after ``count`` intervals, and how much the database and its WAL grew
    while it ran (measured with the store still open: closing it checkpoints the WAL)."""
    with Store.open(db) as store:
        clock = SimClock(START_US)
        recorder = Recorder(
            store, [_host(tmp_path)], interval_s=60, hf_s=None, clock=clock, warn=print
        )
        if steal is not None:
            stolen = steal

            class Stolen(StealShare):
                def used_fraction(self) -> float:
                    return 1.0 - stolen

            recorder._steal = Stolen()  # the hypervisor's share, made known
        before = _files(db)
        recorder.run(threading.Event(), count=count)
        grown = _files(db) - before
    return recorder, grown


def test_per_source_cpu_is_seen_and_bytes_are_what_the_store_wrote(tmp_path: Path) -> None:
    db = tmp_path / "o.sqlite"
    recorder, grown = _record(db, tmp_path, 4)
    # no checkpoint in so short a recording: what the store wrote is what its files grew by
    assert recorder.stats.store_bytes == grown > 0
    with SqliteReader.open(db) as reader:
        model = catalog.build_model(reader, "ESAOVHD", catalog.Query())
    assert len(model.rows) == 4
    for row in model.rows:
        assert isinstance(row.values["host_ms"], float) and row.values["host_ms"] > 0
        assert isinstance(row.values["cpu_ms"], float) and row.values["cpu_ms"] > 0
    # a single source's interval is committed with the recorder's own, after the recorder's
    # sample: what a pass writes counts in the next interval (nothing before the first pass)
    written = [row.values["bytes_written"] for row in model.rows]
    assert all(isinstance(b, int) for b in written)
    assert written[-1] == 0  # newest first: the first interval
    assert all(b > 0 for b in written[:-1])  # type: ignore[operator]
    total = sum(r.values["bytes_written"] for r in model.rows)  # type: ignore[misc]
    assert total < recorder.stats.store_bytes  # the last pass's write comes after


def test_cpu_used_is_the_clock_less_its_stolen_share(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    _record(db, tmp_path, 3, steal=0.75)
    with SqliteReader.open(db) as reader:
        slots = load_slots(reader, ("esatui",), (), None, None)
    for slot in slots:
        own = slot.get("esatui")
        assert own is not None
        me = own.rows["self"].values
        used, stolen = me["cpu_us"], me["steal_us"]
        assert isinstance(used, int) and isinstance(stolen, int) and used > 0
        assert stolen == pytest.approx(3 * used, abs=2)  # a quarter used, three quarters stolen


def test_steal_share_from_proc_stat(tmp_path: Path) -> None:
    stat = tmp_path / "stat"

    def write(user: int, system: int, idle: int, steal: int) -> None:
        stat.write_text(f"cpu  {user} 0 {system} {idle} 0 0 0 {steal} 0 0\ncpu0 1 2 3 4\n")

    write(100, 50, 1000, 10)
    share = StealShare(stat)
    write(160, 90, 2000, 110)  # 100 ticks busy, 100 stolen
    assert share.used_fraction() == 0.5
    write(260, 90, 3000, 110)  # 100 busy, none stolen
    assert share.used_fraction() == 1.0
    stat.write_text("garbage\n")
    assert share.used_fraction() == 1.0  # cannot say: the clock as measured


def test_one_commit_a_pass_for_a_single_source(tmp_path: Path) -> None:
    """The source's interval and the recorder's own are committed together: a commit costs
    more than the rows it writes."""
    db = tmp_path / "c.sqlite"
    commits: list[list[str]] = []
    with Store.open(db) as store:
        write_all = store.write_all

        def counted(intervals: Sequence[Interval]) -> list[int | None]:
            commits.append([i.source for i in intervals])
            return write_all(intervals)

        store.write_all = counted  # type: ignore[method-assign]
        clock = SimClock(START_US)
        recorder = Recorder(store, [_host(tmp_path)], interval_s=60, hf_s=None, clock=clock)
        stats = recorder.run(threading.Event(), count=3)
    assert commits == [["host", "esatui"]] * 3
    assert stats.written == 6


def test_live_intervals_end_on_their_boundaries(tmp_path: Path) -> None:
    """Before: a real wait returns a little after the boundary, so each interval ended
    0.3 ms past its minute and `--interval-len 1m` put it in the next minute's bucket:
    every aggregated row one recorded interval late."""

    class Late(SimClock):
        def wait(self, stop: threading.Event, seconds: float) -> bool:
            return super().wait(stop, seconds + 0.0003)

    clock = Late(START_US)
    root = tmp_path / "root"
    shutil.copytree(DATA / "host" / "trees" / "util-linux-s390-zvm", root)
    shutil.copy("/proc/stat", root / "proc" / "stat")
    db = tmp_path / "late.sqlite"
    with Store.open(db) as store:
        host = HostSource(SourceContext(root, clock=clock))
        Recorder(store, [host], interval_s=60, hf_s=None, clock=clock).run(
            threading.Event(), count=3
        )
    with SqliteReader.open(db) as reader:
        model = catalog.build_model(reader, "ESAOVHD", catalog.Query())
        bucketed = catalog.build_model(reader, "ESAOVHD", catalog.Query(interval_len_us=60_000_000))
    ends = [row.end_us for row in model.rows]
    assert len(ends) == 3 and all(end % 60_000_000 == 0 for end in ends)
    assert [row.end_us for row in bucketed.rows] == ends


def test_resident_memory_is_the_process_s_as_psutil_reads_it(tmp_path: Path) -> None:
    """ESAOVHD's memory is the recorder's own resident set: psutil, an independent reader of
    the same kernel figure, finds the process within a few MiB of it (it grows little in a
    short run)."""
    import psutil

    db = tmp_path / "m.sqlite"
    _record(db, tmp_path, 2)
    after = psutil.Process().memory_info().rss / 1024**2
    with SqliteReader.open(db) as reader:
        model = catalog.build_model(reader, "ESAOVHD", catalog.Query())
    shown = [row.values["rss_mib_max"] for row in model.rows]
    assert len(shown) == 2 and all(isinstance(m, float) for m in shown), shown
    assert all(after - 16 <= m <= after + 1 for m in shown), (shown, after)  # type: ignore[operator]
