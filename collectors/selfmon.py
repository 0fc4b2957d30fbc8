"""esatui's own cost (ESAOVHD): the recorder measures itself with these kinds.

CPU time comes from ``getrusage`` (user + system), not from a clock that includes steal
time; per collector it is the recording thread's own usage around each call.
"""

from __future__ import annotations

import resource

import psutil

from esatui.collectors.model import Kind, counter, gauge

SELF = Kind(
    name="esatui",
    doc="the esatui process that records",
    fields=(
        counter("cpu_us", "us", "process CPU time, user + system (getrusage)"),
        counter("samples", "count", "samples taken, high-frequency ones included"),
        counter("reads", "count", "files and records read by the collectors"),
        counter("bytes_written", "bytes", "bytes the process wrote (wchar)"),
        gauge("collect_ms", "ms", "elapsed time of one sampling pass over all sources"),
    ),
)

COLLECTOR = Kind(
    name="collector",
    doc="one source, as run by the recorder",
    fields=(
        counter("cpu_us", "us", "CPU time in the source's sample calls (thread getrusage)"),
        counter("samples", "count", "samples taken"),
        counter("reads", "count", "files and records read"),
        gauge("collect_ms", "ms", "elapsed time of one sample"),
    ),
)


def process_cpu_us() -> int:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return round((usage.ru_utime + usage.ru_stime) * 1_000_000)


def thread_cpu_us() -> int:
    usage = resource.getrusage(resource.RUSAGE_THREAD)
    return round((usage.ru_utime + usage.ru_stime) * 1_000_000)


class WriteCounter:
    """Bytes this process has written (``wchar``); ``None`` where the OS does not say."""

    def __init__(self) -> None:
        self._process = psutil.Process()

    def bytes_written(self) -> int | None:
        try:
            counters = self._process.io_counters()
        except (AttributeError, psutil.Error):
            return None
        return int(getattr(counters, "write_chars", counters.write_bytes))
