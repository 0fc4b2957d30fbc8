"""``esatui live`` (the default command): the monitor on this system, recording as it goes."""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from esatui.commands import arguments as A
from esatui.commands.common import (
    UsageError,
    crypto_costs,
    db_path,
    exposition,
    gauge_rate,
    leave_at_rest,
    need_terminal,
    own_data_dir,
    registry,
    retention,
    run_monitor,
    source_options,
    thresholds,
    warn,
)

if TYPE_CHECKING:
    from esatui.commands.arguments import Subparsers
    from esatui.registry import SourceOptions
    from esatui.sampling.recorder import Retention
    from esatui.sampling.session import WarnChannel
    from esatui.screens.crypto_costs import CostTable
    from esatui.screens.model import Threshold


def register(sub: Subparsers) -> None:
    p = sub.add_parser("live", help="monitor this system (the default command)")
    A.db_option(p)
    A.source_options(p)
    A.view_options(p)
    A.exposition_options(p)
    A.prometheus_option(p)
    p.add_argument(
        "--no-record", action="store_true", help="keep nothing: use a temporary database"
    )
    p.set_defaults(run=run)


@dataclass(frozen=True)
class Live:
    """What ``esatui live`` was asked for."""

    db_path: Path
    specs: Sequence[str]
    options: SourceOptions  # their ``warn`` is ``channel``
    channel: WarnChannel  # the sources' warnings: on the status line once the monitor runs
    interval_s: float
    hf_s: float
    node: str | None
    retention: Retention | None
    screen: str
    thresholds: Mapping[str, Threshold]
    keep: bool  # False: --no-record, a temporary database
    make_dirs: bool = False  # the database's directory is esatui's own: create it (0700)
    crypto_costs: CostTable | None = None  # ESACRYPE's table (None: the built-in default)
    listen: tuple[str, int] | None = None  # --listen: the Prometheus exposition
    textfile: Path | None = None  # --textfile DIR


def run(args: argparse.Namespace) -> int:
    if args.prometheus:
        return watch_prometheus(args)
    from esatui.sampling.session import WarnChannel

    channel = WarnChannel(warn)
    return run_live(
        Live(
            db_path(args),
            args.source,
            source_options(args, warn_to=channel),
            channel,
            args.interval,
            gauge_rate(args),
            args.node,
            retention(args),
            args.screen,
            thresholds(args),
            not args.no_record,
            own_data_dir(args),
            crypto_costs(args),
            args.listen,
            args.textfile,
        )
    )


PROMETHEUS_REFRESH_S = 15.0  # how often a live view of Prometheus looks for new intervals


def watch_prometheus(args: argparse.Namespace) -> int:
    """``esatui live --prometheus URL``: the newest intervals of a node that Prometheus
    holds, followed as they come (nothing is recorded here)."""
    from esatui.exposition.prometheus_reader import PrometheusReader
    from esatui.screens import catalog
    from esatui.tui.app import MonitorApp

    if args.db is not None or args.source or args.listen or args.textfile:
        raise UsageError(
            "--prometheus reads what others record: no --db, --source, --listen, --textfile"
        )
    reader = PrometheusReader(args.prometheus)
    try:
        node = reader.node(args.node)
        if node is None:
            nodes = ", ".join(reader.nodes()) or "none"
            raise RuntimeError(f"no esatui node {args.node or ''} in Prometheus (nodes: {nodes})")
        catalog.get(args.screen)
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    finally:
        reader.close()
    app = MonitorApp(
        None,
        live=True,
        screen=args.screen,
        node=node,
        thresholds=thresholds(args),
        open_with=lambda: PrometheusReader(args.prometheus),
        refresh_s=PROMETHEUS_REFRESH_S,
    )
    return run_monitor(app, "live")


def run_live(live: Live) -> int:
    from esatui.db.store import Store
    from esatui.sampling.session import Recording
    from esatui.tui.app import MonitorApp
    from esatui.tui.preview import SampleChannel, tapped

    need_terminal("live")  # before a source starts or the database is made
    made = registry().make_sources(live.specs, live.options)
    if not made:
        raise RuntimeError("no source is available here (see esatui sources)")
    samples = SampleChannel()  # the first samples, shown until the first interval is over
    sources = tapped(made, samples)
    asked = argparse.Namespace(listen=live.listen, textfile=live.textfile, interval=live.interval_s)
    shown = exposition(asked, live.channel)
    with tempfile.TemporaryDirectory(prefix="esatui-") as tmp:
        path = live.db_path if live.keep else Path(tmp) / "live.sqlite"
        # there to read before the first interval is written
        Store.open(path, make_dirs=live.make_dirs).close()
        recording = Recording(
            path,
            sources,
            interval_s=live.interval_s,
            hf_s=live.hf_s,
            node=live.node,
            retention=live.retention,
            channel=live.channel,
            exporters=() if shown is None else (shown.interval,),
        )
        app = MonitorApp(
            path,
            live=True,
            screen=live.screen,
            thresholds=live.thresholds,
            recorder=recording,
            samples=samples,
            interval_s=live.interval_s,
            crypto_costs=live.crypto_costs,
        )
        try:
            return run_monitor(app, "live")
        finally:
            if shown is not None:
                shown.close()
            if live.keep:
                app.close_reader()  # it may still be closing in its own thread
                leave_at_rest(path)
