"""Reports of benchmark results: a compact text report, markdown tables, and the splice that
regenerates the generated parts of ``docs/BENCHMARKS.md`` between their markers.

A generated block is ``<!-- bench:NAME:begin -->`` ... ``<!-- bench:NAME:end -->``; everything
outside the blocks is written by hand and kept. A block that is not in the document yet is
inserted before ``<!-- bench:new-sections -->`` (or appended at the end).
"""

from __future__ import annotations

import json
import os
import platform
import re
import sqlite3
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from bench.core import Measure, Result, Target, fmt, summary

NEW_SECTIONS = "<!-- bench:new-sections -->"


# --- the machine ------------------------------------------------------------------------


@dataclass(frozen=True)
class CpuTimes:
    """Whole-machine /proc/stat times, to say how busy and how stolen the run was."""

    busy: int
    steal: int
    total: int

    @classmethod
    def now(cls) -> CpuTimes:
        try:
            first = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
        except (OSError, IndexError):
            return cls(0, 0, 0)
        ticks = [int(v) for v in first[:8]]
        user, nice, system, _idle, _iowait, irq, softirq, steal = ticks + [0] * (8 - len(ticks))
        return cls(user + nice + system + irq + softirq, steal, sum(ticks))


def machine_facts(start: CpuTimes, end: CpuTimes, when: str) -> list[tuple[str, str]]:
    facts: list[tuple[str, str]] = [("run", when)]
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.partition(":")[2].strip()
                break
    except OSError:
        pass
    facts.append(("CPU", f"{os.cpu_count()} x {model or platform.processor() or 'unknown'}"))
    try:
        mem_kib = int(Path("/proc/meminfo").read_text().split()[1])
        facts.append(("memory", f"{mem_kib / 1024 / 1024:.1f} GiB"))
    except (OSError, ValueError, IndexError):
        pass
    facts.append(("kernel", f"{platform.system()} {platform.release()} {platform.machine()}"))
    facts.append(("Python", platform.python_version()))
    facts.append(("SQLite", sqlite3.sqlite_version))
    for dist in ("textual", "rich", "psutil"):
        try:
            facts.append((dist, metadata.version(dist)))
        except metadata.PackageNotFoundError:
            continue
    sadc = sysstat_version()
    if sadc:
        facts.append(("sysstat", sadc))
    total = end.total - start.total
    if total > 0:
        facts.append(
            (
                "during the run",
                f"machine {100 * (end.busy - start.busy) / total:.0f}% busy, "
                f"{100 * (end.steal - start.steal) / total:.1f}% stolen by the hypervisor "
                "(/proc/stat, all CPUs)",
            )
        )
    return facts


def sysstat_version() -> str:
    from bench.sysstat import find_sadc

    sadc = find_sadc()
    if sadc is None:
        return ""
    try:
        out = subprocess.run([sadc, "-V"], capture_output=True, text=True, timeout=10, check=False)
    except OSError:
        return ""
    match = re.search(r"version\s+(\S+)", out.stdout + out.stderr)
    return match.group(1) if match else ""


# --- text -------------------------------------------------------------------------------


def text_report(result: Result) -> list[str]:
    lines = [f"{result.name}: {result.title}  [{result.seconds:.0f} s]"]
    width = max((len(m.label) for m in result.measures), default=0)
    lines += [f"  {m.label:<{width}}  {summary(m)}" for m in result.measures]
    for t in result.targets:
        lines.append(f"  target: {t.what} {t.bar}: {t.measured} -> {verdict(t.met)}")
    lines += [f"  note: {n}" for n in result.notes]
    return lines


def verdict(met: bool | None) -> str:
    return {True: "met", False: "NOT met", None: "not measured"}[met]


# --- markdown ---------------------------------------------------------------------------


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def measures_table(measures: Sequence[Measure]) -> list[str]:
    lines = ["| measure | median | min | max | runs |", "|---|---:|---:|---:|---:|"]
    for m in measures:
        label = f"{m.label} ({m.note})" if m.note else m.label
        lines.append(
            f"| {_cell(label)} | {fmt(m.median, m.unit)} | {fmt(m.low)} | {fmt(m.high)} | {m.n} |"
        )
    return lines


def targets_table(targets: Iterable[tuple[str, Target]]) -> list[str]:
    lines = ["| bar | what | measured | met |", "|---|---|---|---|"]
    for name, t in targets:
        mark = {True: "yes", False: "**no**", None: "not measured"}[t.met]
        lines.append(
            f"| {_cell(t.bar)} | {_cell(t.what)} ([{name}](#{name})) | {_cell(t.measured)} "
            f"| {mark} |"
        )
    return lines


_SUMMARY_ROW = re.compile(r"^\| .*? \(\[(\w+)\]\(#\1\)\) \|", re.MULTILINE)


def summary_rows(document: str) -> dict[str, list[str]]:
    """The rows of ``document``'s summary table by the benchmark each links to: what a run
    without that benchmark's kept figures (a new checkout's ``bench/out``) leaves as it was."""
    found = re.search(
        r"<!-- bench:summary:begin -->(.*?)<!-- bench:summary:end -->", document, re.DOTALL
    )
    rows: dict[str, list[str]] = {}
    for line in found.group(1).splitlines() if found else ():
        match = _SUMMARY_ROW.match(line)
        if match is not None:
            rows.setdefault(match.group(1), []).append(line)
    return rows


def section(result: Result, when: str) -> list[str]:
    lines = [f"Measured {when}; the benchmark ran {result.seconds:.0f} s.", ""]
    lines += measures_table(result.measures)
    if result.targets:
        lines += ["", *targets_table((result.name, t) for t in result.targets)]
    if result.notes:
        lines.append("")
        lines += [f"- {_cell(n)}" for n in result.notes]
    return lines


def block(name: str, body: Sequence[str]) -> str:
    return "\n".join([f"<!-- bench:{name}:begin -->", *body, f"<!-- bench:{name}:end -->"])


def splice(document: str, blocks: Mapping[str, str]) -> str:
    """``document`` with each generated block replaced (or inserted when new)."""
    for name, text in blocks.items():
        pattern = re.compile(
            rf"<!-- bench:{re.escape(name)}:begin -->.*?<!-- bench:{re.escape(name)}:end -->",
            re.DOTALL,
        )
        found = pattern.search(document)
        if found is not None:
            start, end = found.span()
            document = document[:start] + text + document[end:]
        elif NEW_SECTIONS in document:
            document = document.replace(NEW_SECTIONS, f"{text}\n\n{NEW_SECTIONS}", 1)
        else:
            document = document.rstrip("\n") + f"\n\n{text}\n"
    return document


# --- results kept between runs -----------------------------------------------------------


def load_results(path: Path) -> dict[str, tuple[str, Result]]:
    """Earlier results by benchmark name, each with the time it was measured."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    out: dict[str, tuple[str, Result]] = {}
    for name, entry in data.items():
        try:
            out[name] = (str(entry["when"]), Result.from_json(entry["result"]))
        except (KeyError, TypeError, AssertionError, ValueError):
            continue
    return out


def save_results(path: Path, results: Mapping[str, tuple[str, Result]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {name: {"when": when, "result": r.to_json()} for name, (when, r) in results.items()}
    path.write_text(json.dumps(data, indent=1))
