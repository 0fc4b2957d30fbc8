"""``esatui export``: a screen as text, CSV or JSON, from a recording."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from esatui.commands import arguments as A
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
from esatui.garbage import collecting_rarely

if TYPE_CHECKING:
    from esatui.commands.arguments import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("export", help="a screen as text, CSV or JSON")
    p.add_argument("screen", help="the screen to export (esatui screens lists them)")
    A.db_option(p)
    A.prometheus_option(p)
    A.range_options(p)
    p.add_argument(
        "--interval-len",
        type=A.interval_length,
        metavar="DUR",
        help="aggregate into intervals of this length (15m, 1h, 1d; default: as recorded)",
    )
    p.add_argument(
        "--format",
        choices=("text", "csv", "json", "jsonl", "svg", "plot"),
        default="text",
        help="text (the screen, default), csv, json, jsonl; svg or plot: a graph of --column",
    )
    p.add_argument(
        "--order",
        choices=("desc", "asc"),
        help="the rows' order: desc (newest first, the default) or asc",
    )  # no default: a graph refuses --order given at all
    p.add_argument(
        "--node",
        type=A.node_name,
        help="the system recorded (default: the only one, or the newest)",
    )
    p.add_argument(
        "--width",
        type=A.width,
        default=132,
        help="text width: wider screens page, and a graph's width (default 132)",
    )
    p.add_argument("--output", type=Path, help="write to this file (default: standard output)")
    p.add_argument("--option", action="append", default=[], help=A.VIEW_OPTION_HELP)
    A.threshold_option(p)
    A.crypto_costs_option(p)
    p.add_argument(
        "--stats",
        type=stats_list,
        metavar="LIST",
        help="with --interval-len: add <col>_mean, _p50, _p95, _p99, _max of the recorded "
        "interval values inside each interval (mean,p50,p95,p99,max or some of them)",
    )
    p.add_argument(
        "--column",
        action="append",
        default=[],
        metavar="COL",
        help="the column --format svg|plot draws (a second one: on its own axis)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.format in ("svg", "plot") or args.column:
        from esatui.commands.export_graph import run_graph

        return run_graph(args)
    with collecting_rarely():
        return _export(args)


def _export(args: argparse.Namespace) -> int:
    from esatui.commands import streaming
    from esatui.formats import render
    from esatui.screens import catalog

    try:
        screen = catalog.get(args.screen)
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    if args.from_ is not None and args.to is not None and args.from_ >= args.to:
        raise UsageError("--from must be before --to")
    if args.stats and args.interval_len is None:
        raise UsageError(
            "--stats needs --interval-len: the intervals whose recorded values it takes"
        )
    offered_options = screen.view_options
    unknown = [o for o in args.option if o not in offered_options]
    if unknown:
        offered = f"options: {', '.join(offered_options)}" if offered_options else "it has none"
        raise UsageError(f"{screen.name} has no view option {unknown[0]!r} ({offered})")
    if not getattr(args, "prometheus", None):
        check_output(args.output, db_path(args))
    reader = open_reader(args)
    try:
        args.node = check_node(reader, args.node)
        say_node_chosen(reader, args.node, screen.fleet)
        query = screen_query(args)
        recorded_us = catalog.recorded_length_us(reader, screen, args.node)
        check_length(recorded_us, args.interval_len)
        length_s = nominal_length_s(recorded_us)
        ascending_order = args.order == "asc"
        if not args.stats and streaming.export(  # the statistics need the whole model
            reader,
            screen,
            query,
            args.format,
            args.width,
            ascending_order,
            writer(args),
            length_s=length_s,
        ):
            return EXIT_OK
        model = catalog.build_model(reader, screen.name, query)
        if model.interval_len_s is None:
            model = replace(model, interval_len_s=length_s)
        if args.stats and model.rows:
            from esatui.screens.distribution import recorded_stats

            model = recorded_stats(reader, model, query, args.stats)
    finally:
        reader.close()
    if not model.rows:
        raise RuntimeError(catalog.no_rows_reason(model))
    if args.order == "asc":
        model = replace(model, rows=streaming.ascending(model.rows))
    text = render(model, args.format, args.width)
    writer(args)(lambda out: out.write(text))
    return EXIT_OK


def nominal_length_s(recorded_us: int | None) -> float | None:
    """The recording's interval length to the millisecond (a live recorder's intervals end
    on its clock: 59.999812 s is its 60 s), for JSON's ``interval_len_s`` of rows as
    recorded."""
    return None if recorded_us is None else round(recorded_us / 1000) / 1000


def writer(args: argparse.Namespace) -> Callable[[Callable[[TextIO], object]], None]:
    """Where the export goes: given the function that writes it to a text stream, writes
    it to standard output or, safely, to ``--output``."""

    def write(report: Callable[[TextIO], object]) -> None:
        if args.output is None:
            report(sys.stdout)
        else:
            from esatui.commands.output import write_report_with

            write_report_with(args.output, report)

    return write


def stats_list(text: str) -> tuple[str, ...]:
    """``--stats mean,p50,p95,p99,max`` (or some of them)."""
    from esatui.screens.distribution import STATS, StatsError, parse_stats

    try:
        return parse_stats(text)
    except StatsError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (statistics: {','.join(STATS)})") from None
