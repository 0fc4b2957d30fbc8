"""The 20-byte monitor record header and the TOD clock.

Header (MRRECHDR, big-endian): u16 length (of the whole record), u16 zero, u8 domain,
u8 reserved, u16 record number, u64 TOD clock of when the record was built, 4 reserved bytes.
The TOD clock counts 2**-12 µs since 1900-01-01 00:00 UTC; bit 51 is one microsecond.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

HEADER_LEN = 20
FRAME = 4096  # records never cross a 4 KiB frame of the monitor saved segment

# TOD clock value of 1970-01-01 00:00:00 UTC (the Unix epoch)
TOD_UNIX_EPOCH = 0x7D91048BCA000000

DOMAIN_SYSTEM = 0
DOMAIN_MONITOR = 1
DOMAIN_STORAGE = 3
DOMAIN_PROCESSOR = 5

# Domain 1 control records
REC_END_OF_INTERVAL = 11  # D1R11 MRMTRITV: end of a sample interval
REC_END_OF_FRAME = 13  # D1R13 MRMTREOF: no more data in this frame

_HEADER = struct.Struct(">HHBxHQ4x")
assert _HEADER.size == HEADER_LEN


def tod_to_unix_us(tod: int) -> int:
    """A TOD clock value as microseconds since the Unix epoch (UTC)."""
    return (tod - TOD_UNIX_EPOCH) >> 12


TOD_FIRST_US = -((TOD_UNIX_EPOCH) >> 12) + 1  # the TOD clock's range, in Unix µs
TOD_LAST_US = ((1 << 64) - 1 - TOD_UNIX_EPOCH) >> 12  # 2042-09-17T23:53:47Z


def unix_us_to_tod(unix_us: int) -> int:
    """The inverse of :func:`tod_to_unix_us` (sub-microsecond bits zero)."""
    return (unix_us << 12) + TOD_UNIX_EPOCH


@dataclass(frozen=True, slots=True)
class RecordHeader:
    length: int
    domain: int
    record: int
    tod: int

    @property
    def unix_us(self) -> int:
        return tod_to_unix_us(self.tod)

    @property
    def key(self) -> tuple[int, int]:
        return (self.domain, self.record)


def parse_header(data: bytes | bytearray | memoryview, offset: int = 0) -> RecordHeader:
    """The header at ``offset``; ``struct.error`` if fewer than 20 bytes remain."""
    length, _zero, domain, record, tod = _HEADER.unpack_from(data, offset)
    return RecordHeader(length, domain, record, tod)


def unpack_header(
    data: bytes | bytearray | memoryview, offset: int = 0
) -> tuple[int, int, int, int, int]:
    """``(length, zero, domain, record, tod)`` without building an object (the hot path)."""
    return _HEADER.unpack_from(data, offset)


def pack_header(length: int, domain: int, record: int, tod: int) -> bytes:
    return _HEADER.pack(length, 0, domain, record, tod)
