"""``esatui compare``: a screen over two runs side by side, with the delta in percent.

The two runs are two databases (``--db A --with-db B``, the default and the 50 µs
simulation) or two ranges of one (``--from/--to`` and ``--with-from/--with-to``), laid out
like seed 002's tables (``screens/compare.py``).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from esatui.commands import arguments as A
from esatui.commands.common import (
    EXIT_OK,
    UsageError,
    check_node,
    check_output,
    crypto_costs,
    db_path,
    thresholds,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from esatui.commands.arguments import Subparsers
    from esatui.screens.catalog import Query
    from esatui.screens.compare import Comparison, Side
    from esatui.screens.model import Column


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "compare", help="a screen over two runs (databases or ranges) with the delta in percent"
    )
    p.add_argument("screen", help="the screen to compare (ESAPOLL, ESACPUU ...: esatui screens)")
    A.db_option(p)
    p.add_argument(
        "--from", dest="from_", type=A.moment, metavar="T", help="the first run's first time"
    )
    p.add_argument("--to", type=A.moment, metavar="T", help="the first run's last time")
    p.add_argument("--label", help="the first run's name (default: its database's, or range)")
    p.add_argument(
        "--with-db", type=Path, metavar="PATH", help="the second run's database (default: --db)"
    )
    p.add_argument("--with-from", type=A.moment, metavar="T", help="the second run's first time")
    p.add_argument("--with-to", type=A.moment, metavar="T", help="the second run's last time")
    p.add_argument("--with-label", metavar="LABEL", help="the second run's name")
    p.add_argument(
        "--node", type=A.node_name, help="the node of both runs (default: each database's own)"
    )
    p.add_argument(
        "--format",
        choices=("text", "csv", "json", "jsonl"),
        default="text",
        help="(default text; jsonl: JSON's rows, one a line)",
    )
    p.add_argument("--output", type=Path, help="write to this file (default: standard output)")
    p.add_argument("--option", action="append", default=[], help=A.VIEW_OPTION_HELP)
    A.threshold_option(p)
    A.crypto_costs_option(p)
    p.set_defaults(run=run)


def check_databases(args: argparse.Namespace, *databases: Path) -> None:
    """Each database compared is there and a file, said before anything else (a missing
    ``--with-db`` was "both runs are labelled 'x'")."""
    if getattr(args, "prometheus", None):
        return
    from esatui.db.database import check_file

    for db in dict.fromkeys(databases):
        check_file(db)


def run(args: argparse.Namespace) -> int:
    from esatui.screens import catalog
    from esatui.screens.compare import compare

    try:
        screen = catalog.get(args.screen)
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    if screen.fleet:
        raise UsageError(f"{screen.name} shows every node: compare a screen of one node")
    for start, end, names in (
        (args.from_, args.to, "--from must be before --to"),
        (args.with_from, args.with_to, "--with-from must be before --with-to"),
    ):
        if start is not None and end is not None and start >= end:
            raise UsageError(names)
    unknown = [o for o in args.option if o not in screen.view_options]
    if unknown:
        raise UsageError(f"{screen.name} has no view option {unknown[0]!r}")
    first = db_path(args)
    second: Path = args.with_db or first
    if second == first and (args.with_from, args.with_to) == (args.from_, args.to):
        raise UsageError(_same_runs(args, first))
    check_output(args.output, first, second)
    check_databases(args, first, second)
    labels = default_labels(first, second, args)
    if labels[0] == labels[1]:
        raise UsageError(f"both runs are labelled {labels[0]!r}: {_relabel(args, 0, 1)}")
    if args.format == "csv":
        taken = [i for i, label in enumerate(labels) if label in csv_columns(screen.columns)]
        if taken:
            raise UsageError(
                f"a run labelled {labels[taken[0]]!r} would share its CSV column's name: "
                + _relabel(args, *taken)
            )
    query = catalog.Query(
        node=args.node,
        thresholds=thresholds(args),
        options=frozenset(args.option),
        crypto_costs=crypto_costs(args),
    )
    a = side(first, labels[0], screen.name, query, args.from_, args.to)
    b = side(second, labels[1], screen.name, query, args.with_from, args.with_to)
    comparison = compare(a, b)
    text = render(comparison, args.format)
    if args.output is None:
        sys.stdout.write(text)
    else:
        from esatui.commands.output import write_report

        write_report(args.output, text)
    return EXIT_OK


def _same_runs(args: argparse.Namespace, db: Path) -> str:
    """Why two runs that are one are refused: the second named nothing, or named the first."""
    if args.with_db is None and args.with_from is None and args.with_to is None:
        return "compare needs two runs: give --with-db, or --with-from/--with-to"
    return (
        f"both runs are {db} over the same range: give the second another database "
        "(--with-db) or range (--with-from/--with-to)"
    )


def _relabel(args: argparse.Namespace, *runs: int) -> str:
    """What to do about the labels of ``runs`` (0: the first, 1: the second): choose another
    where the user gave it, give one where it was guessed."""
    options = [("--label", args.label), ("--with-label", args.with_label)]
    given = [options[i][0] for i in runs if options[i][1]]
    guessed = [options[i][0] for i in runs if not options[i][1]]
    if given and not guessed:
        return f"choose another with {' or '.join(given)}"
    return f"give {' and '.join(guessed)}" + (f", or choose another {given[0]}" if given else "")


def default_labels(first: Path, second: Path, args: argparse.Namespace) -> tuple[str, str]:
    """``--label``/``--with-label``, else the databases' names (``default``, ``poll50``),
    else (one database) the ranges as given."""
    if first != second:
        guessed = (first.stem, second.stem)
    else:
        guessed = (_range_label(args.from_, args.to), _range_label(args.with_from, args.with_to))
    return (args.label or guessed[0], args.with_label or guessed[1])


def _range_label(after_us: int | None, until_us: int | None) -> str:
    from esatui.screens.render import date_range, moment_text

    if after_us is not None and until_us is not None:
        return date_range(after_us, until_us)
    start = "start" if after_us is None else moment_text(after_us)
    end = "end" if until_us is None else moment_text(until_us)
    return f"{start}-{end}"


def side(
    path: Path, label: str, screen: str, query: Query, after_us: int | None, until_us: int | None
) -> Side:
    """One run: the screen over its range, as one slot, from its database."""
    from dataclasses import replace

    from esatui.db.sqlite_reader import SqliteReader
    from esatui.garbage import reading_in_bulk
    from esatui.screens import catalog
    from esatui.screens.compare import Side, range_model

    if not path.exists():
        raise RuntimeError(f"no database {path}")
    with SqliteReader.open(path) as reader:
        try:
            node = check_node(reader, query.node)
        except RuntimeError as exc:
            raise RuntimeError(f"{path}: {exc}") from None
        ranged = replace(query, node=node, after_us=after_us, until_us=until_us)
        with reading_in_bulk():
            model = range_model(reader, screen, ranged)
    if not model.rows:
        raise RuntimeError(f"{label} ({path}): {catalog.no_rows_reason(model)}")
    return Side(label, path.name, model)


def render(comparison: Comparison, fmt: str) -> str:
    from esatui.screens.compare import render_text

    if fmt == "csv":
        return render_csv(comparison)
    if fmt == "json":
        return render_json(comparison)
    if fmt == "jsonl":
        return "".join(json.dumps(r, allow_nan=False) + "\n" for r in json_rows(comparison))
    return render_text(comparison)


CSV_COLUMNS = ("column", "header", "unit", "delta_pct")
"""The CSV's own columns beside the key columns and the runs' labels."""


def csv_columns(columns: Sequence[Column]) -> tuple[str, ...]:
    """The CSV columns that are not a run's values: the entity's keys, then CSV_COLUMNS."""
    from esatui.screens.rowkey import key_columns

    return (*(c.id for c in key_columns(columns)), *CSV_COLUMNS)


def render_csv(comparison: Comparison) -> str:
    """One line per metric (and entity): the key columns, ``column``, ``header``, ``unit``,
    each run's value under its label, ``delta_pct``."""
    from esatui.screens.compare import metric, part

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    keys = [c.id for c in comparison.keys]
    *named, delta = CSV_COLUMNS
    writer.writerow([*keys, *named, comparison.a.label, comparison.b.label, delta])
    for line in comparison.lines:
        values = (line.a, line.b, line.delta_pct)
        writer.writerow(
            [
                *(part(line.entity, i) for i in range(len(keys))),
                line.column.id,
                metric(line.column),
                line.column.unit,
                *("" if v is None else v for v in values),
            ]
        )
    return out.getvalue()


def render_json(comparison: Comparison) -> str:
    """``{"screen", "title", "runs": [{label, database, node, from, to}, ...], "rows":
    [{<key columns>, "entity", "column", "header", "unit", "values": {label: value},
    "delta_pct"}]}``."""
    document = {
        "screen": comparison.screen,
        "title": comparison.title,
        "runs": [_run(s) for s in (comparison.a, comparison.b)],
        "rows": json_rows(comparison),
    }
    return json.dumps(document, indent=1, allow_nan=False) + "\n"


def json_rows(comparison: Comparison) -> list[dict[str, object]]:
    """JSON's ``rows`` (and JSON lines' lines): one per metric and entity."""
    from esatui.screens.compare import metric
    from esatui.screens.rowkey import entity_text

    keys = [c.id for c in comparison.keys]
    a, b = comparison.a.label, comparison.b.label
    return [
        {
            **dict(zip(keys, line.key_values, strict=True)),
            "entity": entity_text(line.entity) or None,
            "column": line.column.id,
            "header": metric(line.column),
            "unit": line.column.unit,
            "values": {a: line.a, b: line.b},
            "delta_pct": line.delta_pct,
        }
        for line in comparison.lines
    ]


def _run(side: Side) -> dict[str, object]:
    from esatui.timeparse import iso

    model = side.model
    return {
        "label": side.label,
        "database": side.source,
        "node": model.node,
        "from": None if model.from_us is None else iso(model.from_us),
        "to": None if model.to_us is None else iso(model.to_us),
    }
