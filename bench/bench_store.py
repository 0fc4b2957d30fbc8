"""The store: bytes per interval, a month and a year of one-minute intervals, and how fast
any screen opens at any time of a year.

Every recording here is made by the real recorder (``esatui.sampling.recorder``) from the
real host and zcrypt sources reading fixture trees whose counters a simulated clock moves
on, plus z/VM monitor D5R9 records through the real decoder (:mod:`bench.fixtures`): 8 CPUs,
2 cards x 2 domains = 4 APQNs, the hypervisor's crypto counters, and esatui's own ESAOVHD
rows, as ``esatui collect`` writes them.

- Bytes per interval (SPEC section 8: under 2 KB for 8 CPUs + 4 APQNs + hypervisor crypto,
  before compression): the growth of the database file between a recording of N1 and one
  of N2 intervals with gauges sampled every 2 s, divided by N2 - N1, and per table from
  SQLite's ``dbstat``.
- A month (43,200 intervals) built and measured; a year extrapolated from it, and built too
  (once: it is kept in ``bench/out/``, and reused while its recipe is unchanged).
- Opening a screen: ``catalog.build_model`` for the TUI's window (a screenful of intervals
  up to a time) at random times of the year (SPEC: under 200 ms).
"""

from __future__ import annotations

import random
import sqlite3
import tempfile
import time
from pathlib import Path

from bench.core import Options, Result, fmt
from bench.fixtures import MINUTE_S, YEAR_SPEC, RecordingSpec, cached_recording, record
from bench.profiling import dominant
from esatui.db.sqlite_reader import SqliteReader
from esatui.screens import catalog

NAME = "store"
TITLE = "Store: bytes per interval, a month and a year of 1-minute intervals, opening screens"
BYTES_BAR = 2048
PROCESSORS_BAR = 1200  # issue 16, with the hypervisor's processors
LCPUS = 8
OPEN_BAR_MS = 200.0
SCREENFUL = 42  # intervals the TUI fetches on a 132 x 50 terminal (its table's height)
MONTH = 30 * 1440
YEAR = 365 * 1440
# what SPEC section 8 names; the rest of a recording is esatui's own ESAOVHD rows
NAMED_KINDS = ("k_cpu", "k_zcrypt_queue", "k_zcrypt_card", "k_zcrypt_bus", "k_crypto")


def data_bytes(path: Path) -> int:
    """Bytes of the database in use, after folding the WAL back into it."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        return int((pages - free) * size)
    finally:
        conn.close()


def table_bytes(path: Path) -> dict[str, tuple[int, int]]:
    """Per table or index: (payload bytes, bytes of pages) from SQLite's dbstat."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT name, sum(payload), sum(pgsize) FROM dbstat GROUP BY name")
        return {name: (int(payload), int(pages)) for name, payload, pages in rows}
    finally:
        conn.close()


def bytes_per_interval(result: Result, opts: Options) -> None:
    small, big = (30, 120) if opts.quick else (60, 360)
    span = big - small
    with tempfile.TemporaryDirectory(prefix="esatui-bench-store-") as d:
        sizes: dict[int, int] = {}
        tables: dict[int, dict[str, tuple[int, int]]] = {}
        for n in (small, big):
            path = Path(d) / f"r{n}.sqlite"
            record(path, RecordingSpec(intervals=n, hf_s=2.0))
            sizes[n] = data_bytes(path)
            tables[n] = table_bytes(path)
    per = (sizes[big] - sizes[small]) / span
    growth = {
        name: (
            (payload - tables[small].get(name, (0, 0))[0]) / span,
            (pages - tables[small].get(name, (0, 0))[1]) / span,
        )
        for name, (payload, pages) in tables[big].items()
    }
    total = result.add(
        "bytes per interval, everything recorded",
        [per],
        "B",
        f"growth from {small} to {big} intervals, gauges every 2 s",
    )
    named = sum(pages for name, (_, pages) in growth.items() if name in NAMED_KINDS)
    interval_rows = sum(pages for name, (_, pages) in growth.items() if name.startswith("interval"))
    # four sources write an interval row a minute; three of them are the named data
    named_per = named + interval_rows * 3 / 4
    result.add(
        "bytes per interval, the named data alone (cpu, zcrypt, crypto and their intervals)",
        [named_per],
        "B",
        "dbstat",
    )
    breakdown = ", ".join(
        f"{name} {pages:.0f} B ({payload:.0f} B payload)"
        for name, (payload, pages) in sorted(growth.items(), key=lambda kv: -kv[1][1])
        if pages >= 1
    )
    result.notes.append(
        f"Growth per interval by table or index (pages, and the rows' own payload; dbstat, "
        f"{small} to {big} intervals): {breakdown}. Rows per interval: 8 cpu, 4 zcrypt_queue, "
        "2 zcrypt_card, 1 zcrypt_bus, 1 crypto, 1 esatui, 3 collector, and 4 interval rows "
        "(host, zcrypt, monitor, esatui)."
    )
    result.target(
        "bytes per interval: 8 CPUs + 4 APQNs + hypervisor crypto (D5R9), before compression",
        f"< {BYTES_BAR} B",
        f"{fmt(total.median, 'B')} with esatui's own ESAOVHD rows, {named_per:.0f} B without",
        total.median < BYTES_BAR,
    )


def bytes_with_processors(result: Result, opts: Options) -> None:
    """Issue 16's bar: the recording of bytes_per_interval with the hypervisor's processors
    too (D0R2 of 8 logical IFLs, ESACPUU's data), under 1.2 KB an interval."""
    small, big = (30, 120) if opts.quick else (60, 360)
    sizes: dict[int, int] = {}
    with tempfile.TemporaryDirectory(prefix="esatui-bench-store-") as d:
        for n in (small, big):
            path = Path(d) / f"p{n}.sqlite"
            record(path, RecordingSpec(intervals=n, hf_s=2.0, lcpus=LCPUS))
            sizes[n] = data_bytes(path)
    per = (sizes[big] - sizes[small]) / (big - small)
    measured = result.add(
        f"bytes per interval with the hypervisor's processors ({LCPUS} logical IFLs, D0R2)",
        [per],
        "B",
        f"growth from {small} to {big} intervals, gauges every 2 s",
    )
    result.add("  a year of such intervals", [per * YEAR / 1e9], "GB")
    result.target(
        f"bytes per interval: 8 CPUs + 4 APQNs + hypervisor crypto and {LCPUS} processors "
        "(D5R9, D0R2), ESAOVHD rows included",
        f"< {PROCESSORS_BAR} B (issue 16)",
        f"{fmt(measured.median, 'B')}, {per * YEAR / 1e9:.3g} GB a year",
        measured.median < PROCESSORS_BAR,
    )


def month_and_year(result: Result, opts: Options) -> Path | None:
    out = Path(opts.out_dir)
    month_n = 3 * 1440 if opts.quick else MONTH
    name = "quick-3days" if opts.quick else "month"
    path, built = cached_recording(out, name, RecordingSpec(intervals=month_n))
    month_bytes = data_bytes(path)
    per = month_bytes / month_n
    label = "3 days" if opts.quick else "a month (30 days)"
    result.add(f"{label} of 1-minute intervals: database size", [month_bytes / 1e6], "MB")
    result.add(f"{label}: bytes per interval", [per], "B")
    if built is not None:
        result.add(
            f"{label}: recording speed (recorder, sources, builder, store)",
            [built.intervals / built.wall_s],
            "intervals/s",
            "simulated clock",
        )
    result.add("a year, extrapolated from it", [per * YEAR / 1e9], "GB")
    year = out / "year.sqlite"
    year_spec = YEAR_SPEC
    if opts.quick and not year.exists():
        result.notes.append(
            "--quick: the year database is not built (python -m bench store builds it once)."
        )
        return None
    year, built = cached_recording(out, "year", year_spec)
    year_bytes = data_bytes(year)
    result.add("a year (365 days) built: database size", [year_bytes / 1e9], "GB")
    result.add("a year built: bytes per interval", [year_bytes / YEAR], "B")
    if built is not None:
        result.add("a year: recording speed", [built.intervals / built.wall_s], "intervals/s")
    return year


def open_ms(store: SqliteReader, name: str, query: catalog.Query) -> float:
    """Wall milliseconds to build screen ``name`` for ``query``."""
    t0 = time.perf_counter()
    catalog.build_model(store, name, query)
    return (time.perf_counter() - t0) * 1000


def open_screens(result: Result, opts: Options, year: Path) -> None:
    runs = opts.runs(25, 5)
    rng = random.Random(20261122)
    t0 = time.perf_counter()
    store = SqliteReader.open(year)
    node = store.queries.node_id(None)
    assert node is not None
    infos = store.queries.intervals(node, ["host"], None, None, limit=1)
    first_model = catalog.build_model(store, "ESASSUM", catalog.Query(limit=SCREENFUL))
    first_ms = (time.perf_counter() - t0) * 1000
    assert infos and first_model.rows
    newest = infos[0].end_us
    oldest = newest - (YEAR - 1) * MINUTE_S * 1_000_000
    result.add("first screen: open the year database + ESASSUM newest", [first_ms], "ms")
    worst_name, worst = "", 0.0
    for name in catalog.screens():
        times = [oldest + rng.randrange(YEAR) * MINUTE_S * 1_000_000 for _ in range(runs)]
        values = [open_ms(store, name, catalog.Query(until_us=t, limit=SCREENFUL)) for t in times]
        m = result.add(f"{name} at a random time ({SCREENFUL} intervals)", values, "ms")
        if m.median > worst:
            worst_name, worst = name, m.median
    drills = [oldest + rng.randrange(1, YEAR) * MINUTE_S * 1_000_000 for _ in range(runs)]
    result.add(
        "ESALNXC drilled to one interval at a random time",
        [
            open_ms(
                store,
                "ESALNXC",
                catalog.Query(after_us=t - MINUTE_S * 1_000_000, until_us=t, snap=True),
            )
            for t in drills
        ],
        "ms",
    )
    moments = iter([oldest + rng.randrange(YEAR) * MINUTE_S * 1_000_000 for _ in range(20)])
    profiled = dominant(
        lambda: open_ms(store, "ESASSUM", catalog.Query(until_us=next(moments), limit=SCREENFUL)),
        20,
    )
    result.notes.append(f"What dominates opening ESASSUM at a random time: {profiled}.")
    store.close()
    result.target(
        "opening any screen at any time in a year of 1-minute intervals",
        f"< {OPEN_BAR_MS:g} ms",
        f"slowest screen {worst_name}: {fmt(worst, 'ms')} median",
        worst < OPEN_BAR_MS,
    )
    result.notes.append(
        f"Opening = catalog.build_model for the TUI's window ({SCREENFUL} intervals up to the "
        "time), wall clock, the database in the page cache; times drawn at random over the "
        "year (seeded). The first line includes opening the database."
    )


def run(opts: Options) -> Result:
    result = Result(NAME, TITLE)
    bytes_per_interval(result, opts)
    bytes_with_processors(result, opts)
    year = month_and_year(result, opts)
    if year is not None:
        open_screens(result, opts, year)
    return result
