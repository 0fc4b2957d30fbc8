"""A scripted stand-in for ``/dev/monreader``, for tests and the simulated system.

The script is a sequence of reads: ``bytes`` are data (handed out in pieces no larger than
the caller asks for, or than ``max_read``), ``b""`` is a 0-byte read (the end of a set), an
``int`` is an errno the read fails with. When the script is used up, :meth:`read` raises
``EOFError``, which ends the source (a real device never ends).
"""

from __future__ import annotations

from collections.abc import Iterable


class ScriptedDevice:
    def __init__(self, script: Iterable[bytes | int], max_read: int | None = None) -> None:
        self._script = list(script)
        self._i = 0
        self._pos = 0
        self._max = max_read
        self.closed = False

    def read(self, n: int) -> bytes:
        if self.closed:
            raise OSError(9, "device closed")
        if self._i >= len(self._script):
            raise EOFError
        item = self._script[self._i]
        if isinstance(item, int):
            self._i += 1
            raise OSError(item, "scripted error")
        if not item:
            self._i += 1
            return b""
        take = n if self._max is None else min(n, self._max)
        out = item[self._pos : self._pos + take]
        self._pos += len(out)
        if self._pos >= len(item):
            self._i += 1
            self._pos = 0
        return out

    def close(self) -> None:
        self.closed = True
