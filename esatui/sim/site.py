"""A simulated z/VM system behind its real interfaces, and the ordinary sources that read it.

:class:`SimulatedSite` owns the model (:class:`~esatui.sim.model.SimulatedSystem`) and the
artifacts the ordinary collectors read: a procfs/sysfs tree of one observed Linux guest
under a temporary root (``host``, ``zcrypt``), that guest's ``/dev/vmcp`` (``vmcp``), the
monitor records through a monreader device (``monitor``), and a SMAPI server on loopback
(``smapi``). :meth:`SimulatedSite.sync` brings the model and every artifact to a moment of
simulated time; nothing else moves them.

How it composes with the recorder (docs/MODEL.md, "Driving the real collectors"):

* :meth:`SimulatedSite.sources` returns the ordinary sources, built as ``--source host
  --source zcrypt --source vmcp --source monreader --source smapi:HOST:PORT`` would build
  them but pointed at the artifacts, each behind a thin wrapper that (1) syncs the site to
  its clock's time before the source reads, and (2) adds ``simulated`` to the sample's
  configuration (the screens' "Simulated data" line). Values pass through the real
  parsers untouched; the database sees the ordinary source names.
* With a :class:`~esatui.sim.clock.SimClock` (``esatui sim``, ``esatui demo``) the clock's
  ``wait`` calls :meth:`sync` as it moves time, so a source's own sync finds nothing to do.
  With the system clock (``esatui live --source sim:SCENARIO``) the sources' syncs move
  the model to wall-clock time.
* Monitor sample intervals end on the same local-time grid as the recorder's intervals;
  the site waits until the ``monitor`` source has recorded each set before going on, so a
  simulated day never outruns the recorder and nothing is lost when a run ends.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

from esatui.collectors.base import Clock, PolledSource, SourceContext, StreamSource
from esatui.collectors.host import HostSource
from esatui.collectors.model import Availability, Kind, Sample
from esatui.collectors.monitor.layoutfile import effective_layouts
from esatui.collectors.monitor.monreader import MonreaderSource
from esatui.collectors.smapi.source import build_source
from esatui.collectors.vmcp import VmcpSource
from esatui.collectors.zcrypt import ZcryptSource
from esatui.sim.guest_tree import GuestTree
from esatui.sim.model import SimulatedSystem
from esatui.sim.monitor_feed import MonitorFeed
from esatui.sim.params import SimParams
from esatui.sim.smapi_feed import SMAPI_USER, SmapiFeed
from esatui.sim.snapshot import Identity, SystemSnapshot
from esatui.sim.vmcp_feed import guest_vmcp

SIMULATED_KEY = "simulated"
"""The configuration key every simulated source adds (screens/catalog shows a line)."""
MAX_STEP_S = 60.0
"""The longest step of the model's grid a site uses (a step is one draw of every rate)."""
MONITOR_WAIT_S = 30.0
"""How long the site waits for the monitor source to record a set before it gives up."""


def grid_after(time_us: int, interval_us: int, *, gap_us: int = 1) -> int:
    """The first boundary of the local-time grid at least ``gap_us`` after ``time_us`` (the
    recorder's rule for its first boundary is half an interval)."""
    offset = time.localtime(time_us // 1_000_000).tm_gmtoff * 1_000_000
    local = time_us + offset + gap_us
    return -(-local // interval_us) * interval_us - offset


def _fast_dir() -> str | None:
    """Memory-backed storage for the artifacts when there is some (they are rewritten every
    few simulated seconds), else the default temporary directory."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK | os.X_OK) else None


class SimulatedSite:
    """The simulated system and its artifacts. Use as a context manager (or call close)."""

    def __init__(
        self,
        params: SimParams,
        *,
        label: str,
        start_us: int,
        seed: int = 0,
        identity: Identity | None = None,
        monitor_interval_s: float = 60.0,
        step_s: float | None = None,
        root: Path | None = None,
        monwrite: Path | None = None,
        observed: str | None = None,
        warn: Callable[[str], None] = print,
    ) -> None:
        self.label = label
        self.warn = warn
        self._tmp = (
            None if root is not None else tempfile.mkdtemp(prefix="esatui-sim-", dir=_fast_dir())
        )
        self.root = Path(root) if root is not None else Path(self._tmp or "")
        # Each step of the model has its own draw of every rate: one per monitor interval
        # (at most MAX_STEP_S) unless the caller knows the recorder's intervals are shorter.
        step = step_s if step_s is not None else min(monitor_interval_s, MAX_STEP_S)
        self.system = SimulatedSystem(
            params, seed=seed, start_us=start_us, identity=identity, step_s=step
        )
        first = self.system.snapshot()
        linux = [g.userid for g in first.guests if g.os == "linux"]
        self.observed = observed or linux[0]
        self.root.mkdir(parents=True, exist_ok=True)
        secrets_dir = self.root / ".sim"
        secrets_dir.mkdir(mode=0o700, exist_ok=True)
        self.tree = GuestTree(self.root, params, self.system.identity, first, self.observed)
        self.smapi = SmapiFeed(first, secrets_dir)
        self.vmcp = guest_vmcp(first, self.observed, lambda: self.smapi.busy)
        self.monitor = MonitorFeed(monitor_interval_s, monwrite)
        self._interval_us = max(1, round(monitor_interval_s * 1e6))
        self._lock = threading.RLock()
        self._synced_us: int | None = None
        self._next_set_us = start_us
        self._open = 0
        self._closed = False
        self.smapi.start()

    @property
    def identity(self) -> Identity:
        return self.system.identity

    # --- moving time ---------------------------------------------------------------------

    def sync(self, time_us: int) -> None:
        """The model and every artifact as they are at ``time_us`` (never backwards)."""
        with self._lock:
            if self._closed or (self._synced_us is not None and time_us <= self._synced_us):
                return
            # monitor sets due by now (a microsecond of rounding is forgiven)
            while self._next_set_us <= time_us + 1:
                self.system.advance_to(self._next_set_us)
                self.monitor.write(self.system.snapshot())
                first = self._synced_us is None and self._next_set_us == self.system.start_us
                gap = self._interval_us // 2 if first else 1
                self._next_set_us = grid_after(self._next_set_us, self._interval_us, gap_us=gap)
                self._wait_for_monitor()
            self.system.advance_to(time_us)
            snap = self.system.snapshot()
            self.tree.update(snap)
            self.smapi.update(snap)
            self._synced_us = time_us

    def snapshot(self) -> SystemSnapshot:
        with self._lock:
            return self.system.snapshot()

    def _wait_for_monitor(self) -> None:
        if not self.monitor.attached:
            return
        if not self.monitor.wait_read(MONITOR_WAIT_S) and self.monitor.attached:
            self.warn(
                "simulated monitor: the monitor source did not record an interval in "
                f"{MONITOR_WAIT_S:.0f} s; going on without waiting for it"
            )
            self.monitor.detach()

    # --- the ordinary sources ------------------------------------------------------------

    def sources(
        self,
        ctx: SourceContext,
        *,
        monitor_layout: Path | None = None,
        smapi_guests: str = "*",
    ) -> list[PolledSource | StreamSource]:
        """``host``, ``zcrypt``, ``vmcp``, ``smapi`` and ``monitor``, reading this site's
        artifacts."""
        here = SourceContext(self.root, ctx.warn, ctx.clock)
        smapi = build_source(
            f"smapi:127.0.0.1:{self.smapi.port}",
            user=SMAPI_USER,
            password_file=self.smapi.password_file,
            guests=smapi_guests,
            ctx=here,
        )
        monitor = MonreaderSource(
            here, f"sim:{self.label}", effective_layouts(monitor_layout), opener=self.monitor.open
        )
        vmcp = VmcpSource(here, opener=self.vmcp.open)
        polled: list[PolledSource] = [HostSource(here), ZcryptSource(here), vmcp, smapi]
        out: list[PolledSource | StreamSource] = [SimPolled(s, self, ctx.clock) for s in polled]
        out.append(SimStream(monitor, self))
        self._open = len(out)
        return out

    def released(self) -> None:
        """One of this site's sources was closed; the last one closes the site."""
        with self._lock:
            self._open -= 1
            last = self._open <= 0
        if last:
            self.close()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self.monitor.close()
        self.smapi.stop()
        self.tree.close()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self) -> SimulatedSite:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _mark(sample: Sample, label: str) -> Sample:
    return replace(sample, config={**(sample.config or {}), SIMULATED_KEY: label})


class SimPolled:
    """An ordinary polled source reading the site: synced first, marked simulated."""

    def __init__(self, inner: PolledSource, site: SimulatedSite, clock: Clock) -> None:
        self.inner = inner
        self.name = inner.name
        self.kinds: tuple[Kind, ...] = inner.kinds
        self.site = site
        self._clock = clock
        self._closed = False

    def _sync(self) -> None:
        self.site.sync(self._clock.time_us())

    def probe(self) -> Availability:
        found = self.inner.probe()
        return Availability(found.available, f"simulated ({self.site.label}): {found.reason}")

    def sample(self) -> Sample:
        self._sync()
        return _mark(self.inner.sample(), self.site.label)

    def sample_gauges(self) -> Sample | None:
        self._sync()
        sample = self.inner.sample_gauges()
        return None if sample is None else _mark(sample, self.site.label)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.inner.close()
        finally:
            self.site.released()


class SimStream:
    """The ordinary monitor source reading the site's monreader device, marked simulated.

    It tells the site when the recorder has taken each sample (the recorder asks for the
    next one only after writing the last), so the site can keep the two in step."""

    def __init__(self, inner: StreamSource, site: SimulatedSite) -> None:
        self.inner = inner
        self.name = inner.name
        self.kinds: tuple[Kind, ...] = inner.kinds
        self.site = site
        self._closed = False

    def probe(self) -> Availability:
        found = self.inner.probe()
        return Availability(found.available, f"simulated ({self.site.label}): {found.reason}")

    def samples(self) -> Iterator[Sample]:
        feed = self.site.monitor
        feed.attach()
        try:
            for sample in self.inner.samples():
                yield _mark(sample, self.site.label)
                feed.taken()
        finally:
            feed.detach()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            with contextlib.suppress(Exception):
                self.inner.close()
        finally:
            self.site.released()
