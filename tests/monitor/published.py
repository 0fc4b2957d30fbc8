"""Monitor records packed byte by byte from the published structures, never with esatui's
encoder or layout table: the independent witness the decoder is checked against.

Sources, field by field (also in docs/MONITOR.md):

- Record header (20 bytes): IBM *z/VM Monitor Records*, MRRECHDR as every record page lists
  it (e.g. www.vm.ibm.com/pubs/mon520/MRPRCAPM.HTML): MRHDRLEN u16, MRHDRZER u16, MRHDRDM u8,
  a reserved byte, MRHDRRC u16, MRHDRTOD (8 bytes, TOD clock), 4 reserved bytes.
- D5R10 MRPRCAPM fixed part (same IBM page, and pak-center/zpmd src/v53_records.h
  ``struct d5r10``): 4 reserved bytes at +20, PRCAPM_L2 u16 at +24, PRCAPM_RC u16 at +26,
  4 reserved at +28, the P bit X'80' of the byte at +32, reserved to +40. That is the
  store-crypto-measurement-data response header as s390-tools zconf/zcrypt/zcryptstats.c maps
  a CHSC response (``struct chsc_header`` length and code, ``reserved1``, ``p:1``,
  ``reserved3``: 16 bytes), so the blocks start at +40.
- Crypto measurement block: zcryptstats.c ``struct chsc_cmb_header`` (``reserved1``, ``ct``,
  ``format``, ``ax``, ``float s``, ``uint32_t v``, ``dx``, ``mt``, ``l4``: 16 bytes, packed,
  big-endian on s390) then ``struct chsc_cmb_entry`` pairs (``u64 t``, ``u64 c``);
  ``get_cmb_length``: ``l4``, or when it is 0 the fixed length of the crypto type (64, 336,
  80 bytes); zpmd's ``d5r10ext_hdr`` and ``d5r10ext1/2/3`` agree (16-byte header; 64, 336,
  80-byte blocks).
- D5R9 MRPRCAPC: IBM's MRPRCAPC page (mon520: 112 bytes; mon710: 128; mon720: 360) and zpmd
  ``struct d5r9``: 4 reserved bytes at +20, then eleven 8-byte counters from +24 in the order
  CRYVSERV, CRYRSERV, CRYNOWNQ, CRYNOVNQ, CRYNOXVN, CRYNOXRN, CRYNOFNQ, CRYNOFDQ, CRYNOVPR,
  CRYNOVPC, CRYNORPR.
- D0R2 MRSYTPRP (one record per processor): IBM's MRSYTPRP page for z/VM 6.4
  (www.vm.ibm.com/pubs/mon640/MRSYTPRP.HTML): +20 SYTPRP_PFXCPUAD u16, +22 SYTPRP_PLSCUHAF
  u16, +24 SYTPRP_PFXPRBTM (8 bytes, emulation time; "starts at x'7FFF...' and advances
  down"), +32 SYTPRP_PFXUTIME (8 bytes, time charged to users, guest run time included);
  the rest from zpmd ``struct d0r2`` read packed (IBM's 4.3 record is 104 bytes, where the
  packed reading ends PFXSPINC): +40 PFXTMSYS, 20 reserved bytes, +68 PFXTOTWT, four u32
  counts (+76 to +91), +92 PFXSPINT, +100 PFXSPINC u32, +104 PFXCPUTY u8, 3 reserved: 108
  bytes (z/VM 5.3). CPU times in CPU-timer format: bit 51 is one microsecond.
- D0R16 MRSYTCUP (one record per partition): IBM's MRSYTCUP page (mon520 to mon720: a
  64-byte fixed part ``Structure 64 SYTCUP``, then "data for each logical CPU", located by
  SYTCUP_CALCPUOF and SYTCUP_CALCPULN); the fields from zpmd ``struct d0r16`` and ``d0r16ext``
  ("40 bytes fix length") read packed: +20 LCUPNAME (8 bytes EBCDIC), +28 LCUPPNUM u8,
  +29 CALFLGS u8, +30 LCUPCPCT u8 (CPUs described), a byte, +32 CALCPUOF, +34 CALCPULN
  (i16 each), +36 LCUTCTOD (TOD clock), +44 LCPTYPE (16 bytes), +60 LCXPUPID, 3 bytes; each
  CPU entry LCUCPUID u16, LCUCWGHT u16, LCUCFLGS u8, a byte, LCUCACTM and LCUCLPTM (8 bytes
  each, CPU-timer format), LCXCPTYP (16 bytes EBCDIC), 2 bytes. The entry is DIAGNOSE
  X'204''s CPU entry (Linux arch/s390/include/asm/diag.h ``struct diag204_cpu_info``:
  cpu_addr, reserved, ctidx, cflag, weight, acc_time, lp_time), whose two times hypfs reads
  as ``mgmtime = acc_time - lp_time`` and ``cputime = lp_time``
  (arch/s390/hypfs/hypfs_diag_fs.c).
- D0R23 MRSYTLCK (one record per interval): IBM's MRSYTLCK page (mon530: "A single record is
  generated for the system at each monitor sample interval", a 32-byte fixed part, the lock
  IDs such as SRMSLOCK the scheduler lock; mon610: a header, then one entry per lock with its
  spin counts and times, then a further array); the fields from zpmd ``struct d0r23`` and
  ``d0r23ext`` (marked TODO) read packed: +20 CALNMLKS u32 (entries), +24 CALENTSZ u16 (entry
  length), +26 CALENTDSP u16 (first entry's displacement), 4 reserved; each entry CALLCKID
  (8 bytes EBCDIC), CALXSCNT u32, CALXTIME u64, CALSSCNT u32, CALSTIME u64: 32 bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# MRRECHDR: length, zeros, domain, reserved, record, TOD, 4 reserved
RECORD_HEADER = struct.Struct(">HHBxHQ4x")
# PRCAPM after the header: reserved 4, L2, RC, reserved 4, P-bit byte, reserved 3, reserved 4
PRCAPM_FIXED = struct.Struct(">4xHH4xB3x4x")
# zcryptstats struct chsc_cmb_header (packed): reserved1, ct, format, ax, s, v, dx, mt, l4
CHSC_CMB_HEADER = struct.Struct(">BBBBfIBBH")
CHSC_CMB_ENTRY = struct.Struct(">QQ")  # u64 t, u64 c
P_BIT = 0x80
TOD_UNIX_EPOCH = 0x7D91048BCA000000  # TOD clock value at 1970-01-01 00:00 UTC
CMB_FIXED_LENGTH = {3: 64, 5: 64, 7: 64, 9: 64, 4: 336, 6: 80, 8: 80}  # get_cmb_length

# zpmd struct d5r9 (the 112-byte record), in record order from +24
D5R9_COUNTERS = (
    "cryvserv",
    "cryrserv",
    "crynownq",
    "crynovnq",
    "crynoxvn",
    "crynoxrn",
    "crynofnq",
    "crynofdq",
    "crynovpr",
    "crynovpc",
    "crynorpr",
)


def tod(unix_us: int) -> int:
    return (unix_us << 12) + TOD_UNIX_EPOCH


def record(domain: int, number: int, unix_us: int, body: bytes) -> bytes:
    """A monitor record: the MRRECHDR header, then ``body`` (bytes 20 onwards)."""
    return RECORD_HEADER.pack(20 + len(body), 0, domain, number, tod(unix_us)) + body


@dataclass(frozen=True)
class Cmb:
    """The fields of one ``chsc_cmb_header`` and its pairs, as the hardware stores them."""

    ct: int  # crypto type
    ax: int  # AP index
    s: float  # scaling factor
    pairs: tuple[tuple[int, int], ...]
    v: int | None = None  # validity mask; default: every given pair valid
    fmt: int = 0  # 0 card, 1 APQN
    dx: int = 0  # domain index (APQN blocks)
    mt: int = 0  # mode (CEX4 on)
    l4: int | None = None  # None: the block's true length; 0: "fixed length by type"

    def pack(self) -> bytes:
        v = self.v
        if v is None:
            v = sum(0x80000000 >> i for i in range(len(self.pairs)))
        body = b"".join(CHSC_CMB_ENTRY.pack(t, c) for t, c in self.pairs)
        length = CHSC_CMB_HEADER.size + len(body)
        if self.l4 == 0:
            fixed = CMB_FIXED_LENGTH[self.ct]
            body = body.ljust(fixed - CHSC_CMB_HEADER.size, b"\x00")
            length = fixed
        l4 = length if self.l4 is None else self.l4
        head = CHSC_CMB_HEADER.pack(0, self.ct, self.fmt, self.ax, self.s, v, self.dx, self.mt, l4)
        return head + body


def d5r10(unix_us: int, cmbs: Sequence[Cmb], *, p: bool = False, rc: int = 0x0001) -> bytes:
    """One MRPRCAPM record: the response header (L2 counts its own 16 bytes and the blocks)."""
    blocks = b"".join(c.pack() for c in cmbs)
    fixed = PRCAPM_FIXED.pack(16 + len(blocks), rc, P_BIT if p else 0)
    return record(5, 10, unix_us, fixed + blocks)


def d5r10_set(unix_us: int, cmbs: Sequence[Cmb], per_record: int) -> list[bytes]:
    """An interval's MRPRCAPM records: the P bit on in all but the last."""
    groups = [cmbs[i : i + per_record] for i in range(0, len(cmbs), per_record)] or [[]]
    return [d5r10(unix_us, g, p=i < len(groups) - 1) for i, g in enumerate(groups)]


# MRSYTPRP (108 bytes): PFXCPUAD, PLSCUHAF, PFXPRBTM, PFXUTIME, PFXTMSYS, 20 reserved,
# PFXTOTWT, PFXRUNCI, PFXRUNPF, PFXRUNCP, CALFSTPH, PFXSPINT, PFXSPINC, PFXCPUTY, 3 reserved
SYTPRP = struct.Struct(">HHQQQ20xQIIIIQIB3x")
CPU_TIMER_US = 1 << 12  # bit 51 of a CPU timer or TOD-format duration is one microsecond
# IBM's page prints the count-down start as x'7FFFFFFFF_00000000' (a digit too many): one
# reading of it. The decoder must not depend on which.
PRBTM_START = 0x7FFFFFFF_00000000


@dataclass(frozen=True)
class ProcessorTimes:
    """One processor's cumulative times in µs, as an analyst splits them (ESACPUU)."""

    emul: int  # the guests' emulation
    user: int  # CP on the guests' behalf
    syst: int  # CP for itself
    wait: int
    spin: int = 0
    spins: int = 0


def d0r2(unix_us: int, cpu: int, cpu_type: int, t: ProcessorTimes) -> bytes:
    """One MRSYTPRP record: PFXPRBTM counts down from ``PRBTM_START``, PFXUTIME is emulation
    plus CP on the guests' behalf."""
    body = SYTPRP.pack(
        cpu,
        0,
        PRBTM_START - t.emul * CPU_TIMER_US,
        (t.emul + t.user) * CPU_TIMER_US,
        t.syst * CPU_TIMER_US,
        t.wait * CPU_TIMER_US,
        0,
        0,
        0,
        0,
        t.spin * CPU_TIMER_US,
        t.spins,
        cpu_type,
    )
    return record(0, 2, unix_us, body)


# MRSYTLCK fixed part after the header: CALNMLKS, CALENTSZ, CALENTDSP, 4 reserved
SYTLCK = struct.Struct(">IHH4x")
# one lock entry: CALLCKID, CALXSCNT, CALXTIME, CALSSCNT, CALSTIME
SYTLCK_ENTRY = struct.Struct(">8sIQIQ")


@dataclass(frozen=True)
class LockSpins:
    """One formal spin lock's cumulative spins and spin time (µs), exclusive and shared."""

    name: str
    excl_spins: int
    excl_us: int
    shared_spins: int = 0
    shared_us: int = 0


def d0r23(unix_us: int, locks: Sequence[LockSpins], *, entry_len: int = 32) -> bytes:
    """One MRSYTLCK record: the fixed part, then one entry per lock (``entry_len`` bytes
    each, a later level's longer entry padded with zeros)."""
    entries = b"".join(
        SYTLCK_ENTRY.pack(
            lock.name.ljust(8).encode("cp037"),
            lock.excl_spins,
            lock.excl_us * CPU_TIMER_US,
            lock.shared_spins,
            lock.shared_us * CPU_TIMER_US,
        ).ljust(entry_len, b"\x00")
        for lock in locks
    )
    return record(0, 23, unix_us, SYTLCK.pack(len(locks), entry_len, 32) + entries)


def d5r9(unix_us: int, counters: Mapping[str, int], length: int = 112) -> bytes:
    """MRPRCAPC of ``length`` bytes: the eleven counters of the 112-byte record (zeros for
    the rest; fields of longer records are not packed here)."""
    body = struct.pack(">4x11Q", *(counters.get(name, 0) for name in D5R9_COUNTERS))
    return record(5, 9, unix_us, body.ljust(length - 20, b"\x00"))


# MRSYTCUP fixed part after the header: LCUPNAME, LCUPPNUM, CALFLGS, LCUPCPCT, a byte,
# CALCPUOF, CALCPULN, LCUTCTOD, LCPTYPE, LCXPUPID, 3 bytes
SYTCUP = struct.Struct(">8sBBBxhhQ16sB3x")
# one CPU entry: LCUCPUID, LCUCWGHT, LCUCFLGS, a byte, LCUCACTM, LCUCLPTM, LCXCPTYP, 2 bytes
SYTCUP_CPU = struct.Struct(">HHBxQQ16s2x")


@dataclass(frozen=True)
class PartitionCpu:
    """One logical CPU's cumulative times in µs as PR/SM accounts them (DIAGNOSE X'204')."""

    address: int
    acc_us: int  # dispatched, LPAR management included
    lp_us: int  # dispatched for the partition's own work
    type_name: str = "IFL"
    weight: int = 100


def d0r16(unix_us: int, lpar: str, data_us: int, cpus: Sequence[PartitionCpu]) -> bytes:
    """One MRSYTCUP record of partition ``lpar`` (number 1), its data taken at ``data_us``."""
    fixed = SYTCUP.pack(
        lpar.ljust(8).encode("cp037"),
        1,
        0,
        len(cpus),
        20 + SYTCUP.size,
        SYTCUP_CPU.size,
        tod(data_us),
        b"\x00" * 16,
        0,
    )
    entries = b"".join(
        SYTCUP_CPU.pack(
            cpu.address,
            cpu.weight,
            0,
            cpu.acc_us * CPU_TIMER_US,
            cpu.lp_us * CPU_TIMER_US,
            cpu.type_name.ljust(16).encode("cp037"),
        )
        for cpu in cpus
    )
    return record(0, 16, unix_us, fixed + entries)
