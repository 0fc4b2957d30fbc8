"""A small input file (a cost table, a layout table), read whole: a regular file of at most
a bounded size. A device (``/dev/zero``) or a FIFO would be read forever, or hang, and a
huge file filled memory."""

from __future__ import annotations

import os
import stat
from pathlib import Path

KIB = 1024
# What is not a regular file, by name, for the one-line refusals (``--db`` says them too).
KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class SmallFileError(ValueError):
    """Not a regular file, or larger than asked: what it is, to follow its name."""


def kind_of(mode: int) -> str:
    """What a file of ``mode`` that is not regular is, as a phrase ("a directory")."""
    return next((name for test, name in KINDS if test(mode)), "no regular file")


def read_small(path: Path, limit: int) -> bytes:
    """The bytes of ``path``: :class:`SmallFileError` when it is no regular file or holds
    more than ``limit`` bytes; ``OSError`` when it cannot be opened."""
    # O_NONBLOCK: opening a FIFO without a writer would wait for one
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise SmallFileError(f"is {kind_of(mode)}, not a file")
        data = b""
        while len(data) <= limit:
            more = os.read(fd, limit + 1 - len(data))
            if not more:
                break
            data += more
    finally:
        os.close(fd)
    if len(data) > limit:
        raise SmallFileError(too_large(limit))
    return data


def check_small(path: Path, limit: int) -> None:
    """:class:`SmallFileError` when ``path`` is there and is no regular file or is larger
    than ``limit`` bytes (one that is not there, or cannot be looked at, is left to the
    reader to say)."""
    try:
        found = path.stat()  # a FIFO is not opened: that would wait for a writer
    except OSError:
        return
    if not stat.S_ISREG(found.st_mode):
        raise SmallFileError(f"is {kind_of(found.st_mode)}, not a file")
    if found.st_size > limit:
        raise SmallFileError(too_large(limit))


def too_large(limit: int) -> str:
    return f"is larger than {limit // KIB:,} KiB, more than such a file holds"
