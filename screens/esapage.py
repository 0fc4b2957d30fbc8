"""ESAPAGE, Encrypted Paging: what encrypting guest pages to paging DASD costs CP.

With encrypted paging on (z/VM 6.4 APAR VM65993 and later), CP encrypts each 4 KB page it
writes and decrypts each it reads back, with CPACF; D3R2 MRSTORSP carries, per processor, the
pages encrypted and decrypted and the CPU time of each (``paging_enc``). Per interval, summed
over the processors, as seed 003's tables show them: pages encrypted and decrypted per second,
CPU µs per page, and the percent of one processor spent ("100% = 1 logical processor
completely busy"). The record's encrypted-paging offsets are provisional (no readable public
source: docs/MONITOR.md), so every column is marked provisional.

Identities (seed 003, checked against its tables): µs per page = ΔCPU µs / Δpages; % of a
processor = ΔCPU µs / interval µs × 100 = pages per second × µs per page / 10⁴.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from esatui.db.slots import Slot
from esatui.screens.catalog import Built, Context, NotesByRows, Query, Reads, ScreenDef
from esatui.screens.common import TIME, interval_row, per_second, ratio
from esatui.screens.kind_rows import KindEntityRow, KindRow
from esatui.screens.model import NUMBER, Column, Row, Value
from esatui.screens.rowkey import EntityKey

PAGING = "paging_enc"
PREFER = ("monitor",)
FIELDS = ("enc_pages", "dec_pages", "enc_us", "dec_us")
CIPHER_KEY = "paging_cipher"  # config, from a source that says (none reads QUERY ENCRYPT yet)
_RATE = ("4 KB pages per second",)
_US = ("µs/page",)
_PCT = ("% of one processor",)


def _col(
    cid: str, bottom: str, width: int, dec: int, unit: str, group: tuple[str, ...], doc: str
) -> Column:
    return Column(cid, ("", bottom), width, dec, unit, group, provisional=True, doc=doc)


COLUMNS = (
    TIME,
    _col("enc_pages_s", "Encr", 9, 2, "/s", _RATE, "pages encrypted (written) per second"),
    _col("dec_pages_s", "Decr", 9, 2, "/s", _RATE, "pages decrypted (read back) per second"),
    _col("pages_s", "Total", 9, 2, "/s", _RATE, "pages encrypted + decrypted per second"),
    _col("enc_us_page", "Encr", 5, 2, "us", _US, "CPU µs to encrypt one page"),
    _col("dec_us_page", "Decr", 5, 2, "us", _US, "CPU µs to decrypt one page"),
    _col("enc_cpu_pct", "Encr", 6, 3, "%", _PCT, "CPU encrypting, % of one processor"),
    _col("dec_cpu_pct", "Decr", 6, 3, "%", _PCT, "CPU decrypting, % of one processor"),
    _col("cpu_pct", "Total", 6, 3, "%", _PCT, "CPU encrypting + decrypting, % of one processor"),
)


def paging_totals(slot: Slot) -> tuple[dict[str, float], int] | None:
    """The slot's encrypted paging summed over the processors (a field missing on any
    processor is missing in the sum), and the measured duration; None when not recorded."""
    found = slot.get(PAGING, PREFER)
    if found is None or not found.rows:
        return None
    return field_sums([e.values for e in found.rows.values()]), found.duration_us


def field_sums(processors: Sequence[Mapping[str, Value]]) -> dict[str, float]:
    """The fields summed over the processors' rows (their values by field), in their order;
    a field missing on any processor is missing in the sum."""
    sums: dict[str, float] = {}
    for name in FIELDS:
        added: float = 0  # as sum() starts
        for values in processors:
            value = values.get(name)
            if not isinstance(value, NUMBER):
                break
            added += float(value)
        else:
            sums[name] = added
    return sums


def page_values(sums: Mapping[str, float], duration_us: int) -> dict[str, Value]:
    """ESAPAGE's columns (all but ``time``) for one interval's sums."""
    enc, dec = sums.get("enc_pages"), sums.get("dec_pages")
    enc_us, dec_us = sums.get("enc_us"), sums.get("dec_us")

    def pct(cpu_us: float | None) -> float | None:
        rate = per_second(cpu_us, duration_us)
        return None if rate is None else rate / 1e6 * 100

    both_us = None if enc_us is None or dec_us is None else enc_us + dec_us
    pages = None if enc is None or dec is None else enc + dec
    return {
        "enc_pages_s": per_second(enc, duration_us),
        "dec_pages_s": per_second(dec, duration_us),
        "pages_s": per_second(pages, duration_us),
        "enc_us_page": ratio(enc_us, enc),
        "dec_us_page": ratio(dec_us, dec),
        "enc_cpu_pct": pct(enc_us),
        "dec_cpu_pct": pct(dec_us),
        "cpu_pct": pct(both_us),
    }


def paging_row(entity: EntityKey, column_id: str, query: Query) -> KindRow | None:
    """An interval's row, of every processor's D3R2 row in it (``kind_rows.py``: the
    distribution view)."""
    return None if entity or column_id not in _ROW_COLUMNS else _PAGING_ROW


def _paging_values(duration_us: int, rows: Sequence[KindEntityRow]) -> dict[str, Value]:
    return page_values(
        field_sums([dict(zip(FIELDS, r[2], strict=True)) for r in rows]), duration_us
    )


_ROW_COLUMNS = frozenset(c.id for c in COLUMNS if c.id != "time")
_PAGING_ROW = KindRow(PAGING, FIELDS, _paging_values)


def cipher_note(config: Mapping[str, str]) -> str:
    cipher = config.get(CIPHER_KEY, "").upper()
    if cipher:
        return f"Cipher: {cipher}."
    return (
        "Cipher: not recorded (QUERY ENCRYPT is not read; D1R34's cipher field is not "
        "publicly laid out)."
    )


NOTE = (
    "D3R2 encrypted-paging offsets are provisional (docs/MONITOR.md): check against IBM's "
    "MRSTORSP or override with --monitor-layout."
)


def _build(ctx: Context) -> Built:
    rows: list[Row] = []
    for slot in ctx.slots:
        found = paging_totals(slot)
        if found is None:
            continue
        sums, duration_us = found
        rows.append(interval_row(slot, page_values(sums, duration_us), drill="ESACPUU"))
    facts = NotesByRows(
        (cipher_note(ctx.config), NOTE),
        ("No encrypted paging records (D3R2 of z/VM 6.4 or later) in this range.",),
        bool(ctx.slots),
        bool(rows),
    )
    return Built(COLUMNS, rows, facts.notes, facts=facts)


SCREEN = ScreenDef(
    name="ESAPAGE",
    title="Encrypted Paging",
    doc="CP's encrypted paging (D3R2): pages encrypted and decrypted per second, CPU µs per "
    "page and % of one processor spent, as seed 003 reports them",
    timeline=(PAGING,),
    kinds=(),
    columns=COLUMNS,
    build=_build,
    needs="the z/VM monitor (monreader or a MONWRITE file) with D3R2 records of z/VM 6.4 or "
    "later and encrypted paging on",
    prefer=PREFER,
    reads=(Reads(PAGING, FIELDS),),
    streams=True,
    kind_rows=paging_row,
)
