"""Walking the records of a span of the monitor saved segment.

A span (the bytes from a control element's start address to its end address) holds records
back to back. A record never crosses a 4 KiB frame: a D1R13 record, or a frame tail too short
for a header, or zeros where a header would be, ends the frame's data early and the next
record starts at the next frame boundary. Frames are counted from absolute addresses, so the
span's start address is needed (it is not always frame-aligned).

Every record is bounded by its own length. A header that cannot be right (length below 20,
non-zero reserved half-word, a record that would cross its frame or the span) damages only
the rest of its frame: the walker reports it and resumes at the next frame.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from esatui.collectors.monitor.header import (
    DOMAIN_MONITOR,
    FRAME,
    HEADER_LEN,
    REC_END_OF_FRAME,
)

_HDR = struct.Struct(">HHBxHQ")

Buffer = bytes | bytearray | memoryview


@dataclass(slots=True)
class WalkStats:
    records: int = 0  # records yielded (end-of-frame records not counted)
    damaged: int = 0  # frames (or span tails) abandoned because a header was impossible


def walk(
    buf: Buffer,
    base: int,
    stats: WalkStats | None = None,
    damaged: Callable[[str], None] | None = None,
) -> Iterator[tuple[int, int, int, int, int]]:
    """``(offset, length, domain, record, tod)`` for each record of ``buf``.

    ``base`` is the absolute address of ``buf[0]``. D1R13 records are consumed here.
    """
    n = len(buf)
    pos = 0
    unpack = _HDR.unpack_from
    while pos < n:
        frame_end = pos + FRAME - (base + pos) % FRAME
        if frame_end - pos < HEADER_LEN or n - pos < HEADER_LEN:
            tail = bytes(buf[pos : min(frame_end, n)])
            if frame_end >= n and tail.strip(b"\x00"):
                _report(stats, damaged, f"{len(tail)} stray bytes at the end of a span")
            pos = frame_end
            continue
        length, zero, domain, record, tod = unpack(buf, pos)
        end = pos + length
        if length < HEADER_LEN or zero != 0 or end > frame_end or end > n:
            if length or zero or domain or record or tod:
                _report(
                    stats,
                    damaged,
                    f"impossible record header at address {base + pos:#x} "
                    f"(length {length}, domain {domain}, record {record}); "
                    "rest of its frame skipped",
                )
            pos = frame_end
            continue
        if domain == DOMAIN_MONITOR and record == REC_END_OF_FRAME:
            pos = frame_end
            continue
        if stats is not None:
            stats.records += 1
        yield pos, length, domain, record, tod
        pos = end


def _report(stats: WalkStats | None, damaged: Callable[[str], None] | None, msg: str) -> None:
    if stats is not None:
        stats.damaged += 1
    if damaged is not None:
        damaged(msg)
