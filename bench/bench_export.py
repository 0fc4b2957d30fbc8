"""Export: one day of 1-minute intervals (8 CPUs) to text, in-process and as a subprocess.

SPEC section 8 names ESACPUU (the hypervisor's view of 8 logical processors); issue 2 names
ESALNXC (this Linux's 8 CPUs). The day is recorded once (``bench/out/day.sqlite``) by the
real recorder with 8 CPUs, 4 APQNs, the monitor's D5R9 and D0R2 for 8 logical IFLs, so both
screens have their data; a screen this esatui does not have yet is skipped with a note.
In-process: ``esatui.cli.main(["export", ...])``, the whole command (open, model, render,
write). Subprocess: the ``esatui`` console script, interpreter start and imports included.
"""

from __future__ import annotations

import sys
import tempfile
import time
from functools import partial
from pathlib import Path

from bench.core import Options, Result, fmt, run_child, wall_ms
from bench.fixtures import RecordingSpec, cached_recording
from bench.profiling import dominant
from esatui import cli
from esatui.db.sqlite_reader import SqliteReader
from esatui.formats import render
from esatui.screens import catalog

NAME = "export"
TITLE = "Export one day of 1-minute intervals (8 CPUs) to text"
BAR_S = 1.0
DAY = 1440


def esatui_command() -> list[str]:
    """The console script next to this interpreter (as a user runs it), else ``-m esatui``."""
    script = Path(sys.executable).with_name("esatui")
    return [str(script)] if script.exists() else [sys.executable, "-m", "esatui"]


def export_screen(result: Result, opts: Options, db: Path, screen: str, bar: str) -> None:
    runs = opts.runs(7, 3)
    if screen not in catalog.screens():
        result.notes.append(
            f"{screen} is not in this esatui's screens yet ({', '.join(catalog.screens())}): "
            "its export was not measured; the day's recording already holds the D0R2 "
            "logical-processor data it needs."
        )
        result.target(
            f"one day of 1-minute {screen} (8 CPUs) to text", bar, "screen not built yet", None
        )
        return
    with tempfile.TemporaryDirectory(prefix="esatui-bench-export-") as d:
        out = Path(d) / f"{screen}.txt"
        argv = ["export", screen, "--db", str(db), "--format", "text", "--output", str(out)]

        def in_process() -> None:
            if cli.main(argv) != 0:
                raise RuntimeError(f"esatui {' '.join(argv)} failed")

        whole = result.add(
            f"{screen} text, in-process (esatui.cli.main)", wall_ms(in_process, runs), "ms"
        )
        text = out.read_text()
        result.notes.append(f"What dominates the {screen} export: {dominant(in_process, 1)}.")
        store = SqliteReader.open(db)
        models = []

        def build() -> None:
            models.append(catalog.build_model(store, screen, catalog.Query()))

        result.add(f"  {screen}: screen model of the day", wall_ms(build, runs), "ms")
        model = models[-1]
        result.add(
            f"  {screen}: text rendering", wall_ms(lambda: render(model, "text", 132), runs), "ms"
        )
        if screen == "ESALNXC":
            for fmt_name in ("csv", "json", "jsonl"):
                result.add(
                    f"  {screen}: {fmt_name} rendering",
                    wall_ms(partial(render, model, fmt_name, 132), runs),
                    "ms",
                )
        store.close()
        command = [*esatui_command(), *argv]
        children = []
        for _ in range(opts.runs(5, 2)):
            child = run_child(command)
            if child.status != 0:
                raise RuntimeError(f"{' '.join(command)} exited with {child.status}")
            children.append(child)
        sub = result.add(
            f"{screen} text, subprocess (esatui export): wall",
            [c.wall_s * 1000 for c in children],
            "ms",
        )
        result.add(f"{screen} text, subprocess: CPU", [c.cpu_s * 1000 for c in children], "ms CPU")
    result.notes.append(
        f"{screen}: {len(model.rows):,} rows, {len(text.splitlines()):,} lines, "
        f"{len(text.encode()) / 1e6:.1f} MB of text at width 132."
    )
    result.target(
        f"one day of 1-minute {screen} (8 CPUs) to text",
        bar,
        f"{fmt(whole.median / 1000, 's')} in-process, {fmt(sub.median / 1000, 's')} as a "
        "command (medians)",
        sub.median / 1000 < BAR_S,
    )


def run(opts: Options) -> Result:
    result = Result(NAME, TITLE)
    t0 = time.perf_counter()
    db, built = cached_recording(Path(opts.out_dir), "day", RecordingSpec(intervals=DAY, lcpus=8))
    if built is not None:
        result.notes.append(f"The day's recording was built in {time.perf_counter() - t0:.0f} s.")
    export_screen(result, opts, db, "ESACPUU", f"< {BAR_S:g} s (SPEC section 8)")
    export_screen(result, opts, db, "ESALNXC", f"< {BAR_S:g} s (issue 2, SPEC's bar)")
    return result
