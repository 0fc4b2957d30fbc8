"""ESAUSR2, User CPU Analysis: z/VM guests by CPU, with memory and CP's state samples.

From DIAGNOSE X'2FC' data (hypfs in z/VM mode, or SMAPI Image_Performance_Query): the CPU
a guest used in the interval as a percent of one CPU, its virtual CPUs and memory, and how
CP's high-frequency state sampling found it (using a CPU, waiting for one, in page wait,
idle). The busiest guests come first in each interval.
"""

from __future__ import annotations

from collections.abc import Mapping

from esatui.screens.catalog import Built, Context, Reads, ScreenDef
from esatui.screens.common import TIME, cpu_pct, interval_row, number
from esatui.screens.model import Column, Row, Value
from esatui.screens.row_columns import RowColumn, RowColumns, as_recorded

PREFER = ("hypfs", "smapi")
_SAMPLES = ("High-frequency samples",)

COLUMNS = (
    TIME,
    Column("userid", ("", "UserID"), 8, key=True, doc="z/VM userid"),
    Column("cpu_pct", ("CPU", "pct"), 6, 1, "%", ("CPU",), doc="CPU used, % of one CPU"),
    Column("vcpus", ("Virt", "CPUs"), 4, 0, "count", ("CPU",), doc="virtual CPUs"),
    Column(
        "mem_used_mb",
        ("Used", "MB"),
        8,
        0,
        "MB",
        ("Memory",),
        doc="memory in use (at the interval's end; a bucket's average)",
    ),
    Column("mem_max_mb", ("Max", "MB"), 8, 0, "MB", ("Memory",), doc="maximum memory"),
    Column("samp_cpu", ("", "Using"), 6, 0, "count", _SAMPLES, doc="samples using a real CPU"),
    Column(
        "samp_delay", ("CPU", "Delay"), 6, 0, "count", _SAMPLES, doc="samples waiting for a CPU"
    ),
    Column("samp_page", ("Page", "Wait"), 6, 0, "count", _SAMPLES, doc="samples in page wait"),
    Column("samp_idle", ("", "Idle"), 6, 0, "count", _SAMPLES, doc="samples idle"),
)


def _mb(kib: Value) -> float | None:
    value = number(kib)
    return None if value is None else value / 1024


ROW_COLUMNS = RowColumns(
    "guest",
    {
        "cpu_pct": RowColumn(("cpu_us",), cpu_pct, timed=True),
        "vcpus": RowColumn(("vcpus",), as_recorded),
        "mem_used_mb": RowColumn(("mem_used_kib",), _mb),
        "mem_max_mb": RowColumn(("mem_max_kib",), _mb),
        "samp_cpu": RowColumn(("samp_cpu",), as_recorded),
        "samp_delay": RowColumn(("samp_delay",), as_recorded),
        "samp_page": RowColumn(("samp_page",), as_recorded),
        "samp_idle": RowColumn(("samp_idle",), as_recorded),
    },
    lambda shown: shown[0] if len(shown) == 1 else None,  # a guest is its userid
)
"""A guest's columns of its own row in an interval (the distribution view reads them)."""


def own_userid(config: Mapping[str, str], node: str) -> str | None:
    """The z/VM userid of the Linux esatui recorded (whose CPUs ESALNXC shows): the
    ``VM00 Name`` of its /proc/sysinfo when VM00 is z/VM (a KVM guest's VM00 is KVM: no z/VM
    guest is this Linux); the node name only when /proc/sysinfo was not recorded."""
    name = config.get("vm00.name", "").strip()
    if not name:
        return node.strip().upper() or None
    program = config.get("vm00.control_program", "")
    return name.upper() if not program or program.startswith("z/VM") else None


def _build(ctx: Context) -> Built:
    rows: list[Row] = []
    for slot in ctx.slots:
        guests = slot.get("guest", PREFER)
        if guests is None:
            continue
        entries: list[dict[str, Value]] = []
        for entity in guests.rows.values():
            if ctx.entity is not None and entity.key != ctx.entity:
                continue
            get = entity.values.get
            entry: dict[str, Value] = {"userid": entity.attrs.get("userid", entity.key)}
            entry.update(
                (cid, column.of(guests.duration_us, get))
                for cid, column in ROW_COLUMNS.columns.items()
            )
            entries.append(entry)
        entries.sort(key=lambda e: (-(number(e["cpu_pct"]) or -1.0), str(e["userid"])))
        ours = own_userid(ctx.config, ctx.node)
        for n, entry in enumerate(entries):
            drill = "ESALNXC" if ours and str(entry["userid"]).upper() == ours else None
            rows.append(interval_row(slot, entry, first=n == 0, drill=drill))
    return Built(COLUMNS, rows)


SCREEN = ScreenDef(
    name="ESAUSR2",
    title="User CPU Analysis",
    doc="z/VM guests: CPU, virtual CPUs, memory, high-frequency state samples",
    timeline=("guest",),
    kinds=(),
    columns=COLUMNS,
    build=_build,
    needs=(
        "hypfs in a z/VM guest, or SMAPI's guest query "
        "(System_Image_Performance_Query: collect warns when it fails)"
    ),
    prefer=PREFER,
    row_columns=ROW_COLUMNS,
    streams=True,
    reads=(
        Reads(
            "guest",
            (
                "cpu_us",
                "vcpus",
                "mem_used_kib",
                "mem_max_kib",
                "samp_cpu",
                "samp_delay",
                "samp_page",
                "samp_idle",
            ),
            ("userid",),
        ),
    ),
)
