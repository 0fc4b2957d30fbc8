"""``esatui replay``: move through a recording with the same screens."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from esatui.commands import arguments as A
from esatui.commands.common import UsageError, crypto_costs, db_path, thresholds

if TYPE_CHECKING:
    from esatui.commands.arguments import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("replay", help="move through a recording with the same screens")
    A.db_option(p)
    p.add_argument("--from", dest="from_", type=A.moment, metavar="T")
    p.add_argument("--to", type=A.moment, metavar="T")
    p.add_argument("--node")
    A.view_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from esatui.db.sqlite_reader import SqliteReader
    from esatui.screens import catalog

    try:
        screen = catalog.get(args.screen)
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    path = db_path(args)
    with SqliteReader.open(path) as reader:
        # the first screen once, here: a damaged database is one line before the app starts
        costs = crypto_costs(args)
        query = catalog.Query(
            node=args.node, after_us=args.from_, until_us=args.to, crypto_costs=costs
        )
        catalog.build_model(reader, screen.name, query)
    from esatui.tui.app import MonitorApp

    app = MonitorApp(
        path,
        live=False,
        screen=args.screen,
        after_us=args.from_,
        until_us=args.to,
        node=args.node,
        thresholds=thresholds(args),
        crypto_costs=costs,
    )
    app.run()
    return app.return_code or 0
