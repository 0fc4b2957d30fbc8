"""Cheap repeated reads of small sysfs attribute files.

Opening a sysfs file costs more than reading it: a path walk, a kernfs open and a seq_file.
A monitor that reads the same few hundred attributes every two seconds keeps their
descriptors open and re-reads them with ``pread(fd, n, 0)``, which makes the kernel run the
attribute's show function again. The number of descriptors kept is bounded (the process's
open-file limit is shared with everything else); files beyond the budget are opened, read
and closed each time, which gives the same values, only slower.

A kept descriptor of an attribute that disappeared (device removed or re-created, driver
unbound) reads ``ENODEV``: it is closed and the path is opened afresh once; if that fails
too the file counts as absent. An empty read from a kept descriptor is treated the same way
(that is what an unlinked regular file in a fixture tree looks like once its writer
truncated it), and the file is read afresh: nearly every sysfs attribute prints at least a
newline (the AP bus's ``features`` can print nothing, and then costs an open and a read).
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import threading
import time
from collections.abc import Sequence

_GONE = frozenset({errno.ENOENT, errno.ENODEV, errno.ENXIO, errno.ESTALE})
_READ_SIZE = 4096
_FLAGS = os.O_RDONLY | os.O_CLOEXEC


class _Descriptors(list[int | str | None]):
    """A read plan of kept descriptors alone (as :meth:`AttrReader.plan` found it)."""


def default_fd_budget() -> int:
    """Half of the soft open-file limit, less a reserve for everything else."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 65536
    return max(0, soft // 2 - 64)


class AttrReader:
    """Reads attribute files by absolute path; keeps up to ``budget`` descriptors open."""

    def __init__(self, budget: int | None = None) -> None:
        self.budget = default_fd_budget() if budget is None else max(0, budget)
        self._fds: dict[str, int] = {}
        self.reads = 0
        self.reopened: set[str] = set()  # kept files that had to be opened afresh
        self.errors: dict[str, str] = {}  # path -> last error other than "gone"

    @property
    def kept(self) -> int:
        return len(self._fds)

    def pin(self, path: str) -> bool:
        """Keep ``path`` open from now on if the budget allows; ``False`` otherwise."""
        if path in self._fds:
            return True
        if len(self._fds) >= self.budget:
            return False
        try:
            fd = os.open(path, _FLAGS)
        except OSError:
            return False
        self._fds[path] = fd
        return True

    def read(self, path: str) -> bytes | None:
        """The file's content, or ``None`` when it does not exist (any more) or fails."""
        self.reads += 1
        fd = self._fds.get(path)
        if fd is not None:
            try:
                data = os.pread(fd, _READ_SIZE, 0)
            except OSError:
                return self._reopen(path)
            return data if data else self._reopen(path)
        return self._read_once(path)

    def read_all(self, paths: Sequence[str]) -> list[bytes | None]:
        """:meth:`read` for several files (the hot loop: no per-file method call)."""
        self.reads += len(paths)
        fds = self._fds
        pread = os.pread
        out: list[bytes | None] = []
        append = out.append
        for path in paths:
            fd = fds.get(path)
            if fd is not None:
                try:
                    data = pread(fd, _READ_SIZE, 0)
                except OSError:
                    append(self._reopen(path))
                    continue
                append(data if data else self._reopen(path))
                continue
            append(self._read_once(path))
        return out

    def plan(self, paths: Sequence[str]) -> list[int | str | None]:
        """A read plan for :meth:`read_plan`: the kept descriptor of each path (kept now if
        the budget allows), else the path (opened at each read), else ``None`` when the file
        does not exist now."""
        out: list[int | str | None] = []
        for path in paths:
            fd = self._fds.get(path)
            if fd is None and self.pin(path):  # reappeared, and the budget allows
                fd = self._fds[path]
            if fd is not None:
                out.append(fd)
            elif os.path.exists(path):  # noqa: PTH110 - str paths on purpose
                out.append(path)
            else:
                out.append(None)
        if all(type(item) is int for item in out):
            return _Descriptors(out)  # read_plan need not look at each item again
        return out

    def read_plan(
        self, plan: Sequence[int | str | None], size: int = _READ_SIZE
    ) -> list[bytes | None] | None:
        """Every file of a plan, fast (at most ``size`` bytes of each kept one); ``None``
        when a kept file failed or read empty (it went away or was replaced): then read
        with :meth:`read_all`, which recovers."""
        pread = os.pread
        try:
            if type(plan) is _Descriptors or (
                plan and type(plan[0]) is int and all(type(item) is int for item in plan)
            ):
                data: list[bytes | None] = [pread(fd, size, 0) for fd in plan]  # type: ignore[arg-type]
            else:
                data = []
                for item in plan:
                    if type(item) is int:
                        data.append(pread(item, size, 0))
                    elif item is None:
                        data.append(None)
                    else:
                        data.append(self._read_once(str(item)))
        except OSError:
            return None
        if b"" in data:
            return None
        self.reads += len(data)
        return data

    def forget(self, prefix: str) -> None:
        """Close the kept descriptors of files below ``prefix`` (a device went away)."""
        for path in [p for p in self._fds if p.startswith(prefix)]:
            self._drop(path)

    def close(self) -> None:
        for path in list(self._fds):
            self._drop(path)

    def _reopen(self, path: str) -> bytes | None:
        self._drop(path)
        try:
            fd = os.open(path, _FLAGS)
        except OSError as exc:
            self._note(path, exc)
            return None
        try:
            data = os.pread(fd, _READ_SIZE, 0)
        except OSError as exc:
            os.close(fd)
            self._note(path, exc)
            return None
        self._fds[path] = fd
        self.reopened.add(path)
        return data

    def _read_once(self, path: str) -> bytes | None:
        try:
            fd = os.open(path, _FLAGS)
        except OSError as exc:
            self._note(path, exc)
            return None
        try:
            return os.read(fd, _READ_SIZE)
        except OSError as exc:
            self._note(path, exc)
            return None
        finally:
            os.close(fd)

    def _drop(self, path: str) -> None:
        fd = self._fds.pop(path, None)
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def _note(self, path: str, exc: OSError) -> None:
        if exc.errno not in _GONE:
            self.errors[path] = f"{exc.strerror or exc}"


class WholeFile:
    """One file re-read whole from a kept descriptor (``pread`` at offset 0, which makes a
    procfs file such as ``/proc/stat`` show itself afresh): no path walk, no open and no
    text layer per read. The buffer doubles until one read holds the whole file (a procfs
    file's size grows with the machine's CPUs). A descriptor that fails or reads empty (the
    file went away or was rewritten under it) is opened afresh once. A file replaced by a
    rename goes on being read from the one kept: the test trees' writers rewrite in place,
    as the kernel's files change.

    :meth:`shared` gives every reader of a path in the process the same one, so a reader
    that can do with a read made a moment ago by another (:meth:`recent`) saves the kernel
    rendering the file again: the recorder's steal share takes the host source's
    ``/proc/stat`` of the same pass. Reads are numbered, so no reader is given back its own
    read as if it were new."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd: int | None = None
        self._size = _READ_SIZE
        self._lock = threading.Lock()  # a shared one is read from several threads
        self._count = 0  # reads made
        self._last: tuple[int, bytes] = (0, b"")  # the newest read's monotonic ns and data
        self._users = 0  # of a shared one

    @classmethod
    def shared(cls, path: str) -> WholeFile:
        """The process's one of ``path``; each caller gives it back with :meth:`close`."""
        with _SHARED_LOCK:
            found = _SHARED.get(path)
            if found is None:
                found = _SHARED[path] = cls(path)
            found._users += 1
            return found

    def read(self) -> bytes:
        """The whole file; raises ``OSError`` when it cannot be opened or read."""
        with self._lock:
            return self._read()

    def recent(self, max_age_ns: int, seen: int) -> tuple[int, bytes]:
        """The newest read if it is at most ``max_age_ns`` old and later than read number
        ``seen`` (the caller's last), else a new read; with its number."""
        with self._lock:
            at, data = self._last
            if self._count > seen and time.monotonic_ns() - at <= max_age_ns:
                return self._count, data
            return self._count + 1, self._read()

    def _read(self) -> bytes:
        fd = self._fd
        data = b""
        if fd is not None:
            with contextlib.suppress(OSError):
                data = os.pread(fd, self._size, 0)
            if not data:
                self._close()
        if not data:
            fd = self._fd = os.open(self.path, _FLAGS)
            data = os.pread(fd, self._size, 0)
        assert fd is not None
        while len(data) >= self._size:
            self._size *= 2
            data = os.pread(fd, self._size, 0)
        self._count += 1
        self._last = (time.monotonic_ns(), data)
        return data

    def close(self) -> None:
        """Close the descriptor; a shared one once its last caller gave it back."""
        with _SHARED_LOCK:
            if self._users:
                self._users -= 1
                if self._users:
                    return
                if _SHARED.get(self.path) is self:
                    del _SHARED[self.path]
        with self._lock:
            self._close()

    def _close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


_SHARED: dict[str, WholeFile] = {}
_SHARED_LOCK = threading.Lock()


# str-path helpers for hot loops: no Path objects per call (hence the PTH exemptions)


def list_names(path: str) -> list[str] | None:
    """The names in directory ``path``; ``None`` when it cannot be listed."""
    try:
        return os.listdir(path)  # noqa: PTH208
    except OSError:
        return None


def inode(path: str) -> int | None:
    """The inode number of ``path`` (a re-created sysfs device gets a new one)."""
    try:
        return os.stat(path).st_ino  # noqa: PTH116
    except OSError:
        return None


def is_dir(path: str) -> bool:
    return os.path.isdir(path)  # noqa: PTH112
