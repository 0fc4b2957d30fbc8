"""The ``/dev/monreader`` byte stream, without any I/O.

A *set* is what the reads between two 0-byte reads returned: one or more control elements,
each followed by its records (``end - start + 1`` bytes). A set is valid only once its closing
0-byte read has come. Errors (as the kernel's ``monreader`` documents them):

- ``EOVERFLOW``: the message limit was reached; what was read since the last 0-byte read is
  valid, but records after it may be missing (a gap);
- ``EIO``, ``EFAULT``: what was read since the last 0-byte read is invalid: discard it (a gap);
- ``EAGAIN``, ``EINTR``: nothing lost, read again.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from dataclasses import dataclass

from esatui.collectors.monitor.mce import MCE_LEN, ControlElement, parse_mce

RETRY_ERRNOS = frozenset({errno.EAGAIN, errno.EINTR})
DISCARD_ERRNOS = frozenset({errno.EIO, errno.EFAULT})


@dataclass(frozen=True, slots=True)
class SetEvent:
    """A complete set (``data``), and/or why data was lost before it (``gap``)."""

    data: bytes | None
    gap: str | None = None


class SetAssembler:
    """Chunks and errors in, complete sets out. Reads may be split at any byte."""

    def __init__(self, max_set: int = 1 << 30) -> None:
        self._buf = bytearray()
        self._max = max_set
        self._overlong = False

    def chunk(self, data: bytes) -> SetEvent | None:
        """The result of one successful read (``b""`` for a 0-byte read)."""
        if data:
            if len(self._buf) + len(data) > self._max:
                self._buf.clear()
                self._overlong = True
            else:
                self._buf += data
            return None
        if self._overlong:
            self._overlong = False
            self._buf.clear()
            return SetEvent(None, "a monitor data set exceeded the size limit and was discarded")
        if not self._buf:
            return None
        out = bytes(self._buf)
        self._buf.clear()
        return SetEvent(out)

    def error(self, err: int) -> SetEvent | None:
        """A read that failed with ``err``."""
        if err in RETRY_ERRNOS:
            return None
        if err == errno.EOVERFLOW:
            data = bytes(self._buf) if self._buf and not self._overlong else None
            self._buf.clear()
            self._overlong = False
            return SetEvent(
                data, "monitor message limit reached (EOVERFLOW): records may be missing"
            )
        self._buf.clear()
        self._overlong = False
        name = errno.errorcode.get(err, str(err))
        return SetEvent(None, f"monitor read failed ({name}): the data set under way was discarded")


def split_set(data: bytes | memoryview) -> Iterator[tuple[ControlElement, memoryview] | str]:
    """The (element, records) pairs of a set; a string says why the rest was unusable."""
    view = memoryview(data)
    pos = 0
    n = len(view)
    while pos < n:
        if n - pos < MCE_LEN:
            yield f"{n - pos} bytes after the last records are not a control element"
            return
        mce = parse_mce(view, pos)
        problem = mce.problem()
        if problem is not None:
            yield f"control element at byte {pos} of the set unusable ({problem})"
            return
        pos += MCE_LEN
        if pos + mce.size > n:
            yield f"control element announces {mce.size} bytes, only {n - pos} follow"
            return
        yield mce, view[pos : pos + mce.size]
        pos += mce.size
