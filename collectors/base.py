"""The two shapes a source can have, and the context every source is built with.

A *polled* source (host, zcrypt, hypfs, vmcp, smapi) is asked for a sample at every interval
boundary, and for its gauges alone at the high-frequency rate in between.
A *stream* source (monreader, monwrite) brings its own timing: it yields one sample per
interval of the data it reads (z/VM monitor sample intervals), stamped with the data's time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from esatui.collectors.model import Availability, Kind, Sample

Warn = Callable[[str], None]


def _ignore(message: str) -> None:
    del message


class Clock(Protocol):
    """Where time comes from: the system's clocks, or a simulated system's."""

    def time_us(self) -> int:
        """Wall-clock time, microseconds since the epoch (UTC)."""
        ...

    def mono_ns(self) -> int:
        """A monotonic clock for durations."""
        ...

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        """Let ``seconds`` pass (or until ``stop`` is set); True if stopped."""
        ...


class SystemClock:
    def time_us(self) -> int:
        return time.time_ns() // 1000

    def mono_ns(self) -> int:
        return time.monotonic_ns()

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        return stop.wait(max(0.0, seconds))


SYSTEM_CLOCK = SystemClock()


@dataclass(frozen=True)
class SourceContext:
    """What a source is built with: where the system's files are, how to report trouble,
    and the clock that stamps its samples."""

    root: Path = Path("/")
    warn: Warn = field(default=_ignore)
    clock: Clock = field(default=SYSTEM_CLOCK)

    def path(self, absolute: str) -> Path:
        """``absolute`` (``/proc/stat``) below the root directory."""
        return self.root / absolute.lstrip("/")


class Warnings:
    """How a source reports trouble: through its context's ``warn`` (the one channel; the
    recorder routes it to stderr or the status line), prefixed with the source's name, each
    key once until :meth:`clear` says the trouble is over."""

    def __init__(self, warn: Warn, source: str) -> None:
        self._warn = warn
        self._prefix = f"{source}: "
        self._said: set[str] = set()

    def __call__(self, message: str, *, key: str | None = None) -> None:
        """Say ``message`` unless ``key`` (by default the message itself) was said."""
        key = message if key is None else key
        if key not in self._said:
            self._said.add(key)
            self._warn(self._prefix + message)

    def clear(self, key: str) -> None:
        """The trouble of ``key`` is over: say it again if it comes back."""
        self._said.discard(key)

    @property
    def outstanding(self) -> bool:
        """Whether any trouble is current (a cheap test before clearing)."""
        return bool(self._said)


@runtime_checkable
class PolledSource(Protocol):
    name: str
    kinds: tuple[Kind, ...]

    def probe(self) -> Availability:
        """Whether this source can run here, with the reason in one line."""
        ...

    def sample(self) -> Sample:
        """A full sample: counters, gauges, attributes (called at interval boundaries)."""
        ...

    def sample_gauges(self) -> Sample | None:
        """Only the gauges, cheaply (called at the ``--hf`` rate); ``None`` when it has none."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class StreamSource(Protocol):
    name: str
    kinds: tuple[Kind, ...]

    def probe(self) -> Availability: ...

    def samples(self) -> Iterator[Sample]:
        """Samples in time order, one per interval boundary of the data (may block)."""
        ...

    def close(self) -> None: ...


class SourceError(Exception):
    """A source cannot go on (device busy, authentication refused ...): one clear line."""
