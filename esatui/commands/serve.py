"""``esatui serve --web [HOST:]PORT``: the screens in a browser, through textual-serve.

Each browser connection starts its own ``esatui replay`` (a recording, or a live view of one
that another process records with ``--follow``, or of Prometheus): a viewer that never
records, prunes or changes anything. The server binds to loopback unless told otherwise and
has no authentication and no TLS: README "Many systems" says what that means.
"""

from __future__ import annotations

import argparse
import os
import shlex
import socket
import sys
from typing import TYPE_CHECKING

from esatui.commands import arguments as A
from esatui.commands.common import EXIT_OK, UsageError, db_path

if TYPE_CHECKING:
    from esatui.commands.arguments import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("serve", help="the screens in a browser (read-only)")
    p.add_argument(
        "--web",
        type=A.listen,
        required=True,
        metavar="[HOST:]PORT",
        help="serve the monitor at http://HOST:PORT/ (HOST defaults to 127.0.0.1; no "
        "authentication, no TLS: see README 'Many systems' before giving another)",
    )
    A.db_option(p)
    A.prometheus_option(p)
    p.add_argument("--node", type=A.node_name, help="as esatui replay")
    p.add_argument("--from", dest="from_", metavar="T", help="as esatui replay")
    p.add_argument("--to", metavar="T", help="as esatui replay")
    p.add_argument("--screen", default="ESASSUM", help="first screen (default ESASSUM)")
    p.add_argument(
        "--follow",
        action="store_true",
        help="a live view: follow the newest intervals as another process records them",
    )
    p.set_defaults(run=run)


def viewer_command(args: argparse.Namespace) -> str:
    """The shell command each browser connection runs: a read-only ``esatui replay``."""
    argv = [sys.executable, "-m", "esatui", "replay", "--screen", args.screen]
    if args.prometheus:
        argv += ["--prometheus", args.prometheus]
    else:
        from esatui.db.database import check_file

        path = db_path(args)
        if not path.exists():
            raise RuntimeError(f"{path}: no such database")
        check_file(path)  # a directory, a FIFO, a device: said what it is
        argv += ["--db", str(path.resolve())]
    for option, value in (("--node", args.node), ("--from", args.from_), ("--to", args.to)):
        if value is not None:
            argv += [option, value]
    if args.follow:
        argv.append("--follow")
    return shlex.join(argv)


def run(args: argparse.Namespace) -> int:
    from esatui.screens import catalog

    try:
        catalog.get(args.screen)
        span = [None if t is None else A.moment(t) for t in (args.from_, args.to)]
        # the viewer parses them again: refused here, in one line
        if span[0] is not None and span[1] is not None and span[0] >= span[1]:
            raise UsageError("--from must be before --to")
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    except argparse.ArgumentTypeError as exc:
        raise UsageError(str(exc)) from None
    command = viewer_command(args)
    if not args.prometheus:
        from esatui.db.sqlite_reader import SqliteReader

        SqliteReader.open(db_path(args)).close()  # a file that is no esatui database: refused
    host, port = args.web
    _refuse_taken(host, port)
    from textual_serve.server import Server

    server = Server(command, host=host, port=port, title="esatui")
    print(f"esatui: serving the monitor (read-only) at {server.public_url}", file=sys.stderr)
    server.serve()
    return EXIT_OK


def _refuse_taken(host: str, port: int) -> None:
    """A port another server holds is refused before saying where this one serves (the web
    server would find out only once it has started)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.create_server((host, port), family=family):
            pass
    except OSError as exc:
        why = os.strerror(exc.errno) if exc.errno else str(exc)
        raise RuntimeError(f"cannot serve at {host}:{port}: {why}") from None
