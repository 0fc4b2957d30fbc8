"""Writing a report file (``export --output``) safely in a directory others may write to.

The text goes to a temporary file made in the target's directory with a unique name,
exclusively (``mkstemp``: ``O_CREAT | O_EXCL``, so a link planted there is never followed),
then renamed over the target. A rename replaces a symbolic link at the target's name instead
of writing through it, so a link another user planted cannot redirect the report. A target
that exists keeps its mode; a new one gets the usual mode less the umask.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TextIO


class OutputError(Exception):
    """The report cannot be written there, in one line."""


def write_report(path: Path, text: str) -> None:
    write_report_with(path, lambda out: out.write(text))


def write_report_with(path: Path, write: Callable[[TextIO], object]) -> None:
    """The report ``write`` writes to a text stream (an export streamed a chunk at a time)."""
    directory = path.parent
    if not path.name or path.is_dir():
        raise OutputError(f"cannot write {path}: it is a directory; give a file name")
    if not directory.is_dir():
        raise OutputError(f"cannot write {path}: directory {directory} does not exist")
    mode = _mode_for(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".esatui-tmp", dir=directory)
    except OSError as exc:
        raise OutputError(f"cannot write in {directory}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w") as out:
            os.fchmod(out.fileno(), mode)
            write(out)
        Path(tmp).replace(path)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            Path(tmp).unlink()


def _mode_for(path: Path) -> int:
    try:
        found = path.lstat()
    except FileNotFoundError:
        found = None
    if found is not None and stat.S_ISREG(found.st_mode):
        return stat.S_IMODE(found.st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
