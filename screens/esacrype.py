"""ESACRYPE, Crypto Economics: the CPU the adapters' work would cost in software.

Seed 000 works it out by hand: 575 RSA 2048 CRT operations in a minute on the four CEX4A
cards (9.6 a second), 13 ms each in software on that machine (openssl 0.9.8), is 130 ms of
CPU a second: the cards save 13% of a CPU; with openssl 1.0.1's 3.1 ms, 3%. This screen does
that per interval and per function of ESACRYPA (D5R10, summed over the cards), with a total
row per interval, from a software cost table that is data (screens/crypto_costs.py): the
built-in default or ``--crypto-costs FILE|NAME``. The first note names the table and whose
figures they are: never a measurement of this system unless the user's file says so.

Columns: operations per second, adapter ms per operation, the table's software ms per
operation, the CPU the same work would take in software as % of one CPU and in CPUs (of the
LPAR's processor type), and the saving as % of the LPAR's processors of that type.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from esatui.db.slots import Slot
from esatui.screens.catalog import Built, Context, Query, Reads, ScreenDef
from esatui.screens.common import TIME, interval_row, per_second
from esatui.screens.crypto_costs import CostTable, default_table
from esatui.screens.esacpuu import (
    LCPU_ONE_SOURCE,
    LCPU_READS,
    core_of,
    own_processors,
    thread_bits,
)
from esatui.screens.esacpuu import PREFER as LCPU_PREFER
from esatui.screens.esacrypa import (
    CRYPTO_AP,
    FUNCTION_FIELDS,
    FUNCTIONS,
    NEEDS,
    PREFER,
    Function,
    parse_key,
    scale_of,
    seconds_per_unit,
)
from esatui.screens.kind_rows import KindEntityRow, KindRow
from esatui.screens.model import NUMBER, Column, Row, RowKind, Value
from esatui.screens.rowkey import EntityKey

TOTAL = "Total"
_SW = ("In software",)

COLUMNS = (
    TIME,
    Column(
        "function",
        ("", "Function"),
        20,
        key=True,
        repeat=False,
        doc="ESACRYPA's function (all cards summed); Total: the interval's sum",
    ),
    Column("ops_s", ("Oper", "/sec"), 8, 1, "/s", doc="operations per second, all cards"),
    Column(
        "ms_op",
        ("Adapter", "ms/op"),
        7,
        2,
        "ms",
        doc="adapter milliseconds per operation (D5R10 time / count)",
    ),
    Column(
        "sw_ms_op",
        ("", "ms/op"),
        7,
        2,
        "ms",
        _SW,
        doc="CPU ms per operation in software, from the cost table named in the header",
    ),
    Column(
        "sw_cpu_pct",
        ("", "%1CPU"),
        7,
        2,
        "%",
        _SW,
        doc="the same work in software: ops/s × software ms/op, as % of one CPU",
    ),
    Column(
        "sw_cpus",
        ("", "CPUs"),
        6,
        3,
        "",
        _SW,
        doc="the same, in CPUs of the LPAR's processor type (sw_cpu_pct / 100)",
    ),
    Column(
        "saved_pct",
        ("Saved", "%LPAR"),
        6,
        2,
        "%",
        doc="what the adapters save, as % of the LPAR's processors of that type "
        "(sw_cpus / their number; '.' when the processors were not recorded)",
    ),
)


@dataclass(frozen=True)
class FunctionWork:
    """One function's work in an interval, over all cards: operations and adapter seconds
    (None when some card's time could not be scaled)."""

    function: Function
    count: float
    seconds: float | None


def _label(fn: Function) -> str:
    return f"{fn.group} {fn.label}"


@functools.lru_cache(maxsize=64)
def card_blocks(keys: tuple[str, ...]) -> tuple[int, ...]:
    """Where the blocks that count are among an interval's AP keys: each card's own block;
    the APQN blocks of a card that has none (its domains' parts)."""
    parsed = [parse_key(key) for key in keys]
    with_card = {p[0] for p in parsed if p is not None and p[1] is None}
    return tuple(
        i for i, p in enumerate(parsed) if p is not None and (p[1] is None or p[0] not in with_card)
    )


FunctionFields = tuple[Function, str, str]
"""A function and the names of its count and time fields."""

# each function's fields (named once: a distribution runs this for every interval)
_FIELDS: tuple[FunctionFields, ...] = tuple(
    (fn, f"{fn.name}_count", f"{fn.name}_time") for fn in FUNCTIONS
)


def functions_work(
    functions: Sequence[FunctionFields],
    values: Sequence[Mapping[str, Value]],
    scales: Sequence[float | None],
) -> list[FunctionWork]:
    """The work of each of ``functions`` that any card reported, over the cards' blocks
    (their ``values``, and seconds per raw time unit): what the build and the distribution
    view (:func:`function_row`) add up."""
    out: list[FunctionWork] = []
    for fn, count_field, time_field in functions:
        reported = False  # by any card
        count = 0.0
        seconds: float | None = 0.0
        for v, scale in zip(values, scales, strict=True):
            c = v.get(count_field)
            if not isinstance(c, NUMBER):
                continue
            reported = True
            count += c
            raw = v.get(time_field)
            if seconds is not None and isinstance(raw, NUMBER) and scale is not None:
                seconds += raw * scale
            else:
                seconds = None
        if reported:
            out.append(FunctionWork(fn, count, seconds))
    return out


def function_work(slot: Slot) -> tuple[list[FunctionWork], int]:
    """The slot's work per function reported by any card, and the measured duration."""
    found = slot.get(CRYPTO_AP, PREFER)
    if found is None:
        return [], 0
    blocks = list(found.rows.values())
    cards = [blocks[i] for i in card_blocks(tuple(found.rows))]
    values = [e.values for e in cards]
    scales = [scale_of(e) for e in cards]
    return functions_work(_FIELDS, values, scales), found.duration_us


@dataclass(frozen=True)
class Lpar:
    """The LPAR's processors of the type the software would run on: its cores, and with
    multithreading the threads the monitor recorded of them (0 without)."""

    cpu_type: str
    count: int
    threads: int = 0


def lpar_processors(slot: Slot, config: Mapping[str, str], table: CostTable) -> Lpar | None:
    """The table's processor type if the LPAR has it, else its most numerous type.

    The monitor's D0R2 is written per thread; hypfs, SMAPI and vmcp give cores. A table's
    milliseconds are a whole processor's (the built-in ones are of a z12, which has no
    multithreading), so the LPAR is counted in cores whichever source recorded it."""
    cpus = slot.get(LCPU_READS.kind, LCPU_PREFER)
    if cpus is None or not cpus.rows:
        return None
    bits = thread_bits(config) if cpus.source == "monitor" else 0
    threads: Counter[str] = Counter()
    cores: dict[str, set[object]] = {}
    for entity in own_processors(cpus, config):
        cpu_type = entity.attrs.get("type", "")
        if cpu_type:
            threads[cpu_type] += 1
            core = core_of(entity, bits) if bits else None
            cores.setdefault(cpu_type, set()).add(entity.key if core is None else core)
    if not cores:
        return None
    wanted = table.cpu_type.upper()
    chosen = wanted if wanted in cores else max(cores, key=lambda t: len(cores[t]))
    count = len(cores[chosen])
    return Lpar(chosen, count, threads[chosen] if threads[chosen] != count else 0)


def economics(
    work: FunctionWork, duration_us: int, table: CostTable, lpar: Lpar | None
) -> dict[str, Value]:
    """One function's row (all but ``time`` and ``function``)."""
    ops_s = per_second(work.count, duration_us)
    ms_op = None if work.seconds is None or not work.count else work.seconds / work.count * 1000
    sw_ms = table.ms_per_op.get(work.function.name)
    row: dict[str, Value] = {"ops_s": ops_s, "ms_op": ms_op, "sw_ms_op": sw_ms}
    return row | _cpu_columns(_software_pct(ops_s, sw_ms), lpar)


def _software_pct(ops_s: float | None, sw_ms: float | None) -> float | None:
    """The work in software, % of one CPU."""
    return None if ops_s is None or sw_ms is None else ops_s * sw_ms / 1000 * 100


def _cpu_columns(pct: float | None, lpar: Lpar | None) -> dict[str, Value]:
    cpus = None if pct is None else pct / 100
    saved = None if pct is None or lpar is None or not lpar.count else pct / lpar.count
    return {"sw_cpu_pct": pct, "sw_cpus": cpus, "saved_pct": saved}


# the columns of a function's row that every card's blocks of it make alone (its saving is
# over the LPAR's processors too)
_BLOCK_COLUMNS = frozenset({"ops_s", "ms_op", "sw_ms_op", "sw_cpu_pct", "sw_cpus"})
_BY_LABEL = {_label(entry[0]): entry for entry in _FIELDS}


def function_row(entity: EntityKey, column_id: str, query: Query) -> KindRow | None:
    """A function's row or the total, of every card's blocks in the interval
    (``kind_rows.py``: the distribution view); ``None`` for the saving (the LPAR's
    processors too)."""
    if column_id not in _BLOCK_COLUMNS:
        return None
    table = query.crypto_costs or default_table()
    if entity == (TOTAL, RowKind.TOTAL.value):
        return _total_row(table)
    entry = _BY_LABEL.get(entity[0]) if len(entity) == 1 else None
    if entry is None:
        return None
    _fn, count_field, time_field = entry

    def make(duration_us: int, rows: Sequence[KindEntityRow]) -> dict[str, Value] | None:
        kept = card_blocks(tuple(row[0] for row in rows))
        values = [{count_field: rows[i][2][0], time_field: rows[i][2][1]} for i in kept]
        scales = [seconds_per_unit(rows[i][1].get("scale")) for i in kept]
        works = functions_work((entry,), values, scales)
        return economics(works[0], duration_us, table, None) if works else None

    return KindRow(CRYPTO_AP, (count_field, time_field), make)


def _total_row(table: CostTable) -> KindRow:
    """The total, of every function's counts (it shows no adapter time)."""
    counts = tuple(count for _fn, count, _time in _FIELDS)

    def make(duration_us: int, rows: Sequence[KindEntityRow]) -> dict[str, Value] | None:
        kept = card_blocks(tuple(row[0] for row in rows))
        values = [dict(zip(counts, rows[i][2], strict=True)) for i in kept]
        works = functions_work(_FIELDS, values, [None] * len(kept))
        if not works:
            return None
        return _total(works, duration_us, table, None)

    return KindRow(CRYPTO_AP, counts, make)


def _total(
    works: Sequence[FunctionWork], duration_us: int, table: CostTable, lpar: Lpar | None
) -> dict[str, Value]:
    """The interval's total: operations of every function, software CPU of those priced
    (each as its row has them: :func:`economics`), a function whose operations another's
    counter holds (CCA's key generation in "All") only where that one adds nothing."""
    counted = {work.function.name for work in works}
    priced_names = {name for name in counted if name in table.ms_per_op}
    ops: list[float] = []
    priced: list[float] = []
    for work in works:
        within = work.function.within
        ops_s = per_second(work.count, duration_us)
        if isinstance(ops_s, int | float) and within not in counted:
            ops.append(ops_s)
        pct = _software_pct(ops_s, table.ms_per_op.get(work.function.name))
        if isinstance(pct, int | float) and within not in priced_names:
            priced.append(pct)
    values: dict[str, Value] = {
        "function": TOTAL,
        "ops_s": sum(ops) if ops else None,
        "ms_op": None,
        "sw_ms_op": None,
    }
    return values | _cpu_columns(sum(priced) if priced else None, lpar)


def _notes(table: CostTable, unpriced: frozenset[str], lpar: Lpar | None) -> tuple[str, ...]:
    notes = [table.describe()]
    if unpriced:
        notes.append(
            "No software figure in the table (not in the total): "
            + ", ".join(sorted(unpriced))
            + "."
        )
    if lpar is not None:
        notes.append(
            f"CPUs and %LPAR in {lpar.cpu_type}s, this LPAR has {lpar.count}; "
            "adapter figures count every partition sharing the cards."
        )
        if lpar.threads:
            notes.append(
                f"Multithreading: the {lpar.count} are cores ({lpar.threads} threads), since "
                "the table's figures are a whole processor's; provisional: no source prices "
                "software crypto per thread."
            )
    else:
        notes.append("Adapter figures count every partition sharing the cards.")
    return tuple(notes)


def _build(ctx: Context) -> Built:
    table = ctx.crypto_costs or default_table()
    rows: list[Row] = []
    unpriced: set[str] = set()
    lpar: Lpar | None = None
    for slot in ctx.slots:
        works, duration_us = function_work(slot)
        if not works:
            continue
        here = lpar_processors(slot, ctx.config, table)
        lpar = lpar or here  # the slots are newest first: the newest that has them
        shown: list[dict[str, Value]] = []
        for work in works:
            values = {"function": _label(work.function)} | economics(work, duration_us, table, here)
            if work.function.name not in table.ms_per_op and work.count:
                unpriced.add(_label(work.function))
            shown.append(values)
        for n, values in enumerate(shown):
            rows.append(interval_row(slot, values, first=n == 0, drill="ESACRYPA"))
        rows.append(
            interval_row(
                slot,
                _total(works, duration_us, table, here),
                first=False,
                drill="ESACRYPA",
                kind=RowKind.TOTAL,
            )
        )
    facts = EconomicsFacts(table, bool(ctx.slots), bool(rows), frozenset(unpriced), lpar)
    return Built(COLUMNS, rows, facts.notes, header=facts.header, facts=facts)


@dataclass(frozen=True)
class EconomicsFacts:
    """What the screen says of its range (catalog.RangeFacts): the cost table, whether the
    range had intervals and rows, the functions with work the table does not price, and
    the LPAR's processors of the newest interval that had them."""

    table: CostTable
    slots: bool
    rows: bool
    unpriced: frozenset[str]
    lpar: Lpar | None

    def then(self, newer: EconomicsFacts) -> EconomicsFacts:
        return EconomicsFacts(
            self.table,
            self.slots or newer.slots,
            self.rows or newer.rows,
            self.unpriced | newer.unpriced,
            newer.lpar if newer.lpar is not None else self.lpar,
        )

    @property
    def notes(self) -> tuple[str, ...]:
        if not self.rows:
            empty = "No per-AP crypto measurement records (D5R10) in this range."
            return (empty, self.table.describe()) if self.slots else ()
        return _notes(self.table, self.unpriced, self.lpar)

    @property
    def header(self) -> Mapping[str, Value]:
        if not self.rows:
            return {}
        return {
            "cost_table": self.table.name,
            "cost_table_whose": self.table.whose,
            "cost_table_builtin": self.table.builtin,
        }


SCREEN = ScreenDef(
    name="ESACRYPE",
    title="Crypto Economics",
    doc="what the crypto adapters' work would cost in software: per function and interval, "
    "operations per second, adapter and software ms per operation, the CPU it would take "
    "(% of one CPU, CPUs of the LPAR's type) and the saving, from a cost table that is data "
    "(--crypto-costs FILE|NAME; the header names whose figures)",
    timeline=(CRYPTO_AP,),
    kinds=(LCPU_READS.kind,),
    columns=COLUMNS,
    build=_build,
    needs=NEEDS,
    prefer=PREFER,
    reads=(
        Reads(CRYPTO_AP, FUNCTION_FIELDS, ("scale",)),
        Reads(LCPU_READS.kind, (), ("lpar", "type")),
    ),
    streams=True,
    kind_rows=function_row,
    one_source=LCPU_ONE_SOURCE,
)
