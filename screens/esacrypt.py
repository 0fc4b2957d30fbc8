"""ESACRYPT, Crypto Facility Analysis: z/VM's crypto counters (D5R9), one row per interval.

As ESAMON shows it (seeds 000 and 001): request rates per second, virtual (the guests' NQ,
DQ and completions as CP sees them) and real (CP's own to the adapters), the NQ queue, NQ to
DQ milliseconds per operation as the guests and as CP see them, rejects; then the polling
columns: dequeues per operation and the time the guests wait beyond CP (``poll_ms``).
Formulas in docs/MONITOR.md. ESASSUM reads :func:`crypto_ops_s`, :func:`crypto_ms_op` and
:func:`polls_per_op`.
"""

from __future__ import annotations

from collections.abc import Mapping

from esatui.db.slots import Slot
from esatui.screens import crypto as C
from esatui.screens.catalog import Built, Context, Reads, ScreenDef
from esatui.screens.common import TIME, interval_row, number, ratio
from esatui.screens.model import Column, Level, Row, Threshold, Value
from esatui.screens.row_columns import RowColumn, RowColumns, one_entity

_RATE = "Request Rate/Second"


def _rate(cid: str, sub: str, bottom: str, doc: str, provisional: bool = False) -> Column:
    return Column(cid, ("", bottom), 5, 1, "/s", (_RATE, sub), provisional=provisional, doc=doc)


COLUMNS = (
    TIME,
    _rate("nq_virt", "NQ Rate", "Virt", "guest NQ per second (CRYNOVNQ)"),
    _rate("nq_real", "NQ Rate", "Real", "CP NQ to the adapters per second (CRYNOFNQ)"),
    _rate("dq_virt", "DQ Rate", "Virt", "guest DQ per second (CRYNOVPR)", True),
    _rate("dq_real", "DQ Rate", "Real", "CP DQ from the adapters per second (CRYNOFDQ)"),
    _rate("done_virt", "Completed", "Virt", "guest operations completed per second", True),
    _rate("done_real", "Completed", "Real", "CP operations completed per second", True),
    Column(
        "queue_len",
        ("Queue", "Length"),
        6,
        1,
        "count",
        provisional=True,
        doc="messages waiting for NQ (CRYNOWNQ, average of the samples)",
    ),
    Column(
        "ms_op_virt",
        ("", "Virt"),
        5,
        2,
        "ms",
        ("NQ to DQ", "ms/oper"),
        doc="guest NQ to DQ per virtual NQ: ΔCRYVSERV / ΔCRYNOVNQ",
    ),
    Column(
        "ms_op_real",
        ("", "Real"),
        5,
        2,
        "ms",
        ("NQ to DQ", "ms/oper"),
        doc="CP NQ to DQ per real NQ: ΔCRYRSERV / ΔCRYNOFNQ",
    ),
    Column(
        "rej_virt",
        ("", "Virt"),
        5,
        1,
        "/s",
        ("Rejects", "per sec"),
        doc="rejected guest NQ per second (CRYNOXVN)",
    ),
    Column(
        "rej_real",
        ("", "Real"),
        5,
        1,
        "/s",
        ("Rejects", "per sec"),
        doc="rejected CP NQ per second (CRYNOXRN)",
    ),
    Column(
        "dq_per_op_virt",
        ("", "Virt"),
        5,
        2,
        "",
        ("Polling", "DQ/oper"),
        threshold="dq_per_op",
        provisional=True,
        doc="guest dequeues per guest NQ (its polls per operation); marked only when the "
        "unsuccessful ones reach unsucc_dq_s per second",
    ),
    Column(
        "dq_per_op_real",
        ("", "Real"),
        5,
        2,
        "",
        ("Polling", "DQ/oper"),
        threshold="dq_per_op",
        doc="CP dequeues per real NQ (CP's polls per operation); marked only when the "
        "unsuccessful ones reach unsucc_dq_s per second",
    ),
    Column(
        "poll_ms",
        ("Poll", "ms"),
        5,
        2,
        "ms",
        ("Polling",),
        doc="ms_op_virt − ms_op_real: what the guests wait beyond CP's NQ to DQ",
    ),
)


def _rate_of(counter: str) -> RowColumn:
    return RowColumn((counter,), C.per_second_of, timed=True)


ROW_COLUMNS = RowColumns(
    C.CRYPTO,
    {
        "nq_virt": _rate_of("virt_nq"),
        "nq_real": _rate_of("real_nq"),
        "dq_virt": _rate_of("virt_dq"),
        "dq_real": _rate_of("real_dq"),
        "done_virt": _rate_of("virt_done"),
        "done_real": _rate_of("real_done"),
        "queue_len": RowColumn(("nq_waiting",), number),
        "ms_op_virt": RowColumn(("vserv_us", "virt_nq"), C.ms_per_op),
        "ms_op_real": RowColumn(("rserv_us", "real_nq"), C.ms_per_op),
        "rej_virt": _rate_of("virt_rej"),
        "rej_real": _rate_of("real_rej"),
        "dq_per_op_virt": RowColumn(("virt_dq", "virt_nq"), ratio),
        "dq_per_op_real": RowColumn(("real_dq", "real_nq"), ratio),
        "poll_ms": RowColumn(("vserv_us", "virt_nq", "rserv_us", "real_nq"), C.wait_beyond_ms),
    },
    one_entity(C.CRYPTO_KEY),
)
"""ESACRYPT's columns (all but ``time``), each of one interval's D5R9 row: what the build
shows and what the distribution view reads per interval."""


def esacrypt_values(d: C.CryptoDeltas) -> dict[str, Value]:
    """ESACRYPT's columns for one interval's deltas (the queue gauge among its values)."""
    return {cid: column.of(d.duration_us, d.get) for cid, column in ROW_COLUMNS.columns.items()}


# --- for ESASSUM: one slot in, one number (or None) out -------------------------------


def crypto_ops_s(slot: Slot) -> float | None:
    """Crypto operations per second the guests asked for (virtual NQ per second)."""
    d = C.crypto_deltas(slot)
    return None if d is None else C.rate(d, "virt_nq")


def crypto_ms_op(slot: Slot) -> float | None:
    """NQ to DQ per operation as the guests see it, ms."""
    d = C.crypto_deltas(slot)
    return None if d is None else C.ms_op_virt(d)


def polls_per_op(slot: Slot) -> float | None:
    """Guest dequeues (polls) per operation."""
    d = C.crypto_deltas(slot)
    return None if d is None else C.dq_per_op_virt(d)


def polls_per_op_level(slot: Slot, thresholds: Mapping[str, Threshold]) -> Level:
    """:func:`polls_per_op`'s highlight, as ESACRYPT's ``dq_per_op_virt``."""
    d = C.crypto_deltas(slot)
    return (
        Level.NONE
        if d is None
        else C.polling_levels(d, {"dq_per_op_virt": C.dq_per_op_virt(d)}, thresholds)[
            "dq_per_op_virt"
        ]
    )


def _build(ctx: Context) -> Built:
    rows: list[Row] = []
    parts: list[C.CryptoDeltas] = []
    for slot in ctx.slots:
        d = C.crypto_deltas(slot)
        if d is None:
            continue
        parts.append(d)
        values = esacrypt_values(d)
        levels = C.polling_levels(d, values, ctx.thresholds)
        rows.append(interval_row(slot, values, levels, drill="ESACRYPA", flags=d.flags))
    if not rows:
        return Built(COLUMNS, rows, (C.NO_RECORDS,) if ctx.slots else (), flags_legend=True)
    note = C.RecordFacts.of(ctx.config, C.combine(parts)).note()
    return Built(COLUMNS, rows, (note,), flags_legend=True)


SCREEN = ScreenDef(
    name="ESACRYPT",
    title="Crypto Facility Analysis",
    doc="z/VM crypto request rates, NQ to DQ times, rejects and polling (D5R9)",
    timeline=(C.CRYPTO,),
    kinds=(),
    columns=COLUMNS,
    build=_build,
    needs="the z/VM monitor (monreader or a MONWRITE file) with D5R9 crypto records",
    prefer=C.PREFER,
    reads=(C.CRYPTO_READS, Reads(C.CRYPTO, ("nq_waiting",))),
    row_columns=ROW_COLUMNS,
    streams=True,
)
