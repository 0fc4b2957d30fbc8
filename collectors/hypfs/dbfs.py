"""The hypfs debugfs files ``s390_hypfs/diag_204`` and ``s390_hypfs/diag_2fc`` (big-endian).

Both start with a 64-byte header the kernel adds (arch/s390/hypfs/hypfs_diag.c,
hypfs_vm.c): ``diag_204``: u64 length of the data after the header, u16 header version,
u8 DIAGNOSE X'204' subcode, 53 reserved. ``diag_2fc``: u64 length, u16 version, 16-byte
extended TOD clock of the query, u64 number of guest records, 30 reserved.

``diag_204`` is DIAGNOSE X'204' extended format (subcode 6 or 7; the kernel only offers
the debugfs file for that format), as the kernel's structs and s390-tools' hyptop read it:

- info block header (64): u8 npar, u8 flags (0x80: physical CPU section follows), u16
  timeslice, u16 physical CPUs, u16 the byte offset of the caller's partition header from
  this header (s390-tools hyptop/dg_debugfs_lpar.c: ``(void *)time_hdr +
  time_hdr->this_part``; the kernel's sthyi.c ``fill_diag``), 16-byte extended TOD, 40 rsvd;
- per partition a header (96): u8 partition number, u8 cpus, u8 reported cpus, u8 flags,
  u32, 8-byte EBCDIC name at +8, ..., u8 multithreading id at +49 (low 5 bits: threads - 1);
  then ``reported cpus`` CPU blocks (96), standby and reserved ones included: u16 address,
  2 rsvd, u8 type index (DIAGNOSE X'224' table), u8 flags (0x20 online, 0x40 capped:
  ``enum diag204_cpu_flags`` of arch/s390/include/asm/diag.h), u16 weight (X'FFFF':
  dedicated), u64 accumulated time at +8 (dispatched + LPAR management),
  u64 dispatched time at +16, weights, u64 online time at +32, u64 wait time at +40,
  u32 pma weight, u32 polarization weight, u64 multithreading idle time at +64 (hyptop);
- if flags & 0x80: a physical header (96, u8 cpus at +1) and that many physical CPU blocks
  (96): u16 address, 2 rsvd, u8 type index, 3 rsvd, u64 management time at +8.

All times are microseconds. Every read is bounded by the buffer: a truncated buffer yields
what was complete and says so (``truncated``).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from esatui.collectors.diag2fc import RECORD_LEN, Diag2fcRecord, encode_record, iter_records

HEADER_LEN = 64
TOD_UNIX_EPOCH = 0x7D91048BCA000000  # TOD clock value at 1970-01-01 00:00:00 UTC
PHYS_FLAG = 0x80
CPU_ONLINE = 0x20  # DIAG204_CPU_ONLINE: a standby or reserved logical CPU lacks it

_D204_HDR = struct.Struct(">QHB53x")
_D2FC_HDR = struct.Struct(">QH16sQ30x")
_INFO = struct.Struct(">BBHHH16s40x")
_PART = struct.Struct(">BBBBI8s33xB46x")
_CPU = struct.Struct(">H2xBBHQQHHH2xQQII8xQ24x")
_PHYS_HDR = struct.Struct(">xB94x")
_PHYS_CPU = struct.Struct(">H2xB3xQ80x")
assert _INFO.size == 64
assert _PART.size == _CPU.size == _PHYS_HDR.size == _PHYS_CPU.size == 96


def tod_to_unix_us(tod: int) -> int:
    """A TOD clock value (bit 51 = 1 µs) as microseconds since the Unix epoch."""
    return (tod - TOD_UNIX_EPOCH) >> 12


def unix_us_to_tod(us: int) -> int:
    return (us << 12) + TOD_UNIX_EPOCH


def _ext_tod(raw: bytes) -> int:
    """The 64-bit TOD clock inside a 16-byte extended TOD (byte 0 is the epoch index)."""
    return int.from_bytes(raw[1:9], "big")


@dataclass(frozen=True, slots=True)
class LparCpu:
    address: int
    type_index: int
    acc_us: int  # dispatched + LPAR management
    lp_us: int  # dispatched ("cputime")
    online_us: int
    wait_us: int  # meaning not publicly documented: provisional
    mt_idle_us: int = 0
    weight: int = 0
    polar_weight: int = 0
    flags: int = CPU_ONLINE

    @property
    def mgmt_us(self) -> int:
        return max(0, self.acc_us - self.lp_us)

    @property
    def online(self) -> bool:
        return bool(self.flags & CPU_ONLINE)


@dataclass(frozen=True, slots=True)
class Partition:
    number: int
    name: str
    threads: int  # per core (1 without multithreading)
    cpus: tuple[LparCpu, ...]


@dataclass(frozen=True, slots=True)
class PhysCpu:
    address: int
    type_index: int
    mgmt_us: int


@dataclass
class Diag204:
    subcode: int
    own_index: int | None  # the caller's partition in ``partitions`` (None: not found)
    tod: int
    partitions: list[Partition] = field(default_factory=list)
    physical: list[PhysCpu] = field(default_factory=list)
    truncated: bool = False

    @property
    def time_us(self) -> int:
        return tod_to_unix_us(self.tod)

    def own(self) -> Partition | None:
        """The caller's partition, where the buffer points at one it holds whole."""
        if self.own_index is None or self.own_index >= len(self.partitions):
            return None
        return self.partitions[self.own_index]


class FormatError(ValueError):
    """The buffer does not even hold the headers."""


def _ebcdic(raw: bytes) -> str:
    return raw.decode("cp037", errors="replace").strip(" \x00")


def parse_diag204(data: bytes) -> Diag204:
    """The debugfs ``diag_204`` file (header included)."""
    if len(data) < HEADER_LEN + _INFO.size:
        raise FormatError(f"diag_204: {len(data)} bytes, shorter than its headers")
    length, _version, subcode = _D204_HDR.unpack_from(data, 0)
    end = min(len(data), HEADER_LEN + length)
    npar, flags, _tslice, _pcpus, this_part, tod = _INFO.unpack_from(data, HEADER_LEN)
    out = Diag204(subcode, None, _ext_tod(tod), truncated=end < HEADER_LEN + length)
    pos = HEADER_LEN + _INFO.size
    for n in range(npar):
        if pos + _PART.size > end:
            out.truncated = True
            return out
        if pos - HEADER_LEN == this_part:  # the offset is from the info block header
            out.own_index = n
        pn, _cpus, rcpus, _pflag, _mlu, name, mtid = _PART.unpack_from(data, pos)
        pos += _PART.size
        if pos + rcpus * _CPU.size > end:
            out.truncated = True
            out.own_index = None if out.own_index == n else out.own_index
            return out
        cpus = []
        for _ in range(rcpus):
            (addr, ctidx, cflag, weight, acc, lp, _minw, _curw, _maxw, online, wait, _pma, polar,
             mt_idle) = _CPU.unpack_from(data, pos)  # fmt: skip
            cpus.append(LparCpu(addr, ctidx, acc, lp, online, wait, mt_idle, weight, polar, cflag))
            pos += _CPU.size
        out.partitions.append(Partition(pn, _ebcdic(name), (mtid & 0x1F) + 1, tuple(cpus)))
    if flags & PHYS_FLAG:
        if pos + _PHYS_HDR.size > end:
            out.truncated = True
            return out
        (count,) = _PHYS_HDR.unpack_from(data, pos)
        pos += _PHYS_HDR.size
        for _ in range(count):
            if pos + _PHYS_CPU.size > end:
                out.truncated = True
                return out
            addr, ctidx, mgm = _PHYS_CPU.unpack_from(data, pos)
            out.physical.append(PhysCpu(addr, ctidx, mgm))
            pos += _PHYS_CPU.size
    return out


def encode_diag204(d: Diag204) -> bytes:
    """The inverse of :func:`parse_diag204` (fixtures and the simulated system)."""
    body = bytearray()
    flags = PHYS_FLAG if d.physical else 0
    tod = b"\x00" + d.tod.to_bytes(8, "big") + bytes(7)
    offsets = [_INFO.size]  # each partition header's, from the info block header
    for p in d.partitions:
        offsets.append(offsets[-1] + _PART.size + len(p.cpus) * _CPU.size)
    this = 0 if d.own_index is None else offsets[d.own_index]  # 0: points at no partition
    body += _INFO.pack(len(d.partitions), flags, 0, len(d.physical), this, tod)
    for p in d.partitions:
        name = p.name.upper().ljust(8)[:8].encode("cp037")
        body += _PART.pack(p.number, len(p.cpus), len(p.cpus), 0, 0, name, p.threads - 1)
        for c in p.cpus:
            body += _CPU.pack(
                c.address, c.type_index, c.flags, c.weight, c.acc_us, c.lp_us, 0, c.weight, 0,
                c.online_us, c.wait_us, 0, c.polar_weight, c.mt_idle_us,
            )  # fmt: skip
    if d.physical:
        body += _PHYS_HDR.pack(len(d.physical))
        for ph in d.physical:
            body += _PHYS_CPU.pack(ph.address, ph.type_index, ph.mgmt_us)
    # the kernel reports whole pages of DIAGNOSE X'204' buffer
    pages = -(-len(body) // 4096) * 4096
    body += bytes(pages - len(body))
    return _D204_HDR.pack(len(body), 0, d.subcode) + bytes(body)


@dataclass
class Diag2fc:
    tod: int
    records: list[Diag2fcRecord]
    truncated: bool = False

    @property
    def time_us(self) -> int:
        return tod_to_unix_us(self.tod)


def parse_diag2fc(data: bytes) -> Diag2fc:
    """The debugfs ``diag_2fc`` file (header included)."""
    if len(data) < HEADER_LEN:
        raise FormatError(f"diag_2fc: {len(data)} bytes, shorter than its header")
    length, _version, tod, count = _D2FC_HDR.unpack_from(data, 0)
    body = data[HEADER_LEN : HEADER_LEN + length]
    whole = len(body) // RECORD_LEN
    records = list(iter_records(body, min(count, whole)))
    truncated = len(body) < length or count > whole or length != count * RECORD_LEN
    return Diag2fc(_ext_tod(tod), records, truncated)


def encode_diag2fc(tod: int, records: list[Diag2fcRecord]) -> bytes:
    body = b"".join(encode_record(r) for r in records)
    ext = b"\x00" + tod.to_bytes(8, "big") + bytes(7)
    return _D2FC_HDR.pack(len(body), 0, ext, len(records)) + body
