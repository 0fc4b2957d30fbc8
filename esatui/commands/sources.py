"""``esatui sources``: which sources can run here, and why not."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from esatui.commands.arguments import root_dir
from esatui.commands.common import EXIT_OK, registry, source_options

if TYPE_CHECKING:
    from esatui.commands.arguments import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("sources", help="which sources can run here, and why")
    p.add_argument(
        "--root", type=root_dir, default=Path("/"), help="read /proc and /sys below this directory"
    )
    p.add_argument(
        "--source",
        action="append",
        default=[],
        metavar="SPEC",
        help="also probe this source (monwrite:FILE, smapi:HOST[:PORT] ...), as collect takes it",
    )
    p.add_argument("--smapi-user", help="SMAPI authenticated userid")
    p.add_argument("--smapi-password-file", type=Path, help="file holding the SMAPI password")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    for name, doc, found in registry().availability(source_options(args), args.source):
        state = "available" if found.available else "not available"
        print(f"{name:<10} {state:<14} {found.reason}")
        print(f"{'':10} reads {doc}")
    return EXIT_OK
