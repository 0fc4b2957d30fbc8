"""The command line: ``esatui [live|collect|replay|export|sim|demo|screens|sources|db]``.

Each command imports only what it needs, so ``collect`` and ``export`` start without
loading Textual. Errors are one line on stderr (a traceback only with ``--debug``); exit
status 0 on success, 2 on bad arguments, 1 on anything else.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from esatui import __version__
from esatui.sources import SourceOptions, SourceUsageError

if TYPE_CHECKING:
    from esatui.sampling.recorder import Retention
    from esatui.screens.model import Row, Threshold

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad arguments: exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def default_db() -> Path:
    env = os.environ.get("ESATUI_DB")
    if env:
        return Path(env)
    from platformdirs import user_data_dir

    return Path(user_data_dir("esatui")) / "esatui.sqlite"


def warn(message: str) -> None:
    print(f"esatui: {message}", file=sys.stderr, flush=True)


# --- argument types ------------------------------------------------------------------


def _duration(text: str) -> float:
    from esatui.timeparse import ParseError, parse_duration

    try:
        return parse_duration(text)
    except ParseError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _size(text: str) -> int:
    from esatui.timeparse import ParseError, parse_size

    try:
        return parse_size(text)
    except ParseError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _time(text: str) -> int:
    from esatui.timeparse import ParseError, parse_time

    try:
        return parse_time(text)
    except ParseError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be at least 1")
    return value


def _speed(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value <= 1e6:
        raise argparse.ArgumentTypeError(f"{text!r}: must be above 0 (1 is wall-clock speed)")
    return value


def _threshold(text: str) -> tuple[str, float, float]:
    name, sep, levels = text.partition("=")
    warn_s, _, crit_s = levels.partition(",")
    try:
        if not sep:
            raise ValueError
        return name.strip(), float(warn_s), float(crit_s or warn_s)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give NAME=WARN,CRIT, e.g. steal=10,25"
        ) from None


# --- the parser ------------------------------------------------------------------------

# Spelled out here so that building the parser never imports the simulator.
SCENARIO_HELP = "mode-vm-day, or seed002-t1|t2|t3-baseline|polling|interrupts (seed 002's runs)"
SET_HELP = (
    "a model parameter: guests, threads, op (rsa_sign, rsa_verify, rsa_sign_verify), key_bits, "
    "cards, card_type, poll_timeout_us (a number or irq), cp_crypto_mode (baseline, polling, "
    "interrupts), smt, lpar_cpus (e.g. 1CP+2IFL), cpu_load; and vcpus, domains, rate, "
    "foreign_rate, cp_speed, dedicated, profile, vse_guests, vse_load (docs/MODEL.md)"
)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="esatui", description="ESAMON-style performance screens for Linux on IBM Z and z/VM."
    )
    parser.add_argument("--version", action="version", version=f"esatui {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    def db_option(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--db", type=Path, help="database (default: $ESATUI_DB or the user data dir)"
        )

    def source_options(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--interval", type=_duration, default=60.0, help="interval length (default 60s)"
        )
        p.add_argument("--hf", type=_duration, default=2.0, help="gauge sampling rate (default 2s)")
        p.add_argument(
            "--source",
            action="append",
            default=[],
            metavar="SPEC",
            help="auto (default), host, zcrypt, hypfs, vmcp, monreader[:DEV], "
            "monwrite:FILE, smapi:HOST[:PORT], smapi:iucv, sim:SCENARIO",
        )
        p.add_argument(
            "--root", type=Path, default=Path("/"), help="read /proc and /sys below this directory"
        )
        p.add_argument("--node", help="node name to record under (default: VM00 name or host name)")
        p.add_argument("--smapi-user", help="SMAPI authenticated userid")
        p.add_argument("--smapi-password-file", type=Path, help="file holding the SMAPI password")
        p.add_argument(
            "--smapi-guests",
            default="*",
            metavar="LIST",
            help="guests to query: * (all active), U1,U2 or namelist:NAME",
        )
        p.add_argument(
            "--smapi-tls", action="store_true", help="SMAPI over TLS (certificates checked)"
        )
        p.add_argument(
            "--smapi-ca", type=Path, metavar="FILE", help="CA certificates for --smapi-tls"
        )
        p.add_argument("--monitor-layout", type=Path, help="monitor record layout file")
        p.add_argument("--keep", type=_duration, help="retention: delete intervals older than this")
        p.add_argument(
            "--max-size", type=_size, help="retention: keep the database under this size"
        )

    def view_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--screen", default="ESASSUM", help="first screen (default ESASSUM)")
        p.add_argument(
            "--threshold",
            action="append",
            type=_threshold,
            default=[],
            metavar="NAME=WARN,CRIT",
            help="highlight levels: steal, dserv_pct, dserv_us, unsucc_dq_s, dq_per_op "
            "(defaults and reasons: esatui screens, the README)",
        )

    live = sub.add_parser("live", help="monitor this system (the default command)")
    db_option(live)
    source_options(live)
    view_options(live)
    live.add_argument(
        "--no-record", action="store_true", help="keep nothing: use a temporary database"
    )

    collect = sub.add_parser("collect", help="record without a screen")
    db_option(collect)
    source_options(collect)
    stop = collect.add_mutually_exclusive_group()
    stop.add_argument("--count", type=_positive_int, help="stop after N intervals")
    stop.add_argument("--duration", type=_duration, help="stop after this long")

    replay = sub.add_parser("replay", help="move through a recording with the same screens")
    db_option(replay)
    replay.add_argument("--from", dest="from_", type=_time, metavar="T")
    replay.add_argument("--to", type=_time, metavar="T")
    replay.add_argument("--node")
    view_options(replay)

    export = sub.add_parser("export", help="a screen as text, CSV or JSON")
    export.add_argument("screen")
    db_option(export)
    export.add_argument("--from", dest="from_", type=_time, metavar="T")
    export.add_argument("--to", type=_time, metavar="T")
    export.add_argument("--interval-len", type=_duration, metavar="DUR")
    export.add_argument("--format", choices=("text", "csv", "json", "jsonl"), default="text")
    export.add_argument("--order", choices=("desc", "asc"), default="desc")
    export.add_argument("--node")
    export.add_argument("--width", type=_positive_int, default=132)
    export.add_argument("--output", type=Path)
    export.add_argument("--option", action="append", default=[], help="screen view option")
    export.add_argument(
        "--threshold", action="append", type=_threshold, default=[], metavar="NAME=WARN,CRIT"
    )

    sim = sub.add_parser("sim", help="record a simulated z/VM system (a day in seconds)")
    sim.add_argument("--scenario", metavar="NAME", help=SCENARIO_HELP)
    sim.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help=SET_HELP)
    sim.add_argument("--duration", type=_duration, required=True, metavar="DUR")
    sim.add_argument("--interval", type=_duration, default=60.0, metavar="DUR")
    sim.add_argument("--start", type=_time, metavar="T", help="default 2026-01-05T00:00Z")
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--db", type=Path, required=True)

    demo = sub.add_parser("demo", help="the live screens on a simulated z/VM system")
    demo.add_argument("--scenario", metavar="NAME", default="mode-vm-day", help=SCENARIO_HELP)
    demo.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help=SET_HELP)
    demo.add_argument("--speed", type=_speed, default=1.0, metavar="X")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--db", type=Path, help="keep the recording here (default: temporary)")

    screens = sub.add_parser("screens", help="list the screens and their columns")
    screens.add_argument("--format", choices=("text", "json"), default="text")

    sources = sub.add_parser("sources", help="which sources can run here, and why")
    sources.add_argument("--root", type=Path, default=Path("/"))
    sources.add_argument("--source", action="append", default=[], metavar="SPEC")
    sources.add_argument("--smapi-user")
    sources.add_argument("--smapi-password-file", type=Path)

    db = sub.add_parser("db", help="database maintenance")
    db_sub = db.add_subparsers(dest="db_command", parser_class=_Parser, required=True)
    info = db_sub.add_parser("info", help="what the database holds")
    db_option(info)
    prune = db_sub.add_parser("prune", help="delete old intervals")
    db_option(prune)
    prune.add_argument("--keep", type=_duration, help="keep this much history, e.g. 30d")
    prune.add_argument("--max-size", type=_size, help="keep the data under this size, e.g. 2GB")
    vacuum = db_sub.add_parser("vacuum", help="rebuild the file to its smallest size")
    db_option(vacuum)
    return parser


# --- commands --------------------------------------------------------------------------


def _source_options(
    args: argparse.Namespace, progress: Callable[[int, int], None] | None = None
) -> SourceOptions:
    return SourceOptions(
        root=args.root,
        warn=warn,
        smapi_user=getattr(args, "smapi_user", None),
        smapi_password_file=getattr(args, "smapi_password_file", None),
        smapi_guests=getattr(args, "smapi_guests", "*"),
        smapi_tls=getattr(args, "smapi_tls", False),
        smapi_ca=getattr(args, "smapi_ca", None),
        monitor_layout=getattr(args, "monitor_layout", None),
        progress=progress,
    )


def _retention(args: argparse.Namespace) -> Retention | None:
    from esatui.sampling.recorder import Retention

    if args.keep is None and args.max_size is None:
        return None
    return Retention(args.keep, args.max_size)


def cmd_collect(args: argparse.Namespace) -> int:
    from esatui.db.store import Store
    from esatui.progress import ImportProgress
    from esatui.sampling.recorder import Recorder
    from esatui.sources import make_sources

    bar = ImportProgress(sys.stderr)
    sources = make_sources(args.source, _source_options(args, bar.update))
    if not sources:
        raise RuntimeError("no source is available here (see esatui sources)")
    store = Store.open(args.db or default_db())
    recorder = Recorder(
        store,
        sources,
        interval_s=args.interval,
        hf_s=args.hf,
        node=args.node,
        warn=warn,
        retention=_retention(args),
    )
    stop = threading.Event()
    previous = _stop_on_signals(stop)
    try:
        with bar:
            stats = recorder.run(stop, count=args.count, duration_s=args.duration)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        store.close()
    names = ", ".join(stats.sources_written) or "no source"
    summary = f"{stats.written} intervals of {names} recorded in {store.path}"
    if stats.duplicates:
        summary += f" ({stats.duplicates} already recorded)"
    print(summary)
    for source in sources:
        report = getattr(source, "import_summary", None)
        if callable(report):
            print(f"{source.name}: {report()}")
    return EXIT_ERROR if stats.stopped_sources else EXIT_OK


def _stop_on_signals(stop: threading.Event) -> dict[int, Any]:
    """SIGINT and SIGTERM end the recording cleanly; returns the handlers they replaced."""

    def handler(signum: int, frame: object) -> None:
        stop.set()

    previous: dict[int, Any] = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, handler)
    return previous


def _thresholds(args: argparse.Namespace) -> dict[str, Threshold]:
    from esatui.screens.model import DEFAULT_THRESHOLDS, Threshold

    thresholds = dict(DEFAULT_THRESHOLDS)
    for name, low, high in args.threshold:
        if name not in thresholds:
            raise UsageError(f"unknown threshold {name!r} (thresholds: {', '.join(thresholds)})")
        thresholds[name] = Threshold(low, high)
    return thresholds


def cmd_export(args: argparse.Namespace) -> int:
    from esatui.db.store import Store
    from esatui.export import render
    from esatui.screens import catalog
    from esatui.screens.model import ScreenModel

    try:
        screen = catalog.get(args.screen)
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    if args.from_ is not None and args.to is not None and args.from_ >= args.to:
        raise UsageError("--from must be before --to")
    store = Store.open(args.db or default_db(), readonly=True)
    if args.node is not None and args.node not in store.nodes():
        raise RuntimeError(f"no data for node {args.node!r} (nodes: {', '.join(store.nodes())})")
    query = catalog.Query(
        node=args.node,
        after_us=args.from_,
        until_us=args.to,
        interval_len_us=None if args.interval_len is None else int(args.interval_len * 1e6),
        thresholds=_thresholds(args),
        options=frozenset(args.option),
    )
    model: ScreenModel = catalog.build_model(store, screen.name, query)
    store.close()
    if not model.rows:
        reason = model.notes[0] if model.notes else "nothing recorded in this range"
        raise RuntimeError(f"no {screen.name} data: {reason}")
    if args.order == "asc":
        from dataclasses import replace

        model = replace(model, rows=_ascending(model.rows))
    text = render(model, args.format, args.width)
    if args.output is None:
        sys.stdout.write(text)
    else:
        _write_atomically(args.output, text)
    return EXIT_OK


def _ascending(rows: Sequence[Row]) -> tuple[Row, ...]:
    """Oldest interval first, keeping each interval's rows in their order."""
    groups: list[list[Row]] = []
    for row in rows:
        if groups and groups[-1][0].end_us == row.end_us and not row.first:
            groups[-1].append(row)
        else:
            groups.append([row])
    return tuple(r for group in reversed(groups) for r in group)


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.esatui-tmp")
    try:
        tmp.write_text(text)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def cmd_screens(args: argparse.Namespace) -> int:
    import json

    from esatui.screens import catalog

    screens = catalog.screens()
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

    for s in screens.values():
        print(f"{s.name:<9} {s.title}  ({s.doc})")
        print(f"{'':9} needs {s.needs}")
        for c in s.columns:
            mark = "  [provisional]" if c.provisional else ""
            unit = f" [{c.unit}]" if c.unit else ""
            print(f"{'':11}{c.id:<16}{c.doc}{unit}{mark}")
        for line in threshold_help(s.columns):
            print(f"{'':11}highlight {line}")
        print()
    return EXIT_OK


def cmd_sources(args: argparse.Namespace) -> int:
    from esatui.sources import availability

    for name, doc, found in availability(_source_options(args), args.source):
        state = "available" if found.available else "not available"
        print(f"{name:<10} {state:<14} {found.reason}")
        print(f"{'':10} reads {doc}")
    return EXIT_OK


def cmd_db(args: argparse.Namespace) -> int:
    from esatui.db import maintenance
    from esatui.db.store import Store
    from esatui.timeparse import iso

    path = args.db or default_db()
    if args.db_command == "info":
        store = Store.open(path, readonly=True)
        meta, sources, rows = maintenance.info(store)
        print(f"database   {path}")
        for key, value in meta.items():
            print(f"{key:<14} {value}")
        for s in sources:
            print(
                f"node {s.node}  source {s.source}: {s.intervals} intervals, "
                f"{iso(s.first_us)} to {iso(s.last_us)}"
            )
        rolled = maintenance.rollup_rows(store)
        for kind, n in rows.items():
            print(f"kind {kind}: {n} rows, {rolled.get(kind, 0)} hourly rollup rows")
        return EXIT_OK
    store = Store.open(path, create=False)
    if args.db_command == "prune":
        if args.keep is None and args.max_size is None:
            raise UsageError("db prune needs --keep DUR and/or --max-size SIZE")
        result = maintenance.prune(store, args.keep, args.max_size)
    else:
        result = maintenance.vacuum(store)
    print(
        f"{result.intervals_deleted} intervals deleted; file {result.bytes_before} -> "
        f"{result.bytes_after} bytes"
    )
    return EXIT_OK


def cmd_live(args: argparse.Namespace) -> int:
    from esatui.tui.launch import run_live

    return run_live(
        args, _source_options(args), _thresholds(args), _retention(args), args.db or default_db()
    )


def cmd_replay(args: argparse.Namespace) -> int:
    from esatui.tui.launch import run_replay

    return run_replay(args, _thresholds(args), args.db or default_db())


def cmd_sim(args: argparse.Namespace) -> int:
    from esatui.sim.run import SimUsageError, run_command

    if not args.scenario and not args.set:
        raise UsageError("sim needs --scenario NAME or --set KEY=VALUE (or both)")
    try:
        print(
            run_command(
                args.scenario,
                args.set,
                db_path=args.db,
                duration_s=args.duration,
                interval_s=args.interval,
                start_us=args.start,
                seed=args.seed,
                warn=warn,
            )
        )
    except SimUsageError as exc:
        raise UsageError(str(exc)) from None
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    from esatui.sim.demo import run_demo
    from esatui.sim.run import SimUsageError

    try:
        return run_demo(args.scenario, args.set, speed=args.speed, seed=args.seed, db_path=args.db)
    except SimUsageError as exc:
        raise UsageError(str(exc)) from None


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "live": cmd_live,
    "collect": cmd_collect,
    "replay": cmd_replay,
    "export": cmd_export,
    "sim": cmd_sim,
    "demo": cmd_demo,
    "screens": cmd_screens,
    "sources": cmd_sources,
    "db": cmd_db,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = _with_command(list(sys.argv[1:] if argv is None else argv))
    debug = "--debug" in argv
    try:
        args = parser.parse_args(argv)
        return COMMANDS[args.command](args)
    except (UsageError, SourceUsageError) as exc:
        print(f"esatui: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_ERROR
    except BrokenPipeError:
        # the reader (head, less) went away: not an error, and nothing more to say
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:
        if debug:
            raise
        print(f"esatui: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_ERROR


def _with_command(argv: list[str]) -> list[str]:
    """``esatui`` and ``esatui --db X`` mean ``esatui live ...``."""
    i = 0
    while i < len(argv) and argv[i] == "--debug":
        i += 1
    if i < len(argv) and (not argv[i].startswith("-") or argv[i] in ("--version", "-h", "--help")):
        return argv  # a command (argparse names the unknown ones)
    return [*argv[:i], "live", *argv[i:]]


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())
