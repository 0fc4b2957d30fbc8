"""esatui's own cost (ESAOVHD): the recorder measures itself with these kinds and meters.

CPU comes from the kernel's CPU clocks (``CLOCK_PROCESS_CPUTIME_ID`` for the process,
``CLOCK_THREAD_CPUTIME_ID`` around each source's calls), which count in nanoseconds: short
work is seen. ``getrusage`` is not used: it counts in ticks and misses short work (seed 000's
"Linux CPU Time Measurements"; here it read 0.00 ms for a 0.4 ms pass). The clocks run while a
thread is on a CPU even when the hypervisor has taken that CPU away (seed 000: they include
steal), so they say what esatui *wanted*; the recorder keeps what it *used*: the clock less
the share of it this Linux's CPUs spent stolen over the same span (:class:`StealShare`, from
the ``cpu`` line of ``/proc/stat``), and records the part taken off as ``steal_us``.

Bytes written are the store's own writes (database and WAL pages, checkpoints): the writing
thread's write count (``wchar`` of ``/proc/thread-self/io``) around each store call, so
terminal output and other files the process writes (a simulator's, say) are not in it.

Memory is the process's resident set (``/proc/self/statm``'s second field, in pages) at each
pass: what esatui holds of the machine's memory. psutil reads the same file, but importing
it costs about 29 ms of the recorder's start-up and a read 10.6 µs against 1.6 µs from a kept
descriptor (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from esatui.collectors.model import Kind, counter, gauge
from esatui.collectors.sysfsio import AttrReader, WholeFile

_THREAD_IO = "/proc/thread-self/io"

SELF = Kind(
    name="esatui",
    doc="the esatui process that records",
    fields=(
        counter(
            "cpu_us",
            "us",
            "CPU used: process CPU clock (CLOCK_PROCESS_CPUTIME_ID, ns) less its stolen share",
        ),
        counter("steal_us", "us", "the part of the process CPU clock taken off as stolen"),
        counter("samples", "count", "samples taken, high-frequency ones included"),
        counter("reads", "count", "files and records read by the collectors"),
        counter(
            "store_bytes",
            "bytes",
            "bytes the store wrote (database, WAL, checkpoints): the writing thread's wchar",
        ),
        gauge("collect_ms", "ms", "elapsed time of one sampling pass over all sources"),
        gauge("rss_bytes", "bytes", "resident memory of the process (/proc/self/statm)"),
    ),
)

COLLECTOR = Kind(
    name="collector",
    doc="one source, as run by the recorder",
    fields=(
        counter(
            "cpu_us",
            "us",
            "CPU used in the source's sample calls: thread CPU clock (ns) less its stolen share",
        ),
        counter("samples", "count", "samples taken"),
        counter("reads", "count", "files and records read"),
        gauge("collect_ms", "ms", "elapsed time of one sample"),
    ),
)


def process_cpu_ns() -> int:
    """This process's CPU clock (all threads; includes time stolen while running)."""
    return time.process_time_ns()


def thread_cpu_ns() -> int:
    """The calling thread's CPU clock (includes time stolen while running)."""
    return time.thread_time_ns()


# /proc/stat's cpu line: user nice system idle iowait irq softirq steal [guest guest_nice]
_BUSY = (0, 1, 2, 5, 6)  # user, nice, system, irq, softirq (guest time is inside user)
_STEAL = 7
_SAME_PASS_NS = 100_000_000  # a read this recent by another reader is of the same pass


class StealShare:
    """The share of running time the hypervisor took from this Linux's CPUs, between two
    calls of :meth:`used_fraction`: Δbusy / (Δbusy + Δsteal) over all CPUs of ``/proc/stat``.

    A thread's CPU clock runs on while its CPU is stolen; scaled by this fraction it says what
    was used. The share is the machine's over the span, not the thread's own (Linux does not
    account steal per thread): exact when steal falls evenly on the CPUs esatui ran on.
    """

    def __init__(self, path: Path = Path("/proc/stat")) -> None:
        # kept open, and shared with the host source: its read of the same pass serves
        self._file = WholeFile.shared(str(path))
        self._seen = 0
        self._last = self._read()

    def _read(self) -> tuple[int, int] | None:
        try:
            self._seen, data = self._file.recent(_SAME_PASS_NS, self._seen)
        except OSError:
            return None
        line = data.split(b"\n", 1)[0].split()
        if len(line) <= _STEAL or line[0] != b"cpu":
            return None
        try:
            fields = [int(x) for x in line[1:]]
        except ValueError:
            return None
        return sum(fields[i] for i in _BUSY), fields[_STEAL]

    def close(self) -> None:
        self._file.close()

    def used_fraction(self) -> float:
        """Of the CPU clocks' time since the last call, the share that was not stolen (1.0
        when nothing was stolen, or when ``/proc/stat`` cannot say)."""
        now = self._read()
        last, self._last = self._last, now
        if now is None or last is None:
            return 1.0
        busy, steal = now[0] - last[0], now[1] - last[1]
        if busy <= 0 or steal <= 0:
            return 1.0
        return busy / (busy + steal)


T = TypeVar("T")


class ResidentMemory:
    """The process's resident memory in bytes, from ``/proc/self/statm`` kept open (``None``
    where the kernel has no such file)."""

    def __init__(self, path: str = "/proc/self/statm") -> None:
        self._file = WholeFile(path)
        self._page = os.sysconf("SC_PAGE_SIZE")

    def bytes(self) -> int | None:
        try:
            pages = self._file.read().split(maxsplit=2)[1]
            return int(pages) * self._page
        except (OSError, IndexError, ValueError):
            return None

    def close(self) -> None:
        self._file.close()


class StoreWrites:
    """Bytes the store writes, counted around each store call by the calling thread's
    ``wchar`` (``/proc/thread-self/io``, kept open per thread and re-read with ``pread``),
    or by the database and WAL files' growth where the kernel does not offer per-thread I/O
    counts."""

    def __init__(self, files: Callable[[], list[Path]]) -> None:
        self._files = files
        self._local = threading.local()
        self._readers: list[AttrReader] = []
        self._lock = threading.Lock()
        self.total = 0
        self.per_thread = self._wchar() is not None

    def _wchar(self) -> int | None:
        reader: AttrReader | None = getattr(self._local, "reader", None)
        if reader is None:
            reader = self._local.reader = AttrReader(budget=1)
            reader.pin(_THREAD_IO)  # this thread's: the link is resolved when opened
            with self._lock:
                self._readers.append(reader)
        data = reader.read(_THREAD_IO)
        if data is None:
            return None
        at = data.find(b"wchar:")
        if at < 0:
            return None
        try:
            return int(data[at + 6 : data.index(b"\n", at)])
        except ValueError:
            return None

    def _size(self) -> int:
        total = 0
        for path in self._files():
            with contextlib.suppress(OSError):
                total += path.stat().st_size
        return total

    def count(self, write: Callable[[], T]) -> T:
        """``write()``, adding what it wrote to :attr:`total`."""
        measure = self._wchar if self.per_thread else self._size
        before = measure()
        try:
            return write()
        finally:
            after = measure()
            if before is not None and after is not None and after > before:
                self.total += after - before

    def close(self) -> None:
        """Close the threads' kept files."""
        with self._lock:
            for reader in self._readers:
                reader.close()
            self._readers.clear()
