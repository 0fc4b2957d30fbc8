"""Writing a report file (``export --output``) safely in a directory others may write to.

A regular file (or a new name) gets the text through a temporary file made in the target's
directory with a unique name, exclusively (``mkstemp``: ``O_CREAT | O_EXCL``, so a link
planted there is never followed), then renamed over the target: a reader never sees half a
report. A target that exists keeps its mode; a new one gets the usual mode less the umask.

A device or a pipe (``/dev/null``, ``/dev/stdout``, a FIFO another program reads) is written
into, as a shell's ``>`` does: renaming a file over it would destroy it. A symbolic link is
followed too, unless another user could have planted it: in a sticky directory that anyone
may write to (``/tmp``), a link owned by neither this user nor the directory's owner (the
rule of the kernel's ``fs.protected_symlinks``) is replaced, never followed, so it cannot
redirect the report.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from esatui.commands.common import SignalScope


class OutputError(Exception):
    """The report cannot be written there, in one line."""


def write_report(path: Path, text: str) -> None:
    write_report_with(path, lambda out: out.write(text))


def write_report_with(path: Path, write: Callable[[TextIO], object]) -> None:
    """The report ``write`` writes to a text stream (an export streamed a chunk at a time)."""
    try:
        _write_report_with(path, write)
    except BrokenPipeError:
        raise
    except OSError as exc:  # looking at the name failed: "[Errno 36] File name too long: ..."
        raise OutputError(_cannot_write(path, exc)) from None


def _cannot_write(path: Path, exc: OSError) -> str:
    if exc.errno == errno.ENAMETOOLONG:
        return (
            f"cannot write --output {str(path)[:40]}...: the name is too long "
            f"({len(str(path))} characters; a file name is at most 255 bytes)"
        )
    return f"cannot write {path}: {exc.strerror or exc}"


def _write_report_with(path: Path, write: Callable[[TextIO], object]) -> None:
    if not path.name or path.is_dir():
        raise OutputError(f"cannot write {path}: it is a directory; give a file name")
    if _may_follow_at(path):
        try:
            found = path.stat()  # what a link names
        except OSError:
            found = None  # a new name, or a link to one
        if found is not None and not stat.S_ISREG(found.st_mode):
            _write_into(path, write)
            return
        if path.is_symlink():
            path = Path(os.path.realpath(path))  # the file it names is replaced, the link kept
    _refuse_database(path)
    _replace(path, write)


SQLITE_MAGIC = b"SQLite format 3\0"  # the first 16 bytes of every SQLite database


def _refuse_database(path: Path) -> None:
    """A report never replaces an SQLite database (a recording, most likely: ``--output``
    given where ``--db`` was meant); the user removes it first if that is what is wanted."""
    try:
        with path.open("rb") as f:
            start = f.read(len(SQLITE_MAGIC))
    except OSError:
        return  # a new name, or one that cannot be read: replacing it says what is wrong
    if start == SQLITE_MAGIC:
        raise OutputError(
            f"--output {path} is an SQLite database: a report does not replace it; "
            "give another file name (or remove it first)"
        )


def may_follow(link: os.stat_result, directory: os.stat_result, uid: int) -> bool:
    """Whether user ``uid`` may follow a symbolic link (``link``: its ``lstat``) in
    ``directory``: not a stranger's where anyone may write (where it could be planted)."""
    shared = bool(directory.st_mode & stat.S_ISVTX and directory.st_mode & stat.S_IWOTH)
    return not shared or link.st_uid in (uid, directory.st_uid)


def _may_follow_at(path: Path) -> bool:
    """Whether what is at ``path`` may be written through (anything but a planted link)."""
    try:
        found = path.lstat()
    except OSError:
        return True  # nothing there yet
    if not stat.S_ISLNK(found.st_mode):
        return True
    return may_follow(found, path.parent.stat(), os.geteuid())


def _write_into(path: Path, write: Callable[[TextIO], object]) -> None:
    """A device or a pipe: written into as it is (the kernel follows a /proc/self/fd link)."""
    try:
        with path.open("w", encoding="utf-8") as out:
            write(out)
    except BrokenPipeError:
        raise  # its reader went away: as on standard output, nothing more to say
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None


def _replace(path: Path, write: Callable[[TextIO], object]) -> None:
    """A regular file, or a new one: written whole under a temporary name, then renamed."""
    directory = path.parent
    if not directory.is_dir():
        raise OutputError(f"cannot write {path}: directory {directory} does not exist")
    mode = _mode_for(path)
    # a kill or a closed terminal (SIGTERM, SIGHUP) would end the process as it stands,
    # leaving the half-written temporary file beside the target: they unwind as ^C does
    from esatui.commands.common import Interrupted, raise_on_signals

    try:
        with raise_on_signals() as signals:
            _write_renamed(path, write, mode, signals)
    except Interrupted as stopped:
        raise OutputError(f"{path} not written: {stopped}") from None


def _write_renamed(
    path: Path, write: Callable[[TextIO], object], mode: int, signals: SignalScope
) -> None:
    directory = path.parent
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".esatui-tmp", dir=directory)
    except OSError as exc:
        # /proc says ENOENT: no file can be made there, whatever the name
        raise OutputError(
            f"cannot write {path}: no new file can be made in {directory} "
            f"({exc.strerror or exc}); give a file in another directory"
        ) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            os.fchmod(out.fileno(), mode)
            write(out)
        signals.hold()  # written whole: the rename is done whatever comes now
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
