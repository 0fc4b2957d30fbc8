"""ESALNXC, Linux CPU Analysis: this Linux's virtual CPUs as the guest sees them.

Each CPU's percentages are of that CPU's own ticks in the interval (as sar does), so they
add up to exactly 100: ``total`` = user + nice + syst + irq + sirq, and total + iowait +
idle + steal = 100. The ``all`` row adds the CPUs up (percent of one CPU, so 4 busy CPUs
show 400), each by the share of the interval it was online (:mod:`~esatui.screens.online`);
its highlight uses the average per CPU, weighed alike.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence

from esatui.db.slots import EntityData, Slot
from esatui.screens.catalog import Built, Context, Reads, ScreenDef
from esatui.screens.common import (
    TIME,
    interval_row,
    natural_key,
    percent_columns,
)
from esatui.screens.model import Column, Level, Row, RowKind, Value
from esatui.screens.online import OnlineTime
from esatui.screens.row_columns import Member, RowColumn, RowColumns, TotalRows, every_entity
from esatui.screens.rowkey import EntityKey

# column id -> /proc/stat field (µs deltas)
PARTS = {
    "user": "user_us",
    "nice": "nice_us",
    "syst": "system_us",
    "iowait": "iowait_us",
    "irq": "irq_us",
    "sirq": "softirq_us",
    "idle": "idle_us",
    "steal": "steal_us",
}
BUSY = ("user", "nice", "syst", "irq", "sirq")


_pct = percent_columns("Percent of one CPU")


COLUMNS = (
    TIME,
    Column("type", ("", "Type"), 4, key=True, repeat=False, doc="CPU type"),
    Column("id", ("", "ID"), 4, 0, key=True, doc="Linux CPU number (all: the sum)"),
    _pct("total", "", "Total", "user + nice + syst + irq + sirq"),
    _pct("user", "", "User", "user mode"),
    _pct("nice", "", "Nice", "user mode, niced"),
    _pct("syst", "", "Syst", "kernel"),
    _pct("iowait", "IO", "Wait", "idle with I/O outstanding"),
    _pct("irq", "", "IRQ", "hardware interrupts"),
    _pct("sirq", "Soft", "IRQ", "soft interrupts"),
    _pct("idle", "", "Idle", "idle"),
    _pct(
        "steal",
        "",
        "Steal",
        "wanted to run, the hypervisor ran something else (all: the CPUs' added up, marked by "
        "their mean)",
        threshold="steal",
    ),
)


_PART_IDS = tuple(PARTS)
_PART_FIELDS = tuple(PARTS.values())

CPU_READS = Reads("cpu", _PART_FIELDS, ("type", "type_source", "address"))
VCPU_READS = Reads("vcpu", attrs=("type", "type_source"))
_BUSY_INDEX = tuple(_PART_IDS.index(c) for c in BUSY)
_busy_parts = operator.itemgetter(*_BUSY_INDEX)
_STEAL_INDEX = _PART_IDS.index("steal")
_EMPTY: dict[str, float | None] = dict.fromkeys(("total", *PARTS))


def cpu_scale(parts: Sequence[int | float | None]) -> float | None:
    """Percent per tick of a CPU whose interval counted ``parts`` (:data:`PARTS`' fields);
    ``None`` when nothing was counted."""
    whole = sum(filter(None, parts))  # None (not read) and 0 add nothing
    return 100.0 / whole if whole > 0 else None


def busy_share(parts: Sequence[int | float | None], scale: float) -> float:
    """``total``: the busy parts' shares added (``parts`` at ``scale``: :func:`cpu_scale`),
    left to right from 0.0 (a loop: a generator under ``sum`` cost twice as much)."""
    total = 0.0
    for value in _busy_parts(parts):
        if value is not None:
            total += value * scale
    return total


def cpu_share(parts: Sequence[int | float | None], index: int) -> float | None:
    """One of ``parts`` as a percent of their sum."""
    scale, value = cpu_scale(parts), parts[index]
    return None if scale is None or value is None else value * scale


def cpu_percentages(values: Mapping[str, int | float | None]) -> dict[str, float | None]:
    """Percent of the CPU's own ticks for every column, ``total`` included."""
    parts = [values.get(name) for name in _PART_FIELDS]
    scale = cpu_scale(parts)
    if scale is None:
        return dict(_EMPTY)
    out: dict[str, float | None] = {
        cid: None if v is None else v * scale for cid, v in zip(_PART_IDS, parts, strict=True)
    }
    out["total"] = busy_share(parts, scale)
    return out


def cpu_busy_pct(values: Mapping[str, int | float | None]) -> float | None:
    """``cpu_percentages(values)["total"]`` alone (ESASSUM's busy by type, of every CPU in
    every row)."""
    return _total(*[values.get(name) for name in _PART_FIELDS])


def cpu_steal_pct(values: Mapping[str, int | float | None]) -> float | None:
    """``cpu_percentages(values)["steal"]`` alone (ESASSUM's steal, of every CPU in every
    row)."""
    return cpu_share([values.get(name) for name in _PART_FIELDS], _STEAL_INDEX)


CPU_ONLINE = OnlineTime(_PART_FIELDS, slack_us=2 * len(_PART_FIELDS) * 10_000)
"""How long a CPU was online: the ticks it counted. The kernel rounds each field down to a
tick (10 ms at USER_HZ 100) when it prints it, so two CPUs online throughout may differ by
a tick per field each."""


def _part(index: int) -> RowColumn:
    def share(*parts: int | float | None) -> float | None:
        return cpu_share(parts, index)

    return RowColumn(_PART_FIELDS, share)


def _total(*parts: int | float | None) -> float | None:
    scale = cpu_scale(parts)
    return None if scale is None else busy_share(parts, scale)


def _recorded_cpu(shown: EntityKey) -> str | None:
    """The CPU a row shows (type, id); the ``all`` row is every CPU."""
    return shown[1] if len(shown) == 2 else None


def _every_cpu(shown: EntityKey) -> Member | None:
    """The ``all`` row adds every CPU up."""
    return every_entity if shown == ("", "all", RowKind.TOTAL.value) else None


def cpu_order(key: str) -> tuple[object, ...]:
    """Where a CPU's row goes among the interval's, by its key (its number)."""
    return (int(key),) if key.isdigit() else natural_key(key)


ROW_COLUMNS = RowColumns(
    "cpu",
    {"total": RowColumn(_PART_FIELDS, _total)} | {cid: _part(i) for i, cid in enumerate(_PART_IDS)},
    _recorded_cpu,
    keyed_by=(VCPU_READS.kind,),  # a slot's vcpu rows may prove another type (proven_types)
    # the all row adds every CPU's values up in the rows' order (a CPU that counted no tick
    # has none: the build's "counted")
    totals=TotalRows(_every_cpu, lambda key, attrs: cpu_order(key)),
    online=CPU_ONLINE,
)
"""Each CPU's columns of its own row in an interval, and the ``all`` row's (the
distribution view reads them)."""


def proven_types(slot: Slot) -> dict[str, tuple[str, str]]:
    """CPU address -> (type, source) from a source that knows the real type (vmcp)."""
    vcpus = slot.get("vcpu")
    if vcpus is None:
        return {}
    return {
        key: (e.attrs["type"], e.attrs.get("type_source", "vmcp"))
        for key, e in vcpus.rows.items()
        if e.attrs.get("type")
    }


def cpu_type_of(entity: EntityData, proved: Mapping[str, tuple[str, str]]) -> tuple[str, str]:
    """A Linux CPU's type: proved by its CPU address when a source knows, else the host's."""
    address = entity.attrs.get("address")
    if address is not None and address in proved:
        return proved[address]
    return entity.attrs.get("type", ""), entity.attrs.get("type_source", "")


def _build(ctx: Context) -> Built:
    steal = ctx.thresholds["steal"]
    rows: list[Row] = []
    type_sources: list[str] = []
    for slot in ctx.slots:
        cpus = slot.get("cpu")
        if cpus is None:
            continue
        entities: list[EntityData] = sorted(cpus.rows.values(), key=lambda e: cpu_order(e.key))
        proved = proven_types(slot)
        if ctx.entity is not None:
            entities = [e for e in entities if e.key == ctx.entity]
            shares: list[float] | None = None  # no all row
        else:
            shares = CPU_ONLINE.shares(
                [CPU_ONLINE.of(e.values) for e in entities], cpus.duration_us
            )
        sums: dict[str, float] = {}
        counted = 0.0  # CPUs, each by its share of the interval
        for n, entity in enumerate(entities):
            values = cpu_percentages(entity.values)
            cpu_type, type_source = cpu_type_of(entity, proved)
            type_sources.append(type_source)
            row_values: dict[str, Value] = {
                "type": cpu_type,
                "id": int(entity.key) if entity.key.isdigit() else entity.key,
                **values,
            }
            if values["total"] is not None:
                share = 1.0 if shares is None else shares[n]
                counted += share
                for cid, v in values.items():
                    if v is not None:
                        sums[cid] = sums.get(cid, 0.0) + v * share
            rows.append(
                interval_row(
                    slot,
                    row_values,
                    {"steal": steal.level(values["steal"], 1)},
                    first=n == 0,
                    drill="ESACPUU",
                    flags=entity.flags,
                )
            )
        if ctx.entity is None and entities:
            average_steal = sums.get("steal", 0.0) / counted if counted else None
            level = steal.level(average_steal, 1) if average_steal is not None else Level.NONE
            total_values: dict[str, Value] = {"type": "", "id": "all"}
            total_values.update(
                {cid: sums.get(cid) if counted else None for cid in ("total", *PARTS)}
            )
            rows.append(
                interval_row(
                    slot,
                    total_values,
                    {"steal": level},
                    kind=RowKind.TOTAL,
                    first=False,
                    drill="ESACPUU",
                )
            )
    return Built(
        COLUMNS,
        rows,
        type_sources=frozenset(s for s in type_sources if s),
        flags_legend=True,
    )


SCREEN = ScreenDef(
    name="ESALNXC",
    title="Linux CPU Analysis",
    doc="this Linux's virtual CPUs, guest view (/proc/stat)",
    timeline=("cpu",),
    kinds=("vcpu",),
    columns=COLUMNS,
    build=_build,
    needs="the host source (/proc/stat)",
    reads=(CPU_READS, VCPU_READS),
    streams=True,
    row_columns=ROW_COLUMNS,
)
