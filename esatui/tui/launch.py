"""Starting the TUI for ``esatui live`` and ``esatui replay`` (imports Textual)."""

from __future__ import annotations

import argparse
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from esatui.db.records import Interval
from esatui.db.store import Store
from esatui.sampling.recorder import Recorder, Retention
from esatui.screens.model import Threshold
from esatui.sources import SourceOptions, make_sources
from esatui.tui.app import MonitorApp


def run_live(
    args: argparse.Namespace,
    options: SourceOptions,
    thresholds: Mapping[str, Threshold],
    retention: Retention | None,
    db_path: Path,
) -> int:
    sources = make_sources(args.source, options)
    if not sources:
        raise RuntimeError("no source is available here (see esatui sources)")
    with tempfile.TemporaryDirectory(prefix="esatui-") as tmp:
        path = Path(tmp) / "live.sqlite" if args.no_record else db_path
        writer = Store.open(path)

        def record(
            stop: threading.Event,
            on_interval: Callable[[Interval], None],
            warn: Callable[[str], None],
        ) -> None:
            recorder = Recorder(
                writer,
                sources,
                interval_s=args.interval,
                hf_s=args.hf,
                node=args.node,
                warn=warn,
                on_interval=on_interval,
                retention=retention,
            )
            recorder.run(stop)

        app = MonitorApp(
            path, live=True, screen=args.screen, thresholds=thresholds, recorder=record
        )
        try:
            app.run()
        finally:
            writer.close()
    return app.return_code or 0


def run_replay(args: argparse.Namespace, thresholds: Mapping[str, Threshold], db_path: Path) -> int:
    Store.open(db_path, readonly=True).close()  # a clear error before the screen starts
    app = MonitorApp(
        db_path,
        live=False,
        screen=args.screen,
        after_us=args.from_,
        until_us=args.to,
        node=args.node,
        thresholds=thresholds,
    )
    app.run()
    return app.return_code or 0
