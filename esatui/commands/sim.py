"""``esatui sim``: record a simulated z/VM system (a day in seconds)."""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from esatui.commands import arguments as A
from esatui.commands.common import (
    EXIT_OK,
    UsageError,
    remove_database,
    restore_signals,
    stop_on_signals,
    warn,
)
from esatui.commands.streams import say_done

if TYPE_CHECKING:
    from esatui.commands.arguments import Subparsers
    from esatui.sampling.recorder import RecorderStats


def register(sub: Subparsers) -> None:
    p = sub.add_parser("sim", help="record a simulated z/VM system (a day in seconds)")
    p.add_argument("--scenario", metavar="NAME", help=A.SCENARIO_HELP)
    A.simulation_options(p)
    p.add_argument(
        "--duration", type=A.duration, required=True, metavar="DUR", help="how long to simulate"
    )
    p.add_argument(
        "--interval", type=A.interval, default=60.0, metavar="DUR", help="interval (default 60s)"
    )
    p.add_argument("--start", type=A.moment, metavar="T", help="default 2026-01-05T00:00Z")
    p.add_argument(
        "--seed", type=int, default=0, help="the random draws' seed: the same, the same recording"
    )
    p.add_argument(
        "--node",
        type=A.monitor_node_name,
        metavar="NAME",
        help="the simulated z/VM system's name, recorded as the node "
        "(default: the scenario's, e.g. VMMODEVM; 1-8 characters)",
    )
    p.add_argument("--db", type=Path, required=True, help="the database to record into")
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
    if args.node is not None:
        identity = dataclasses.replace(sim.identity, node=args.node)
        sim = dataclasses.replace(sim, identity=identity)
    start = DEFAULT_START_US if args.start is None else args.start
    end = start + round(args.duration * 1e6)
    if start < TOD_FIRST_US or end > TOD_LAST_US:
        raise UsageError(
            f"the simulation must lie between {iso(TOD_FIRST_US)} and {iso(TOD_LAST_US)}, "
            "the z/VM TOD clock's range (its monitor records are stamped with it)"
        )
    clash = recorded_before(args.db, sim.identity.node, start, end, sim.label)
    if clash is not None:
        raise UsageError(clash)
    began = time.perf_counter()
    made = not args.db.exists()
    caught: list[int] = []
    previous: dict[int, Any] = {}
    try:
        stats = record(
            sim,
            args.db,
            duration_s=args.duration,
            interval_s=args.interval,
            start_us=start,
            warn=warn,
            on_start=lambda stop: previous.update(stop_on_signals(stop, caught)),
        )
    except BaseException:
        if made:  # a simulation's new database is kept whole or not at all
            remove_database(args.db)
        raise
    finally:
        restore_signals(previous)
    if caught:
        raise RuntimeError(interrupted(caught[0], args.db, made, stats.intervals))
    took = time.perf_counter() - began
    if stats.stopped_sources:
        raise RuntimeError(f"simulated sources stopped: {', '.join(stats.stopped_sources)}")
    # the second line: how far the configuration is from the calibration
    say_done(
        said(stats, sim.label, args.db, took, start, args.duration, args.interval),
        describe(sim.params),
    )
    return EXIT_OK


def interrupted(signum: int, db: Path, made: bool, intervals: int) -> str:
    """The line for a run a signal ended: a new database goes (half a simulation is no
    recording of it); one that was there keeps the whole intervals committed before."""
    import signal

    name = signal.Signals(signum).name
    if made:
        remove_database(db)
        return f"interrupted by {name}: the new database {db} was removed"
    plural = "" if intervals == 1 else "s"
    return (
        f"interrupted by {name}: {db} keeps the {intervals} whole interval{plural} "
        "recorded before it"
    )


def recorded_before(db: Path, node: str, start_us: int, end_us: int, label: str) -> str | None:
    """Why this run cannot go into ``db``: it holds ``node`` at these times from another run
    (the store keeps one interval per node, source and time, so the run would record nothing
    there, or mix with the other where it goes on past it); ``None`` when nothing is in the
    way (running the same simulation again records nothing new, and says so)."""
    if not db.is_file():
        return None
    from esatui.db.database import StoreError
    from esatui.db.sqlite_reader import SqliteReader
    from esatui.sim.site import SIMULATED_KEY
    from esatui.timeparse import iso

    try:
        with SqliteReader.open(db) as reader:
            held = [s for s in reader.info().sources if s.node == node and s.first_us <= end_us]
            held = [s for s in held if s.last_us > start_us]
            if not held:
                return None
            first = min(s.first_us for s in held)
            last = max(s.last_us for s in held)
            other = reader.config_at(node, last).get(SIMULATED_KEY)
    except StoreError:
        return None  # the recorder says what is wrong with the file
    if other == label:
        return None
    run = f"simulated run {other!r}" if other else "a recording that is no simulation"
    return (
        f"{db} already holds node {node} from {iso(first)} to {iso(last)}, of {run}: this run "
        f"({label!r}) would not be recorded there; give another --db, another --node, or a "
        "--start after it"
    )


def recorded_end(start_us: int, intervals: int, interval_s: float) -> int:
    """Where the recorder's last interval ended: its first ends on the first boundary at
    least half an interval after the start (aligned to local time), each other one an
    interval later; the duration ends on a boundary (``Recorder._run_polled``)."""
    from esatui.sampling.recorder import next_boundary

    first = next_boundary(start_us / 1e6, interval_s)
    return round((first + (max(intervals, 1) - 1) * interval_s) * 1e6)


def said(
    stats: RecorderStats,
    label: str,
    db: Path,
    took: float,
    start_us: int,
    duration_s: float,
    interval_s: float,
) -> str:
    """The one line on what was recorded: the range the database holds now (whole
    intervals), and what of it was there already (the store keeps an interval once)."""
    from esatui.screens.render import format_duration
    from esatui.timeparse import iso

    end_us = recorded_end(start_us, stats.intervals, interval_s)
    span = f"{iso(start_us)} to {iso(end_us)}"
    if end_us != start_us + round(duration_s * 1e6):
        span += f", the {format_duration(duration_s)} duration rounded up to an interval boundary"
    plural = "" if stats.intervals == 1 else "s"
    what = f"{stats.intervals} interval{plural} of {label} ({span})"
    if stats.duplicates and not stats.written:
        were = "was" if stats.intervals == 1 else "were"
        return f"nothing new recorded in {db}: its {what} {were} already there"
    line = f"{what} recorded in {db} in {took:.1f} s"
    if stats.duplicates:
        # the recorder counts these by source (several an interval), not by time
        line += f": {stats.written} source intervals new, {stats.duplicates} already there"
    return f"{line}; sources: {', '.join(stats.sources_written)}"
