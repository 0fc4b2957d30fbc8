"""``esatui db info | prune | vacuum``: what a database holds, retention, compaction."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from esatui.commands import arguments as A
from esatui.commands.common import (
    EXIT_OK,
    Interrupted,
    UsageError,
    db_path,
    raise_on_signals,
    warn,
)

if TYPE_CHECKING:
    from esatui.commands.arguments import Parser, Subparsers
    from esatui.db.maintenance import PruneResult
    from esatui.db.merge import Skipped
    from esatui.db.sqlite_reader import SqliteReader


def register(sub: Subparsers) -> None:
    p = sub.add_parser("db", help="database maintenance")
    parser_class: type[Parser] = type(p)
    db_sub = p.add_subparsers(dest="db_command", parser_class=parser_class, required=True)
    info = db_sub.add_parser("info", help="what the database holds")
    A.db_option(info)
    prune = db_sub.add_parser("prune", help="delete old intervals")
    A.db_option(prune)
    prune.add_argument(
        "--keep",
        type=A.duration,
        help="keep this much history before now, e.g. 30d (an older recording goes whole: "
        "--dry-run first)",
    )
    prune.add_argument(
        "--max-size", type=A.max_size, help="keep the data under this size, e.g. 2GB"
    )
    prune.add_argument(
        "--dry-run", action="store_true", help="say what would be deleted, delete nothing"
    )
    vacuum = db_sub.add_parser("vacuum", help="rebuild the file to its smallest size")
    A.db_option(vacuum)
    merge = db_sub.add_parser(
        "merge", help="write other databases' recordings (every node) into this one"
    )
    A.db_option(merge)
    merge.add_argument("others", nargs="+", type=Path, metavar="DB", help="databases to merge in")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from esatui.db import maintenance
    from esatui.db.sqlite_reader import SqliteReader
    from esatui.db.store import Store
    from esatui.timeparse import iso

    path = db_path(args)
    if args.db_command == "merge":
        return run_merge(path, args.others)
    if args.db_command == "info":
        with SqliteReader.open(path) as reader:
            found = reader.info()
        print(f"database   {path}")
        for key, value in found.meta.items():
            print(f"{key:<14} {value}")
        for s in found.sources:
            # an hour is rolled up once its source writes in a later one (db/rollup.py)
            rolled = "none yet" if s.rolled_until_us is None else iso(s.rolled_until_us)
            print(
                f"node {s.node}  source {s.source}: {s.intervals} intervals, "
                f"{iso(s.first_us)} to {iso(s.last_us)}, hours rolled up to {rolled}"
            )
        for kind, n in found.rows.items():
            print(
                f"kind {kind}: {n} rows, {found.rollup_rows.get(kind, 0)} hourly rollup rows, "
                f"{found.quarter_rows.get(kind, 0)} quarter-hour and "
                f"{found.day_rows.get(kind, 0)} daily"
            )
        return EXIT_OK
    if args.db_command == "prune":
        if args.keep is None and args.max_size is None:
            raise UsageError("db prune needs --keep DUR and/or --max-size SIZE")
        if args.dry_run:
            with SqliteReader.open(path) as reader:
                print(dry_run(reader, args.keep, args.max_size))
            return EXIT_OK
    with Store.open(path, create=False) as store:
        if args.db_command == "prune":
            result = maintenance.prune(store, args.keep, args.max_size)
            # a source's interval: what `db info` counts per source (collect counts times)
            print(f"{result.intervals_deleted:,} source intervals deleted; {sizes(result)}")
            if result.over_bound:
                warn(over_bound(args.max_size, result.bytes_after))
        else:
            result = maintenance.vacuum(store)
            print(f"vacuumed {path}: {sizes(result)}")
    return EXIT_OK


def over_bound(max_bytes: int, left: int) -> str:
    """Why a prune ended over its ``--max-size``."""
    return (
        f"--max-size {max_bytes:,} bytes is less than the database takes with the newest "
        f"interval of each source ({left:,} bytes): those are kept"
    )


def sizes(result: PruneResult) -> str:
    return f"file {result.bytes_before:,} -> {result.bytes_after:,} bytes"


def dry_run(reader: SqliteReader, keep_s: float | None, max_bytes: int | None) -> str:
    """What ``db prune`` would delete now, in one line."""
    from esatui.db.prune_plan import plan
    from esatui.timeparse import iso

    found = plan(reader, keep_s, max_bytes)
    if not found.intervals or found.first_us is None or found.last_us is None:
        return f"dry run: nothing would be deleted ({found.total:,} source intervals kept)"
    why = []
    if keep_s is not None:
        why.append(f"{found.by_age:,} older than --keep")
    if max_bytes is not None:
        more = found.intervals - found.by_age
        why.append(
            f"{more:,} more toward --max-size, which the newest interval of each source exceeds"
            if found.over_bound
            else f"{more:,} more to fit --max-size"
        )
    return (
        f"dry run: would delete {found.intervals:,} of {found.total:,} source intervals, ending "
        f"{iso(found.first_us)} to {iso(found.last_us)} ({'; '.join(why)}); nothing deleted"
    )


def run_merge(path: Path, others: list[Path]) -> int:
    from esatui.db.database import check_file
    from esatui.db.merge import merge

    for other in others:
        check_file(other)
    made = not path.exists()
    try:
        with raise_on_signals() as signals:
            # committed, the merge is done: closing it (a checkpoint) is not undone by a signal
            stats = merge(path, others, committed=signals.hold)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except Interrupted as stopped:
        # the merge is one transaction: rolled back, and a target it made removed
        kept = f"the new database {path} was removed" if made else f"{path} is as it was"
        raise RuntimeError(f"{stopped}: nothing merged; {kept}") from None
    for skipped in stats.skipped:
        if skipped.other:
            warn(clash(skipped, path))
    nodes = ", ".join(sorted(stats.nodes or ()))
    print(
        f"{stats.written} intervals merged into {path} ({stats.intervals - stats.written} "
        f"already there); nodes: {nodes}"
    )
    return EXIT_OK


def clash(skipped: Skipped, target: Path) -> str:
    """The warning for a database whose intervals the target held with other data: a
    merge keeps one interval per node, source and time, the first one merged."""
    parts = []
    for node, other in sorted(skipped.other.items()):
        total = other + skipped.same[node]
        # some may agree with the target's (counters the seed does not move): counted too
        some = "" if other == total else f" ({other} with other data)"
        parts.append(f"{total} intervals of node {node}{some}")
    return (
        f"{skipped.path}: {', '.join(parts)} not merged: {target} already holds intervals "
        "of the same node, source and time, with other data (another system recorded "
        "under the same node name?); record each system under its own (collect --node, "
        "sim --node)"
    )
