"""``esatui demo``: the live monitor on a simulated z/VM system (imports Textual).

The simulated system starts ``DEMO_BACKLOG_S`` before now; the recorder writes that
backlog at full speed (so every screen has history at once), then keeps recording at
wall-clock speed, or ``--speed`` times faster. Intervals are ``DEMO_INTERVAL_S`` long so
the screens move while one watches. The recording goes to a temporary database unless
``--db`` is given. Every screen says the data is simulated (the sources' configuration
carries ``simulated``).
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from esatui.collectors.base import SourceContext
from esatui.db.records import Interval
from esatui.db.store import Store
from esatui.sampling.recorder import Recorder
from esatui.sim.clock import SimClock
from esatui.sim.run import Simulation, resolve
from esatui.sim.site import SimulatedSite, grid_after
from esatui.tui.app import MonitorApp

DEMO_SCENARIO = "mode-vm-day"
DEMO_INTERVAL_S = 10.0
DEMO_HF_S = 2.0
DEMO_BACKLOG_S = 30 * 60.0


class Demo:
    """The app, the simulated site and the database of one demo; :meth:`close` after use."""

    def __init__(
        self,
        sim: Simulation,
        *,
        db_path: Path | None = None,
        speed: float = 1.0,
        backlog_s: float = DEMO_BACKLOG_S,
        interval_s: float = DEMO_INTERVAL_S,
        now_us: int | None = None,
        warn: Callable[[str], None] = print,
    ) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="esatui-demo-") if db_path is None else None
        self.db_path = db_path or Path(self._tmp.name if self._tmp else ".") / "demo.sqlite"
        now = time.time_ns() // 1000 if now_us is None else now_us
        interval_us = round(interval_s * 1e6)
        start = grid_after(now - round(backlog_s * 1e6) - interval_us, interval_us)
        self.clock = SimClock(start, speed=speed, live_from_us=now)
        self.site = SimulatedSite(
            sim.params,
            label=sim.label,
            start_us=start,
            seed=sim.seed,
            identity=sim.identity,
            monitor_interval_s=interval_s,
            warn=warn,
        )
        self.clock.on_advance = self.site.sync
        self._writer = Store.open(self.db_path)
        self._interval_s = interval_s
        self._node = sim.identity.node
        self.app = MonitorApp(self.db_path, live=True, screen="ESASSUM", recorder=self._record)

    def _record(
        self,
        stop: threading.Event,
        on_interval: Callable[[Interval], None],
        warn: Callable[[str], None],
    ) -> None:
        site = self.site
        site.warn = warn  # on the status line, not over the screen

        # End the simulated monitor's data when the app stops, so its source ends at once.
        def end_when_stopped() -> None:
            stop.wait()
            site.monitor.end()

        threading.Thread(target=end_when_stopped, daemon=True, name="esatui-demo").start()
        recorder = Recorder(
            self._writer,
            site.sources(SourceContext(site.root, warn, self.clock)),
            interval_s=self._interval_s,
            hf_s=DEMO_HF_S,
            node=self._node,
            warn=warn,
            on_interval=on_interval,
            clock=self.clock,
        )
        recorder.run(stop)

    def close(self) -> None:
        self.site.close()
        self._writer.close()
        if self._tmp is not None:
            self._tmp.cleanup()


def run_demo(
    scenario: str | None,
    settings: Sequence[str],
    *,
    speed: float = 1.0,
    seed: int = 0,
    db_path: Path | None = None,
    warn: Callable[[str], None] = print,
) -> int:
    sim = resolve(scenario or DEMO_SCENARIO, settings, seed)
    demo = Demo(sim, db_path=db_path, speed=speed, warn=warn)
    try:
        demo.app.run()
    finally:
        demo.close()
    return demo.app.return_code or 0
