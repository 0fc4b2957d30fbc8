"""The TUI: key to repaint on a month and on a year of 1-minute intervals (SPEC: under 50 ms
with a year-long database), and start-up to the first frame (SPEC: under 1.5 s).

Key to repaint: ``MonitorApp`` in replay mode driven by Textual's Pilot (``run_test``, a
132 x 50 terminal) on the recordings of :mod:`bench.bench_store`. Every frame the screen
composes is time-stamped (a wrapper around the screen's compositor refresh); a key's time
runs from just before the key is sent to the first frame that shows the model the key asked
for (for keys that load nothing, the first frame after the key), composed when Textual's
own screen update timer fires, as in use. Pilot's headless driver composes the frame but
writes it nowhere: the terminal's own time to draw is not included.

Start-up: ``esatui replay --db ...`` on a pseudo-terminal of 132 x 50, from the spawn to the
first output, and to the first frame that shows the newest interval's row. Also the
``esatui --version`` command, and the import time of ``esatui export`` (``-X importtime``),
which must not load Textual.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import math
import os
import random
import re
import select
import signal
import statistics
import struct
import sys
import tempfile
import termios
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

from textual.pilot import Pilot

from bench.bench_export import esatui_command
from bench.bench_store import MONTH, YEAR
from bench.core import Options, Result, fmt, run_child
from bench.fixtures import MINUTE_S, YEAR_SPEC, YEAR_START_US, RecordingSpec, cached_recording
from esatui.db.reader import Reader
from esatui.db.sqlite_reader import SqliteReader
from esatui.formats import render
from esatui.garbage import start_up_set_aside
from esatui.screens import catalog
from esatui.screens.model import ScreenModel
from esatui.tui.app import MonitorApp
from esatui.tui.pilot import settle

NAME = "tui"
TITLE = "TUI: key to repaint (month, year of 1-minute intervals); start-up to first frame"
SIZE = (132, 50)
KEY_BAR_MS = 50.0
START_BAR_S = 1.5
ANSI = re.compile(
    rb"\x1b(\[[0-9;?<>=$ ]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78])"
)
_IMPORT = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)")


# --- key to repaint ---------------------------------------------------------------------


class FrameLog:
    """When each frame was composed and which model the app held then; and when the screen
    models were built (in the load worker) and rendered into the widgets (on the UI)."""

    def __init__(self, app: MonitorApp) -> None:
        self.frames: list[tuple[float, ScreenModel | None]] = []
        self.builds: list[tuple[float, float]] = []
        self.renders: list[tuple[float, float]] = []
        self.paints: list[tuple[float, float]] = []  # Textual's layout and compositing
        screen = app.screen
        compose: Callable[[], None] = screen._compositor_refresh
        layout: Callable[..., None] = screen._refresh_layout
        render: Callable[[], None] = app._render

        def logged() -> None:
            t0 = time.perf_counter()
            compose()
            t1 = time.perf_counter()
            self.paints.append((t0, t1))
            self.frames.append((t1, app.model))

        def laid_out(*args: object, **kwargs: object) -> None:
            t0 = time.perf_counter()
            layout(*args, **kwargs)
            self.paints.append((t0, time.perf_counter()))

        def rendered() -> None:
            t0 = time.perf_counter()
            render()
            self.renders.append((t0, time.perf_counter()))

        setattr(screen, "_compositor_refresh", logged)  # noqa: B010 - wrapping Textual's
        setattr(screen, "_refresh_layout", laid_out)  # noqa: B010
        setattr(app, "_render", rendered)  # noqa: B010

    @contextlib.contextmanager
    def timing_builds(self) -> Iterator[None]:
        """``catalog.build_model`` timed while the app runs (the app calls it by module)."""
        build = catalog.build_model

        def timed(reader: Reader, name: str, query: catalog.Query) -> ScreenModel:
            t0 = time.perf_counter()
            try:
                return build(reader, name, query)
            finally:
                self.builds.append((t0, time.perf_counter()))

        catalog.build_model = timed
        try:
            yield
        finally:
            catalog.build_model = build

    def spent(self, after: float, until: float) -> tuple[float, float, float]:
        """Milliseconds building models, rendering them into the widgets, and laying out
        and compositing the screen, between two times."""

        def total(spans: list[tuple[float, float]]) -> float:
            # a layout composes the screen within itself: count nested spans once
            covered, reach = 0.0, after
            for s, e in sorted(x for x in spans if x[0] >= after and x[1] <= until):
                covered += max(0.0, e - max(s, reach))
                reach = max(reach, e)
            return covered * 1000

        return total(self.builds), total(self.renders), total(self.paints)

    def first(self, after: float, not_model: ScreenModel | None, any_model: bool) -> float | None:
        for t, model in self.frames:
            if t >= after and (any_model or model is not not_model):
                return t
        return None


async def timed_key(
    pilot: Pilot[int], app: MonitorApp, log: FrameLog, keys: tuple[str, ...], loads: bool
) -> tuple[float, float, float, float]:
    """Milliseconds from sending the last of ``keys`` to its frame, and of them the time
    spent building the screen model, rendering it into the widgets, and in Textual's layout
    and compositing.

    The key goes in as Pilot sends keys, but the frame is left to Textual's own screen
    update timer, as when a user presses it (Pilot's ``pause`` would force one)."""
    if len(keys) > 1:
        await pilot.press(*keys[:-1])
    await settle(pilot)
    before = app.model
    t0 = time.perf_counter()
    await app._press_keys(keys[-1:])
    deadline = t0 + 120
    while (t := log.first(t0, before, any_model=not loads)) is None:
        if time.perf_counter() > deadline:
            raise TimeoutError(f"no frame after {keys}")
        await asyncio.sleep(0.001)
    await settle(pilot)
    return ((t - t0) * 1000, *log.spent(t0, t))


def local_text(time_us: int) -> str:
    return datetime.fromtimestamp(time_us / 1e6).strftime("%Y-%m-%d %H:%M")


Times = dict[str, list[tuple[float, float, float, float]]]


async def drive(db: Path, intervals: int, runs: int, ladder_runs: int) -> Times:
    """Each key's (total, model build, render, layout and compositing) ms, by key."""
    times: Times = {}
    rng = random.Random(7)
    app = MonitorApp(db, live=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        while app.model is None:
            await asyncio.sleep(0.01)
            await settle(pilot)
        log = FrameLog(app)

        async def key(label: str, keys: tuple[str, ...], loads: bool = True) -> None:
            times.setdefault(label, []).append(await timed_key(pilot, app, log, keys, loads))

        with log.timing_builds():
            for _ in range(runs):
                await key("Down (row cursor; nothing to load)", ("down",), loads=False)
                await key("[ (previous interval)", ("left_square_bracket",))
                await key("] (next interval)", ("right_square_bracket",))
                loads = app.table.at_bottom
                label = "PgDn (older page)" if loads else "PgDn (cursor to the page's end)"
                await key(label, ("pagedown",), loads)
                await key("Enter (drill: ESASSUM to ESALNXC)", ("enter",))
                await key("Esc (back to ESASSUM)", ("escape",))
                moment = YEAR_START_US + rng.randrange(1, intervals) * MINUTE_S * 1_000_000
                await key(
                    "j TIME Enter (jump to a random time)", ("j", *local_text(moment), "enter")
                )
            steps = ("1 min", "5 min", "15 min", "1 h", "1 day")
            for _ in range(ladder_runs):
                # each ladder at a time of its own: every `+` reads its buckets afresh (the
                # monitor keeps the buckets it has read: `-` back to a length is as in use)
                moment = YEAR_START_US + rng.randrange(1, intervals) * MINUTE_S * 1_000_000
                await key(
                    "j TIME Enter (jump to a random time)", ("j", *local_text(moment), "enter")
                )
                for step in steps:
                    await key(f"+ (intervals of {step})", ("plus",))
                for step in (*reversed(steps[:-1]), "as recorded"):
                    await key(f"- (back to {step})", ("minus",))
            for _ in range(ladder_runs):
                # a jump at the lengths whose buckets a screenful reads most of (cold: a new
                # time), and a `-` to a length not read at the time jumped to
                for at, presses in (("15 min", 3), ("1 day", 2)):
                    for _ in range(presses):
                        await pilot.press("plus")
                        await settle(pilot)
                    moment = YEAR_START_US + rng.randrange(1, intervals) * MINUTE_S * 1_000_000
                    await key(
                        f"j TIME Enter at {at} (a new time: its buckets read cold)",
                        ("j", *local_text(moment), "enter"),
                    )
                await key("- (to 1 h, not read at this time)", ("minus",))
                for _ in range(4):
                    await pilot.press("minus")
                    await settle(pilot)
        await pilot.press("q")
    return times


# The bar is judged per group of keys: moving through recorded intervals, jumping to a time,
# and changing the interval length (which aggregates many recorded intervals into one).
GROUPS = (
    (
        "cursor and paging: Down, [, ], PgDn, Enter (drill), Esc",
        ("Down", "[", "]", "PgDn", "Enter", "Esc"),
    ),
    ("j TIME Enter (jump to a random time)", ("j",)),
    ("+ and - (interval length: 1 min to 1 day, aggregating)", ("+", "-")),
)


def key_results(result: Result, label: str, times: Times, db_name: str) -> None:
    split = []
    worst: dict[str, tuple[float, str]] = {}
    for key, found in times.items():
        m = result.add(f"{db_name}: {key}", [f[0] for f in found], "ms")
        build, render, paint = (statistics.median(f[i] for f in found) for i in (1, 2, 3))
        split.append(
            f"{key.split(' (')[0]} {fmt(m.median)} = {fmt(build)} + {fmt(render)} + {fmt(paint)}"
        )
        for group, prefixes in GROUPS:
            if key.startswith(prefixes) and m.median > worst.get(group, (0.0, ""))[0]:
                worst[group] = (m.median, key)
    result.notes.append(
        f"{db_name}, medians in ms, key = building the screen model (worker thread) + "
        "rendering it into the widgets + Textual's layout and compositing (UI thread), the "
        "rest being event handling and the wait for Textual's next frame (60 a second); the "
        "worker's build and the UI's layout can run at once, so the parts may add up to more "
        f"than the whole: {'; '.join(split)}."
    )
    for group, _ in GROUPS:
        ms, key = worst.get(group, (math.nan, ""))
        result.target(
            f"key to repaint, {label}: {group}",
            f"< {KEY_BAR_MS:g} ms",
            f"slowest: {key} {fmt(ms, 'ms')} median",
            ms < KEY_BAR_MS,
        )


# --- start-up ---------------------------------------------------------------------------


def newest_row_text(db: Path) -> str:
    """The time column of the newest ESASSUM row, as the screen shows it."""
    with SqliteReader.open(db) as store:
        model = catalog.build_model(store, "ESASSUM", catalog.Query(limit=1))
    for line in render(model, "text", SIZE[0]).splitlines():
        if re.match(r"\d\d:\d\d:\d\d ", line):
            return line[:8]
    raise RuntimeError(f"no ESASSUM row in {db}")


def first_frame(db: Path, marker: str, timeout: float = 60.0) -> tuple[float, float, float]:
    """Seconds from spawning ``esatui replay`` on a pseudo-terminal to its first output and
    to the first output showing ``marker``, and the child's CPU seconds until it quit."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[1], SIZE[0], 0, 0))
    env = dict(os.environ, TERM="xterm-256color")
    env.pop("TEXTUAL", None)
    argv = [*esatui_command(), "replay", "--db", str(db)]
    actions = [(os.POSIX_SPAWN_DUP2, slave, fd) for fd in (0, 1, 2)]
    t0 = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, env, file_actions=actions, setsid=True)
    os.close(slave)
    seen = bytearray()
    first_out = shown = math.nan
    try:
        while time.perf_counter() - t0 < timeout:
            ready, _, _ = select.select([master], [], [], 0.02)
            if not ready:
                continue
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:
                break
            now = time.perf_counter()
            if not chunk:
                break
            if math.isnan(first_out):
                first_out = now - t0
            seen += chunk
            if marker.encode() in ANSI.sub(b"", bytes(seen)):
                shown = now - t0
                break
        os.write(master, b"q")
        deadline = time.perf_counter() + 15
        while time.perf_counter() < deadline:
            done, _status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                return first_out, shown, usage.ru_utime + usage.ru_stime
            with contextlib.suppress(OSError):
                if select.select([master], [], [], 0.05)[0]:
                    os.read(master, 1 << 16)  # keep the terminal drained while it quits
        os.kill(pid, signal.SIGKILL)
        _, _status, usage = os.wait4(pid, 0)
        return first_out, shown, usage.ru_utime + usage.ru_stime
    finally:
        os.close(master)


def startup(result: Result, opts: Options, dbs: dict[str, Path]) -> None:
    runs = opts.runs(5, 2)
    for db_name, db in dbs.items():
        marker = newest_row_text(db)
        found = [first_frame(db, marker) for _ in range(runs)]
        result.add(f"{db_name}: esatui replay, spawn to first output", [f[0] for f in found], "s")
        shown = result.add(
            f"{db_name}: esatui replay, spawn to the first frame with data",
            [f[1] for f in found],
            "s",
            f"the newest row, {marker}",
        )
        result.add(f"{db_name}: esatui replay, CPU until it quit", [f[2] for f in found], "s CPU")
        result.target(
            f"start-up to first frame, {db_name}",
            f"< {START_BAR_S:g} s",
            f"{fmt(shown.median, 's')} median to the newest row on screen",
            shown.median < START_BAR_S,
        )


def import_time(argv: list[str]) -> tuple[float, bool]:
    """Total import time (ms, the sum of ``-X importtime``'s own times) and whether Textual
    was imported."""
    import subprocess

    out = subprocess.run(
        [sys.executable, "-X", "importtime", *argv], capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(f"python {' '.join(argv)}: {out.stderr.strip()[-200:]}")
    total = 0
    textual = False
    for line in out.stderr.splitlines():
        match = _IMPORT.match(line)
        if match:
            total += int(match.group(1))
            name = match.group(4)
            textual |= name == "textual" or name.startswith("textual.")
    return total / 1000, textual


def commands(result: Result, opts: Options, day: Path) -> None:
    runs = opts.runs(7, 3)
    version = [run_child([*esatui_command(), "--version"]) for _ in range(runs)]
    result.add("esatui --version: wall", [c.wall_s * 1000 for c in version], "ms")
    result.add("esatui --version: CPU", [c.cpu_s * 1000 for c in version], "ms CPU")
    with tempfile.TemporaryDirectory(prefix="esatui-bench-import-") as d:
        out = Path(d) / "x.txt"
        end = local_text(YEAR_START_US + 60 * MINUTE_S * 1_000_000)
        cases = {
            "esatui --version": ["-m", "esatui", "--version"],
            "esatui export ESALNXC (an hour)": [
                *("-m", "esatui", "export", "ESALNXC", "--db", str(day), "--to", end),
                *("--output", str(out)),
            ],
            "the TUI's modules (esatui.tui.app, Textual)": ["-c", "import esatui.tui.app"],
        }
        for label, argv in cases.items():
            found = [import_time(argv) for _ in range(runs)]
            textual = any(t for _, t in found)
            result.add(
                f"imports of {label}",
                [ms for ms, _ in found],
                "ms",
                "Textual loaded" if textual else "Textual not loaded",
            )
            if label.startswith("esatui export"):
                result.target(
                    "esatui export starts without loading Textual (SPEC section 2)",
                    "no textual.* import",
                    "Textual loaded" if textual else "no Textual module imported",
                    not textual,
                )


def run(opts: Options) -> Result:
    result = Result(NAME, TITLE)
    out = Path(opts.out_dir)
    runs, ladder = opts.runs(9, 3), opts.runs(3, 1)
    dbs: dict[str, Path] = {}
    name, n = ("3 days", 3 * 1440) if opts.quick else ("month", MONTH)
    dbs[name] = cached_recording(out, "quick-3days" if opts.quick else "month", RecordingSpec(n))[0]
    year = out / "year.sqlite"
    if not opts.quick or year.exists():
        dbs["year"] = cached_recording(out, "year", YEAR_SPEC)[0]
    else:
        result.notes.append("--quick: no year database yet (python -m bench store builds it).")
    for db_name, db in dbs.items():
        intervals = YEAR if db_name == "year" else n
        with start_up_set_aside():  # as the commands run the monitor (run_monitor)
            times = asyncio.run(drive(db, intervals, runs, ladder))
        key_results(result, f"{db_name} of 1-minute intervals", times, db_name)
    startup(result, opts, dbs)
    day, _ = cached_recording(out, "day", RecordingSpec(intervals=1440, lcpus=8))
    commands(result, opts, day)
    result.notes += [
        f"Terminal {SIZE[0]} x {SIZE[1]}: the TUI fetches a screenful (42 intervals) per load. "
        "Keys are timed from just before Pilot sends them to the first composed frame holding "
        "the new screen model (the load runs in a thread worker); Pilot's headless driver "
        "writes no bytes to a terminal.",
        "+ and - step the interval length through 1 min, 5 min, 15 min, 1 h and 1 day: a "
        "screenful of 1-day intervals aggregates 42 days of 1-minute rows.",
        "Start-up: esatui replay on a pseudo-terminal (posix_spawn, TERM=xterm-256color), "
        "the output read as it comes; 'with data' is the first time the newest interval's "
        "time appears in the output (escape sequences removed).",
    ]
    return result
