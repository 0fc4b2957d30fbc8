"""ESANODE, Node Summary: every node the reader holds, one row per node per interval.

The fleet view of ESASSUM's figures: busy by CPU type (each node's own view, hypervisor or
guest, as ESASSUM chooses it), steal, crypto operations per second, ms per operation, polls
per operation, zcrypt requests, encrypted paging's and spin locks' CPU, and esatui's own
CPU. Within an interval the rows are sorted by the column the user picks (option
``sort:<column>``, key ``s``: worst first; by node name without one) and the worst value of
every column is highlighted (colour in the monitor; in a text report the sorted column's
worst is the interval's first row). Enter drills into that node's ESASSUM. It works on any
reader holding several nodes: Prometheus, or a SQLite database with monitor imports of
several z/VM systems or recordings merged with ``esatui db merge``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from esatui.db.slots import Slot
from esatui.screens.catalog import Built, Context, NodeData, ScreenDef
from esatui.screens.common import TIME, interval_row, type_key
from esatui.screens.esacpuu import PREFER as LCPU_PREFER
from esatui.screens.esassum import (
    FIXED,
    fixed_levels,
    fixed_values,
    guest_cpu_use,
    hypervisor_cpu_use,
)
from esatui.screens.esassum import SCREEN as ESASSUM
from esatui.screens.model import Column, Drill, Level, Row, Value

SORT = "sort:"
NODE = Column("node", ("", "Node"), 8, key=True, doc="the node (system) recorded")
_BUSY = ("CPU busy %",)  # fits over one type and All, the fewest columns it has

# Larger is worse for every figure here but the node's name.
SORTS = (
    "busy",
    "steal_pct",
    "crypto_ops_s",
    "crypto_ms_op",
    "polls_per_op",
    "zcrypt_req_s",
    "paging_enc_pct",
    "spin_pct",
    "monitor_cpu_pct",
    "node",
)


def _busy_column(cpu_type: str) -> Column:
    return Column(
        f"busy_{cpu_type.lower()}",
        ("", cpu_type[:6]),
        6,
        1,
        "%",
        _BUSY,
        doc=f"{cpu_type} busy, % of one CPU (sum over the node's {cpu_type} CPUs)",
    )


BUSY_TOTAL = Column(
    "busy", ("", "All"), 6, 1, "%", _BUSY, doc="all CPUs busy, % of one CPU (the sort's 'busy')"
)


def _node_values(slot: Slot, config: Mapping[str, str]) -> dict[str, Value]:
    use = hypervisor_cpu_use(slot, config) or guest_cpu_use(slot)
    values: dict[str, Value] = {}
    for cpu_type, typed in use.items():
        values[f"busy_{cpu_type.lower()}"] = typed.busy
    busy = [typed.busy for typed in use.values() if typed.busy is not None]
    values["busy"] = sum(busy) if busy else None
    values.update(fixed_values(slot, config))  # the same figures as the node's ESASSUM
    return values


def _sort_column(options: frozenset[str]) -> str:
    for option in options:
        if option.startswith(SORT) and option[len(SORT) :] in SORTS:
            return option[len(SORT) :]
    return "node"


def _order(sort: str, node: str, values: Mapping[str, Value]) -> tuple[int, float, str]:
    """Worst first: larger values, then unknown ones; the node's name breaks ties."""
    if sort == "node":
        return (0, 0.0, node)
    value = values.get(sort)
    if isinstance(value, int | float):
        return (0, -float(value), node)
    return (1, 0.0, node)


def _build(ctx: Context) -> Built:
    sort = _sort_column(ctx.options)
    # (display second, node, slot, values): intervals of different nodes that end in the
    # same second share a time (nodes sample on their own clocks, milliseconds apart)
    entries: list[tuple[int, NodeData, Slot, dict[str, Value]]] = []
    for node in ctx.fleet:
        for slot in node.slots:
            entries.append((slot.end_us // 1_000_000, node, slot, _node_values(slot, node.config)))
    types = sorted(
        {k.removeprefix("busy_").upper() for *_, v in entries for k in v if k.startswith("busy_")},
        key=type_key,
    )
    busy_columns = tuple(_busy_column(t) for t in types)
    columns = (TIME, NODE, *busy_columns, BUSY_TOTAL, *FIXED)
    # the worst is coloured, never marked: a column with a threshold keeps its marks for it
    numeric = [c.id for c in columns if not c.is_text and not c.threshold]
    rows: list[Row] = []
    for second in sorted({e[0] for e in entries}, reverse=True):
        group = [e for e in entries if e[0] == second]
        group.sort(key=lambda e: _order(sort, e[1].node, e[3]))
        worst = _worst(group, numeric) if len(group) > 1 else {}
        for i, (_, node, slot, values) in enumerate(group):
            levels = {cid: Level.WARN for cid, who in worst.items() if who == node.node}
            # the columns with a threshold are never among the worst: they keep ESASSUM's marks
            levels.update(fixed_levels(slot, values, ctx.thresholds))
            row = interval_row(slot, {**values, "node": node.node}, levels, first=i == 0)
            rows.append(_drill_to(row, node.node))
    notes = (
        f"Sorted by {sort}"
        + ("" if sort == "node" else ", worst first")
        + "; the worst of each column in an interval is highlighted. Enter: the node's ESASSUM.",
    )
    return Built(columns, rows, notes)


def _worst(
    group: list[tuple[int, NodeData, Slot, dict[str, Value]]], columns: list[str]
) -> dict[str, str]:
    """The node with the largest value of each column in one interval."""
    out: dict[str, str] = {}
    for cid in columns:
        known = [(v[cid], n.node) for _, n, _, v in group if isinstance(v.get(cid), int | float)]
        if len(known) > 1:
            out[cid] = max(known, key=lambda k: float(k[0]))[1]  # type: ignore[arg-type]
    return out


def _drill_to(row: Row, node: str) -> Row:
    return replace(row, drill=Drill(ESASSUM.name, row.start_us, row.end_us, node=node))


SCREEN = ScreenDef(
    name="ESANODE",
    title="Node Summary",
    doc="every node, one row per node per interval: busy by type, steal, crypto, zcrypt, "
    "esatui's own CPU; sorted by a column (s), the worst highlighted",
    timeline=ESASSUM.timeline,
    kinds=ESASSUM.kinds,
    prefer=LCPU_PREFER,
    columns=(TIME, NODE, _busy_column("<type>"), BUSY_TOTAL, *FIXED),
    build=_build,
    needs=ESASSUM.needs + " of at least one node",
    reads=ESASSUM.reads,
    fleet=True,
    sorts=SORTS,
)
