"""``esatui sim``: record a simulated z/VM system (a day in seconds)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from esatui.commands import arguments as A
from esatui.commands.common import EXIT_OK, UsageError, warn

if TYPE_CHECKING:
    from esatui.commands.arguments import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("sim", help="record a simulated z/VM system (a day in seconds)")
    p.add_argument("--scenario", metavar="NAME", help=A.SCENARIO_HELP)
    A.simulation_options(p)
    p.add_argument("--duration", type=A.duration, required=True, metavar="DUR")
    p.add_argument("--interval", type=A.interval, default=60.0, metavar="DUR")
    p.add_argument("--start", type=A.moment, metavar="T", help="default 2026-01-05T00:00Z")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--db", type=Path, required=True)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from esatui.collectors.monitor.header import TOD_FIRST_US, TOD_LAST_US
    from esatui.sim.confidence import describe
    from esatui.sim.model import DEFAULT_START_US
    from esatui.sim.run import SimUsageError, record, resolve
    from esatui.timeparse import iso

    if not args.scenario and not args.set:
        raise UsageError("sim needs --scenario NAME or --set KEY=VALUE (or both)")
    try:
        sim = resolve(args.scenario, args.set, args.seed)
    except SimUsageError as exc:
        raise UsageError(str(exc)) from None
    start = DEFAULT_START_US if args.start is None else args.start
    end = start + round(args.duration * 1e6)
    if start < TOD_FIRST_US or end > TOD_LAST_US:
        raise UsageError(
            f"the simulation must lie between {iso(TOD_FIRST_US)} and {iso(TOD_LAST_US)}, "
            "the z/VM TOD clock's range (its monitor records are stamped with it)"
        )
    began = time.perf_counter()
    stats = record(
        sim,
        args.db,
        duration_s=args.duration,
        interval_s=args.interval,
        start_us=start,
        warn=warn,
    )
    took = time.perf_counter() - began
    if stats.stopped_sources:
        raise RuntimeError(f"simulated sources stopped: {', '.join(stats.stopped_sources)}")
    line = (
        f"{stats.intervals} intervals of {sim.label} ({iso(start)} to {iso(end)}) recorded in "
        f"{args.db} in {took:.1f} s; sources: {', '.join(stats.sources_written)}"
    )
    if stats.duplicates:
        line += f" ({stats.duplicates} intervals were already recorded)"
    print(line)
    print(describe(sim.params))  # how far the configuration is from the calibration
    return EXIT_OK
