"""``esatui demo``: the live monitor on a simulated z/VM system (imports Textual when run).

The simulated system starts ``DEMO_BACKLOG_S`` before now; the recorder writes that
backlog at full speed (so every screen has history at once), then keeps recording at
wall-clock speed, or ``--speed`` times faster. Intervals are ``DEMO_INTERVAL_S`` long so
the screens move while one watches. The recording goes to a temporary database unless
``--db`` is given. Every screen says the data is simulated (the sources' configuration
carries ``simulated``).
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from esatui.commands import arguments as A
from esatui.commands.common import UsageError, leave_at_rest, need_terminal, run_monitor

if TYPE_CHECKING:
    from esatui.commands.arguments import Subparsers
    from esatui.db.records import Interval
    from esatui.sim.run import Simulation

DEMO_SCENARIO = "mode-vm-day"
DEMO_INTERVAL_S = 10.0
DEMO_HF_S = 2.0
DEMO_BACKLOG_S = 30 * 60.0


def register(sub: Subparsers) -> None:
    p = sub.add_parser("demo", help="the live screens on a simulated z/VM system")
    p.add_argument("--scenario", metavar="NAME", default=DEMO_SCENARIO, help=A.SCENARIO_HELP)
    A.simulation_options(p)
    p.add_argument(
        "--speed", type=A.speed, default=1.0, metavar="X", help="times wall-clock speed (default 1)"
    )
    p.add_argument("--seed", type=int, default=0, help="the random draws' seed (default 0)")
    p.add_argument("--db", type=Path, help="keep the recording here (default: temporary)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from esatui.sim.run import SimUsageError, resolve

    try:
        sim = resolve(args.scenario or DEMO_SCENARIO, args.set, args.seed)
    except SimUsageError as exc:
        raise UsageError(str(exc)) from None
    need_terminal("demo")  # before the backlog is recorded
    demo = Demo(sim, db_path=args.db, speed=args.speed)
    try:
        return run_monitor(demo.app, "demo")
    finally:
        demo.close()


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
        from esatui.collectors.base import SourceContext
        from esatui.db.store import Store
        from esatui.sampling.session import Recording, WarnChannel
        from esatui.sim.clock import SimClock
        from esatui.sim.site import grid_after
        from esatui.tui.app import MonitorApp

        self._tmp = tempfile.TemporaryDirectory(prefix="esatui-demo-") if db_path is None else None
        self.db_path = db_path or Path(self._tmp.name if self._tmp else ".") / "demo.sqlite"
        now = time.time_ns() // 1000 if now_us is None else now_us
        interval_us = round(interval_s * 1e6)
        start = grid_after(now - round(backlog_s * 1e6) - interval_us, interval_us)
        self.clock = SimClock(start, speed=speed, live_from_us=now)
        channel = WarnChannel(warn)  # on the status line once the monitor runs
        self.site = sim.site(start, interval_s, warn=channel)
        self.clock.on_advance = self.site.sync
        Store.open(self.db_path).close()  # there to read before the first interval is written
        self.recording = Recording(
            self.db_path,
            self.site.sources(SourceContext(self.site.root, channel, self.clock)),
            interval_s=interval_s,
            hf_s=DEMO_HF_S,
            node=sim.identity.node,
            clock=self.clock,
            channel=channel,
        )
        self.app = MonitorApp(self.db_path, live=True, screen="ESASSUM", recorder=self._record)

    def _record(
        self,
        stop: threading.Event,
        on_interval: Callable[[Interval], None],
        warn: Callable[[str], None],
    ) -> None:
        site = self.site

        # End the simulated monitor's data when the app stops, so its source ends at once.
        def end_when_stopped() -> None:
            stop.wait()
            site.monitor.end()

        threading.Thread(target=end_when_stopped, daemon=True, name="esatui-demo").start()
        self.recording.run(stop, warn=warn, on_interval=on_interval)

    def close(self) -> None:
        self.site.close()
        if self._tmp is not None:
            self._tmp.cleanup()
        else:
            self.app.close_reader()  # it may still be closing in its own thread
            leave_at_rest(self.db_path)
