"""Writing monitor records, frames, monreader streams and MONWRITE files.

The inverse of the readers, for tests and the simulated system: any situation can be built
from a list of records (counters that wrap or reset, every known record length, interim
P-bit records, truncated files, garbage). Records are encoded from the same layout tables the
readers decode with.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from esatui.collectors.monitor import kinds as K
from esatui.collectors.monitor.decode import CRYPTO_FIELDS
from esatui.collectors.monitor.header import (
    DOMAIN_MONITOR,
    FRAME,
    HEADER_LEN,
    REC_END_OF_FRAME,
    REC_END_OF_INTERVAL,
    pack_header,
    parse_header,
    tod_to_unix_us,
    unix_us_to_tod,
)
from esatui.collectors.monitor.layout import (
    COUNTDOWN_START,
    FIXED_TYPES,
    FieldSpec,
    LayoutTable,
    RecordLayout,
    Value,
)
from esatui.collectors.monitor.layoutfile import builtin_layouts
from esatui.collectors.monitor.mce import TYPE_SAMPLE, ControlElement, pack_mce
from esatui.collectors.monitor.monwrite import BLOCK, IPARML_LEN, MAX_ELEMENTS

Values = Mapping[str, Value | None]


# --- records -------------------------------------------------------------------------


def raw_record(domain: int, record: int, unix_us: int, body: bytes = b"") -> bytes:
    """A record of any content: header plus ``body``."""
    length = HEADER_LEN + len(body)
    if length > 0xFFFF:
        raise ValueError(f"record of {length} bytes is too long")
    return pack_header(length, domain, record, unix_us_to_tod(unix_us)) + body


def _put(buf: bytearray, base: int, f: FieldSpec, value: Value | None) -> None:
    if value is None:
        return
    at = base + f.offset
    if f.type == "pairs":
        pairs = value
        assert isinstance(pairs, tuple)
        for i, (t, c) in enumerate(pairs):
            struct.pack_into(">QQ", buf, at + 16 * i, t, c)
        return
    if f.type == "ebcdic":
        assert isinstance(value, str)
        raw = value.encode("cp037", errors="replace")[: f.size]
        buf[at : at + f.size] = raw + b"\x40" * (f.size - len(raw))
        return
    fmt = ">" + FIXED_TYPES[f.type]
    if f.mask:
        (old,) = struct.unpack_from(fmt, buf, at)
        struct.pack_into(fmt, buf, at, (old | f.mask) if value else (old & ~f.mask))
        return
    if f.type == "tod":
        assert isinstance(value, int)
        value = unix_us_to_tod(value)
    elif f.type == "cputime":
        assert isinstance(value, int)
        value = value << 12
    elif f.type == "cputime_down":
        assert isinstance(value, int)
        value = COUNTDOWN_START - (value << 12)
    struct.pack_into(fmt, buf, at, value)


def _natural_length(fields: Sequence[FieldSpec], values: Values) -> int:
    n = 0
    for f in fields:
        if f.type == "pairs":
            pairs = values.get(f.name)
            n = max(n, f.offset + 16 * (len(pairs) if isinstance(pairs, tuple) else 0))
        else:
            n = max(n, f.end)
    return n


def encode_record(  # noqa: PLR0912, PLR0915 - one branch per field type of the layout language
    layout: RecordLayout,
    unix_us: int,
    values: Values,
    entries: Sequence[Values] = (),
) -> bytes:
    """A record of ``layout`` (its full length, then the entries) with ``values``.

    Fields not given are zero. Entry bookkeeping (start, count, lengths) is filled in unless
    the caller gives it; an entry that gives its own length field as 0 is padded to the
    layout's length for its mode (``length_if_zero``).
    """
    vals = dict(values)
    spec = layout.entries
    blobs: list[bytes] = []
    if spec is not None:
        fixed_len: int | None = None
        if isinstance(spec.length, int):
            fixed_len = spec.length
        elif not spec.length.startswith("entry."):
            fixed_len = max((_natural_length(spec.fields, e) for e in entries), default=0)
            vals.setdefault(spec.length, fixed_len)
        for e in entries:
            ev = dict(e)
            if fixed_len is not None:
                elen = fixed_len
            else:
                assert isinstance(spec.length, str)
                lname = spec.length[6:]
                elen = _natural_length(spec.fields, ev)
                if ev.get(lname) == 0 and spec.length_if_zero is not None:
                    by, table = spec.length_if_zero
                    key = ev.get(by)
                    elen = table.get(key, elen) if isinstance(key, int) else elen
                else:
                    ev.setdefault(lname, elen)
            eb = bytearray(elen)
            for f in spec.fields:
                if f.type == "pairs":
                    pairs = ev.get(f.name)
                    if isinstance(pairs, tuple):
                        room = max(0, (elen - f.offset) // 16)
                        _put(eb, 0, f, pairs[:room])
                elif f.end <= elen:
                    _put(eb, 0, f, ev.get(f.name))
            blobs.append(bytes(eb))
        if isinstance(spec.start, str):
            vals.setdefault(spec.start, layout.length)
        if spec.count is not None:
            vals.setdefault(spec.count, len(entries))
        if spec.end is not None:
            first = spec.start if isinstance(spec.start, int) else layout.length
            vals.setdefault(spec.end[0], first + sum(map(len, blobs)) - spec.end[1])
    body = bytearray(layout.length)
    for f in layout.fields:
        if f.mask:
            continue
        _put(body, 0, f, vals.get(f.name))
    for f in layout.fields:
        if f.mask:
            _put(body, 0, f, vals.get(f.name))
    start = layout.length
    if spec is not None and isinstance(spec.start, int):
        start = spec.start
        if start > len(body):
            body += bytes(start - len(body))
        else:
            del body[start:]
    data = bytes(body[:start]) + b"".join(blobs)
    length = len(data)
    if length > 0xFFFF:
        raise ValueError(f"{layout.id}: {length} bytes is too long for one record")
    hdr = pack_header(length, layout.domain, layout.record, unix_us_to_tod(unix_us))
    return hdr + data[HEADER_LEN:]


def _layout(layouts: LayoutTable | None, domain: int, record: int, length: int = 0) -> RecordLayout:
    table = layouts if layouts is not None else builtin_layouts()
    lst = table.layouts(domain, record)
    if not lst:
        raise ValueError(f"no layout for D{domain}R{record}")
    if length:
        for lay in lst:
            if lay.length == length:
                return lay
        raise ValueError(f"no layout of length {length} for D{domain}R{record}")
    return lst[-1]


def crypto_record(
    unix_us: int,
    counters: Mapping[str, int | None],
    length: int = 360,
    layouts: LayoutTable | None = None,
) -> bytes:
    """D5R9 with ``counters`` keyed by ``crypto`` kind field names or MRPRCAPC field names."""
    lay = _layout(layouts, 5, 9, length)
    values: dict[str, Value | None] = {}
    for k, v in counters.items():
        values[CRYPTO_FIELDS.get(k, k)] = v
    return encode_record(lay, unix_us, values)


@dataclass(frozen=True)
class CmbSpec:
    """One crypto measurement block for :func:`cmb_records`: a card's, or an APQN's when
    ``domain`` is given (docs/MONITOR.md, D5R10)."""

    ap: int
    pairs: tuple[tuple[int, int], ...]
    mode: int = K.MODE_ACCEL
    ap_type: int = 10
    scale: float = 1e-6
    valid: int | None = None  # default: every given pair valid
    zero_length: bool = False  # write a CMB length of 0 (the fixed length of its crypto type)
    domain: int | None = None

    def values(self) -> dict[str, Value | None]:
        valid = self.valid
        if valid is None:
            valid = 0
            for i in range(min(len(self.pairs), 32)):
                valid |= 0x80000000 >> i
        apqn = self.domain is not None
        v: dict[str, Value | None] = {
            "ap": self.ap,
            "ap_type": self.ap_type,
            "format": 1 if apqn else 0,
            "domain": self.domain if apqn else 0,
            "mode": self.mode,
            "scale": self.scale,
            "valid": valid,
            "pairs": self.pairs,
        }
        if self.zero_length:
            v["cmb_len"] = 0
        return v


RESPONSE_OK = 0x0001  # the store-crypto-measurement-data command's success code


def cmb_records(
    unix_us: int,
    cmbs: Sequence[CmbSpec],
    per_record: int | None = None,
    layouts: LayoutTable | None = None,
    rc: int = RESPONSE_OK,
) -> list[bytes]:
    """D5R10 records carrying ``cmbs``, ``per_record`` CMBs each: interim records with the
    P bit on, the last with it off; each with its response block length and code."""
    lay = _layout(layouts, 5, 10)
    n = per_record or max(1, len(cmbs))
    groups = [cmbs[i : i + n] for i in range(0, len(cmbs), n)] or [[]]
    out = []
    for i, g in enumerate(groups):
        more = 1 if i < len(groups) - 1 else 0
        values: dict[str, Value | None] = {"more": more, "rc": rc}
        out.append(encode_record(lay, unix_us, values, [c.values() for c in g]))
    return out


def processor_record(
    unix_us: int,
    *,
    cpu: int,
    cpu_type: int,
    emul_us: int,
    user_us: int,
    syst_us: int,
    wait_us: int,
    spin_us: int = 0,
    spins: int = 0,
    layouts: LayoutTable | None = None,
) -> bytes:
    """D0R2 for one processor (times cumulative, µs): ``emul_us`` the guests' emulation,
    ``user_us`` CP's time on their behalf, ``spin_us`` and ``spins`` its spinning on formal
    spin locks (part of CP's time). The record carries emulation (PFXPRBTM, counting down)
    and the time charged to users, emulation included (PFXUTIME)."""
    lay = _layout(layouts, 0, 2)
    return encode_record(
        lay,
        unix_us,
        {
            "cpu_addr": cpu,
            "cpu_type": cpu_type,
            "emul_time": emul_us,
            "charged_time": emul_us + user_us,
            "syst_time": syst_us,
            "wait_time": wait_us,
            "spin_time": spin_us,
            "spin_count": spins % (1 << 32),
        },
    )


@dataclass(frozen=True)
class LockCounters:
    """One formal spin lock's cumulative counters, as D0R23 carries them."""

    name: str
    excl_spins: int
    excl_us: int
    shared_spins: int = 0
    shared_us: int = 0


def spin_lock_record(
    unix_us: int, locks: Sequence[LockCounters], layouts: LayoutTable | None = None
) -> bytes:
    """D0R23 for the system: one entry per lock (counts wrap at 32 bits as the record
    carries them)."""
    return encode_record(
        _layout(layouts, 0, 23),
        unix_us,
        {},
        [
            {
                "lock_id": lock.name,
                "excl_spins": lock.excl_spins % (1 << 32),
                "excl_time": lock.excl_us,
                "shared_spins": lock.shared_spins % (1 << 32),
                "shared_time": lock.shared_us,
            }
            for lock in locks
        ],
    )


def lpar_record(
    unix_us: int,
    *,
    lpar_name: str,
    data_us: int,
    cpus: Sequence[tuple[int, int, int, str]],
    lpar_number: int = 1,
    layouts: LayoutTable | None = None,
) -> bytes:
    """D0R16 for one partition: ``cpus`` as (address, accumulated µs, the partition's own µs,
    type): DIAGNOSE X'204''s acc_time (management included) and lp_time."""
    lay = _layout(layouts, 0, 16)
    return encode_record(
        lay,
        unix_us,
        {"lpar_name": lpar_name, "lpar_number": lpar_number, "data_tod": data_us},
        [
            {"cpu_addr": c, "acc_time": acc, "lp_time": lp, "cpu_type_name": t}
            for c, acc, lp, t in cpus
        ],
    )


def system_record(
    unix_us: int,
    *,
    machine_type: str = "3931",
    machine_model: str = "A01",
    machine_serial: str = "0000000000012345",
    system_name: str = "ZVMSIM",
    lpar_name: str = "LPAR01",
    lpar_number: int = 1,
    level: tuple[int, int, int] = (7, 3, 0),
    tz_offset_s: int = 0,
    layouts: LayoutTable | None = None,
) -> bytes:
    """D1R4: the system configuration."""
    lay = _layout(layouts, 1, 4)
    return encode_record(
        lay,
        unix_us,
        {
            "machine_type": machine_type,
            "machine_model": machine_model,
            "machine_serial": machine_serial,
            "system_name": system_name,
            "lpar_name": lpar_name,
            "lpar_number": lpar_number,
            "cp_version": level[0],
            "cp_release": level[1],
            "cp_mod": level[2],
            "tz_offset": tz_offset_s,
        },
    )


def paging_record(
    unix_us: int,
    *,
    cpu: int,
    enc_pages: int,
    dec_pages: int,
    enc_us: int,
    dec_us: int,
    layouts: LayoutTable | None = None,
) -> bytes:
    """D3R2 for one processor: encrypted paging counts and CPU times (cumulative; counts
    wrap at 32 bits as the record carries them)."""
    return encode_record(
        _layout(layouts, 3, 2),
        unix_us,
        {
            "cpu_addr": cpu,
            "enc_pages": enc_pages % (1 << 32),
            "dec_pages": dec_pages % (1 << 32),
            "enc_time": enc_us,
            "dec_time": dec_us,
        },
    )


def processor_config_record(
    unix_us: int, cpu: int, cpu_type: int, layouts: LayoutTable | None = None
) -> bytes:
    """D1R5 for one processor."""
    return encode_record(_layout(layouts, 1, 5), unix_us, {"cpu_addr": cpu, "cpu_type": cpu_type})


def sample_config_record(
    unix_us: int, interval_s: int = 60, hf_rate: int = 30, layouts: LayoutTable | None = None
) -> bytes:
    """D1R9: the sample interval."""
    lay = _layout(layouts, 1, 9)
    return encode_record(lay, unix_us, {"interval": interval_s, "hf_rate": hf_rate})


def end_of_interval(unix_us: int) -> bytes:
    return raw_record(DOMAIN_MONITOR, REC_END_OF_INTERVAL, unix_us)


def end_of_frame(unix_us: int) -> bytes:
    return raw_record(DOMAIN_MONITOR, REC_END_OF_FRAME, unix_us)


# --- frames and spans ---------------------------------------------------------------


def frame_records(records: Iterable[bytes], start: int = 0) -> bytes:
    """Records laid out from absolute address ``start``: a record that would cross a 4 KiB
    frame goes to the next one, after a D1R13 (or zeros when fewer than 20 bytes remain)."""
    out = bytearray()
    tod_us = 0
    for rec in records:
        n = len(rec)
        if n > FRAME:
            raise ValueError(f"a record of {n} bytes cannot fit in a frame")
        room = FRAME - (start + len(out)) % FRAME
        if n > room:
            if room >= HEADER_LEN:
                eof = bytearray(end_of_frame(tod_us))
                out += eof + bytes(room - HEADER_LEN)
            else:
                out += bytes(room)
        out += rec
        if len(rec) >= HEADER_LEN:
            tod_us = _unix_us(rec)
    return bytes(out)


def _unix_us(rec: bytes) -> int:
    return tod_to_unix_us(parse_header(rec).tod)


def domain_bits(records: Iterable[bytes]) -> int:
    bits = 0
    for rec in records:
        if len(rec) >= HEADER_LEN and rec[4] < 16:
            bits |= 0x8000 >> rec[4]
    return bits


@dataclass(frozen=True)
class Span:
    """Records at an address of the monitor saved segment, as one control element shows them."""

    data: bytes
    start: int
    type: int = TYPE_SAMPLE
    domains: int = 0xC000

    @property
    def element(self) -> ControlElement:
        return ControlElement(self.type, self.domains, self.start, self.start + len(self.data) - 1)


def interval_span(
    records: Sequence[bytes], start: int = 0x0100_0000, end_us: int | None = None
) -> Span:
    """One sample interval's records, framed, with a D1R11 at the end (at ``end_us``, else
    the TOD of the last record)."""
    if end_us is None:
        end_us = max((_unix_us(r) for r in records if len(r) >= HEADER_LEN), default=0)
    recs = [*records, end_of_interval(end_us)]
    data = frame_records(recs, start)
    return Span(data, start, TYPE_SAMPLE, domain_bits(recs) or 0x4000)


# --- monreader streams ----------------------------------------------------------------


def monreader_script(sets: Iterable[Sequence[Span]]) -> list[bytes]:
    """What ``/dev/monreader`` reads return for ``sets``: each set's control elements and
    records, then a 0-byte read (``b""``)."""
    out: list[bytes] = []
    for spans in sets:
        out.append(b"".join(pack_mce(s.element) + s.data for s in spans))
        out.append(b"")
    return out


def rechunk(script: Sequence[bytes | int], cuts: Iterable[int]) -> list[bytes | int]:
    """``script`` with its data split at the stream byte positions ``cuts`` (0-byte reads
    and errors stay where they are)."""
    cutset = sorted(set(cuts))
    out: list[bytes | int] = []
    pos = 0
    ci = 0
    for item in script:
        if isinstance(item, int) or not item:
            out.append(item)
            continue
        end = pos + len(item)
        at = pos
        while ci < len(cutset) and cutset[ci] <= pos:
            ci += 1
        while ci < len(cutset) and cutset[ci] < end:
            out.append(item[at - pos : cutset[ci] - pos])
            at = cutset[ci]
            ci += 1
        out.append(item[at - pos :])
        pos = end
    return out


# --- MONWRITE files ---------------------------------------------------------------------


def control_block(spans: Sequence[Span], iparml: bytes = b"") -> bytes:
    if not spans or len(spans) > MAX_ELEMENTS:
        raise ValueError(f"a control block holds 1 to {MAX_ELEMENTS} elements")
    head = (iparml or bytes(IPARML_LEN)).ljust(IPARML_LEN, b"\x00")[:IPARML_LEN]
    body = b"".join(pack_mce(s.element) for s in spans)
    return (head + body).ljust(BLOCK, b"\x00")


def monwrite_block(spans: Sequence[Span], iparml: bytes = b"") -> bytes:
    """A control block and the pages its spans need."""
    lo = min(s.start for s in spans) & ~(BLOCK - 1)
    hi = max(s.start + len(s.data) - 1 for s in spans) | (BLOCK - 1)
    pages = bytearray(hi - lo + 1)
    for s in spans:
        pages[s.start - lo : s.start - lo + len(s.data)] = s.data
    return control_block(spans, iparml) + bytes(pages)


def monwrite_file(blocks: Iterable[Sequence[Span]]) -> bytes:
    """A whole MONWRITE file: one control block (and its pages) per entry of ``blocks``."""
    return b"".join(iter_monwrite(blocks))


def iter_monwrite(blocks: Iterable[Sequence[Span]]) -> Iterator[bytes]:
    for spans in blocks:
        yield monwrite_block(spans)


@dataclass
class IntervalRecords:
    """The records of one sample interval, for :func:`monwrite_intervals`."""

    end_us: int
    records: list[bytes] = field(default_factory=list)


def monwrite_intervals(
    intervals: Iterable[IntervalRecords], start: int = 0x0100_0000
) -> Iterator[bytes]:
    """A MONWRITE file, streamed: one control block per interval."""
    for iv in intervals:
        yield monwrite_block([interval_span(iv.records, start, iv.end_us)])


def monreader_intervals(
    intervals: Iterable[IntervalRecords], start: int = 0x0100_0000
) -> list[bytes]:
    """A monreader read script: one set per interval."""
    return monreader_script([interval_span(iv.records, start, iv.end_us)] for iv in intervals)
