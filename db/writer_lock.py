"""One writer per database: an OS lock the writing process holds, gone when it dies.

The lock is ``flock`` on a small file next to the database (``<db>-lock``), held as long as
the store is open. The kernel drops it when the process ends, however it ends (``kill -9``
included), so no stale lock is ever left behind; the file itself stays (removing it would
race with a writer that just opened it) and holds only who took the lock last, for the
refusal's message. Only a lock file made for a file that turned out to be no usable
database goes again (no writer can use it). It is a separate file because closing any
descriptor of the database file itself would drop the POSIX locks SQLite holds on it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from pathlib import Path

LOCK_SUFFIX = "-lock"
_MAX_INFO = 512


class WriterBusy(Exception):
    """Another process writes this database (the message names it)."""


def lock_path(db: Path) -> Path:
    return db.with_name(db.name + LOCK_SUFFIX)


class WriterLock:
    """Held from :meth:`acquire` until :meth:`release` (or the process's end)."""

    def __init__(self, db: Path, mode: int) -> None:
        self.path = lock_path(db)
        self._mode = mode
        self._fd: int | None = None
        self._made = False  # this lock made the file

    def acquire(self) -> None:
        """Take the lock, or :class:`WriterBusy` naming the process that holds it;
        ``OSError`` when the lock file cannot be opened."""
        flags = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(self.path, flags | os.O_CREAT | os.O_EXCL, self._mode)
            self._made = True
        except FileExistsError:
            fd = os.open(self.path, flags)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_info(fd)
            os.close(fd)
            raise WriterBusy(holder) from None
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        _write_info(fd)

    def release(self, *, unused: bool = False) -> None:
        """Drop the lock; ``unused``: the database turned out unusable, so a lock file this
        lock made goes too (nothing was written, and no writer can use that file anyway)."""
        if self._fd is not None:
            if unused and self._made:
                with contextlib.suppress(OSError):
                    self.path.unlink()
            os.close(self._fd)  # closing drops the flock
            self._fd = None


def _write_info(fd: int) -> None:
    command = " ".join(Path(a).name if i == 0 else a for i, a in enumerate(sys.argv))
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())
    text = f"pid {os.getpid()} on {os.uname().nodename} ({command[:200]}), since {stamp}\n"
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, text.encode(errors="replace"), 0)
    except OSError:
        pass  # the lock is what counts; the note is for messages only


def _read_info(fd: int) -> str:
    try:
        text = os.pread(fd, _MAX_INFO, 0).decode(errors="replace").strip()
    except OSError:
        text = ""
    return " ".join(text.split()) or "another process"
