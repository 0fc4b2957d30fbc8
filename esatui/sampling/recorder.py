"""The recorder: samples the sources on the interval clock and writes intervals.

Polled sources are sampled together at every interval boundary (aligned to the local clock,
so one-minute intervals end on the minute), and their gauges at the ``--hf`` rate in between.
Stream sources (the z/VM monitor) run in threads of their own and bring their own intervals.
The recorder measures itself the same way (ESAOVHD) and writes that as one more source.
"""

from __future__ import annotations

import math
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from esatui.collectors.base import SYSTEM_CLOCK, Clock, PolledSource, SourceError, StreamSource
from esatui.collectors.model import Reading, Sample
from esatui.collectors.selfmon import (
    COLLECTOR,
    SELF,
    StealShare,
    StoreWrites,
    process_cpu_ns,
    thread_cpu_ns,
)
from esatui.db.maintenance import prune
from esatui.db.records import Interval
from esatui.db.store import Store
from esatui.sampling.builder import IntervalBuilder

Warn = Callable[[str], None]
OnInterval = Callable[[Interval], None]
SELF_SOURCE = "esatui"
# Config keys that name the system a source reads: this Linux (host) or the z/VM system
# (monitor); the first one a sample carries names the node of the whole recording.
NODE_KEYS = ("node", "system_name")


@dataclass(frozen=True)
class Retention:
    keep_s: float | None = None
    max_bytes: int | None = None
    every_s: float = 3600.0


@dataclass
class _Cost:
    used_ns: float = 0.0  # CPU clock less its stolen share, up to the last full pass
    pending_ns: int = 0  # CPU clock since the last full pass (its steal share not known yet)
    samples: int = 0
    reads: int = 0
    last_ms: float | None = None


@dataclass
class RecorderStats:
    intervals: int = 0
    written: int = 0
    duplicates: int = 0
    stopped_sources: list[str] = field(default_factory=list)
    sources_written: list[str] = field(default_factory=list)
    store_bytes: int = 0  # what the store wrote for this recorder (ESAOVHD bytes_written)


def next_boundary(now: float, interval_s: float) -> float:
    """The first boundary at least half an interval after ``now``, aligned to local time."""
    offset = time.localtime(now).tm_gmtoff
    local = now + offset + interval_s / 2
    return math.ceil(local / interval_s) * interval_s - offset


class Recorder:
    def __init__(
        self,
        store: Store,
        sources: Sequence[PolledSource | StreamSource],
        *,
        interval_s: float,
        hf_s: float | None,
        node: str | None = None,
        warn: Warn = print,
        on_interval: OnInterval | None = None,
        retention: Retention | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._store = store
        self._clock = clock
        self._polled: list[PolledSource] = [s for s in sources if isinstance(s, PolledSource)]
        self._streams: list[StreamSource] = [
            s for s in sources if isinstance(s, StreamSource) and not isinstance(s, PolledSource)
        ]
        self._interval_s = interval_s
        self._hf_s = hf_s if hf_s and hf_s < interval_s else None
        self._node = node
        self._warn = warn
        self._on_interval = on_interval
        self._retention = retention
        self._builders = {s.name: IntervalBuilder(s.name, s.kinds) for s in sources}
        self._self_builder = IntervalBuilder(SELF_SOURCE, (SELF, COLLECTOR))
        self._costs: dict[str, _Cost] = {s.name: _Cost() for s in sources}
        self._gauge_sources = list(self._polled)
        self._cost_lock = threading.Lock()
        self._write_lock = threading.Lock()
        wal = store.path.with_name(store.path.name + "-wal")
        self._writes = StoreWrites(lambda: [store.path, wal])
        self._steal = StealShare()
        self._process_ns = process_cpu_ns()
        self._used_ns = 0.0
        self._stolen_ns = 0.0
        self._samples = 0
        self._reads = 0
        self.stats = RecorderStats()
        for source in sources:
            store.register(source.name, source.kinds)
        store.register(SELF_SOURCE, (SELF, COLLECTOR))

    # --- the interval clock ---------------------------------------------------------

    def _now(self) -> float:
        return self._clock.time_us() / 1e6

    def run(
        self,
        stop: threading.Event,
        count: int | None = None,
        duration_s: float | None = None,
    ) -> RecorderStats:
        threads = [
            threading.Thread(
                target=self._run_stream, args=(s, stop), daemon=True, name=f"esatui-{s.name}"
            )
            for s in self._streams
        ]
        for t in threads:
            t.start()
        try:
            if self._polled:
                self._run_polled(stop, count, duration_s)
            else:
                end = None if duration_s is None else self._now() + duration_s
                while not stop.is_set() and any(t.is_alive() for t in threads):
                    if end is not None and self._now() >= end:
                        break
                    self._clock.wait(stop, 0.2)
        finally:
            stop.set()
            # streams first: closing one wakes its thread if the device has nothing to say
            for stream in self._streams:
                self._close(stream)
            for t in threads:
                t.join(timeout=5)
            for polled in self._polled:
                self._close(polled)
            self.stats.store_bytes = self._writes.total
        return self.stats

    def _close(self, source: PolledSource | StreamSource) -> None:
        try:
            source.close()
        except Exception as exc:  # noqa: BLE001 - a close must never stop the others
            self._warn(f"{source.name}: {exc}")

    def _run_polled(
        self, stop: threading.Event, count: int | None, duration_s: float | None
    ) -> None:
        started = self._now()
        self._pass(full=True)
        boundary = next_boundary(self._now(), self._interval_s)
        last_prune = float("-inf")
        while not stop.is_set():
            if self._hf_s is not None and self._gauge_sources:
                next_hf = self._now() + self._hf_s
                while next_hf < boundary - self._hf_s / 4:
                    if self._clock.wait(stop, next_hf - self._now()):
                        return
                    self._pass(full=False)
                    next_hf += self._hf_s
            if self._clock.wait(stop, boundary - self._now()):
                return
            self._pass(full=True)
            if not self._polled:
                return  # every source has stopped (refused credentials, device gone)
            self.stats.intervals += 1
            boundary += self._interval_s
            while boundary <= self._now():  # we fell behind (suspended, overloaded)
                boundary += self._interval_s
            if self._retention and self._now() - last_prune >= self._retention.every_s:
                self._prune()
                last_prune = self._now()
            if count is not None and self.stats.intervals >= count:
                return
            if duration_s is not None and self._now() - started >= duration_s:
                return

    def _pass(self, *, full: bool) -> None:
        """Sample every polled source once (full, or gauges only) and close intervals."""
        started = time.perf_counter()
        intervals: list[Interval] = []
        for source in list(self._polled):
            sample = self._sample(source, full)
            if sample is None:
                continue
            self._learn_node(sample)
            builder = self._builders[source.name]
            if full:
                interval = builder.add(sample)
                if interval is not None:
                    intervals.append(interval)
            else:
                builder.add_gauges(sample)
        elapsed_ms = (time.perf_counter() - started) * 1000
        own = self._self_sample(elapsed_ms, full=full)
        if full:
            interval = self._self_builder.add(own)
            if interval is not None:
                intervals.append(interval)
        else:
            self._self_builder.add_gauges(own)
        for interval in intervals:
            self._write(interval)

    def _sample(self, source: PolledSource, full: bool) -> Sample | None:
        cpu0, wall0 = thread_cpu_ns(), time.perf_counter()
        try:
            if full:
                sample: Sample | None = source.sample()
            else:
                if source not in self._gauge_sources:
                    return None
                sample = source.sample_gauges()
                if sample is None:
                    self._gauge_sources.remove(source)  # it has no gauges: stop asking
        except SourceError as exc:
            self._warn(f"{source.name}: {exc}")
            self._stop_source(source)
            return None
        except Exception as exc:  # noqa: BLE001 - one broken source must not stop the others
            self._warn(f"{source.name}: sample skipped: {exc}")
            return None
        self._account(source.name, cpu0, wall0, sample)
        return sample

    def _stop_source(self, source: PolledSource) -> None:
        if source in self._polled:
            self._polled.remove(source)
        if source in self._gauge_sources:
            self._gauge_sources.remove(source)
        self.stats.stopped_sources.append(source.name)

    def _account(self, name: str, cpu0: int, wall0: float, sample: Sample | None) -> None:
        with self._cost_lock:
            cost = self._costs[name]
            cost.pending_ns += thread_cpu_ns() - cpu0
            cost.samples += 1
            cost.last_ms = (time.perf_counter() - wall0) * 1000
            reads = sample.reads if sample else 0
            cost.reads += reads
            self._samples += 1
            self._reads += reads

    def _use_cpu(self) -> None:
        """Turn the CPU clocks' time since the last full pass into CPU used: the clocks run
        on while the hypervisor steals the CPU, so each is scaled by the share of that span
        this Linux's CPUs were not stolen (selfmon.StealShare). Under the cost lock."""
        used = self._steal.used_fraction()
        now = process_cpu_ns()
        clock, self._process_ns = now - self._process_ns, now
        self._used_ns += clock * used
        self._stolen_ns += clock * (1.0 - used)
        for cost in self._costs.values():
            cost.used_ns += cost.pending_ns * used
            cost.pending_ns = 0

    def _self_sample(self, elapsed_ms: float, *, full: bool = True) -> Sample:
        with self._cost_lock:
            if full:
                self._use_cpu()
            readings = [
                Reading(
                    "collector",
                    name,
                    {
                        "cpu_us": round(c.used_ns / 1000),
                        "samples": c.samples,
                        "reads": c.reads,
                        "collect_ms": c.last_ms,
                    },
                )
                for name, c in self._costs.items()
            ]
            readings.append(
                Reading(
                    "esatui",
                    "self",
                    {
                        "cpu_us": round(self._used_ns / 1000),
                        "steal_us": round(self._stolen_ns / 1000),
                        "samples": self._samples,
                        "reads": self._reads,
                        "store_bytes": self._writes.total,
                        "collect_ms": elapsed_ms,
                    },
                )
            )
        return Sample(
            SELF_SOURCE,
            self._clock.time_us(),
            tuple(readings),
            mono_ns=self._clock.mono_ns(),
        )

    # --- stream sources -------------------------------------------------------------

    def _run_stream(self, source: StreamSource, stop: threading.Event) -> None:
        builder = self._builders[source.name]
        try:
            iterator = iter(source.samples())
            while not stop.is_set():
                cpu0, wall0 = thread_cpu_ns(), time.perf_counter()
                sample = next(iterator, None)
                if sample is None:
                    break
                self._account(source.name, cpu0, wall0, sample)
                self._learn_node(sample)
                interval = builder.add(sample)
                if interval is not None:
                    self._write(interval)
        except SourceError as exc:
            self._warn(f"{source.name}: {exc}")
            self.stats.stopped_sources.append(source.name)
        except Exception as exc:  # noqa: BLE001 - report, never take the recorder down
            self._warn(f"{source.name}: stopped: {exc}")
            self.stats.stopped_sources.append(source.name)

    # --- writing --------------------------------------------------------------------

    def _learn_node(self, sample: Sample) -> None:
        if self._node is None and sample.config:
            for key in NODE_KEYS:
                if sample.config.get(key):
                    self._node = sample.config[key]
                    return

    @property
    def node(self) -> str:
        if self._node is None:
            self._node = socket.gethostname()
        return self._node

    def _write(self, interval: Interval) -> None:
        interval = Interval(
            interval.source,
            self.node,
            interval.start_us,
            interval.end_us,
            interval.duration_us,
            interval.rows,
            interval.flags,
            interval.config,
        )
        try:
            with self._write_lock:
                written = self._writes.count(lambda: self._store.write(interval))
        except Exception as exc:  # noqa: BLE001 - a failed write loses this interval only
            self._warn(f"interval ending {interval.end_us} not written: {exc}")
            return
        if written is None:
            self.stats.duplicates += 1
            return
        self.stats.written += 1
        if interval.source not in self.stats.sources_written:
            self.stats.sources_written.append(interval.source)
        if self._on_interval is not None:
            self._on_interval(interval)

    def _prune(self) -> None:
        retention = self._retention
        assert retention is not None
        try:
            with self._write_lock:
                self._writes.count(
                    lambda: prune(self._store, retention.keep_s, retention.max_bytes)
                )
        except Exception as exc:  # noqa: BLE001
            self._warn(f"retention: {exc}")
