"""ESACPUU, CPU Utilization Analysis: the LPAR's logical processors as the hypervisor sees them.

One kind (``lcpu``) from whichever source recorded it, in this order of preference: the z/VM
monitor (D0R2: emulation, CP on behalf of users, CP system, wait; D0R16: LPAR management),
hypfs (diag 204: dispatched and online time; it cannot split busy time, nor wait from
steal), SMAPI (DETAILED_CPU: busy and LPAR overhead percentages) and vmcp (INDICATE LOAD:
busy). What a source cannot give is shown as ``.``. Every value is a percent of one
processor: ``total`` = emul + user + syst, and steal what is left of 100 after total and idle
where the source gives both (:func:`lcpu_shares`).

A subtotal row per processor type sums its processors. With the normalized view (key ``n``,
export ``--option normalized``) the subtotals are in full-speed engines: a sub-capacity CP
counts for secondary capability / capability of one (the /proc/sysinfo ratings).

With multithreading (SMT), z/VM writes a D0R2 record per CPU (thread), and a CPU address is
the core ID followed by the thread ID (IBM's MRSYTPRP and MRMTRPRP prologs); the thread ID
takes as many bits as the partition's MTID in effect needs (/proc/sysinfo's ``LPAR CPUs
PS-MTID``, bounding ``G-MTID`` and ``S-MTID``, SYSIB 2.2.2: :func:`thread_bits`; or hypfs'
threads per core). Then a ``core``
column shows each core on its first thread, and threads of a core stay together.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace

from esatui.db.slots import EntityData, KindSlice, Slot
from esatui.screens.catalog import Built, Context, Reads, ScreenDef
from esatui.screens.common import (
    TIME,
    interval_row,
    natural_key,
    number,
    percent_columns,
    type_key,
)
from esatui.screens.model import NUMBER, Column, Drill, Level, Row, RowKind, Value
from esatui.screens.online import OnlineTime, weighed
from esatui.screens.row_columns import Member, RowColumn, RowColumns, TotalRows
from esatui.screens.rowkey import EntityKey

PREFER = ("monitor", "hypfs", "smapi", "vmcp")
PARTS = ("total", "emul", "user", "syst", "idle", "steal", "mgmt")
STEAL = PARTS.index("steal")
LCPU_READS = Reads(
    "lcpu",
    (
        "elapsed_us",
        "emul_us",
        "user_us",
        "syst_us",
        "idle_us",
        "mgmt_us",
        "busy_us",
        "busy_pct",
        "overhead_pct",
    ),
    ("lpar", "type", "type_source"),
)
# the processors as every screen takes them: a slot's preferred source's alone
# (``Slot.get("lcpu", PREFER)``), so its slots need hold no other (ScreenDef.one_source)
LCPU_ONE_SOURCE = ((LCPU_READS.kind, PREFER),)
NORMALIZED = "normalized"


_pct = percent_columns("Percent of one processor")


TYPE = Column(
    "type",
    ("", "Type"),
    4,
    key=True,
    repeat=False,
    provisional=True,  # the monitor's D0R2 PFXCPUTY: zpmd's offset alone
    doc="processor type",
)
CORE = Column(
    "core",
    ("", "Core"),
    4,
    0,
    key=True,
    repeat=False,
    doc="the core a thread runs on (multithreading only: the CPU address without its thread ID)",
)
COLUMNS = (
    TIME,
    TYPE,
    Column("id", ("", "ID"), 4, 0, key=True, doc="logical processor address; Tot: the type's sum"),
    replace(
        _pct("total", "Total", "util", "emul + user + syst (busy when the source cannot split it)"),
        provisional=True,  # syst: the monitor's PFXTMSYS
    ),
    _pct("emul", "Emul", "time", "guest emulation"),
    _pct("user", "", "User", "CP time on behalf of guests"),
    replace(
        _pct("syst", "", "Syst", "CP time for itself; Enter: ESALOCK, how much of it is spinning"),
        drill="ESALOCK",
        provisional=True,  # the monitor's PFXTMSYS: zpmd's offset alone
    ),
    replace(_pct("idle", "", "Idle", "wait"), provisional=True),  # the monitor's PFXTOTWT
    replace(
        _pct(
            "steal",
            "",
            "Steal",
            "ready but not dispatched by PR/SM: 100 - total - idle (. where the source gives "
            "no idle: not dispatched holds the idle wait too)",
            threshold="steal",
        ),
        provisional=True,  # of total and idle
    ),
    _pct(
        "mgmt",
        "LPAR",
        "mgmt",
        "LPAR management (hypfs, the monitor: a core's on its first thread with multithreading) "
        "or LPAR overhead (SMAPI)",
    ),
)


def lcpu_percentages(entity: EntityData, duration_us: int) -> dict[str, float | None]:
    """Percent of one processor for every column, from whatever fields the source filled."""
    return dict(zip(PARTS, entity_shares(entity, duration_us), strict=True))


def entity_shares(entity: EntityData, duration_us: int) -> Shares:
    """:func:`lcpu_shares` of one processor's recorded fields."""
    return lcpu_shares(duration_us, *map(entity.values.get, LCPU_READS.fields))


Shares = tuple[
    float | None,
    float | None,
    float | None,
    float | None,
    float | None,
    float | None,
    float | None,
]
_UNKNOWN: Shares = (None, None, None, None, None, None, None)


def _elapsed(duration_us: int, elapsed_us: Value) -> float:
    """What a processor's percentages are of: its elapsed time, else the interval's."""
    if isinstance(elapsed_us, NUMBER) and elapsed_us:
        return float(elapsed_us)
    return float(duration_us)


def lcpu_shares(
    duration_us: int,
    elapsed_us: Value,
    emul_us: Value,
    user_us: Value,
    syst_us: Value,
    idle_us: Value,
    mgmt_us: Value,
    busy_us: Value,
    busy_pct: Value,
    overhead_pct: Value,
) -> Shares:
    """:data:`PARTS` of one processor in an interval, from its fields (``LCPU_READS``'
    order): each a percent of its elapsed time (else of the interval's). Steal is what is
    left of the elapsed time after busy and idle (seed 000's ESACPUU: total + idle + steal
    = 100), where the source says both: the time the hypervisor did not dispatch a
    processor (hypfs, the monitor's D0R16: ``steal_us``) holds its idle wait too, since
    PR/SM takes a shared processor that waits off its physical one."""
    elapsed = _elapsed(duration_us, elapsed_us)
    if elapsed <= 0:
        return _UNKNOWN
    # _share(value, elapsed), written out: an export runs this per processor per interval
    emul = float(emul_us) * 100.0 / elapsed if isinstance(emul_us, NUMBER) else None
    user = float(user_us) * 100.0 / elapsed if isinstance(user_us, NUMBER) else None
    syst = float(syst_us) * 100.0 / elapsed if isinstance(syst_us, NUMBER) else None
    idle = float(idle_us) * 100.0 / elapsed if isinstance(idle_us, NUMBER) else None
    mgmt = float(mgmt_us) * 100.0 / elapsed if isinstance(mgmt_us, NUMBER) else None
    if emul is not None and user is not None and syst is not None:
        total: float | None = emul + user + syst
    else:
        total = _share(busy_us, elapsed)
    if total is None:
        total = number(busy_pct)
        mgmt = number(overhead_pct)
    steal = None if total is None or idle is None else max(0.0, 100.0 - total - idle)
    return (total, emul, user, syst, idle, steal, mgmt)


def lcpu_total(
    duration_us: int,
    elapsed_us: Value,
    emul_us: Value,
    user_us: Value,
    syst_us: Value,
    idle_us: Value,
    mgmt_us: Value,
    busy_us: Value,
    busy_pct: Value,
    overhead_pct: Value,
) -> float | None:
    """``lcpu_shares(...)[0]`` alone, the same operations in the same order (a type's
    ``Tot`` over a month is read per processor per interval: the other parts cost 30%)."""
    elapsed = _elapsed(duration_us, elapsed_us)
    if elapsed <= 0:
        return None
    if isinstance(emul_us, NUMBER) and isinstance(user_us, NUMBER) and isinstance(syst_us, NUMBER):
        return (
            float(emul_us) * 100.0 / elapsed
            + float(user_us) * 100.0 / elapsed
            + float(syst_us) * 100.0 / elapsed
        )
    total = _share(busy_us, elapsed)
    return number(busy_pct) if total is None else total


def _share(value: Value, elapsed: float) -> float | None:
    return float(value) * 100.0 / elapsed if isinstance(value, int | float) else None


LCPU_ONLINE = OnlineTime(("elapsed_us",))
"""A processor's ``elapsed_us``: its online time from hypfs, the span of its records from the
monitor (D0R2, D0R16: the whole interval, even for a processor varied off and on within it);
SMAPI and vmcp give none. A type's ``Tot`` weighs its processors by it."""


def _recorded_processor(shown: EntityKey) -> str | None:
    """A processor's row, (type, ID) or with multithreading (type, core, ID), is the one
    recorded as its ID (a key with a prefix or leading zeros is then not found, and the
    screen is built as recorded); a type's subtotal is several."""
    return None if shown[-1] == RowKind.SUBTOTAL.value else shown[-1]


def _shows_as(key: str, attrs: Mapping[str, str], shown: EntityKey) -> bool:
    """Whether the processor shows as ``shown``: its type and ID (a core is its ID's)."""
    return (type_of(attrs), str(_display_id(key))) == (shown[0], shown[-1])


def _of_type(shown: EntityKey) -> Member | None:
    """A type's ``Tot`` row adds that type's processors up."""
    if shown[-1] != RowKind.SUBTOTAL.value:
        return None
    cpu_type = shown[0]

    def member(key: str, attrs: Mapping[str, str]) -> bool:
        return type_of(attrs) == cpu_type

    return member


def type_of(attrs: Mapping[str, str]) -> str:
    """A processor's type, by which its rows are grouped and subtotalled."""
    return attrs.get("type", "")


def processor_order(key: str, attrs: Mapping[str, str]) -> tuple[object, ...]:
    """A processor's place among the interval's: by type, then by address."""
    return _order(type_of(attrs), key)


def _several_lpars(attrs: Collection[Mapping[str, str]]) -> bool:
    """Processors of several LPARs (SMAPI reports every LPAR it sees), or some with an LPAR
    and some without: the build keeps those of the LPAR's own (:func:`own_processors`)."""
    return len({a.get("lpar") for a in attrs}) > 1


ROW_COLUMNS = RowColumns(
    "lcpu",
    {
        cid: RowColumn(LCPU_READS.fields, lcpu_shares, timed=True, part=i)
        for i, cid in enumerate(PARTS)
    }
    | {"total": RowColumn(LCPU_READS.fields, lcpu_total, timed=True)},
    _recorded_processor,
    _shows_as,
    totals=TotalRows(_of_type, processor_order, _several_lpars, frozenset({NORMALIZED})),
    online=LCPU_ONLINE,
)
"""Each processor's columns of its own row in an interval, and its type's subtotal's (the
distribution view reads them)."""


def own_processors(cpus: KindSlice, config: Mapping[str, str]) -> list[EntityData]:
    """This LPAR's processors (SMAPI reports every LPAR it can see)."""
    own = config.get("lpar.name") or config.get("lpar_name")
    entities = list(cpus.rows.values())
    if own and any(e.attrs.get("lpar") for e in entities):
        mine = [e for e in entities if e.attrs.get("lpar", own).strip() == own.strip()]
        entities = mine or entities
    return sorted(entities, key=_processor_order)


def _processor_order(entity: EntityData) -> tuple[object, ...]:
    return _order(entity.attrs.get("type", ""), entity.key)


@functools.lru_cache(maxsize=4096)
def _order(cpu_type: str, key: str) -> tuple[object, ...]:
    """:func:`processor_order`, kept (the same few keys every interval)."""
    return (type_key(cpu_type), natural_key(key))


def capacity_factors(config: Mapping[str, str]) -> dict[str, float]:
    """Full-speed engines per processor, by type: CPs may be sub-capacity, the others never."""
    cp = number(_int(config.get("cec.capability_rating")))
    full = number(_int(config.get("cec.secondary_capability_rating")))
    if not cp or not full:
        return {}
    return {"CP": full / cp}


def _int(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None


def _display_id(key: str) -> Value:
    tail = key.rsplit("/", 1)[-1]
    return int(tail) if tail.isdigit() else tail


def _normalized_note(factors: Mapping[str, float]) -> str:
    if not factors:
        return (
            "Normalized view: no capability ratings recorded (the host source "
            "reads them from /proc/sysinfo): subtotals as measured."
        )
    described = ", ".join(f"{t} x {f:.3f}" for t, f in factors.items())
    return (
        f"Subtotals normalized to full-speed engines ({described}; "
        "from the capability ratings in /proc/sysinfo)."
    )


def thread_bits(config: Mapping[str, str]) -> int:
    """How many low bits of a CPU address are the thread ID (0: no multithreading known).

    /proc/sysinfo's ``LPAR CPUs G-MTID`` and ``S-MTID`` are the largest thread IDs the
    machine offers CPs and the other types; ``PS-MTID`` the one the program set (SIGP set
    multithreading), which bounds them, as IBM's qclib reads them (``qc_sysinfo.c``:
    threads = min(PS-MTID, G- or S-MTID) + 1). z/VM with multithreading off: PS-MTID 0,
    and CPU addresses are cores. hypfs' threads per core (DIAGNOSE X'204') proves them too.
    """
    offered = max(_int(config.get(key)) or 0 for key in ("lpar.cpus_g_mtid", "lpar.cpus_s_mtid"))
    program = _int(config.get("lpar.cpus_ps_mtid"))
    mtid = offered if program is None else min(program, offered)
    threads = _int(config.get("hypfs.threads_per_core"))
    if threads:
        mtid = max(mtid, threads - 1)
    return mtid.bit_length()


def core_of(entity: EntityData, bits: int) -> int | None:
    """The core of a logical processor whose address carries ``bits`` of thread ID."""
    address = entity.key.rsplit("/", 1)[-1]
    return int(address) >> bits if bits and address.isdigit() else None


def _subtotal(
    slot: Slot,
    cpu_type: str,
    percents: Sequence[Shares],
    shares: Sequence[float] | None,
    factor: float,
    threaded: bool,
    drill: Drill,
) -> Row:
    """A type's ``Tot`` row: its processors' percentages (:data:`PARTS` each) added (times
    ``factor``), each at its share of the interval (:mod:`~esatui.screens.online`)."""
    values: dict[str, Value] = {"type": cpu_type, "id": "Tot"}
    if threaded:
        values["core"] = ""  # a type's sum has no core
    for cid, part in zip(PARTS, zip(*percents, strict=True), strict=True):
        present: Sequence[float | None] = part if shares is None else weighed(part, shares)
        known = [v for v in present if v is not None] if None in present else present
        # added in the processors' order, from 0.0 (reduce: as a loop would, in C)
        values[cid] = functools.reduce(operator.add, known, 0.0) * factor if known else None
    return interval_row(
        slot, values, {"steal": Level.NONE}, kind=RowKind.SUBTOTAL, first=False, drill=drill
    )


def _build(ctx: Context) -> Built:
    steal = ctx.thresholds["steal"]
    normalized = NORMALIZED in ctx.options
    factors = capacity_factors(ctx.config)
    bits = thread_bits(ctx.config)
    # D0R2 is written per thread; hypfs, SMAPI and vmcp describe cores or do not say
    threaded = bits > 0 and any(
        (lcpus := slot.get("lcpu", PREFER)) is not None and lcpus.source == "monitor"
        for slot in ctx.slots
    )
    rows: list[Row] = []
    sources: set[str] = set()
    notes: list[str] = []
    shown_keys: dict[str, dict[str, Value]] = {}  # a processor's key columns, by its key
    for slot in ctx.slots:
        cpus = slot.get("lcpu", PREFER)
        if cpus is None:
            continue
        entities = own_processors(cpus, ctx.config)
        online = LCPU_ONLINE.shares([LCPU_ONLINE.of(e.values) for e in entities], cpus.duration_us)
        share_of = (
            None if online is None else {e.key: s for e, s in zip(entities, online, strict=True)}
        )
        if ctx.entity is not None:
            entities = [e for e in entities if e.key == ctx.entity]
        by_type: dict[str, list[EntityData]] = {}
        for entity in entities:
            by_type.setdefault(type_of(entity.attrs), []).append(entity)
        first = True
        drill = Drill("ESALNXC", slot.start_us, slot.end_us)
        for cpu_type, members in by_type.items():
            percents: list[Shares] = []
            for entity in members:
                sources.add(entity.attrs.get("type_source") or cpus.source)
                parts = entity_shares(entity, cpus.duration_us)
                percents.append(parts)
                keys = shown_keys.get(entity.key)
                if keys is None:
                    keys = shown_keys[entity.key] = {"id": _display_id(entity.key)}
                    if threaded:
                        keys["core"] = core_of(entity, bits)
                values = {"type": cpu_type, **keys}
                values.update(zip(PARTS, parts, strict=True))
                rows.append(
                    interval_row(
                        slot,
                        values,
                        {"steal": steal.level(parts[STEAL], 1)},
                        first=first,
                        drill=drill,
                        flags=entity.flags,
                    )
                )
                first = False
            if ctx.entity is None:
                factor = factors.get(cpu_type.upper(), 1.0) if normalized else 1.0
                shares = None if share_of is None else [share_of[e.key] for e in members]
                rows.append(_subtotal(slot, cpu_type, percents, shares, factor, threaded, drill))
    if normalized:
        notes.append(_normalized_note(factors))
    columns = (TIME, TYPE, CORE, *COLUMNS[2:]) if threaded else COLUMNS
    return Built(
        columns,
        rows,
        tuple(notes),
        type_sources=frozenset(sources - {""}),
        flags_legend=True,
    )


SCREEN = ScreenDef(
    name="ESACPUU",
    title="CPU Utilization Analysis",
    doc="the LPAR's logical processors, hypervisor view, with a subtotal per type",
    timeline=("lcpu",),
    kinds=(),
    columns=(TIME, TYPE, CORE, *COLUMNS[2:]),
    build=_build,
    needs="the z/VM monitor, hypfs in an LPAR, SMAPI or vmcp",
    reads=(LCPU_READS,),
    prefer=PREFER,
    options=(NORMALIZED,),
    streams=True,
    row_columns=ROW_COLUMNS,
    one_source=LCPU_ONE_SOURCE,
)
