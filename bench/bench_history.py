"""History (issue 17): opening a distribution (``d``) over a month of 1-minute intervals
(SPEC: a graph or distribution over a month under 200 ms), and a comparison of two weeks.

The month is the store benchmark's recording (8 CPUs, 4 APQNs, hypervisor crypto, one
interval a minute). The monitor holds a screenful of 1-day buckets (30 of them: the month);
``d`` then reads each interval's value of the column (from the entity's own rows where the
screen declares the column a row column, from its members' for a total row, from slots of
the kinds it reads where it is a slot column, from every entity's rows of the kind a row is
made of where it is such a row, else from the screen built as recorded over those buckets)
into its bucket and computes the statistics and the histogram
(``esatui/tui/distribution.py: distribution_lines``, what the view worker runs). Measured in
the calling thread's CPU time (getrusage), median of the runs. The bar is judged per way of
reading: a row of one entity, a total row, a column of its slot's kinds (read from slots of
those kinds alone), a row made of a kind's rows (ESACRYPE's function and total, of every
card's blocks), and a column for which the screen is built.
"""

from __future__ import annotations

import inspect
import sqlite3
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bench.bench_store import MONTH, SCREENFUL
from bench.core import Options, Result, cpu_ms_per_call, fmt
from bench.fixtures import YEAR_SPEC, RecordingSpec, cached_recording, cached_simulation
from esatui.db.sqlite_reader import SqliteReader
from esatui.screens import catalog
from esatui.screens.model import RowKind
from esatui.screens.rowkey import entity_key, entity_text, key_columns
from esatui.tui.compare import comparison_lines
from esatui.tui.distribution import distribution_lines

NAME = "history"
TITLE = "History: a distribution over a month of 1-minute intervals; a comparison of two weeks"
BAR_MS = 200.0
DAY_US = 86_400_000_000
WEEK_US = 7 * DAY_US
ENTITY, TOTAL = "an entity's row", "a total row"
SLOT, BUILT = "a column of its slot's kinds", "a column built as recorded"
KIND = "a row made of a kind's rows"
# screen, column, row, way: one row per interval (hypervisor crypto, esatui's own cost); a
# CPU of eight, and their ``all`` row (a total: every CPU's rows, added up per interval as the
# build adds them), and the summary's steal (their mean); columns of a slot's kinds (the
# processors' CPU per operation over the crypto row, the summary's crypto rate and busy by
# CPU type, this made over the range: screens/slot_columns.py); a column for which the
# screen is built (an APQN's share of its card)
CASES = (
    ("ESACRYPT", "ms_op_virt", RowKind.DATA, ENTITY),
    ("ESAPOLL", "nserv_us", RowKind.DATA, ENTITY),
    ("ESAPOLL", "hserv_us", RowKind.DATA, ENTITY),
    ("ESAOVHD", "cpu_pct", RowKind.DATA, ENTITY),
    ("ESALNXC", "steal", RowKind.DATA, ENTITY),
    ("ESALNXC", "steal", RowKind.TOTAL, TOTAL),
    ("ESAPOLL", "cp_us_op", RowKind.DATA, SLOT),
    ("ESASSUM", "crypto_ops_s", RowKind.DATA, SLOT),
    ("ESASSUM", "steal_pct", RowKind.DATA, TOTAL),
    ("ESASSUM", "busy_cpu", RowKind.DATA, TOTAL),
    ("ESACRYQ", "share_pct", RowKind.DATA, ENTITY),
    ("ESACRYQ", "pending_avg", RowKind.DATA, ENTITY),
)
# Screens of the z/VM monitor's spin lock, AP and paging records, which the month above lacks,
# over a simulated month of them (esatui sim), by scenario: a lock's row (its own D0R23 rows,
# in the intervals it spun) and the locks' total (of slots of the spin records), ESACRYPE's
# function and total (made of every card's blocks: kind_rows.py), and a column built as
# recorded (ESACRYPE's saving, over the LPAR's processors too); ESASSUM's IFL busy in the
# hypervisor's view (a column of the whole range's slots, three sources of processors); ESAPAGE's
# row, of every processor's D3R2 (encrypted paging: z/VM 6.4, newer than mode-vm-day's 6.3)
SIMULATED = {
    ("sim-month", "mode-vm-day"): (
        ("ESALOCK", "pct_cpu", RowKind.DATA, ENTITY),
        ("ESALOCK", "pct_cpu", RowKind.TOTAL, SLOT),
        ("ESACRYPE", "sw_cpu_pct", RowKind.DATA, KIND),
        ("ESACRYPE", "sw_cpu_pct", RowKind.TOTAL, KIND),
        ("ESACRYPE", "saved_pct", RowKind.DATA, BUILT),
        ("ESASSUM", "busy_ifl", RowKind.DATA, SLOT),
    ),
    ("paging-month", "seed003-t3-heavy"): (("ESAPAGE", "cpu_pct", RowKind.DATA, KIND),),
}


def open_distribution(
    result: Result,
    reader: SqliteReader,
    screen: str,
    column: str,
    kind: RowKind,
    runs: int,
    span: str,
    days: int = SCREENFUL,
    *,
    collecting: bool = False,
) -> float:
    """``d`` on the first row of ``kind`` of up to ``days`` 1-day buckets (a screenful): its
    median CPU (``collecting``: with the garbage collector running meanwhile, as the view
    read before it paused it: ``esatui.garbage.reading_in_bulk``), and for the cases of
    :data:`MEMORY` the most memory it holds."""
    query = catalog.Query(interval_len_us=DAY_US, limit=days)
    bucketed = catalog.build_model(reader, screen, query)
    row = next(r for r in bucketed.rows if r.kind is kind)
    entity = entity_key(key_columns(bucketed.columns), row)
    which = f" of {entity_text(entity)}" if entity else ""
    view = inspect.unwrap(distribution_lines) if collecting else distribution_lines
    open_view = partial(view, reader, bucketed, query, column, entity, 132)
    running = ", the collector running" if collecting else ""
    measure = result.add(
        f"{screen} {column}{which}: d over {span} ({len(bucketed.rows)} rows of 1-day "
        f"buckets){running}",
        cpu_ms_per_call(open_view, 1, runs),
        "ms CPU",
    )
    if (screen, column, kind) in MEMORY and not collecting:
        result.add(
            f"{screen} {column}{which}: d over {span}: the most memory it holds (tracemalloc)",
            [peak_mib(open_view)],
            "MiB",
        )
    return measure.median


# the slowest case of each way of reading (ESACPUU's total is ESALNXC's way): what d holds
MEMORY = {
    ("ESACRYQ", "share_pct", RowKind.DATA),
    ("ESALNXC", "steal", RowKind.TOTAL),
    ("ESALOCK", "pct_cpu", RowKind.TOTAL),
    ("ESACRYPE", "sw_cpu_pct", RowKind.TOTAL),
    ("ESACRYPE", "saved_pct", RowKind.DATA),
    ("ESASSUM", "busy_ifl", RowKind.DATA),
}


def peak_mib(fn: Callable[[], object]) -> float:
    """The peak of the Python heap's growth while ``fn`` runs (its allocations traced:
    slower, so apart from the CPU's runs)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


# The least any Python reader of a total row pays: its members' rows of the range fetched
# from SQLite, one value of each beside its interval and entity (no formula, no buckets)
MEMBER_ROWS = """
SELECT i.end_us, k.entity_id, k.steal_us
FROM interval AS i JOIN k_cpu AS k ON k.interval_id = i.id
WHERE i.source = 'host' AND i.end_us > ? AND i.end_us <= ?
"""


def member_rows_floor(result: Result, path: Path, runs: int, span: str) -> tuple[float, int]:
    """The fetch of every CPU's rows over the month, three values a row: median CPU (ms)
    and the number of rows."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        fetched: list[object] = []

        def fetch() -> None:
            fetched[:] = conn.execute(MEMBER_ROWS, (0, 1 << 62)).fetchall()

        measure = result.add(
            f"the floor of a total row's d over {span}: every CPU's rows fetched, three values "
            "a row",
            cpu_ms_per_call(fetch, 1, runs),
            "ms CPU",
        )
        return measure.median, len(fetched)
    finally:
        conn.close()


def run(opts: Options) -> Result:
    result = Result(NAME, TITLE)
    intervals = 3 * 1440 if opts.quick else MONTH
    name = "quick-3days" if opts.quick else "month"
    month, _ = cached_recording(Path(opts.out_dir), name, RecordingSpec(intervals=intervals))
    span = "3 days" if opts.quick else "a month"
    runs = opts.runs(7, 2)
    total_runs = opts.runs(3, 1)
    ways: dict[str, list[tuple[float, str]]] = {e: [] for e in (ENTITY, TOTAL, SLOT, KIND, BUILT)}
    floor_ms, member_rows = member_rows_floor(result, month, runs, span)
    with SqliteReader.open(month) as reader:
        for screen, column, kind, way in CASES:
            median = open_distribution(
                result, reader, screen, column, kind, runs if way == ENTITY else total_runs, span
            )
            ways[way].append((median, f"{screen}'s {column}" + (" total" if way == TOTAL else "")))
        query = catalog.Query(interval_len_us=DAY_US, limit=SCREENFUL)
        bucketed = catalog.build_model(reader, "ESALNXC", query)
        newest = max(r.end_us for r in bucketed.rows)
        ranges = ((newest - 2 * WEEK_US, newest - WEEK_US), (newest - WEEK_US, newest))

        # as the monitor shows two marked ranges (m, m, m, m), its text made
        compare_weeks = partial(comparison_lines, reader, "ESALNXC", catalog.Query(), ranges)
        if not opts.quick:
            weeks = cpu_ms_per_call(compare_weeks, 1, opts.runs(3, 1))
            result.add(
                "ESALNXC: compare one week with the week before (the monitor's view of two "
                "marked ranges)",
                weeks,
                "ms CPU",
            )
    days = 3 if opts.quick else MONTH // 1440
    for (name, scenario), cases in SIMULATED.items():
        sim_name = name.replace("month", "3days") if opts.quick else name
        simulated = cached_simulation(Path(opts.out_dir), sim_name, scenario, days)
        with SqliteReader.open(simulated) as reader:
            for screen, column, kind, way in cases:
                sim_span = f"{days} simulated days ({scenario})"
                n = runs if way == ENTITY else total_runs
                median = open_distribution(result, reader, screen, column, kind, n, sim_span, days)
                total = " total" if kind is RowKind.TOTAL else ""
                ways[way].append((median, f"{screen}'s {column}{total}, simulated"))
                if (screen, column) == ("ESALOCK", "pct_cpu") and way == SLOT and not opts.quick:
                    running = open_distribution(
                        result, reader, screen, column, kind, n, sim_span, days, collecting=True
                    )
                    result.notes.append(
                        f"{screen}'s {column}{total}, simulated: {fmt(median, 'ms')} with the "
                        f"garbage collector paused as the view reads, {fmt(running, 'ms')} with "
                        f"it running (the same run): {running / median:.2f}x."
                    )
    if not opts.quick:  # the hypervisor's processors (D0R2) are in the year's recording
        year, _ = cached_recording(Path(opts.out_dir), "year", YEAR_SPEC)
        with SqliteReader.open(year) as reader:
            ways[ENTITY].append(
                (
                    open_distribution(
                        result,
                        reader,
                        "ESACPUU",
                        "steal",
                        RowKind.DATA,
                        runs,
                        "the year's last 30 days",
                        30,
                    ),
                    "ESACPUU's steal",
                )
            )
            ways[TOTAL].append(
                (
                    open_distribution(
                        result,
                        reader,
                        "ESACPUU",
                        "total",
                        RowKind.SUBTOTAL,
                        total_runs,
                        "the year's last 30 days",
                        30,
                    ),
                    "ESACPUU's IFL Tot",
                )
            )
    for way, measured in ways.items():
        worst, which = max(measured)
        floor = (
            f"; fetching its members' {member_rows:,} rows alone, three values a row, "
            f"{fmt(floor_ms, 'ms')}"
            if way == TOTAL
            else ""
        )
        result.target(
            f"opening a distribution over {span} of 1-minute data (SPEC section 8): {way}",
            f"< {BAR_MS:g} ms",
            f"{fmt(worst, 'ms')} CPU median, the slowest ({which}){floor}",
            worst < BAR_MS,
        )
    return result
