"""DIAGNOSE X'2FC' guest performance records (112 bytes each, big-endian).

The same records reach Linux two ways: the hypfs debugfs file ``diag_2fc`` (z/VM mode) and
the SMAPI function ``Image_Performance_Query``. Layout as in the kernel's ``hypfs_vm.c``
(``struct diag2fc_data``): CPU and elapsed time in microseconds, memory in KiB, sample
counts from CP's high-frequency state sampling, the guest name in EBCDIC.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import astuple, dataclass, fields
from typing import Any

RECORD_LEN = 112
_LAYOUT = struct.Struct(">II QQ QQQQ II II II II II II 8s")
assert _LAYOUT.size == RECORD_LEN


@dataclass(frozen=True, slots=True)
class Diag2fcRecord:
    version: int
    flags: int
    used_cpu_us: int
    elapsed_us: int
    mem_min_kib: int
    mem_max_kib: int
    mem_share_kib: int
    mem_used_kib: int
    pcpus: int
    lcpus: int
    vcpus: int
    ocpus: int  # cpu_min on old kernels' headers; unused by esatui
    cpu_max: int
    cpu_shares: int
    samp_cpu: int
    samp_delay: int
    samp_page: int
    samp_idle: int
    samp_other: int
    samp_total: int
    guest: str


_NUMBERS = tuple(f.name for f in fields(Diag2fcRecord))[:-1]


def decode_name(raw: bytes) -> str:
    """A z/VM userid: EBCDIC (code page 037), blank-padded."""
    return raw.decode("cp037", errors="replace").rstrip(" \x00")


def parse_record(data: bytes, offset: int = 0) -> Diag2fcRecord:
    """One record at ``offset``; ``struct.error`` if fewer than 112 bytes remain."""
    *numbers, raw_name = _LAYOUT.unpack_from(data, offset)
    values: dict[str, Any] = dict(zip(_NUMBERS, numbers, strict=True))
    return Diag2fcRecord(**values, guest=decode_name(raw_name))


def iter_records(data: bytes, count: int | None = None) -> Iterator[Diag2fcRecord]:
    """Consecutive records; a trailing partial record is ignored."""
    n = len(data) // RECORD_LEN if count is None else min(count, len(data) // RECORD_LEN)
    for i in range(n):
        yield parse_record(data, i * RECORD_LEN)


def encode_record(rec: Diag2fcRecord) -> bytes:
    """The inverse of :func:`parse_record` (for fixtures and the simulated system)."""
    *numbers, guest = astuple(rec)
    return _LAYOUT.pack(*numbers, guest.upper().ljust(8)[:8].encode("cp037"))
