"""``monreader[:DEVICE]``: live z/VM monitor records from the Linux monreader device.

The device is read in a thread of its own (the device accepts monitor messages only as fast
as they are read, and a reader that falls behind makes z/VM drop data); complete sets go
through a queue to :meth:`MonreaderSource.samples`, which yields a sample at the end of every
monitor sample interval.
"""

from __future__ import annotations

import contextlib
import errno
import os
import queue
import select
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

from esatui.collectors.base import SourceContext, SourceError
from esatui.collectors.kinds import LCPU
from esatui.collectors.model import Availability, Kind, Sample
from esatui.collectors.monitor.assemble import IntervalAssembler
from esatui.collectors.monitor.frames import WalkStats
from esatui.collectors.monitor.kinds import (
    CFG_SOURCE,
    CRYPTO,
    CRYPTO_AP,
    PAGING,
    SPIN_CPU,
    SPIN_LOCK,
)
from esatui.collectors.monitor.layout import LayoutTable
from esatui.collectors.monitor.layoutfile import builtin_layouts
from esatui.collectors.monitor.pipeline import feed_span
from esatui.collectors.monitor.stream import SetAssembler, SetEvent, split_set
from esatui.collectors.sysinfo import parse_sysinfo

DEFAULT_DEVICE = "/dev/monreader"
READ_SIZE = 1 << 16
MAX_SET = 64 << 20  # a data set is at most the monitor saved segment; more is a broken device


class Device(Protocol):
    def read(self, n: int) -> bytes: ...

    def close(self) -> None: ...


class FileDevice:
    """The real character device; reads wake up twice a second so that close() is seen."""

    def __init__(self, path: str) -> None:
        self._fd: int | None = os.open(path, os.O_RDONLY)
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLIN | select.POLLERR)

    def read(self, n: int) -> bytes:
        fd = self._fd
        if fd is None:
            raise OSError(errno.EBADF, "device closed")
        if not self._poll.poll(500):
            raise InterruptedError(errno.EINTR, "no data yet")
        return os.read(fd, n)

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def open_error(path: str, exc: OSError) -> SourceError:
    if exc.errno == errno.EBUSY:
        return SourceError(
            f"{path} is busy: only one reader is allowed at a time, and another program "
            "(another esatui, or a monitor agent) has it open"
        )
    if exc.errno == errno.EIO:
        return SourceError(
            f"{path}: no connection to the *MONITOR service (is IUCV *MONITOR in the "
            "guest's directory entry, and the monitor saved segment loadable?)"
        )
    if exc.errno in (errno.EACCES, errno.EPERM):
        return SourceError(f"{path}: permission denied (reading monitor records needs root)")
    if exc.errno == errno.ENOENT:
        return SourceError(f"{path} does not exist (load the monreader kernel module on z/VM)")
    return SourceError(f"{path}: cannot open: {exc.strerror or exc}")


class _End:
    pass


_END = _End()


class MonreaderSource:
    """A :class:`StreamSource` over the monreader device (or anything that reads like it)."""

    name = "monitor"
    kinds: tuple[Kind, ...] = (CRYPTO, CRYPTO_AP, LCPU, PAGING, SPIN_CPU, SPIN_LOCK)

    def __init__(
        self,
        ctx: SourceContext,
        device: str | None = None,
        layouts: LayoutTable | None = None,
        opener: Callable[[str], Device] | None = None,
    ) -> None:
        self.ctx = ctx
        self.device = device if device else str(ctx.path(DEFAULT_DEVICE))
        self.layouts = layouts if layouts is not None else builtin_layouts()
        self._opener = opener if opener is not None else FileDevice
        self._explicit_opener = opener is not None
        self._stop = threading.Event()
        self._dev: Device | None = None
        self._thread: threading.Thread | None = None
        self.walk_stats = WalkStats()
        self.assembler = IntervalAssembler(
            self.layouts,
            self.name,
            ctx.warn,
            {CFG_SOURCE: "monreader"},
            now_us=ctx.clock.time_us,
        )

    def probe(self) -> Availability:
        if self._explicit_opener:
            return Availability(True, f"monitor records from {self.device}")
        path = Path(self.device)
        try:
            st = path.stat()
        except FileNotFoundError:
            return Availability(
                False, f"{self.device} not present (needs Linux on z/VM with the monreader module)"
            )
        except OSError as exc:
            return Availability(False, f"{self.device}: {exc.strerror or exc}")
        if not stat.S_ISCHR(st.st_mode):
            return Availability(False, f"{self.device} is not a character device")
        if not os.access(path, os.R_OK):
            return Availability(False, f"{self.device} is not readable (needs root)")
        return Availability(True, f"monitor records from {self.device}")

    def samples(self) -> Iterator[Sample]:
        if not self._explicit_opener:
            with contextlib.suppress(OSError):
                if not stat.S_ISCHR(Path(self.device).stat().st_mode):
                    raise SourceError(
                        f"{self.device} is not a character device "
                        "(a MONWRITE file is read with --source monwrite:FILE)"
                    )
        try:
            dev = self._opener(self.device)
        except OSError as exc:
            raise open_error(self.device, exc) from None
        self._dev = dev
        self.assembler.thread_bits = self._thread_bits()
        q: queue.Queue[SetEvent | _End | SourceError] = queue.Queue(maxsize=4096)
        self._thread = threading.Thread(
            target=self._read_loop, args=(dev, q), name="esatui-monreader", daemon=True
        )
        self._thread.start()
        asm = self.assembler
        try:
            while True:
                try:
                    item = q.get(timeout=0.2)
                except queue.Empty:
                    if self._stop.is_set():  # closed while the device had nothing to say
                        return
                    continue
                if isinstance(item, _End):
                    break
                if isinstance(item, SourceError):
                    raise item
                if item.data:
                    yield from self.parse_set(item.data)
                if item.gap:  # data after this set may be missing
                    asm.mark_gap(item.gap)
            last = asm.finish()
            if last is not None:
                yield last
        finally:
            self.close()

    def _thread_bits(self) -> int:
        """The thread ID's bits of CPU addresses in this partition, the one whose monitor
        data the device delivers (/proc/sysinfo's MTIDs; 0 when it cannot be read)."""
        try:
            text = self.ctx.path("/proc/sysinfo").read_text(errors="replace")
        except OSError:
            return 0
        return parse_sysinfo(text).thread_id_bits

    def parse_set(self, data: bytes) -> Iterator[Sample]:
        """The samples a complete set finishes (also used by tests without a thread)."""
        asm = self.assembler
        for part in split_set(data):
            if isinstance(part, str):
                asm.mark_gap(f"damaged monitor data set: {part}")
                return
            mce, span = part
            yield from feed_span(asm, mce, span, self.walk_stats)

    def _read_loop(self, dev: Device, q: queue.Queue[SetEvent | _End | SourceError]) -> None:
        sets = SetAssembler(MAX_SET)
        try:
            while not self._stop.is_set():
                try:
                    chunk = dev.read(READ_SIZE)
                except EOFError:
                    break
                except OSError as exc:
                    if self._stop.is_set():
                        break
                    err = exc.errno if exc.errno is not None else errno.EIO
                    if err == errno.EBADF:
                        break
                    ev = sets.error(err)
                else:
                    ev = sets.chunk(chunk)
                if ev is not None:
                    self._put(q, ev)
        except Exception as exc:  # noqa: BLE001 - never let the reader thread die silently
            self._put(q, SourceError(f"{self.device}: reading failed: {exc}"))
        finally:
            self._put(q, _END)

    def _put(
        self, q: queue.Queue[SetEvent | _End | SourceError], item: SetEvent | _End | SourceError
    ) -> None:
        """Wait for room in the queue, unless the source is being closed."""
        while True:
            try:
                q.put(item, timeout=0.5)
            except queue.Full:
                if self._stop.is_set():
                    return
            else:
                return

    def close(self) -> None:
        self._stop.set()
        dev, self._dev = self._dev, None
        if dev is not None:
            with contextlib.suppress(OSError):
                dev.close()
