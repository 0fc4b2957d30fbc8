"""Record layouts as data: which field sits where, in what type and unit, and how sure we are.

One :class:`RecordLayout` per record and z/VM level, told apart by the record's length (the
monitor only ever appends fields, so a longer record of the same number is a later level).
A record is decoded with the layout of exactly its length, else with the longest layout
shorter than it (the unknown tail is skipped), else with the shortest (fields that would lie
beyond the record's end are absent). Every read is bounded by the record's own length.

Repeated parts (the CPU entries of D0R16, the crypto measurement blocks of D5R10) are
described by an :class:`EntrySpec`: where the first entry starts, how many there are and how
long each one is, each given as a number or as the name of a field holding it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from esatui.collectors.monitor.header import tod_to_unix_us

Pairs = tuple[tuple[int, int], ...]
Buffer = bytes | bytearray | memoryview
Value = int | float | str | Pairs

MAX_PAIRS = 32

INT_TYPES: Mapping[str, str] = {
    "u8": "B",
    "u16": "H",
    "u32": "I",
    "u64": "Q",
    "i16": "h",
    "i32": "i",
    "i64": "q",
}
FIXED_TYPES: Mapping[str, str] = {
    **INT_TYPES,
    "f32": "f",
    "tod": "Q",
    "cputime": "Q",
    "cputime_down": "q",
}
FIXED_SIZES: Mapping[str, int] = {t: struct.calcsize(">" + c) for t, c in FIXED_TYPES.items()}
ALL_TYPES = (*FIXED_TYPES, "ebcdic", "pairs")
STATUSES = ("verified", "provisional")


def _ebcdic(raw: bytes) -> str:
    return raw.decode("cp037", errors="replace").strip(" \x00")


# A count-down CPU timer starts near X'7FFFFFFF_FFFFFFFF' and runs down as time accrues (IBM,
# z/VM 6.4 Monitor Records, MRSYTPRP: SYTPRP_PFXPRBTM "starts at x'7FFF...' and advances down
# (in the negative direction)"; perf tip vcputime.html: D4R3's times are "stored in complement
# form"). Decoded as the time accrued since that start, so it increases like any accumulator
# and only its deltas matter (the exact start value does not: IBM's page misprints it).
COUNTDOWN_START = 0x7FFF_FFFF_FFFF_FFFF
# An accumulated time this large would be 36 years of one processor's CPU since IPL: a raw
# value at or above it can only be a count-down timer.
COUNTDOWN_FLOOR = 1 << 62


def _cputime(raw: int) -> int:
    """A TOD-format duration (bit 51 is one microsecond) in µs; a value that can only be a
    count-down timer (at least ``COUNTDOWN_FLOOR``) is read as one."""
    if raw >= COUNTDOWN_FLOOR:
        return _cputime_down(raw - (1 << 64) if raw >> 63 else raw)
    return raw >> 12


def _cputime_down(raw: int) -> int:
    """A count-down CPU timer (signed) as µs accrued since ``COUNTDOWN_START``."""
    return (COUNTDOWN_START - raw) >> 12


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One field: ``offset`` from the record (or entry) start, big-endian ``type``.

    Types: ``u8 u16 u32 u64 i16 i32 i64`` integers, ``f32`` IEEE binary32, ``tod`` an absolute
    TOD clock (decoded to Unix microseconds), ``cputime`` a TOD-format duration (decoded to
    microseconds; a value only a count-down timer can have is read as one), ``cputime_down``
    a count-down CPU timer (decoded to the microseconds accrued since X'7FFF...'),
    ``ebcdic`` text of ``size`` bytes, ``pairs`` (u64 time, u64 count) pairs to the end of the
    entry. ``mask`` turns an integer into 1 or 0 (``raw & mask != 0``).
    """

    name: str
    offset: int
    type: str
    unit: str = ""
    status: str = "verified"
    size: int = 0  # bytes, for ebcdic
    mask: int = 0
    source: str = ""
    doc: str = ""

    @property
    def width(self) -> int:
        size = FIXED_SIZES.get(self.type)
        if size is not None:
            return size
        if self.type == "ebcdic":
            return self.size
        return 16  # pairs: at least one pair

    @property
    def end(self) -> int:
        return self.offset + self.width

    @property
    def provisional(self) -> bool:
        return self.status == "provisional"

    def converter(self) -> Callable[[object], Value] | None:
        if self.mask:
            mask = self.mask
            return lambda raw: 1 if int(raw) & mask else 0  # type: ignore[call-overload]
        if self.type == "tod":
            return tod_to_unix_us  # type: ignore[return-value]
        if self.type == "cputime":
            return _cputime  # type: ignore[return-value]
        if self.type == "cputime_down":
            return _cputime_down  # type: ignore[return-value]
        if self.type == "ebcdic":
            return _ebcdic  # type: ignore[return-value]
        return None


@dataclass(frozen=True, slots=True)
class EntrySpec:
    """A repeated part of a record.

    ``start``: offset of the first entry, or the name of a record field holding it.
    ``count``: the name of a record field holding the number of entries, or ``None`` (entries
    up to the end of the record). ``length``: each entry's length, or the name of a record
    field holding it, or ``entry.NAME`` for a field of each entry holding its own length; then
    ``length_if_zero`` (``(by, {value: length})``) gives the length when that field is 0,
    chosen by the value of the entry field ``by``. ``end``: ``(field, plus)`` when a record
    field tells where the entries end (``value + plus`` bytes from the record start, e.g. a
    response block's own length); entries never go beyond the record either way.
    """

    start: int | str
    count: str | None
    length: int | str
    fields: tuple[FieldSpec, ...]
    length_if_zero: tuple[str, Mapping[int, int]] | None = None
    end: tuple[str, int] | None = None


@dataclass(slots=True)
class Decoded:
    layout: RecordLayout
    values: dict[str, Value | None]
    entries: list[dict[str, Value | None]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    length: int = 0  # the record's own length (its layout may be shorter or longer)


class _Plan:
    """Precompiled reads of a field list: one ``struct`` for the plain fields, then the rest."""

    __slots__ = ("end", "fast", "fast_conv", "fast_names", "fields", "readers", "slow")

    def __init__(self, fields: Sequence[FieldSpec]) -> None:
        self.fields = tuple(fields)
        plain = sorted(
            (f for f in fields if f.type in FIXED_TYPES and not f.mask), key=lambda f: f.offset
        )
        chosen: list[FieldSpec] = []
        fmt = ">"
        pos = 0
        for f in plain:
            if f.offset < pos:
                continue  # overlaps an earlier field: read on its own
            fmt += f"{f.offset - pos}x" if f.offset > pos else ""
            fmt += FIXED_TYPES[f.type]
            pos = f.end
            chosen.append(f)
        self.fast = struct.Struct(fmt)
        self.fast_names = tuple(f.name for f in chosen)
        self.fast_conv = tuple((i, c) for i, f in enumerate(chosen) if (c := f.converter()))
        self.slow = tuple((f.name, field_reader(f)) for f in fields if f not in chosen)
        self.readers = tuple((f.name, field_reader(f)) for f in fields)
        self.end = max((f.end for f in fields), default=0)


_PAIRS = [struct.Struct(f">{2 * n}Q") for n in range(MAX_PAIRS + 1)]

Reader = Callable[[Buffer, int, int], "Value | None"]


def field_reader(f: FieldSpec) -> Reader:
    """A function reading ``f`` of the record or entry at ``base``, bounded by ``limit``
    (``None`` when the field lies beyond it)."""
    off = f.offset
    if f.type == "pairs":

        def pairs(buf: Buffer, base: int, limit: int) -> Value | None:
            start = base + off
            n = min((limit - start) // 16, MAX_PAIRS)
            if n <= 0:
                return None
            raw = _PAIRS[n].unpack_from(buf, start)
            return tuple(zip(raw[0::2], raw[1::2], strict=True))

        return pairs
    width = f.width
    conv = f.converter()
    if f.type == "ebcdic":
        size = f.size

        def text(buf: Buffer, base: int, limit: int) -> Value | None:
            start = base + off
            if start + width > limit:
                return None
            return _ebcdic(bytes(buf[start : start + size]))

        return text
    unpack = struct.Struct(">" + FIXED_TYPES[f.type]).unpack_from

    def fixed(buf: Buffer, base: int, limit: int) -> Value | None:
        start = base + off
        if start + width > limit:
            return None
        (value,) = unpack(buf, start)
        return conv(value) if conv else value

    return fixed


def read_field(f: FieldSpec, buf: Buffer, base: int, limit: int) -> Value | None:
    """One field of the record or entry at ``base``; ``None`` if it lies beyond ``limit``."""
    return field_reader(f)(buf, base, limit)


def _read_all(plan: _Plan, buf: Buffer, base: int, limit: int) -> dict[str, Value | None]:
    if base + plan.end <= limit:
        raw = plan.fast.unpack_from(buf, base)
        if plan.fast_conv:
            lst: list[object] = list(raw)
            for i, conv in plan.fast_conv:
                lst[i] = conv(lst[i])
            raw = tuple(lst)
        values: dict[str, Value | None] = dict(zip(plan.fast_names, raw, strict=True))
        for name, read in plan.slow:
            values[name] = read(buf, base, limit)
        return values
    return {name: read(buf, base, limit) for name, read in plan.readers}


@dataclass(frozen=True)
class RecordLayout:
    domain: int
    record: int
    name: str
    level: str
    length: int
    fields: tuple[FieldSpec, ...]
    entries: EntrySpec | None = None
    source: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_plan", _Plan(self.fields))
        spec = self.entries
        if spec is not None:
            object.__setattr__(self, "_eplan", _Plan(spec.fields))
            by_name = {f.name: f for f in spec.fields}
            own_len = None
            if isinstance(spec.length, str) and spec.length.startswith("entry."):
                own_len = field_reader(by_name[spec.length[6:]])
            object.__setattr__(self, "_elen", own_len)
            by = None
            if spec.length_if_zero is not None:
                by = field_reader(by_name[spec.length_if_zero[0]])
            object.__setattr__(self, "_eby", by)

    @property
    def id(self) -> str:
        return f"D{self.domain}R{self.record}/{self.length}"

    def field(self, name: str) -> FieldSpec:
        for f in self.fields:
            if f.name == name:
                return f
        if self.entries is not None:
            for f in self.entries.fields:
                if f.name == name:
                    return f
        raise KeyError(f"{self.id} has no field {name!r}")

    def all_fields(self) -> tuple[FieldSpec, ...]:
        return self.fields + (self.entries.fields if self.entries else ())

    def decode(self, buf: Buffer, offset: int, length: int, *, entries: bool = True) -> Decoded:
        """The record of ``length`` bytes at ``offset`` of ``buf`` (without its repeated
        part when ``entries`` is false: see :meth:`decode_entries`)."""
        limit = offset + length
        plan: _Plan = self._plan  # type: ignore[attr-defined]
        out = Decoded(self, _read_all(plan, buf, offset, limit), length=length)
        if entries and self.entries is not None:
            self._decode_entries(buf, offset, limit, out)
        return out

    def decode_entries(self, buf: Buffer, offset: int, length: int, out: Decoded) -> None:
        """Add the repeated part to a record decoded with ``entries=False``."""
        if self.entries is not None and not out.entries:
            self._decode_entries(buf, offset, offset + length, out)

    def _decode_entries(  # noqa: PLR0912 - each bound of the entries' count, size and place is checked on its own
        self, buf: Buffer, offset: int, limit: int, out: Decoded
    ) -> None:
        spec = self.entries
        assert spec is not None
        eplan: _Plan = self._eplan  # type: ignore[attr-defined]
        start = _number(spec.start, out.values)
        count = None if spec.count is None else _number(spec.count, out.values)
        if start is None or (spec.count is not None and count is None):
            return
        pos = offset + start
        if pos < offset + 20:
            out.problems.append(f"{self.id}: entries would start inside the header ({start})")
            return
        if spec.end is not None:
            told = _number(spec.end[0], out.values)
            if told is not None:
                end = offset + told + spec.end[1]
                if end > limit:
                    out.problems.append(
                        f"{self.id}: {spec.end[0]} says the entries end at {end - offset}, "
                        f"beyond the record's {limit - offset} bytes"
                    )
                else:
                    limit = end
        own_len: Reader | None = self._elen  # type: ignore[attr-defined]
        by: Reader | None = self._eby  # type: ignore[attr-defined]
        table = spec.length_if_zero[1] if spec.length_if_zero is not None else {}
        fixed = 0
        if own_len is None:
            got = _number(spec.length, out.values)
            fixed = got if got is not None else 0
        n = 0
        while pos < limit and (count is None or n < count):
            if own_len is not None:
                raw_len = own_len(buf, pos, limit)
                if not isinstance(raw_len, int):
                    out.problems.append(f"{self.id}: entry {n} cut off by the record's end")
                    return
                elen = raw_len
                if elen == 0 and by is not None:
                    key = by(buf, pos, limit)
                    elen = table.get(key, 0) if isinstance(key, int) else 0
            else:
                elen = fixed
            if elen <= 0:
                out.problems.append(f"{self.id}: entry {n} has no usable length")
                return
            if pos + elen > limit:
                out.problems.append(f"{self.id}: entry {n} ({elen} bytes) crosses the record's end")
                return
            out.entries.append(_read_all(eplan, buf, pos, pos + elen))
            pos += elen
            n += 1
        if count is not None and n < count:
            out.problems.append(f"{self.id}: {count} entries announced, {n} present")


def _number(ref: int | str, values: Mapping[str, Value | None]) -> int | None:
    if isinstance(ref, int):
        return ref
    v = values.get(ref)
    return v if isinstance(v, int) else None


class LayoutTable:
    """All known layouts, found by (domain, record) and the record's length."""

    def __init__(self, layouts: Iterable[RecordLayout] = ()) -> None:
        self._by_key: dict[tuple[int, int], list[RecordLayout]] = {}
        self._cache: dict[tuple[int, int, int], RecordLayout | None] = {}
        for lay in layouts:
            self.add(lay)

    def add(self, layout: RecordLayout) -> None:
        """Add ``layout``, replacing one of the same record and length."""
        lst = [
            x
            for x in self._by_key.get((layout.domain, layout.record), [])
            if x.length != layout.length
        ]
        lst.append(layout)
        lst.sort(key=lambda x: x.length)
        self._by_key[(layout.domain, layout.record)] = lst
        self._cache.clear()

    def merged(self, other: LayoutTable) -> LayoutTable:
        """A new table: this one with ``other``'s layouts added over it."""
        out = LayoutTable(self)
        for lay in other:
            out.add(lay)
        return out

    def __iter__(self) -> Iterator[RecordLayout]:
        for key in sorted(self._by_key):
            yield from self._by_key[key]

    def __contains__(self, key: tuple[int, int]) -> bool:
        return key in self._by_key

    def layouts(self, domain: int, record: int) -> list[RecordLayout]:
        return list(self._by_key.get((domain, record), []))

    def select(self, domain: int, record: int, length: int) -> RecordLayout | None:
        ck = (domain, record, length)
        try:
            return self._cache[ck]
        except KeyError:
            pass
        lst = self._by_key.get((domain, record))
        chosen: RecordLayout | None = None
        if lst:
            shorter = [x for x in lst if x.length <= length]
            chosen = shorter[-1] if shorter else lst[0]
        self._cache[ck] = chosen
        return chosen
