"""The 12-byte monitor control element (MCE).

Byte 0: type of data (X'E2' EBCDIC "S" sample, X'C5' "E" event); bytes 1-2: the domains
whose records follow (bit X'8000' domain 0 ... ); byte 3 reserved; bytes 4-7: start address of
the records in the monitor saved segment; bytes 8-11: end address (of the last byte).
The same 12-byte entries follow the 40-byte IUCV parameter list in a MONWRITE control block
(IBM's HCPMWTBK: MWTCAFLG, MWTCADMA, MWTCASTR, MWTCAEND).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

MCE_LEN = 12
TYPE_SAMPLE = 0xE2
TYPE_EVENT = 0xC5
KNOWN_TYPES = frozenset({TYPE_SAMPLE, TYPE_EVENT})
MAX_SPAN = 1 << 30  # a monitor saved segment is far smaller; larger spans are damage

_MCE = struct.Struct(">BHxII")
assert _MCE.size == MCE_LEN


@dataclass(frozen=True, slots=True)
class ControlElement:
    type: int
    domains: int
    start: int
    end: int  # address of the last byte

    @property
    def size(self) -> int:
        return self.end - self.start + 1

    @property
    def is_zero(self) -> bool:
        return not (self.type or self.domains or self.start or self.end)

    def problem(self, *, strict_type: bool = False) -> str | None:
        """Why this element cannot describe records, or ``None``."""
        if self.type == 0:
            return "type byte is zero"
        if strict_type and self.type not in KNOWN_TYPES:
            return f"unknown type X'{self.type:02X}'"
        if self.domains == 0:
            return "no domain bits"
        if self.end < self.start:
            return f"end address {self.end:#x} below start {self.start:#x}"
        if self.size > MAX_SPAN:
            return f"span of {self.size} bytes is not plausible"
        return None


def parse_mce(buf: bytes | bytearray | memoryview, offset: int = 0) -> ControlElement:
    t, dom, start, end = _MCE.unpack_from(buf, offset)
    return ControlElement(t, dom, start, end)


def pack_mce(mce: ControlElement) -> bytes:
    return _MCE.pack(mce.type, mce.domains, mce.start, mce.end)
