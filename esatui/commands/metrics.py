"""``esatui metrics``: every Prometheus metric esatui exposes (docs/METRICS.md)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from esatui.commands.common import EXIT_OK

if TYPE_CHECKING:
    from esatui.commands.arguments import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("metrics", help="list the Prometheus metrics (docs/METRICS.md)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from esatui.exposition.doc import render

    print(render(), end="")
    return EXIT_OK
