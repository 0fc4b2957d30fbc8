"""``esatui screens [NAME ...]``: every screen (or those named) and its columns, provisional
ones marked."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from esatui.commands.common import EXIT_OK, UsageError

if TYPE_CHECKING:
    from esatui.commands.arguments import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("screens", help="list the screens and their columns")
    p.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="only these screens (as export names them: ESAPOLL, poll, lnxc ...)",
    )
    p.add_argument("--format", choices=("text", "json"), default="text", help="(default text)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from esatui.screens import catalog

    screens = catalog.screens()
    if args.names:
        try:
            named = [catalog.get(name).name for name in args.names]
        except KeyError as exc:
            raise UsageError(str(exc.args[0])) from None
        screens = {name: screens[name] for name in dict.fromkeys(named)}
    if args.format == "json":
        doc = [
            {
                "name": s.name,
                "title": s.title,
                "doc": s.doc,
                "needs": s.needs,
                "columns": [
                    {
                        "id": c.id,
                        "header": " ".join(p for p in c.header if p),
                        "unit": c.unit,
                        "decimals": c.decimals,
                        "provisional": c.provisional,
                        "doc": c.doc,
                        "drill": c.drill,
                    }
                    for c in s.columns
                ],
            }
            for s in screens.values()
        ]
        print(json.dumps(doc, indent=1))
        return EXIT_OK
    from esatui.screens.model import threshold_help

    # ids line up, one space past the longest (ESAPOLL's total_busy_per_kvnq)
    id_width = max(len(c.id) for s in screens.values() for c in s.columns) + 1
    for s in screens.values():
        print(f"{s.name:<9} {s.title}  ({s.doc})")
        print(f"{'':9} needs {s.needs}")
        for c in s.columns:
            mark = "  [provisional]" if c.provisional else ""
            unit = f" [{c.unit_text}]" if c.unit else ""
            print(f"{'':11}{c.id:<{id_width}}{c.doc}{unit}{mark}")
        for line in threshold_help(s.columns):
            print(f"{'':11}highlight {line}")
        print()
    return EXIT_OK
