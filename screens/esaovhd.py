"""ESAOVHD, Monitor Overhead: what esatui itself costs, interval by interval.

CPU is what esatui *used*: the kernel's nanosecond CPU clocks (process, and each source's
thread around its calls) less the share of them the hypervisor stole (the clocks run on while
a CPU is stolen; seed 000). ``getrusage``, which counts in ticks and misses short work, is not
used. Bytes are those the store wrote (database, WAL, checkpoints), not everything the
process wrote. docs/ARCHITECTURE.md says how each is measured.
"""

from __future__ import annotations

from esatui.db.records import max_column
from esatui.screens.catalog import Built, Context, Reads, ScreenDef
from esatui.screens.common import TIME, cpu_pct, interval_row, number
from esatui.screens.model import Column, Row, Value
from esatui.screens.row_columns import RowColumn, RowColumns, as_recorded, one_entity

_GROUP = ("esatui process",)
_CPU_HOW = (
    "the kernel's CPU clock (CLOCK_PROCESS_CPUTIME_ID, nanoseconds; it includes time stolen by "
    "the hypervisor, seed 000) × (1 − the stolen share of this Linux's CPUs over the interval: "
    "/proc/stat Δsteal / (Δbusy + Δsteal)); not getrusage, which counts in ticks and misses "
    "short work"
)
COLUMNS = (
    TIME,
    Column("cpu_ms", ("CPU", "ms"), 8, 1, "ms", _GROUP, doc=f"CPU used by esatui: {_CPU_HOW}"),
    Column("cpu_pct", ("CPU", "pct"), 6, 2, "%", _GROUP, doc="cpu_ms as % of one CPU"),
    Column("samples", ("", "Samples"), 7, 0, "count", _GROUP, doc="samples taken (HF too)"),
    Column("reads", ("", "Reads"), 7, 0, "count", _GROUP, doc="files/records read"),
    Column(
        "bytes_written",
        ("Store", "Written"),
        9,
        0,
        "bytes",
        _GROUP,
        doc="bytes the store wrote (database and WAL pages, checkpoints): the writing "
        "thread's wchar around each store call; not terminal output or other files. A pass "
        "commits its intervals after esatui's own sample, so that commit counts in the next "
        "interval (the first row shows 0)",
    ),
    Column(
        "collect_ms_max",
        ("Collect", "ms max"),
        7,
        2,
        "ms",
        _GROUP,
        doc="longest sampling pass (elapsed)",
    ),
    Column(
        "rss_mib_max",
        ("Memory", "MiB max"),
        7,
        1,
        "MiB",
        _GROUP,
        doc="the most resident memory esatui held at any pass of the interval (/proc/self/statm)",
    ),
)
_COLLECTOR_HOW = (
    "the thread CPU clock (CLOCK_THREAD_CPUTIME_ID, nanoseconds) around its calls, less the "
    "stolen share as for cpu_ms"
)
_PER_COLLECTOR = Column(
    "<name>_ms",
    ("<name>", "CPU ms"),
    7,
    2,
    "ms",
    doc=f"CPU used in that source's sample calls: {_COLLECTOR_HOW}",
)


def _collector_column(name: str) -> Column:
    return Column(
        f"{name}_ms",
        (name[:7], "CPU ms"),
        7,
        2,
        "ms",
        doc=f"CPU used in the {name} source: {_COLLECTOR_HOW}",
    )


def _ms(us: Value) -> float | None:
    n = number(us)
    return None if n is None else n / 1000


def _mib(size: Value) -> float | None:
    n = number(size)
    return None if n is None else n / 1024**2


ROW_COLUMNS = RowColumns(
    "esatui",
    {
        "cpu_ms": RowColumn(("cpu_us",), _ms),
        "cpu_pct": RowColumn(("cpu_us",), cpu_pct, timed=True),
        "samples": RowColumn(("samples",), as_recorded),
        "reads": RowColumn(("reads",), as_recorded),
        "bytes_written": RowColumn(("store_bytes",), as_recorded),
        "collect_ms_max": RowColumn((max_column("collect_ms"),), as_recorded),
        "rss_mib_max": RowColumn((max_column("rss_bytes"),), _mib),
    },
    one_entity("self"),
)
"""The esatui process's columns, each of one interval's ``esatui`` row: what the build shows
and what the distribution view reads per interval (each source's own CPU is of another kind:
for those the screen is built)."""


def _build(ctx: Context) -> Built:
    names: set[str] = set()
    for slot in ctx.slots:
        collectors = slot.get("collector")
        if collectors is not None:
            names.update(collectors.rows)
    columns = COLUMNS + tuple(_collector_column(n) for n in sorted(names))
    rows: list[Row] = []
    for slot in ctx.slots:
        own = slot.get("esatui")
        if own is None:
            continue
        me = own.rows.get("self")
        values: dict[str, Value] = {}
        if me is not None:
            get = me.values.get
            values = {cid: c.of(own.duration_us, get) for cid, c in ROW_COLUMNS.columns.items()}
        collectors = slot.get("collector")
        for name in names:
            entity = collectors.rows.get(name) if collectors else None
            values[f"{name}_ms"] = _ms(entity.values.get("cpu_us")) if entity else None
        rows.append(interval_row(slot, values))
    return Built(columns, rows)


SCREEN = ScreenDef(
    name="ESAOVHD",
    title="Monitor Overhead",
    doc="esatui's own cost: CPU used (nanosecond CPU clocks less steal), samples, reads, "
    "bytes the store wrote, resident memory",
    timeline=("esatui",),
    kinds=("collector",),
    columns=(*COLUMNS, _PER_COLLECTOR),
    build=_build,
    needs="a recording made by esatui live or esatui collect",
    reads=(
        Reads(
            "esatui",
            (
                "cpu_us",
                "samples",
                "reads",
                "store_bytes",
                max_column("collect_ms"),
                max_column("rss_bytes"),
            ),
        ),
        Reads("collector", ("cpu_us",)),
    ),
    row_columns=ROW_COLUMNS,
    streams=True,
)
