"""ESALOCK, Spin Lock Analysis: how much of CP's time goes to spinning on its formal locks.

CP serializes its own work with formal spin locks; a processor that finds one held spins
until it is free, busy but doing nothing. D0R23 MRSYTLCK (one record per interval) names
each lock and carries the requests that had to spin and the time spent spinning, exclusive
and shared (``spin_lock``); D0R2 MRSYTPRP carries the same per processor (``spin_cpu``:
PFXSPINT, PFXSPINC), the only spin data of levels before D0R23. Per interval: a row per lock
that spun (D0R23), and a total row (D0R23's locks summed, else D0R2's processors).

Columns as VMPRF's "Avg Spin Lock Rate, Spin Time, Pct Spin Time" (seed 001): spins per
second = Δspins / interval; µs per spin = Δspin µs / Δspins; % of one processor = Δspin µs /
interval µs × 100 = spins/s × µs/spin / 10⁴ (seed 001: 13,174/s × 24.989 µs = 32.92%); % of
the LPAR = that / the processors online in the interval; % of CP time = Δspin µs / Δ(CP on
behalf of users + CP system) of the same interval's D0R2. Every field read is provisional
(no readable public field table: docs/MONITOR.md), so every number column is marked so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from esatui.db.slots import KindSlice, Slot
from esatui.screens.catalog import Built, Context, Reads, ScreenDef
from esatui.screens.common import TIME, interval_row, number, per_second, ratio
from esatui.screens.esacpuu import LCPU_ONE_SOURCE
from esatui.screens.esacpuu import PREFER as LCPU_PREFER
from esatui.screens.model import Column, Level, Row, RowKind, Threshold, Value
from esatui.screens.row_columns import RowColumn, RowColumns, RowFilter
from esatui.screens.slot_columns import SlotColumn, SlotColumns

SPIN_LOCK = "spin_lock"
SPIN_CPU = "spin_cpu"
PREFER = ("monitor",)
LOCK_FIELDS = ("excl_spins", "excl_us", "shared_spins", "shared_us")
CPU_FIELDS = ("spins", "spin_us")
THRESHOLD = "spin_pct"
TOTAL = "Total"
SCHEDULER_LOCK = "SRMSLOCK"

_RATE = ("Spins per second",)


def _num(
    cid: str,
    header: tuple[str, str],
    width: int,
    dec: int,
    unit: str,
    doc: str,
    group: tuple[str, ...] = (),
    threshold: str | None = None,
) -> Column:
    return Column(
        cid, header, width, dec, unit, group, threshold=threshold, provisional=True, doc=doc
    )


COLUMNS = (
    TIME,
    Column("lock", ("", "Lock"), 8, key=True, doc="the formal spin lock (D0R23); Total: all"),
    _num("spins_s", ("", "Total"), 9, 1, "/s", "requests that had to spin, per second", _RATE),
    _num("excl_s", ("", "Excl"), 9, 1, "/s", "exclusive requests that spun, per second", _RATE),
    _num("shared_s", ("", "Shared"), 9, 1, "/s", "share requests that spun, per second", _RATE),
    _num("us_spin", ("Avg", "µs/spin"), 8, 3, "us", "average time of one spin"),
    _num(
        "pct_cpu",
        ("Spin %", "1 proc"),
        7,
        3,
        "%",
        "time spinning, % of one processor (VMPRF's Pct Spin Time)",
        threshold=THRESHOLD,
    ),
    _num("pct_lpar", ("Spin %", "LPAR"), 7, 3, "%", "time spinning, % of the LPAR's processors"),
    _num("pct_cp", ("Spin %", "of CP"), 7, 2, "%", "time spinning, % of CP's time (D0R2)"),
    Column("source", ("", "Record"), 6, doc="the record the row comes from: D0R23 or D0R2"),
)


@dataclass(frozen=True, slots=True)
class Spin:
    """One lock's (or all locks') spinning over one interval: deltas."""

    name: str
    excl_spins: float | None
    excl_us: float | None
    shared_spins: float | None
    shared_us: float | None

    @property
    def spins(self) -> float | None:
        return _add(self.excl_spins, self.shared_spins)

    @property
    def spin_us(self) -> float | None:
        return _add(self.excl_us, self.shared_us)


def _add(a: float | None, b: float | None) -> float | None:
    if a is None and b is None:
        return None
    return (a or 0.0) + (b or 0.0)


@dataclass(frozen=True, slots=True)
class SpinInterval:
    """An interval's spinning: per lock (D0R23; empty from D0R2), the total, where from."""

    locks: tuple[Spin, ...]
    total: Spin
    source: str  # "D0R23" or "D0R2"
    duration_us: int
    processors: int | None  # logical processors online in the interval
    cp_us: float | None  # CP's time (on behalf of users + system), summed over them

    def values(self, spin: Spin) -> dict[str, Value]:
        """ESALOCK's number columns for ``spin`` (a lock's or the total)."""
        rates = _rates(spin, self.duration_us)
        values: dict[str, Value] = dict(zip(_OWN, rates, strict=True))
        pct = rates[-1]  # pct_cpu
        values["pct_lpar"] = None if pct is None or not self.processors else pct / self.processors
        values["pct_cp"] = None if spin.spin_us is None else ratio(spin.spin_us * 100, self.cp_us)
        return values


# the columns of a spin alone and its interval's duration (the others need the processors')
_OWN = ("spins_s", "excl_s", "shared_s", "us_spin", "pct_cpu")


def _rates(spin: Spin, duration_us: int) -> tuple[float | None, ...]:
    """:data:`_OWN` of ``spin`` over an interval of ``duration_us``."""
    rate = per_second(spin.spin_us, duration_us)
    return (
        per_second(spin.spins, duration_us),
        per_second(spin.excl_spins, duration_us),
        per_second(spin.shared_spins, duration_us),
        ratio(spin.spin_us, spin.spins),
        None if rate is None else rate / 1e6 * 100,
    )


def _lock_spin(name: str, values: Mapping[str, object]) -> Spin:
    got = [number(values.get(f)) for f in LOCK_FIELDS]
    return Spin(name, *got)


def _lock_rates(duration_us: int, *fields: Value) -> tuple[float | None, ...]:
    """:data:`_OWN` of a lock's recorded row (``LOCK_FIELDS``) in an interval."""
    return _rates(Spin("", *map(number, fields)), duration_us)


def _lock_spun(*fields: Value) -> bool:
    """Whether a lock's recorded row (``LOCK_FIELDS``) shows: it spun."""
    return _spun(Spin("", *map(number, fields)))


ROW_COLUMNS = RowColumns(
    SPIN_LOCK,
    {cid: RowColumn(LOCK_FIELDS, _lock_rates, timed=True, part=i) for i, cid in enumerate(_OWN)},
    lambda shown: shown[0] if len(shown) == 1 else None,  # a lock is its name; not the total
    shown=RowFilter(LOCK_FIELDS, _lock_spun),
)
"""A lock's own columns of its D0R23 row in the intervals it spun (the distribution view
reads them)."""


def _processors(slot: Slot) -> tuple[int | None, float | None]:
    """The interval's online processors and CP's time on them (from the monitor's D0R2)."""
    cpus = slot.get("lcpu", LCPU_PREFER)
    if cpus is None or not cpus.rows:
        return None, None
    online = [e for e in cpus.rows.values() if (number(e.values.get("elapsed_us")) or 0) > 0]
    cp = [(number(e.values.get("user_us")), number(e.values.get("syst_us"))) for e in online]
    cp_us = None
    if cp and all(u is not None and s is not None for u, s in cp):
        cp_us = sum((u or 0.0) + (s or 0.0) for u, s in cp)
    return (len(online) or None), cp_us


def spin_interval(slot: Slot, lpar: bool = True) -> SpinInterval | None:
    """The slot's spinning (D0R23's locks when recorded, else D0R2's processors), or None;
    not ``lpar``: without the LPAR's processors (``lcpu``), whose columns are then unknown
    (:func:`spin_pct` needs none of them)."""
    found = _spin_records(slot)
    if found is None:
        return None
    processors, cp_us = _processors(slot) if lpar else (None, None)
    records, source = found
    if source == "D0R23":
        spins = tuple(_lock_spin(e.key, e.values) for e in records.rows.values())
        total = Spin(
            TOTAL,
            *(_sum(getattr(s, f) for s in spins) for f in LOCK_FIELDS),
        )
        return SpinInterval(spins, total, source, records.duration_us, processors, cp_us)
    cpus = records.rows.values()
    spins_n = _sum(number(e.values.get("spins")) for e in cpus)
    spin_us = _sum(number(e.values.get("spin_us")) for e in cpus)
    total = Spin(TOTAL, spins_n, spin_us, None, None)
    return SpinInterval((), total, source, records.duration_us, processors or len(cpus), cp_us)


def _spin_records(slot: Slot) -> tuple[KindSlice, str] | None:
    """The slot's spin records and their name: D0R23's locks when recorded, else D0R2's
    processors; None when neither."""
    locks = slot.get(SPIN_LOCK, PREFER)
    if locks is not None and locks.rows:
        return locks, "D0R23"
    cpus = slot.get(SPIN_CPU, PREFER)
    if cpus is None or not cpus.rows:
        return None
    return cpus, "D0R2"


def _sum(values: Iterable[float | None]) -> float | None:
    """The sum, or None when any is missing (a partial sum shown as whole would mislead)."""
    added = 0.0  # the same bits as sum()'s 0 for floats
    seen = False
    for value in values:
        if value is None:
            return None
        added += value
        seen = True
    return added if seen else None


def spin_pct(slot: Slot) -> float | None:
    """The interval's total spinning, % of one processor (ESASSUM's column)."""
    found = spin_interval(slot, lpar=False)
    if found is None:
        return None
    value = found.values(found.total)["pct_cpu"]
    return value if isinstance(value, float) else None


def _has_total(slot: Slot) -> bool:
    """Whether the slot has a row of ESALOCK's: then its total's."""
    return _spin_records(slot) is not None


def _total_column(place: int) -> SlotColumn:
    """The total's :data:`_OWN` column at ``place``, of its slot's spin records alone."""

    def value(slot: Slot, config: Mapping[str, str]) -> Value:
        found = spin_interval(slot, lpar=False)
        return None if found is None else _rates(found.total, found.duration_us)[place]

    return SlotColumn(_SPIN_KINDS, value)


_SPIN_KINDS = (SPIN_LOCK, SPIN_CPU)
SLOT_COLUMNS = SlotColumns(
    {cid: _total_column(i) for i, cid in enumerate(_OWN)},
    _has_total,
    _SPIN_KINDS,
    row=(TOTAL, RowKind.TOTAL.value),
)
"""The total's columns of its slot's spin records (the others are over the LPAR's
processors too): the distribution view reads those kinds' slots alone."""


def _spun(spin: Spin) -> bool:
    return bool(spin.spins) or bool(spin.spin_us)


NOTE = (
    "D0R23/D0R2 spin fields are provisional (zpmd's unfinished z/VM 5.3 reading, "
    "docs/MONITOR.md): override with --monitor-layout."
)


def _build(ctx: Context) -> Built:
    threshold = ctx.thresholds[THRESHOLD]
    rows: list[Row] = []
    quiet = 0
    sources: set[str] = set()
    for slot in ctx.slots:
        found = spin_interval(slot)
        if found is None:
            continue
        sources.add(found.source)
        shown = [s for s in found.locks if _spun(s) and ctx.entity in (None, s.name)]
        quiet = max(quiet, len(found.locks) - len([s for s in found.locks if _spun(s)]))
        shown.sort(key=lambda s: (-(s.spin_us or 0.0), s.name))
        parts = [*shown, found.total] if ctx.entity is None else shown
        for i, spin in enumerate(parts):
            values = found.values(spin)
            values["lock"] = spin.name
            values["source"] = found.source
            levels: dict[str, Level] = {"pct_cpu": threshold.level(values["pct_cpu"], 3)}
            kind = RowKind.TOTAL if spin is found.total else RowKind.DATA
            rows.append(
                interval_row(slot, values, levels, first=i == 0, kind=kind, drill="ESACPUU")
            )
    facts = LockFacts(threshold, bool(ctx.slots), bool(rows), quiet, frozenset(sources))
    return Built(COLUMNS, rows, facts.notes, facts=facts)


@dataclass(frozen=True)
class LockFacts:
    """What the screen says of its range (catalog.RangeFacts): whether it had intervals and
    rows, the most locks an interval left out as quiet, the records the spin came from."""

    threshold: Threshold
    slots: bool
    rows: bool
    quiet: int
    sources: frozenset[str]

    def then(self, newer: LockFacts) -> LockFacts:
        return LockFacts(
            self.threshold,
            self.slots or newer.slots,
            self.rows or newer.rows,
            max(self.quiet, newer.quiet),
            self.sources | newer.sources,
        )

    @property
    def notes(self) -> tuple[str, ...]:
        if not self.rows:
            empty = "No spin lock data (D0R23, or D0R2 carrying PFXSPINT) in this range."
            return (empty,) if self.slots else ()
        notes = [NOTE]
        if self.quiet:
            notes.append(
                f"Locks that did not spin in an interval are not shown (up to {self.quiet})."
            )
        if self.sources == {"D0R2"}:
            notes.append(
                "No D0R23 in this range: the total is D0R2's processors summed (no names)."
            )
        warn, crit = self.threshold.warn, self.threshold.crit
        notes.append(
            f"Spin % of one processor marked * at {warn:g}% and ! at {crit:g}% "
            f"(threshold {THRESHOLD}); {SCHEDULER_LOCK} is the scheduler lock."
        )
        return tuple(notes)

    @property
    def header(self) -> Mapping[str, Value]:
        return {}


SCREEN = ScreenDef(
    name="ESALOCK",
    title="Spin Lock Analysis",
    doc="CP's formal spin locks (D0R23, D0R2): spins per second, µs per spin, % of one "
    "processor and of the LPAR spent spinning, % of CP's time, per lock and in total",
    timeline=(SPIN_LOCK, SPIN_CPU),
    kinds=("lcpu",),
    row_columns=ROW_COLUMNS,
    slot_columns=SLOT_COLUMNS,
    columns=COLUMNS,
    build=_build,
    needs="the z/VM monitor (monreader or a MONWRITE file) with D0R23 records, or D0R2 "
    "records carrying the spin fields",
    prefer=PREFER,
    reads=(
        Reads(SPIN_LOCK, LOCK_FIELDS),
        Reads(SPIN_CPU, CPU_FIELDS),
        Reads("lcpu", ("elapsed_us", "user_us", "syst_us")),
    ),
    streams=True,
    one_source=LCPU_ONE_SOURCE,
)
