"""``esatui collect``: record without a screen (an import, or a headless recorder)."""

from __future__ import annotations

import argparse
import sys
import threading
from typing import TYPE_CHECKING

from esatui.commands import arguments as A
from esatui.commands.common import (
    EXIT_ERROR,
    EXIT_OK,
    db_path,
    exposition,
    gauge_rate,
    own_data_dir,
    registry,
    remove_database,
    restore_signals,
    retention,
    source_options,
    stop_on_signals,
    warn,
)
from esatui.commands.streams import say_done

if TYPE_CHECKING:
    from collections.abc import Sequence

    from esatui.commands.arguments import Subparsers
    from esatui.registry import Source


def register(sub: Subparsers) -> None:
    p = sub.add_parser("collect", help="record without a screen")
    A.db_option(p)
    A.source_options(p)
    A.exposition_options(p)
    stop = p.add_mutually_exclusive_group()
    stop.add_argument("--count", type=A.positive_int, help="stop after N intervals")
    stop.add_argument(
        "--duration",
        type=A.duration,
        help="stop after this long, at the interval boundary that ends it (begun inside an "
        "interval, the first is partial: --interval 1 --duration 4 records 4 or 5)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from esatui.progress import ImportProgress
    from esatui.sampling.recorder import SELF_SOURCE
    from esatui.sampling.session import Recording, WarnChannel

    hf_s = gauge_rate(args)
    bar = ImportProgress(sys.stderr)
    said = LastWords()
    channel = WarnChannel(said)
    sources = registry().make_sources(args.source, source_options(args, bar.update, channel))
    if not sources:
        raise RuntimeError("no source is available here (see esatui sources)")
    refuse_unusable_imports(sources)
    shown = exposition(args, said)
    recording = Recording(
        db_path(args),
        sources,
        interval_s=args.interval,
        hf_s=hf_s,
        node=args.node,
        retention=retention(args),
        channel=channel,
        make_dirs=own_data_dir(args),
        exporters=() if shown is None else (shown.interval,),
    )
    made = not recording.db_path.exists()
    stop = threading.Event()
    previous = stop_on_signals(stop)
    try:
        with bar:
            stats = recording.run(stop, warn=said, count=args.count, duration_s=args.duration)
    finally:
        restore_signals(previous)
        if shown is not None:
            shown.close()
    # a stopped source has said why; any other that recorded nothing is said here
    done = {*stats.sources_written, *stats.stopped_sources}
    silent = [s for s in sources if s.name not in done]
    nothing = "nothing was recorded from " + "; ".join(f"{s.name} ({why(s, said)})" for s in silent)
    if silent and made and not set(stats.sources_written) - {SELF_SOURCE}:
        # a new database with esatui's own rows alone is no recording: not left behind
        remove_database(recording.db_path)
        raise RuntimeError(f"{nothing}; {recording.db_path} not kept")
    summary = recorded_summary(stats.intervals, stats.written, stats.sources_written)
    summary += f" in {recording.db_path}"
    if stats.duplicates:
        summary += f" ({stats.duplicates} already recorded)"
    reports = [getattr(source, "import_summary", None) for source in sources]
    say_done(
        summary,
        *(f"{s.name}: {r()}" for s, r in zip(sources, reports, strict=True) if callable(r)),
    )
    if silent:
        # a run that recorded nothing of a source it was asked for did not do its job
        raise RuntimeError(nothing)
    return EXIT_ERROR if stats.stopped_sources else EXIT_OK


def refuse_unusable_imports(sources: Sequence[Source]) -> None:
    """An import whose file cannot be used (missing, unreadable, not of its format) is refused
    with its reason before the database is opened: recording it would only leave an empty
    database behind."""
    for source in sources:
        if not callable(getattr(source, "import_summary", None)):
            continue  # not an import: its probe may be a connection, and it is no file to check
        found = source.probe()
        if not found.available:
            for other in sources:
                other.close()
            raise RuntimeError(found.reason)


def recorded_summary(intervals: int, written: int, sources: list[str]) -> str:
    """``3 intervals recorded (sources: host, esatui)``: intervals of time, not interval x
    source (an import's stream sources count their own intervals, the polled none)."""
    n = intervals or written
    names = ", ".join(sources) or "none"
    return f"{n} interval{'' if n == 1 else 's'} recorded (sources: {names})"


def why(source: object, said: LastWords) -> str:
    """Why a source recorded nothing: its own last warning (a refused connection, retried)
    and the recorder's after it (late, still sampling), else what its import read."""
    name: str = getattr(source, "name", "?")
    if name in said.tail:
        return "; ".join(said.tail[name])
    report = getattr(source, "import_summary", None)
    return str(report()) if callable(report) else "no interval ended"


class LastWords:
    """The warning line, remembering what was last said of each source: its own last word
    and the recorder's words after it (for the final error)."""

    def __init__(self) -> None:
        self.tail: dict[str, list[str]] = {}

    def __call__(self, message: str) -> None:
        from esatui.sampling.recorder import recorders_word

        name, sep, rest = message.partition(": ")
        if sep:
            tail = self.tail.setdefault(name, [])
            if not recorders_word(rest):
                tail.clear()
            if rest not in tail:
                tail.append(rest)
        warn(message)
