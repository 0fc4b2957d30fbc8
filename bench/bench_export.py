"""Export (issue 16 target 3): ESACPUU to text, streamed, as a command, beside its lean floor
and beside sysstat's ``sar``/``sadf`` reading a day of per-CPU data.

- **A day**: one day of 1-minute intervals (``bench/out/day.sqlite``: 8 CPUs, 4 APQNs, the
  monitor's D5R9 and D0R2 for 8 logical IFLs), ``esatui export ESACPUU`` as a user runs it
  (the console script, interpreter start and imports included), in every format.
- **A month**: the last 30 days of the year-long recording (``bench/out/year.sqlite``, the
  store and TUI benchmarks' year, with D0R2), ``--from``/``--to``.
- **The lean floor** (``bench/lean_export.py``): the same rows from one streaming SQL query,
  formatted as fixed-width lines, standard library only: what the least a Python program
  does for this output.
- **sysstat**: ``sar -P ALL -f`` and ``sadf -d -- -P ALL`` over a day of sadc's per-CPU
  records for 8 CPUs (``bench/sysstat_day.py``).

Rounds are interleaved (esatui, the floor, sar, sadf; then again), each command timed from
spawn to exit (wall) with its own CPU time and peak resident memory from ``/usr/bin/time``
(a forked child's own figures). Medians of the rounds.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bench.core import Options, Result, fmt
from bench.fixtures import (
    DAY,
    MINUTE_S,
    MONTH,
    YEAR,
    YEAR_SPEC,
    YEAR_START_US,
    RecordingSpec,
    cached_recording,
)
from bench.sysstat_day import sysstat_day

NAME = "export"
TITLE = "Export: ESACPUU streamed to text (a day, a month), its lean floor, sar and sadf"
DAY_BAR_S = 0.35
MONTH_BAR_S = 10.0
MONTH_MIB = 64.0
FLOOR_RATIO = 2.0
LEAN = Path(__file__).resolve().parent / "lean_export.py"
TIME = "/usr/bin/time"


def esatui_command() -> list[str]:
    """The console script next to this interpreter (as a user runs it), else ``-m esatui``."""
    script = Path(sys.executable).with_name("esatui")
    return [str(script)] if script.exists() else [sys.executable, "-m", "esatui"]


@dataclass(frozen=True)
class Run:
    wall_s: float
    cpu_s: float
    peak_mib: float


def timed(argv: Sequence[str], stdout: Path) -> Run:
    """``argv`` run under ``/usr/bin/time``, which forks it and reports its peak resident
    memory (a child forked from this large process would inherit this one's peak); the
    CPU is the kernel's for that child and what it reaped (wait4), to the microsecond."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report, stdout.open("w") as out:
        command = [TIME, "-f", "%M", "-o", report.name, *argv]
        t0 = time.perf_counter()
        child = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - t0
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} exited with {child.returncode}")
        peak_kib = report.read().split()[-1]
    return Run(wall, usage.ru_utime + usage.ru_stime, int(peak_kib) / 1024)


def local_text(time_us: int) -> str:
    return datetime.fromtimestamp(time_us / 1e6).strftime("%Y-%m-%d %H:%M")


def rounds(commands: dict[str, list[str]], n: int, out: Path) -> dict[str, list[Run]]:
    """Every command once per round, in turn, ``n`` rounds."""
    runs: dict[str, list[Run]] = {name: [] for name in commands}
    for _ in range(n):
        for name, argv in commands.items():
            runs[name].append(timed(argv, out / f"{name.replace(' ', '_')}.out"))
    return runs


def report(result: Result, label: str, runs: list[Run]) -> tuple[float, float, float]:
    wall = result.add(f"{label}: wall", [r.wall_s for r in runs], "s")
    cpu = result.add(f"{label}: CPU", [r.cpu_s for r in runs], "s CPU")
    peak = result.add(f"{label}: peak memory", [r.peak_mib for r in runs], "MiB")
    return wall.median, cpu.median, peak.median


def ratio(a: list[Run], b: list[Run], field: str) -> float:
    """The median of the rounds' ratios (each round's two runs side by side)."""
    pairs = zip(a, b, strict=True)
    return float(statistics.median(getattr(x, field) / getattr(y, field) for x, y in pairs))


def day(result: Result, opts: Options, db: Path, sa: Path | None, out: Path) -> None:
    esatui = esatui_command()
    export = [*esatui, "export", "ESACPUU", "--db", str(db)]
    commands = {"esatui": [*export, "--output", str(out / "esacpuu.txt")]}
    commands["floor"] = [sys.executable, str(LEAN), str(db), str(out / "lean.txt")]
    if sa is not None:
        commands["sar"] = ["sar", "-P", "ALL", "-f", str(sa)]
        commands["sadf"] = ["sadf", "-d", str(sa), "--", "-P", "ALL"]
    for fmt_name in ("csv", "json", "jsonl"):
        commands[fmt_name] = [*export, "--format", fmt_name, "--output", str(out / fmt_name)]
    commands["esalnxc"] = [
        *esatui,
        "export",
        "ESALNXC",
        "--db",
        str(db),
        "--output",
        str(out / "l"),
    ]
    runs = rounds(commands, opts.runs(7, 2), out)
    wall, cpu, peak = report(result, "a day of ESACPUU to text: esatui export", runs["esatui"])
    f_wall, f_cpu, _ = report(result, "a day: the lean streaming floor", runs["floor"])
    rows = sum(1 for _ in (out / "esacpuu.txt").open())
    floor_x = ratio(runs["esatui"], runs["floor"], "cpu_s")
    floor_wall_x = ratio(runs["esatui"], runs["floor"], "wall_s")
    result.notes.append(
        f"A day of ESACPUU: {rows:,} lines of text; esatui / the lean floor, per round: "
        f"{floor_x:.2f}x CPU, {floor_wall_x:.2f}x wall."
    )
    for fmt_name in ("csv", "json", "jsonl"):
        report(result, f"a day of ESACPUU to {fmt_name}: esatui export", runs[fmt_name])
    if "sar" in runs:
        report(result, "a day of 8 CPUs: sar -P ALL -f (sysstat)", runs["sar"])
        report(result, "a day of 8 CPUs: sadf -d -- -P ALL (sysstat)", runs["sadf"])
        sar_x = ratio(runs["esatui"], runs["sar"], "cpu_s")
        sadf_x = ratio(runs["esatui"], runs["sadf"], "cpu_s")
        result.notes.append(
            f"esatui's day of ESACPUU text / sysstat's day of per-CPU data, per round: "
            f"{sar_x:.1f}x sar's CPU, {sadf_x:.1f}x sadf's CPU "
            f"({ratio(runs['esatui'], runs['sar'], 'wall_s'):.1f}x sar's wall). sar prints "
            "6 columns per CPU and 'all' (9 lines an interval, as ESACPUU's 8 + Tot), from a "
            "binary file, in C."
        )
        result.target(
            "a day of per-CPU data to text beside sysstat (reported, no bar)",
            "ratio",
            f"{sar_x:.1f}x sar -P ALL, {sadf_x:.1f}x sadf -d (CPU, medians of per-round ratios)",
            None,
        )
    result.target(
        "a day of 1-minute ESACPUU (8 CPUs) to text, as a command",
        f"< {DAY_BAR_S:g} s",
        f"{fmt(wall, 's')} wall, {fmt(cpu, 's')} CPU, {fmt(peak, 'MiB')} (medians)",
        wall < DAY_BAR_S,
    )
    l_wall, _, _ = report(result, "a day of ESALNXC to text: esatui export", runs["esalnxc"])
    for screen, measured in (("ESACPUU", wall), ("ESALNXC", l_wall)):
        result.target(
            f"one day of 1-minute {screen} (8 CPUs) to text, as a command",
            "< 1 s (SPEC section 8; issue 2)",
            f"{fmt(measured, 's')} wall (median)",
            measured < 1.0,
        )
    result.target(
        "a day of ESACPUU to text within 2x of a lean streaming floor",
        f"<= {FLOOR_RATIO:g}x",
        f"{floor_x:.2f}x CPU ({fmt(cpu, 's')} / {fmt(f_cpu, 's')}), "
        f"{floor_wall_x:.2f}x wall ({fmt(wall, 's')} / {fmt(f_wall, 's')})",
        floor_x <= FLOOR_RATIO,
    )


def month(result: Result, opts: Options, year: Path, out: Path) -> None:
    until = YEAR_START_US + YEAR * MINUTE_S * 1_000_000
    after = until - MONTH * MINUTE_S * 1_000_000
    export = [*esatui_command(), "export", "ESACPUU", "--db", str(year)]
    span = ["--from", local_text(after), "--to", local_text(until)]
    commands = {
        "esatui month": [*export, *span, "--output", str(out / "month.txt")],
        "floor month": [
            *(sys.executable, str(LEAN), str(year), str(out / "lean-month.txt")),
            *(str(after), str(until)),
        ],
        "esatui month jsonl": [*export, *span, "--format", "jsonl", "--output", str(out / "m")],
        "esatui month summary": [
            *(*esatui_command(), "export", "ESASSUM", "--db", str(year), *span),
            *("--output", str(out / "summary.txt")),
        ],
        "esatui month queues": [
            *(*esatui_command(), "export", "ESACRYQ", "--db", str(year), *span),
            *("--output", str(out / "queues.txt")),
        ],
        "esatui month stats": [
            *(*export, *span, "--interval-len", "1d", "--stats", "mean,p95,p99,max"),
            *("--output", str(out / "s")),
        ],
    }
    runs = rounds(commands, opts.runs(3, 1), out)
    wall, cpu, peak = report(
        result, "a month of ESACPUU to text: esatui export", runs["esatui month"]
    )
    _, f_cpu, _ = report(result, "a month: the lean streaming floor", runs["floor month"])
    _, _, j_peak = report(result, "a month of ESACPUU to JSON lines", runs["esatui month jsonl"])
    _, _, m_peak = report(result, "a month of ESASSUM to text", runs["esatui month summary"])
    _, _, q_peak = report(result, "a month of ESACRYQ to text", runs["esatui month queues"])
    _, _, s_peak = report(
        result,
        "a month of ESACPUU by the day, --stats mean,p95,p99,max (every interval's values read)",
        runs["esatui month stats"],
    )
    floor_x = ratio(runs["esatui month"], runs["floor month"], "cpu_s")
    lines = sum(1 for _ in (out / "month.txt").open())
    result.notes.append(
        f"A month of ESACPUU: {lines:,} lines; esatui / the floor: {floor_x:.2f}x CPU per round."
    )
    result.target(
        "a month of 1-minute ESACPUU to text, as a command",
        f"< {MONTH_BAR_S:g} s",
        f"{fmt(wall, 's')} wall, {fmt(cpu, 's')} CPU ({floor_x:.2f}x the floor's "
        f"{fmt(f_cpu, 's')})",
        wall < MONTH_BAR_S,
    )
    result.target(
        "a month of ESACPUU: peak memory of the command (flat in the range)",
        f"< {MONTH_MIB:g} MiB",
        f"{fmt(peak, 'MiB')} text, {fmt(j_peak, 'MiB')} JSON lines, {fmt(s_peak, 'MiB')} by "
        f"the day with --stats, ESASSUM {fmt(m_peak, 'MiB')}, ESACRYQ {fmt(q_peak, 'MiB')} "
        "(a day: see above)",
        max(peak, j_peak, s_peak, m_peak, q_peak) < MONTH_MIB,
    )


def run(opts: Options) -> Result:
    result = Result(NAME, TITLE)
    out_dir = Path(opts.out_dir)
    t0 = time.perf_counter()
    db, built = cached_recording(out_dir, "day", RecordingSpec(intervals=DAY, lcpus=8))
    if built is not None:
        result.notes.append(f"The day's recording was built in {time.perf_counter() - t0:.0f} s.")
    sa, how = sysstat_day(out_dir)
    if sa is None:
        result.notes.append(f"sysstat's day was not measured: {how}.")
    if not (os.access(TIME, os.X_OK) and shutil.which("sar")):
        result.notes.append("sar or /usr/bin/time missing: sysstat not compared.")
        sa = None
    with tempfile.TemporaryDirectory(prefix="esatui-bench-export-") as tmp:
        day(result, opts, db, sa, Path(tmp))
        year = out_dir / "year.sqlite"
        if opts.quick and not year.exists():
            result.notes.append("--quick: no year database yet; the month was not measured.")
        else:
            year, _ = cached_recording(out_dir, "year", YEAR_SPEC)
            month(result, opts, year, Path(tmp))
    return result
