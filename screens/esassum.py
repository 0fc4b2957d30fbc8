"""ESASSUM, System Summary: one row per interval, the first screen an analyst looks at.

CPU counts and busy per CPU type come from the hypervisor's view of the logical processors
when one was recorded, else from this Linux's own view. Every column drills into the screen
that explains it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from esatui.db.slots import Slot
from esatui.screens import crypto as C
from esatui.screens.catalog import Built, Context, Reads, ScreenDef
from esatui.screens.common import TIME, interval_row, number, pct, type_key
from esatui.screens.esacpuu import (
    LCPU_ONE_SOURCE,
    LCPU_ONLINE,
    LCPU_READS,
    lcpu_percentages,
    own_processors,
)
from esatui.screens.esacpuu import PREFER as LCPU_PREFER
from esatui.screens.esacrypt import crypto_ms_op, crypto_ops_s, polls_per_op, polls_per_op_level
from esatui.screens.esacryq import zcrypt_req_s
from esatui.screens.esalnxc import (
    CPU_ONLINE,
    CPU_READS,
    VCPU_READS,
    cpu_busy_pct,
    cpu_steal_pct,
    cpu_type_of,
    proven_types,
)
from esatui.screens.esalnxc import ROW_COLUMNS as LNXC_ROW_COLUMNS
from esatui.screens.esalock import CPU_FIELDS as SPIN_CPU_FIELDS
from esatui.screens.esalock import LOCK_FIELDS, SPIN_CPU, SPIN_LOCK, spin_pct
from esatui.screens.esalock import THRESHOLD as SPIN_THRESHOLD
from esatui.screens.esapage import FIELDS as PAGING_FIELDS
from esatui.screens.esapage import PAGING, page_values, paging_totals
from esatui.screens.model import Column, Level, Row, Threshold, Value
from esatui.screens.online import weighed
from esatui.screens.row_columns import (
    Member,
    RowColumns,
    TotalColumn,
    TotalRows,
    every_entity,
    slot_order,
)
from esatui.screens.rowkey import EntityKey
from esatui.screens.slot_columns import RangeColumn, SlotColumn, SlotColumns

_CPU = ("By type",)
_CRYPTO = ("Crypto",)

FIXED = (
    Column(
        "steal_pct",
        ("", "Steal"),
        5,
        1,
        "%",
        threshold="steal",
        drill="ESALNXC",
        doc="average steal of this Linux's CPUs",
    ),
    Column(
        "crypto_ops_s",
        ("Ops", "/sec"),
        7,
        1,
        "/s",
        _CRYPTO,
        drill="ESACRYPT",
        doc="crypto operations the guests started per second: virtual NQs (z/VM monitor D5R9), "
        "the operations ms/oper and Polls/oper are per (ESACRYPT's Completed columns count "
        "completions, from provisional fields)",
    ),
    Column(
        "crypto_ms_op",
        ("ms/", "oper"),
        6,
        2,
        "ms",
        _CRYPTO,
        drill="ESACRYPT",
        doc="NQ to DQ per operation as the guests see it",
    ),
    Column(
        "polls_per_op",
        ("Polls", "/oper"),
        6,
        2,
        "",
        _CRYPTO,
        drill="ESAPOLL",
        threshold="dq_per_op",
        provisional=True,  # ESACRYPT's dq_per_op_virt: the provisional CRYNOVPR
        doc="virtual dequeues per operation",
    ),
    Column(
        "zcrypt_req_s",
        ("zcrypt", "req/s"),
        7,
        1,
        "/s",
        _CRYPTO,
        drill="ESACRYQ",
        doc="requests per second through this Linux's AP queues",
    ),
    Column(
        "paging_enc_pct",
        ("EncPg", "CPU %"),
        6,
        3,
        "%",
        drill="ESAPAGE",
        provisional=True,
        doc="CPU CP spent encrypting and decrypting pages, % of one processor (D3R2)",
    ),
    Column(
        "spin_pct",
        ("Spin", "CPU %"),
        6,
        2,
        "%",
        drill="ESALOCK",
        threshold=SPIN_THRESHOLD,
        provisional=True,
        doc="CP spinning on formal spin locks, % of one processor (D0R23, else D0R2)",
    ),
    Column(
        "monitor_cpu_pct",
        ("esatui", "CPU %"),
        6,
        2,
        "%",
        drill="ESAOVHD",
        doc="esatui's own CPU, % of one CPU",
    ),
)


def _type_columns(cpu_type: str, drill: str) -> tuple[Column, Column]:
    t = cpu_type.lower()
    return (
        Column(
            f"cpus_{t}",
            (cpu_type[:4], "CPUs"),
            4,
            0,
            "count",
            _CPU,
            drill=drill,
            doc=f"{cpu_type} CPUs (of a bucket: each one recorded in any of its intervals)",
        ),
        Column(
            f"busy_{t}",
            (cpu_type[:5], "Busy%"),
            6,
            1,
            "%",
            _CPU,
            drill=drill,
            # the hypervisor's view: the monitor's PFXTMSYS and processor type (zpmd's)
            provisional=drill == "ESACPUU",
            doc=f"{cpu_type} busy, % of one CPU (sum over the CPUs, each for its time online)",
        ),
    )


@dataclass(frozen=True)
class _TypeUse:
    count: int
    busy: float | None


def guest_cpu_use(slot: Slot) -> dict[str, _TypeUse]:
    """Counts and busy by type of this Linux's CPUs (their proven types where known)."""
    cpus = slot.get("cpu")
    if cpus is None:
        return {}
    proved = proven_types(slot)
    entities = list(cpus.rows.values())
    shares = CPU_ONLINE.shares([CPU_ONLINE.of(e.values) for e in entities], cpus.duration_us)
    busy = weighed([cpu_busy_pct(e.values) for e in entities], shares)
    return _by_type(
        (_shown_type(cpu_type_of(entity, proved)[0]), value)
        for entity, value in zip(entities, busy, strict=True)
    )


def _shown_type(cpu_type: str | None) -> str:
    return cpu_type or "CPU"  # a CPU no source gave a type


def _by_type(uses: Iterable[tuple[str, float | None]]) -> dict[str, _TypeUse]:
    """CPUs counted and their busy added up by type, in the order given (``None`` where none
    of a type's is known)."""
    counts: dict[str, int] = {}
    busy: dict[str, float | None] = {}
    for cpu_type, value in uses:
        counts[cpu_type] = counts.get(cpu_type, 0) + 1
        before = busy.get(cpu_type)
        busy[cpu_type] = before if value is None else (before or 0.0) + value
    return {cpu_type: _TypeUse(n, busy[cpu_type]) for cpu_type, n in counts.items()}


# Sources whose logical-processor times cover the interval exactly; vmcp's INDICATE LOAD is a
# smoothed percentage, good for ESACPUU when nothing better was recorded, not for the summary.
INTERVAL_EXACT = ("monitor", "hypfs", "smapi")


def hypervisor_cpu_use(slot: Slot, config: Mapping[str, str]) -> dict[str, _TypeUse]:
    """Counts and busy by type of the LPAR's logical processors (ESACPUU's view)."""
    cpus = slot.get("lcpu", LCPU_PREFER)
    if cpus is None or cpus.source not in INTERVAL_EXACT:
        return {}
    entities = own_processors(cpus, config)
    shares = LCPU_ONLINE.shares([LCPU_ONLINE.of(e.values) for e in entities], cpus.duration_us)
    busy = weighed([lcpu_percentages(e, cpus.duration_us)["total"] for e in entities], shares)
    return _by_type(
        (_shown_type(entity.attrs.get("type")), value)
        for entity, value in zip(entities, busy, strict=True)
    )


def guest_steal_pct(slot: Slot) -> float | None:
    cpus = slot.get("cpu")
    if cpus is None:
        return None
    entities = list(cpus.rows.values())
    shares = CPU_ONLINE.shares([CPU_ONLINE.of(e.values) for e in entities], cpus.duration_us)
    weights = [1.0] * len(entities) if shares is None else shares
    added, known = 0.0, 0.0  # each CPU's steal at its share of the interval
    for entity, share in zip(entities, weights, strict=True):
        steal = cpu_steal_pct(entity.values)
        if steal is not None:
            added += steal * share
            known += share
    return added / known if known else None


def monitor_cpu_pct(slot: Slot) -> float | None:
    own = slot.get("esatui")
    me = own.rows.get("self") if own else None
    return pct(number(me.values.get("cpu_us")), own.duration_us) if own and me else None


def encrypted_paging_pct(slot: Slot) -> float | None:
    """ESAPAGE's total: CPU encrypting and decrypting pages, % of one processor."""
    found = paging_totals(slot)
    if found is None:
        return None
    value = page_values(*found)["cpu_pct"]
    return value if isinstance(value, float) else None


def cpu_use(
    slots: Iterable[Slot], config: Mapping[str, str]
) -> tuple[str, list[dict[str, _TypeUse]]]:
    """The view of the CPUs (the hypervisor's wherever one slot has the LPAR's processors,
    else this Linux's) and each slot's counts and busy by type in it, the slots read once
    (the distribution view's a chunk at a time): this Linux's view is made only until a
    slot has the hypervisor's."""
    hypervisor: list[dict[str, _TypeUse]] = []
    guest: list[dict[str, _TypeUse]] | None = []  # None once the hypervisor's view is known
    for slot in slots:
        use = hypervisor_cpu_use(slot, config)
        hypervisor.append(use)
        if use:
            guest = None
        elif guest is not None:
            guest.append(guest_cpu_use(slot))
    return ("guest", guest) if guest is not None else ("hypervisor", hypervisor)


def _type_column(column_id: str) -> tuple[str, str] | None:
    """(``cpus`` or ``busy``, the type in lower case) of a CPU type's column id
    (:func:`_type_columns`)."""
    part, _, type_id = column_id.partition("_")
    if part not in ("cpus", "busy") or not type_id or type_id == "<type>":
        return None
    return part, type_id


def cpu_type_column(column_id: str) -> RangeColumn | None:
    """``cpus_<type>`` or ``busy_<type>`` (:func:`_type_columns`), made over the range as the
    build makes it: the view is the whole range's."""
    named = _type_column(column_id)
    if named is None:
        return None
    part, type_id = named

    def values(slots: Iterable[Slot], config: Mapping[str, str]) -> list[Value]:
        out: list[Value] = []
        for use in cpu_use(slots, config)[1]:
            of_type = next((u for t, u in use.items() if t.lower() == type_id), None)
            out.append(
                None if of_type is None else of_type.count if part == "cpus" else of_type.busy
            )
        return out

    return RangeColumn(("cpu", "vcpu", "lcpu"), values)


def _no_entity(shown: EntityKey) -> str | None:
    return None  # a row is an interval's, no entity's


def _every_cpu(shown: EntityKey) -> Member | None:
    return every_entity if not shown else None


def _busy_of_type(column_id: str) -> TotalColumn | None:
    """``busy_<type>`` of the guest's view (:func:`guest_cpu_use`) from that type's CPUs'
    own rows, where no hypervisor's processors (whose view would take over) nor vmcp's
    (which prove types: unproven, a CPU's type is its recorded one) were recorded near the
    range: else from the slots (:func:`cpu_type_column`)."""
    named = _type_column(column_id)
    if named is None or named[0] != "busy":
        return None
    type_id = named[1]

    def of_type(key: str, attrs: Mapping[str, str]) -> bool:
        return _shown_type(attrs.get("type")).lower() == type_id

    return TotalColumn(LNXC_ROW_COLUMNS.columns["total"], of_type, unless=("lcpu", "vcpu"))


ROW_COLUMNS = RowColumns(
    CPU_READS.kind,
    {"steal_pct": LNXC_ROW_COLUMNS.columns["steal"]},
    _no_entity,
    # the mean of every CPU's steal that is known, in the slot's order (the entities')
    totals=TotalRows(_every_cpu, slot_order, mean=True),
    total_column=_busy_of_type,
    online=CPU_ONLINE,
)
"""The steal of an interval's row from this Linux's CPUs' own rows, as
:func:`guest_steal_pct` makes it (where the timeline's intervals are theirs alone; else the
slot column below), and busy by CPU type likewise."""


def _of_slot(kinds: tuple[str, ...], value: Callable[[Slot], Value]) -> SlotColumn:
    return SlotColumn(kinds, lambda slot, config: value(slot))


SLOT_COLUMNS = SlotColumns(
    {
        "steal_pct": _of_slot(("cpu",), guest_steal_pct),
        "monitor_cpu_pct": _of_slot(("esatui",), monitor_cpu_pct),
        "zcrypt_req_s": _of_slot(("zcrypt_card",), zcrypt_req_s),
        "crypto_ops_s": _of_slot((C.CRYPTO,), crypto_ops_s),
        "crypto_ms_op": _of_slot((C.CRYPTO,), crypto_ms_op),
        "polls_per_op": _of_slot((C.CRYPTO,), polls_per_op),
        "paging_enc_pct": _of_slot((PAGING,), encrypted_paging_pct),
        "spin_pct": _of_slot((SPIN_LOCK, SPIN_CPU), spin_pct),
    },
    of_range=cpu_type_column,
)
"""The columns after the CPU types (:data:`FIXED`), each of its slot and the kinds it
reads; the CPU types' columns depend on the whole range's view (:func:`cpu_type_column`)."""


def fixed_values(slot: Slot, config: Mapping[str, str]) -> dict[str, Value]:
    """The values of the columns after the CPU types (:data:`FIXED`) for one slot and the
    node's configuration: ESASSUM's and ESANODE's."""
    return {cid: column.value(slot, config) for cid, column in SLOT_COLUMNS.columns.items()}


def fixed_levels(
    slot: Slot, values: Mapping[str, Value], thresholds: Mapping[str, Threshold]
) -> dict[str, Level]:
    """The highlights of :func:`fixed_values`."""
    return {
        "steal_pct": thresholds["steal"].level(values["steal_pct"], 1),
        "polls_per_op": polls_per_op_level(slot, thresholds),
        "spin_pct": thresholds[SPIN_THRESHOLD].level(values["spin_pct"], 2),
    }


def _build(ctx: Context) -> Built:
    view, per_slot = cpu_use(ctx.slots, ctx.config)
    types = sorted({t for use in per_slot for t in use}, key=type_key)
    target = "ESACPUU" if view == "hypervisor" else "ESALNXC"
    type_columns = tuple(c for t in types for c in _type_columns(t, target))
    columns = (TIME, *type_columns, *FIXED)
    rows: list[Row] = []
    sources: list[str] = []
    for slot, use in zip(ctx.slots, per_slot, strict=True):
        values: dict[str, Value] = {}
        for t in types:
            if t in use:
                values[f"cpus_{t.lower()}"] = use[t].count
                values[f"busy_{t.lower()}"] = use[t].busy
        values.update(fixed_values(slot, ctx.config))
        if view == "hypervisor":
            lcpus = slot.get("lcpu", LCPU_PREFER)
            if lcpus is not None:
                sources += [e.attrs.get("type_source") or lcpus.source for e in lcpus.rows.values()]
        else:
            cpus, proved = slot.get("cpu"), proven_types(slot)
            if cpus is not None:
                sources += [cpu_type_of(e, proved)[1] for e in cpus.rows.values()]
        levels = fixed_levels(slot, values, ctx.thresholds)
        rows.append(interval_row(slot, values, levels, drill="ESALNXC"))
    notes = [
        f"CPUs by type: the {view} view"
        + (
            " (the LPAR's logical processors)."
            if view == "hypervisor"
            else " (this Linux's virtual CPUs)."
        )
    ]
    return Built(columns, rows, tuple(notes), type_sources=frozenset(s for s in sources if s))


SCREEN = ScreenDef(
    name="ESASSUM",
    title="System Summary",
    doc="one row per interval: CPUs by type, steal, crypto, encrypted paging's CPU, CP's spin "
    "lock spinning, esatui's own cost",
    timeline=("cpu", "lcpu", "crypto"),
    kinds=("cpu", "lcpu", "vcpu", "zcrypt_card", "esatui", PAGING, SPIN_LOCK, SPIN_CPU),
    prefer=LCPU_PREFER,
    columns=(TIME, *_type_columns("<type>", "ESALNXC"), *FIXED),
    build=_build,
    needs="the host source, the z/VM monitor or SMAPI",
    reads=(
        CPU_READS,
        VCPU_READS,
        LCPU_READS,
        C.CRYPTO_READS,
        Reads("zcrypt_card", ("request_count",)),
        Reads("esatui", ("cpu_us",)),
        Reads(PAGING, PAGING_FIELDS),
        Reads(SPIN_LOCK, LOCK_FIELDS),
        Reads(SPIN_CPU, SPIN_CPU_FIELDS),
    ),
    row_columns=ROW_COLUMNS,
    slot_columns=SLOT_COLUMNS,
    streams=True,
    one_source=LCPU_ONE_SOURCE,
)
