"""The recorder: samples the sources on the interval clock and writes intervals.

Polled sources are sampled together at every interval boundary (aligned to the local clock,
so one-minute intervals end on the minute), and their gauges at the ``--hf`` rate in between,
each in a thread of its own (``workers.py``): a pass waits for the answers until its
deadline, half the interval (half the ``--hf`` period for gauges), and writes each source's
interval as its answer comes, so a slow or hung source never delays the others; the last
answer's interval is committed in one transaction with the recorder's own (one commit a
pass for a single source: a commit costs more than the rows it writes). A source
that misses the deadline is skipped for that interval with one warning; its late answer
closes its next interval, stamped with its own time.
Stream sources (the z/VM monitor) run in threads of their own and bring their own intervals.
The recorder measures itself the same way (ESAOVHD) and writes that as one more source.
Retention (``--keep``, ``--max-size``) runs as the recording goes: the size of the files
(database and write-ahead log) is looked at after every interval.
"""

from __future__ import annotations

import math
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from esatui.collectors.base import (
    SYSTEM_CLOCK,
    Clock,
    PolledSource,
    SourceError,
    StreamSource,
    Warnings,
)
from esatui.collectors.model import Reading, Sample
from esatui.collectors.selfmon import (
    COLLECTOR,
    SELF,
    ResidentMemory,
    StealShare,
    StoreWrites,
    process_cpu_ns,
    thread_cpu_ns,
)
from esatui.db.database import StoreError, damage_at
from esatui.db.maintenance import SizePlan, prune
from esatui.db.records import Interval
from esatui.db.store import Store
from esatui.sampling.builder import DAY_US, IntervalBuilder
from esatui.sampling.workers import Answer, Workers

Warn = Callable[[str], None]
OnInterval = Callable[[Interval], None]
SELF_SOURCE = "esatui"
# said of a source whose call was under way at the end: not why it recorded nothing
STILL_SAMPLING = "still sampling at the end; not waited for"
OVERDUE = "no sample within"  # how a pass's deadline missed is said: the source's why is elsewhere
# Config keys that name the system a source reads: this Linux (host) or the z/VM system
# (monitor); the first one a sample carries names the node of the whole recording.
NODE_KEYS = ("node", "system_name")


def recorders_word(message: str) -> bool:
    """Whether ``message``, said of a source, is the recorder's (its call late or under way
    at the end) rather than the source's own."""
    return message == STILL_SAMPLING or message.startswith(OVERDUE)


DEADLINE_SHARE = 0.5  # of the interval (of the --hf period for gauges) a pass waits
# A wait returns a little after its boundary: a sample read within this share of the
# interval after it is stamped with it, so the interval ends on its minute and `--interval-len`
# buckets (by end) hold it, not the next one; its duration stays the one measured.
BOUNDARY_SLACK = 0.05


@dataclass(frozen=True)
class Retention:
    keep_s: float | None = None
    max_bytes: int | None = None

    def age_every_s(self, interval_s: float) -> float:
        """How often old intervals are looked for: a tenth of ``keep_s``, at least every
        interval and at most every hour."""
        assert self.keep_s is not None
        return max(interval_s, min(3600.0, self.keep_s / 10))


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
    overdue: int = 0  # source samples skipped because they missed their deadline
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
        self._damage_looked = False  # a failed write's database looked at for damage
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
        longest = max(DAY_US, int(4 * interval_s * 1e6))  # an interval longer is a gap
        self._order = {s.name: i for i, s in enumerate(sources)}  # for the stats' lists
        self._builders = {
            s.name: IntervalBuilder(s.name, s.kinds, warn=warn, max_duration_us=longest)
            for s in sources
        }
        self._self_builder = IntervalBuilder(
            SELF_SOURCE, (SELF, COLLECTOR), warn=warn, max_duration_us=longest
        )
        self._late = {s.name: Warnings(warn, s.name) for s in self._polled}
        self._workers: Workers | None = None
        self._boundary_us: int | None = None  # the one the full pass under way was asked at
        self._last_age_prune = float("-inf")
        self._costs: dict[str, _Cost] = {s.name: _Cost() for s in sources}
        self._gauge_sources = list(self._polled)
        self._cost_lock = threading.Lock()
        self._write_lock = threading.Lock()
        wal = store.path.with_name(store.path.name + "-wal")
        self._writes = StoreWrites(lambda: [store.path, wal])
        self._steal = StealShare()
        self._memory = ResidentMemory()
        self._process_ns = process_cpu_ns()
        self._used_ns = 0.0
        self._stolen_ns = 0.0
        self._samples = 0
        self._reads = 0
        self.stats = RecorderStats()
        self._size_plan: SizePlan | None = None
        self._said_over_bound = False
        if retention is not None and retention.max_bytes is not None:
            # bounded before the kinds' tables are made: making them logs pages too
            self._size_plan = SizePlan.of(retention.max_bytes)
            store.bound_wal(self._size_plan.wal)
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
        self._workers = Workers(list(self._polled), thread_cpu_ns)
        try:
            if self._polled:
                self._run_polled(stop, count, duration_s)
            else:
                end = None if duration_s is None else self._now() + duration_s
                while not stop.is_set() and any(t.is_alive() for t in threads):
                    if end is not None and self._now() >= end:
                        break
                    self._clock.wait(stop, 0.2)
                    self._retain()
        finally:
            stop.set()
            # streams first: closing one wakes its thread if the device has nothing to say
            for stream in self._streams:
                self._close(stream)
            for t in threads:
                t.join(timeout=5)
            self._workers.stop()
            for polled in self._polled:
                if self._workers.of[polled.name].busy:
                    # closing it under a call that hangs could hang too: its thread is a
                    # daemon and ends with the process
                    self._warn(f"{polled.name}: {STILL_SAMPLING}")
                else:
                    self._close(polled)
            self.stats.store_bytes = self._writes.total
            self._writes.close()
            self._steal.close()
            self._memory.close()
            # in the order the sources were given (they answer in any order), esatui last
            self.stats.sources_written.sort(key=lambda n: self._order.get(n, len(self._order)))
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
            self._boundary_us = round(boundary * 1e6)
            self._pass(full=True)
            if not self._polled:
                return  # every source has stopped (refused credentials, device gone)
            self.stats.intervals += 1
            boundary += self._interval_s
            while boundary <= self._now():  # we fell behind (suspended, overloaded)
                boundary += self._interval_s
            self._retain()
            if count is not None and self.stats.intervals >= count:
                return
            if duration_s is not None and self._now() - started >= duration_s:
                return

    def _pass(self, *, full: bool) -> None:
        """Ask every polled source once (full, or gauges only), take the answers until the
        deadline, write each source's interval as it comes, the last one with the
        recorder's own."""
        workers = self._workers
        assert workers is not None
        started = time.perf_counter()
        ticket = workers.next_ticket()
        waiting = self._ask(workers, ticket, full)
        period = self._interval_s if full or self._hf_s is None else self._hf_s
        deadline = time.monotonic() + period * DEADLINE_SHARE
        held = self._take_answers(workers, ticket, waiting, deadline, full)
        elapsed_ms = (time.perf_counter() - started) * 1000
        own = self._self_sample(elapsed_ms, full=full)
        if full:
            interval = self._self_builder.add(self._stamped(own))
            if interval is not None:
                held.append(interval)
        else:
            self._self_builder.add_gauges(own)
        if held:
            self._write(held)

    def _take_answers(
        self, workers: Workers, ticket: int, waiting: set[str], deadline: float, full: bool
    ) -> list[Interval]:
        """The answers until the deadline, each source's interval written as it comes but
        the last one's: returned, to be committed with the recorder's own."""
        held: list[Interval] = []
        while waiting:
            answer = workers.take(deadline - time.monotonic())
            if answer is None:
                break
            if answer.ticket == ticket:
                waiting.discard(answer.worker.source.name)
                if full:
                    self._late[answer.worker.source.name].clear("late")
            interval = self._answered(answer, on_time=answer.ticket == ticket)
            if interval is not None:
                if waiting:
                    self._write([interval])  # not held back for the others
                else:
                    held.append(interval)
        if full:
            for name in waiting:
                self._overdue(name)
        return held

    def _ask(self, workers: Workers, ticket: int, full: bool) -> set[str]:
        """Hand every idle source its call; the names of those asked."""
        asked: set[str] = set()
        for source in list(self._polled):
            if not full and source not in self._gauge_sources:
                continue
            worker = workers.of[source.name]
            if worker.busy:  # still on an earlier call: not asked again until it answers
                if full:
                    self._overdue(source.name)
                continue
            worker.ask(ticket, full, source.sample if full else source.sample_gauges)
            asked.add(source.name)
        return asked

    def _overdue(self, name: str) -> None:
        self.stats.overdue += 1
        self._late[name](
            f"{OVERDUE} {self._interval_s * DEADLINE_SHARE:g} s (half the interval): "
            "skipped; the other sources' intervals close on time, and its late answer "
            "closes its next one",
            key="late",
        )

    def _answered(self, answer: Answer, *, on_time: bool = False) -> Interval | None:
        """A source's answer (this pass's, ``on_time``, or a late one): into its builder;
        the interval it closes, to be written."""
        source = answer.worker.source
        if source not in self._polled:
            return None  # stopped meanwhile
        error = answer.error
        if isinstance(error, SourceError):
            self._warn(f"{source.name}: {error}")
            self._stop_source(source)
            return None
        if error is not None:
            self._warn(f"{source.name}: sample skipped: {error}")
            return None
        sample = answer.sample
        self._account(source.name, answer.cpu_ns, answer.wall_ms, sample)
        if sample is None:
            if not answer.full and source in self._gauge_sources:
                self._gauge_sources.remove(source)  # it has no gauges: stop asking
            return None
        self._learn_node(sample)
        builder = self._builders[source.name]
        if answer.full:
            return builder.add(self._stamped(sample) if on_time else sample)
        builder.add_gauges(sample)
        return None

    def _stamped(self, sample: Sample) -> Sample:
        """``sample`` with the boundary its pass was asked at as its time, if it was read
        within :data:`BOUNDARY_SLACK` of it."""
        boundary = self._boundary_us
        if boundary is None or sample.time_us == boundary:
            return sample
        if abs(sample.time_us - boundary) > self._interval_s * 1e6 * BOUNDARY_SLACK:
            return sample
        return replace(sample, time_us=boundary)

    def _stop_source(self, source: PolledSource) -> None:
        if source in self._polled:
            self._polled.remove(source)
        if source in self._gauge_sources:
            self._gauge_sources.remove(source)
        self.stats.stopped_sources.append(source.name)

    def _account(self, name: str, cpu_ns: int, wall_ms: float, sample: Sample | None) -> None:
        with self._cost_lock:
            cost = self._costs[name]
            cost.pending_ns += cpu_ns
            cost.samples += 1
            cost.last_ms = wall_ms
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
                        "rss_bytes": self._memory.bytes(),
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
                wall_ms = (time.perf_counter() - wall0) * 1000
                self._account(source.name, thread_cpu_ns() - cpu0, wall_ms, sample)
                self._learn_node(sample)
                interval = builder.add(sample)
                if interval is not None:
                    self._write([interval])
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

    def _refuse_damage(self, exc: Exception) -> None:
        """A write that failed for a damaged database (SQLite's corrupt or not-a-database
        error, never a full disk or a lock) stops the recording with the damage named: no
        later interval would be kept either. Looked at once: the look reads the whole file."""
        if type(exc) is not sqlite3.DatabaseError or self._damage_looked:
            return
        self._damage_looked = True
        what = damage_at(self._store.path)
        if what is not None:
            raise StoreError(what)

    def _write(self, intervals: list[Interval]) -> None:
        """Commit intervals together (one transaction), under the recording's node; if that
        fails, each on its own, so a failed write loses its own interval only."""
        batch = [
            Interval(
                i.source, self.node, i.start_us, i.end_us, i.duration_us, i.rows, i.flags, i.config
            )
            for i in intervals
        ]
        try:
            with self._write_lock:
                ids = self._writes.count(lambda: self._store.write_all(batch))
        except Exception as exc:  # noqa: BLE001 - a failed write loses this interval only
            self._refuse_damage(exc)
            if len(batch) > 1:
                for one in batch:
                    self._write([one])
            else:
                one = batch[0]
                ending = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(one.end_us / 1e6))
                self._warn(f"{one.source}: interval ending {ending} not written: {exc}")
            return
        for interval, written in zip(batch, ids, strict=True):
            if written is None:
                self.stats.duplicates += 1
                continue
            self.stats.written += 1
            if interval.source not in self.stats.sources_written:
                self.stats.sources_written.append(interval.source)
            if self._on_interval is not None:
                self._on_interval(interval)

    def _retain(self) -> None:
        """Retention as the recording goes: by size whenever the database file passes
        ``--max-size`` less two WAL allowances (looked at after every interval), down to
        three allowances under it, so the file and its log stay within the bound; by age
        every tenth of ``--keep``."""
        retention = self._retention
        if retention is None:
            return
        keep_s = None
        if retention.keep_s is not None:
            now = self._now()
            if now - self._last_age_prune >= retention.age_every_s(self._interval_s):
                keep_s = retention.keep_s
                self._last_age_prune = now
        plan = self._size_plan
        if plan is not None and self._store.path.stat().st_size <= plan.trigger:
            plan = None
        if keep_s is None and plan is None:
            return
        target = None if plan is None else plan.target
        try:
            with self._write_lock:
                result = self._writes.count(
                    lambda: prune(self._store, keep_s, target, now=self._now())
                )
        except Exception as exc:  # noqa: BLE001 - retention must never stop the recording
            self._warn(f"retention: {exc}")
            return
        if result.over_bound and plan is not None and not self._said_over_bound:
            self._said_over_bound = True
            self._warn(
                f"retention: --max-size {plan.bound:,} bytes holds only the newest interval "
                f"of each source (the database takes {result.bytes_after:,} bytes with them, "
                f"its write-ahead log up to {plan.wal:,} more): every older one is deleted"
            )
