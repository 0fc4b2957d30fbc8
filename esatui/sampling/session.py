"""One way to wire a recorder: a database, its sources, the interval settings and a clock.

``esatui collect``, ``esatui live``, ``esatui sim`` and ``esatui demo`` (and the tests and
benchmarks that record) all build a :class:`Recording` and run it. Sources are built before
the recording runs (so a SPEC that does not fit fails at once) with a :class:`WarnChannel` as
their warning function; running the recording points the channel where the recorder's own
warnings go (stderr for ``collect``, the status line in the TUI), so every warning takes
one way out.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from esatui.collectors.base import SYSTEM_CLOCK, Clock, PolledSource, StreamSource
from esatui.db.records import Interval
from esatui.db.store import Store
from esatui.sampling.recorder import Recorder, RecorderStats, Retention

Warn = Callable[[str], None]
OnInterval = Callable[[Interval], None]


class WarnChannel:
    """A warning function that can be pointed elsewhere after it was handed out."""

    def __init__(self, target: Warn) -> None:
        self.target = target

    def __call__(self, message: str) -> None:
        self.target(message)


def _ignore(message: str) -> None:
    del message


@dataclass(frozen=True)
class Recording:
    """What to record, where and how often; :meth:`run` records until stopped."""

    db_path: Path
    sources: Sequence[PolledSource | StreamSource]
    interval_s: float
    hf_s: float | None
    node: str | None = None
    retention: Retention | None = None
    clock: Clock = SYSTEM_CLOCK
    channel: WarnChannel | None = None  # the sources' warnings, pointed at ``run``'s warn
    make_dirs: bool = False  # create the database's missing directories (0700)
    # handed every committed interval too (the Prometheus exposition), after ``on_interval``
    exporters: Sequence[OnInterval] = ()

    def run(
        self,
        stop: threading.Event,
        *,
        warn: Warn,
        on_interval: OnInterval | None = None,
        count: int | None = None,
        duration_s: float | None = None,
    ) -> RecorderStats:
        """Record into the database until ``stop`` is set, ``count`` intervals were
        recorded or ``duration_s`` has passed, or every source has stopped."""
        if self.channel is not None:
            self.channel.target = warn
        on_interval = _fan_out(on_interval, self.exporters)
        with Store.open(self.db_path, make_dirs=self.make_dirs) as store:
            recorder = Recorder(
                store,
                self.sources,
                interval_s=self.interval_s,
                hf_s=self.hf_s,
                node=self.node,
                warn=warn,
                on_interval=on_interval,
                retention=self.retention,
                clock=self.clock,
            )
            try:
                return recorder.run(stop, count=count, duration_s=duration_s)
            finally:
                if self.channel is not None:
                    # a source still sampling when the recording ended (the recorder said it
                    # was not waited for) has nobody left to tell
                    self.channel.target = _ignore

    def __call__(self, stop: threading.Event, on_interval: OnInterval, warn: Warn) -> None:
        """As the live monitor runs a recorder (``esatui.tui.app.RecordFn``)."""
        self.run(stop, warn=warn, on_interval=on_interval)


def _fan_out(first: OnInterval | None, rest: Sequence[OnInterval]) -> OnInterval | None:
    """One ``on_interval`` that calls ``first`` and then each of ``rest``."""
    if not rest:
        return first
    consumers = ([] if first is None else [first]) + list(rest)

    def each(interval: Interval) -> None:
        for consumer in consumers:
            consumer(interval)

    return each
