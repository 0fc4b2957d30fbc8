"""``esatui replay``: move through a recording with the same screens."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from esatui.commands import arguments as A
from esatui.commands.common import (
    UsageError,
    check_node,
    crypto_costs,
    db_path,
    open_reader,
    run_monitor,
    thresholds,
)

if TYPE_CHECKING:
    from esatui.commands.arguments import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("replay", help="move through a recording with the same screens")
    A.db_option(p)
    A.prometheus_option(p)
    A.range_options(p)
    p.add_argument(
        "--node", type=A.node_name, help="the node to show (default: the one written last)"
    )
    p.add_argument(
        "--follow",
        action="store_true",
        help="a live view: follow the newest intervals as another process records them",
    )
    A.view_options(p)
    p.set_defaults(run=run)


FOLLOW_REFRESH_S = 5.0  # how often --follow looks for new intervals


def run(args: argparse.Namespace) -> int:
    from esatui.screens import catalog

    try:
        screen = catalog.get(args.screen)
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    if args.from_ is not None and args.to is not None and args.from_ >= args.to:
        raise UsageError("--from must be before --to")  # as export and compare say it
    reader = open_reader(args)
    try:
        # the first screen's newest interval once, here: a damaged database (or a
        # Prometheus that does not answer) is one line before the app starts (the whole
        # range would be a year of rows on a year-long recording)
        costs = crypto_costs(args)
        args.node = check_node(reader, args.node)
        query = catalog.Query(
            node=args.node, after_us=args.from_, until_us=args.to, crypto_costs=costs, limit=1
        )
        catalog.build_model(reader, screen.name, query)
    finally:
        reader.close()
    from esatui.tui.app import MonitorApp

    app = MonitorApp(
        None if args.prometheus else db_path(args),
        open_with=(lambda: open_reader(args)) if args.prometheus else None,
        live=args.follow,
        refresh_s=FOLLOW_REFRESH_S if args.follow else None,
        screen=args.screen,
        after_us=args.from_,
        until_us=args.to,
        node=args.node,
        thresholds=thresholds(args),
        crypto_costs=costs,
    )
    return run_monitor(app, "replay")
