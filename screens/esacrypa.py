"""ESACRYPA, Crypto AP Analysis: each adapter's own measurement blocks (D5R10), per interval.

A row per card per interval and, below it, a row per APQN (card.domain) whose own block the
hardware gave, named as ESACRYQ names them (``0a``, ``0a.0011``): utilization, then per
function (RSA 2048 CRT, CCA all operations, ...) the operations in the interval, their adapter
time in seconds, operations per second and milliseconds per operation. The hardware counts for
every partition sharing the card, so a card's figures are its whole load, not this z/VM's
alone (seed 000); an APQN's are that domain's part of it.

Which functions get columns: every function that some AP in the range *reports* (its
validity bit on), zeros included: "RSA 2048 ME did nothing" is a fact an analyst wants next
to "RSA 2048 CRT did all the work" (seed 000 shows exactly that). Functions no AP reports
(other modes, invalid pairs) get no columns. Columns come in groups of at most two functions
(accelerators by key size, ME then CRT), each group kept on one horizontal page, so an 80- or
132-column terminal shows accelerators as 1/3 RSA 1024, 2/3 RSA 2048 (as seed 000's
``ESACRYPA 2/3``), 3/3 RSA 4096.

Enter on a card or APQN's own columns drills to ESACRYQ for that card; on a function's
columns, to ESACRYPE (what the work would cost in software) for the interval.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from esatui.db.records import Value as Recorded
from esatui.db.slots import EntityData, Slot
from esatui.screens.catalog import Built, Context, NotesByRows, Reads, ScreenDef
from esatui.screens.common import TIME, interval_row, per_second, ratio
from esatui.screens.model import Column, Row, Value
from esatui.screens.row_columns import RowColumn, RowColumns, as_recorded
from esatui.screens.rowkey import EntityKey

CRYPTO_AP = "crypto_ap"
PREFER = ("monitor",)
ECONOMICS = "ESACRYPE"  # Enter on a function's column: what that work would cost in software


@dataclass(frozen=True)
class Function:
    name: str  # the kind's prefix: rsa2048_crt -> rsa2048_crt_count, rsa2048_crt_time
    group: str  # outermost group: one horizontal page unit
    label: str  # inner group: the function within it
    # the function whose counter holds this one's too (CCA's "All" holds its key
    # generation: zcryptstats' is_totals), so a card's busy time and operations are not
    # counted twice
    within: str | None = None


# Display order; the kind's pair order (docs/MONITOR.md) interleaves ME and CRT by key size.
FUNCTIONS = (
    Function("rsa1024_me", "RSA 1024", "ME"),
    Function("rsa1024_crt", "RSA 1024", "CRT"),
    Function("rsa2048_me", "RSA 2048", "ME"),
    Function("rsa2048_crt", "RSA 2048", "CRT"),
    Function("rsa4096_me", "RSA 4096", "ME"),
    Function("rsa4096_crt", "RSA 4096", "CRT"),
    Function("cca_all", "CCA coprocessor", "All operations"),
    Function("cca_rsa_keygen", "CCA coprocessor", "RSA key generation", within="cca_all"),
    Function("ep11_asym_slow", "EP11 asymmetric", "Slow"),
    Function("ep11_asym_fast", "EP11 asymmetric", "Fast"),
    Function("ep11_sym_partial", "EP11 symmetric", "Partial"),
    Function("ep11_sym_complete", "EP11 symmetric", "Complete"),
    Function("ep11_asym_keygen", "EP11 key generation", "Asymmetric"),
)

KEYS = (
    TIME,
    Column(
        "ap",
        ("", "AP#"),
        7,
        key=True,
        doc="the card (0a) or, below it, one of its APQNs (card.domain: 0a.0011), in hex as "
        "zcrypt and ESACRYQ name them",
    ),
    Column(
        "type",
        ("", "Type"),
        4,
        0,
        key=True,
        doc="crypto type of the measurement block: 3 PCICC, 4 PCICA, 5 PCIXCC, 6 CEX2A, "
        "7 CEX2C, 8 CEX3A, 9 CEX3C, 10 CEX4, 11 CEX5, 12 CEX6, 13 CEX7, 14 CEX8",
    ),
    Column(
        "util_pct",
        ("", "Util%"),
        5,
        2,
        "%",
        key=True,
        doc="busy: Σ over functions of Δtime × scale / interval, % (an APQN: its domain's "
        "part of the card); the card's engines added up, as zcryptstats' UTILIZATION, so a "
        "card whose engines work at once shows over 100%",
    ),
)


def function_columns(fn: Function, what: str | None = None) -> tuple[Column, ...]:
    groups = (fn.group, fn.label)
    what = what or f"{fn.group} {fn.label}"
    return (
        Column(
            f"{fn.name}_count",
            ("", "Crypto"),
            6,
            0,
            "count",
            groups,
            drill=ECONOMICS,
            doc=f"{what}: operations in the interval",
        ),
        Column(
            f"{fn.name}_time_s",
            ("", "Time(s)"),
            7,
            3,
            "s",
            groups,
            drill=ECONOMICS,
            doc=f"{what}: adapter time, Δtime × scale",
        ),
        Column(
            f"{fn.name}_ops_s",
            ("", "Ops/s"),
            6,
            1,
            "/s",
            groups,
            drill=ECONOMICS,
            doc=f"{what}: operations per second",
        ),
        Column(
            f"{fn.name}_ms_op",
            ("", "ms/op"),
            5,
            2,
            "ms",
            groups,
            drill=ECONOMICS,
            doc=f"{what}: adapter milliseconds per operation",
        ),
    )


# what `esatui screens` lists: <fn> stands for each function
_EACH = function_columns(Function("<fn>", "", ""), "<fn>")
CATALOG_COLUMNS = (
    *KEYS,
    replace(
        _EACH[0],
        doc=_EACH[0].doc + " (<fn>: " + ", ".join(f.name for f in FUNCTIONS) + ")",
    ),
    *_EACH[1:],
)


@functools.lru_cache(maxsize=64)  # the same few cards every interval
def seconds_per_unit(text: str | None) -> float | None:
    """Seconds per raw time unit (the ``scale`` attribute), or None if unusable."""
    try:
        scale = float(text or "")
    except ValueError:
        return None
    return scale if math.isfinite(scale) and scale > 0 else None


def scale_of(entity: EntityData) -> float | None:
    """Seconds per raw time unit of an AP's block."""
    return seconds_per_unit(entity.attrs.get("scale"))


def reported(entity: EntityData) -> list[Function]:
    """The functions this AP reported (a count or a time recorded, even zero)."""
    return [
        fn
        for fn in FUNCTIONS
        if isinstance(entity.values.get(f"{fn.name}_count"), int | float)
        or isinstance(entity.values.get(f"{fn.name}_time"), int | float)
    ]


def _seconds(scale: str | None, raw: Recorded) -> float | None:
    """A function's adapter time: Δtime × scale."""
    per_unit = seconds_per_unit(scale)
    return raw * per_unit if isinstance(raw, int | float) and per_unit is not None else None


def _ms_per_op(scale: str | None, raw: Recorded, count: Recorded) -> float | None:
    ms = ratio(_seconds(scale, raw), count)
    return None if ms is None else ms * 1000


def _ops_s(duration_us: int, count: Recorded) -> float | None:
    return per_second(count, duration_us)


def _util_pct(scale: str | None, duration_us: int, *pairs: Recorded) -> float | None:
    """Busy, %: every reported function's adapter time over the interval (``pairs``:
    count, time of each function in :data:`FUNCTIONS` order), but a function another's
    counter holds where that one is reported; unavailable when a reported function's time
    is not (a partial sum would understate the card's load)."""
    reported = {
        fn.name
        for fn, count, raw in zip(FUNCTIONS, pairs[::2], pairs[1::2], strict=True)
        if isinstance(count, int | float) or isinstance(raw, int | float)
    }
    busy: list[float] = []
    for fn, raw in zip(FUNCTIONS, pairs[1::2], strict=True):
        if fn.name not in reported or fn.within in reported:
            continue  # not reported, or in another's counter
        seconds = _seconds(scale, raw)
        if seconds is None:
            return None
        busy.append(seconds)
    util = per_second(sum(busy), duration_us) if busy else None
    return None if util is None else util * 100


FUNCTION_FIELDS = tuple(f"{fn.name}_{part}" for fn in FUNCTIONS for part in ("count", "time"))


def _function_row_columns(fn: Function) -> dict[str, RowColumn]:
    count, time = f"{fn.name}_count", f"{fn.name}_time"
    return {
        count: RowColumn((count,), as_recorded),
        f"{fn.name}_time_s": RowColumn((time,), _seconds, attrs=("scale",)),
        f"{fn.name}_ops_s": RowColumn((count,), _ops_s, timed=True),
        f"{fn.name}_ms_op": RowColumn((time, count), _ms_per_op, attrs=("scale",)),
    }


FUNCTION_ROW_COLUMNS = {fn.name: _function_row_columns(fn) for fn in FUNCTIONS}
UTIL = RowColumn(FUNCTION_FIELDS, _util_pct, timed=True, attrs=("scale",))


def ap_values(entity: EntityData, duration_us: int) -> dict[str, Value]:
    """One AP's row: ``util_pct`` and the four columns of every function it reported."""
    get, attrs = entity.values.get, entity.attrs
    values: dict[str, Value] = {}
    for fn in reported(entity):
        for cid, column in FUNCTION_ROW_COLUMNS[fn.name].items():
            values[cid] = column.of(duration_us, get, attrs)
    values["util_pct"] = UTIL.of(duration_us, get, attrs)
    return values


def parse_key(key: str) -> tuple[int, int | None] | None:
    """(card, domain or None) of a ``crypto_ap`` key (``0a``, ``0a.0011``: hex, as zcrypt)."""
    card, _, domain = key.partition(".")
    try:
        return int(card, 16), (int(domain, 16) if domain else None)
    except ValueError:
        return None


def _order(key: str) -> tuple[int, int, str]:
    """Cards in order, each followed by its APQNs in domain order."""
    parsed = parse_key(key)
    if parsed is None:
        return (1 << 16, 0, key)
    card, domain = parsed
    return (card, -1 if domain is None else domain, key)


def card_id(key: str) -> str | None:
    """The zcrypt card name (``0a``) of a card or APQN row, for drilling to ESACRYQ."""
    parsed = parse_key(key)
    return None if parsed is None else f"{parsed[0]:02x}"


def _aps(slot: Slot, entity: str | None) -> tuple[list[EntityData], int]:
    found = slot.get(CRYPTO_AP, PREFER)
    if found is None:
        return [], 0
    aps = sorted(found.rows.values(), key=lambda e: _order(e.key))
    if entity is not None:
        aps = [e for e in aps if e.key == entity or card_id(e.key) == entity]
    return aps, found.duration_us


def _build(ctx: Context) -> Built:
    per_slot = [_aps(slot, ctx.entity) for slot in ctx.slots]
    present = {fn.name for aps, _ in per_slot for e in aps for fn in reported(e)}
    shown = [fn for fn in FUNCTIONS if fn.name in present]
    # as wide as the longest name shown: cards alone keep seed 000's 80-column pages
    width = max((len(e.key) for aps, _ in per_slot for e in aps), default=3)
    keys = tuple(replace(c, width=max(3, width)) if c.id == "ap" else c for c in KEYS)
    columns = (*keys, *(c for fn in shown for c in function_columns(fn)))
    rows: list[Row] = []
    for slot, (aps, duration_us) in zip(ctx.slots, per_slot, strict=True):
        for n, entity in enumerate(aps):
            values = ap_values(entity, duration_us)
            values["ap"] = entity.key
            values["type"] = shown_type(entity.attrs.get("type", ""))
            card = card_id(entity.key)
            rows.append(
                interval_row(
                    slot,
                    values,
                    first=n == 0,
                    drill="ESACRYQ" if card else None,
                    entity=card,
                    flags=entity.flags,
                )
            )
    facts = NotesByRows(
        ("Adapter figures count every partition sharing the card.",),
        ("No per-AP crypto measurement records (D5R10) in this range.",),
        bool(ctx.slots),
        bool(rows),
    )
    return Built(columns, rows, facts.notes, facts=facts)


NEEDS = "the z/VM monitor (monreader or a MONWRITE file) with D5R10 crypto records"


def shown_type(raw: str) -> Value:
    """The Type column of an AP's block: its crypto type as a number (text if not one)."""
    return int(raw) if raw.isdigit() else raw or None


def _shows_as(key: str, attrs: Mapping[str, str], shown: EntityKey) -> bool:
    """Whether the AP's block shows as ``shown``: (AP, type)."""
    kind = shown_type(attrs.get("type", ""))
    return (key, "" if kind is None else str(kind)) == shown


ROW_COLUMNS = RowColumns(
    CRYPTO_AP,
    {"util_pct": UTIL}
    | {cid: c for cols in FUNCTION_ROW_COLUMNS.values() for cid, c in cols.items()},
    lambda shown: shown[0] if len(shown) == 2 else None,  # (AP, type): the AP's block
    _shows_as,
)
"""Each AP's columns of its own block in an interval (the distribution view reads them)."""

SCREEN = ScreenDef(
    name="ESACRYPA",
    title="Crypto AP Analysis",
    doc="each crypto adapter's measurement blocks: utilization and per function "
    "operations, time, rate and ms per operation (D5R10)",
    timeline=(CRYPTO_AP,),
    kinds=(),
    columns=CATALOG_COLUMNS,
    build=_build,
    needs=NEEDS,
    prefer=PREFER,
    reads=(Reads(CRYPTO_AP, FUNCTION_FIELDS, ("scale", "type")),),
    row_columns=ROW_COLUMNS,
    streams=True,
)
