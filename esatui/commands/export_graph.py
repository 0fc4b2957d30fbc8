"""``esatui export SCREEN --format svg|plot --column COL [--column COL2]``: a graph.

The graph the monitor's ``g`` shows, over the range asked for: an SVG image (Rich's export
of the coloured plot) or plain text (a character per line, for a terminal or a mail). A
range with more intervals than the graph has points is read in longer intervals
(``screens/graph.py: graph_length``); the title says which.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from esatui.commands.common import (
    EXIT_OK,
    UsageError,
    check_length,
    check_node,
    check_output,
    db_path,
    open_reader,
    say_node_chosen,
    screen_query,
)

if TYPE_CHECKING:
    from esatui.screens.catalog import ScreenDef

GRAPH_HEIGHT = 30
"""Lines of an exported graph (its width is ``--width``)."""


def run_graph(args: argparse.Namespace) -> int:
    from esatui.screens import catalog
    from esatui.screens.graph import load_graph

    screen = _checked(args)
    overlay = args.column[1] if len(args.column) > 1 else None
    if not getattr(args, "prometheus", None):
        check_output(args.output, db_path(args))
    reader = open_reader(args)
    try:
        args.node = check_node(reader, args.node)
        say_node_chosen(reader, args.node, screen.fleet)
        query = screen_query(args)
        check_length(catalog.recorded_length_us(reader, screen, args.node), args.interval_len)
        try:
            graph, model = load_graph(
                reader, screen.name, query, args.column[0], overlay, max_points=2 * args.width
            )
        except KeyError as exc:
            raise UsageError(str(exc.args[0])) from None
    finally:
        reader.close()
    if not model.rows:
        raise RuntimeError(catalog.no_rows_reason(model))
    from esatui.screens.plot import plot_svg, plot_text

    if args.format == "svg":
        text = plot_svg(graph, args.width, GRAPH_HEIGHT)
    else:
        text = plot_text(graph, args.width, GRAPH_HEIGHT)
    if args.output is None:
        sys.stdout.write(text)
    else:
        from esatui.commands.output import write_report

        write_report(args.output, text)
    return EXIT_OK


def _checked(args: argparse.Namespace) -> ScreenDef:
    """The screen to draw, once the arguments make sense for a graph."""
    from esatui.screens import catalog

    if args.format not in ("svg", "plot"):
        raise UsageError("--column is for --format svg or plot")
    if not args.column:
        raise UsageError(f"--format {args.format} needs --column COL (the column to draw)")
    for given, flag in ((args.stats, "--stats"), (args.order, "--order")):
        if given:  # a graph's points are the intervals, oldest first, one value each
            raise UsageError(f"{flag} is for --format text, csv, json or jsonl, not {args.format}")
    if len(args.column) > 2:
        raise UsageError("--column at most twice: a column and one overlaid on its own axis")
    if len(args.column) == 2 and args.column[0] == args.column[1]:
        raise UsageError(
            f"--column {args.column[0]} twice: overlay another column, or give it once"
        )
    try:
        screen = catalog.get(args.screen)
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    if args.from_ is not None and args.to is not None and args.from_ >= args.to:
        raise UsageError("--from must be before --to")
    unknown = [o for o in args.option if o not in screen.view_options]
    if unknown:
        raise UsageError(f"{screen.name} has no view option {unknown[0]!r}")
    return screen
