"""What every benchmark reports: repeated measurements, their median and spread, and targets.

The machine the benchmarks run on is shared and noisy (two cores, steal time), so nothing is
judged on a single run: every figure is a list of repeated runs, reported as the median with
the lowest and highest run, and comparisons are ratios of runs made side by side.
CPU time comes from ``getrusage`` (user + system), never from a wall clock that includes
time stolen by the hypervisor.
"""

from __future__ import annotations

import math
import os
import resource
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Options:
    """How hard to measure: ``quick`` makes every benchmark run few repeats (a smoke run)."""

    quick: bool = False
    out_dir: str = "bench/out"

    def runs(self, full: int, quick: int = 3) -> int:
        return quick if self.quick else full


@dataclass(frozen=True)
class Measure:
    """One quantity measured ``len(values)`` times."""

    label: str
    values: tuple[float, ...]
    unit: str
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.values) if self.values else math.nan

    @property
    def low(self) -> float:
        return min(self.values) if self.values else math.nan

    @property
    def high(self) -> float:
        return max(self.values) if self.values else math.nan

    @property
    def n(self) -> int:
        return len(self.values)

    def quantile(self, q: float) -> float:
        """The ``q`` quantile (nearest rank), e.g. 0.95."""
        if not self.values:
            return math.nan
        ordered = sorted(self.values)
        return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]

    def to_json(self) -> dict[str, object]:
        return {
            "label": self.label,
            "values": list(self.values),
            "unit": self.unit,
            "note": self.note,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Measure:
        values = data.get("values", [])
        assert isinstance(values, list)
        return cls(
            str(data["label"]),
            tuple(float(v) for v in values),
            str(data.get("unit", "")),
            str(data.get("note", "")),
        )


@dataclass(frozen=True)
class Target:
    """A quality bar of SPEC section 8 (or of an issue) and whether this run met it."""

    what: str  # "host + zcrypt full sample, 64 CPUs, 16 x 16 APQNs"
    bar: str  # "< 5 ms CPU"
    measured: str  # "1.9 ms (median of 7)"
    met: bool | None  # None: not measured (the screen does not exist yet ...)

    def to_json(self) -> dict[str, object]:
        return {"what": self.what, "bar": self.bar, "measured": self.measured, "met": self.met}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Target:
        met = data.get("met")
        return cls(
            str(data["what"]),
            str(data["bar"]),
            str(data["measured"]),
            None if met is None else bool(met),
        )


@dataclass
class Result:
    """What one benchmark found."""

    name: str
    title: str
    measures: list[Measure] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0  # how long the benchmark ran

    def add(self, label: str, values: Sequence[float], unit: str, note: str = "") -> Measure:
        m = Measure(label, tuple(values), unit, note)
        self.measures.append(m)
        return m

    def target(self, what: str, bar: str, measured: str, met: bool | None) -> None:
        self.targets.append(Target(what, bar, measured, met))

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "title": self.title,
            "measures": [m.to_json() for m in self.measures],
            "targets": [t.to_json() for t in self.targets],
            "notes": self.notes,
            "seconds": self.seconds,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Result:
        measures = data.get("measures", [])
        targets = data.get("targets", [])
        notes = data.get("notes", [])
        assert isinstance(measures, list) and isinstance(targets, list)
        assert isinstance(notes, list)
        seconds = data.get("seconds", 0.0)
        return cls(
            str(data["name"]),
            str(data["title"]),
            [Measure.from_json(m) for m in measures],
            [Target.from_json(t) for t in targets],
            [str(n) for n in notes],
            float(seconds) if isinstance(seconds, int | float) else 0.0,
        )


# --- clocks ---------------------------------------------------------------------------


def process_cpu_s() -> float:
    """User + system CPU seconds of this process (all threads)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def thread_cpu_s() -> float:
    """User + system CPU seconds of the calling thread only."""
    r = resource.getrusage(resource.RUSAGE_THREAD)
    return r.ru_utime + r.ru_stime


def cpu_ms_per_call(
    fn: Callable[[], object], calls: int, batches: int, *, warm: int = 1
) -> list[float]:
    """CPU milliseconds per call of ``fn``, one value per batch of ``calls`` calls.

    Batches, because ``getrusage`` is precise in total but a single call of a fraction of a
    millisecond is lost in scheduler noise; the calling thread's time only.
    """
    for _ in range(warm):
        fn()
    out = []
    for _ in range(batches):
        start = thread_cpu_s()
        for _ in range(calls):
            fn()
        out.append((thread_cpu_s() - start) / calls * 1000)
    return out


def wall_ms(fn: Callable[[], object], runs: int, *, warm: int = 1) -> list[float]:
    """Wall-clock milliseconds of ``fn``, one value per run (for latencies a user waits for)."""
    for _ in range(warm):
        fn()
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def peak_rss_kib(pid: int | str = "self") -> int | None:
    """The peak resident size of a live process's memory (``VmHWM``). Not ``ru_maxrss``:
    after fork and exec that keeps the parent's peak when it was larger."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


@dataclass(frozen=True)
class ChildRun:
    """A finished child process: its exit status, wall time and its own CPU (wait4)."""

    status: int
    wall_s: float
    cpu_s: float


def spawn(argv: Sequence[str], env: dict[str, str] | None = None) -> int:
    """Start ``argv`` (its output discarded); returns the pid for :func:`reap`."""
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
    ]
    return os.posix_spawnp(argv[0], list(argv), env or dict(os.environ), file_actions=actions)


def reap(pid: int, started: float) -> ChildRun:
    """Wait for ``pid``; its CPU time comes from the kernel's rusage of that child alone."""
    _, status, usage = os.wait4(pid, 0)
    return ChildRun(
        os.waitstatus_to_exitcode(status),
        time.perf_counter() - started,
        usage.ru_utime + usage.ru_stime,
    )


def run_child(argv: Sequence[str], env: dict[str, str] | None = None) -> ChildRun:
    started = time.perf_counter()
    return reap(spawn(argv, env), started)


# --- formatting -------------------------------------------------------------------------


def fmt(value: float, unit: str = "") -> str:
    """Three significant digits, thousands separated: 0.0842, 1.23, 45.6, 1,234."""
    if math.isnan(value):
        return "n/a"
    magnitude = abs(value)
    if magnitude >= 1000:
        text = f"{value:,.0f}"
    elif magnitude >= 100:
        text = f"{value:.0f}"
    elif magnitude >= 10:
        text = f"{value:.1f}"
    elif magnitude >= 1:
        text = f"{value:.2f}"
    elif magnitude == 0:
        text = "0"
    else:
        text = f"{value:.{max(2, 2 - math.floor(math.log10(magnitude)))}f}"
    return f"{text} {unit}".rstrip() if unit else text


def summary(m: Measure) -> str:
    """``1.23 ms (1.10-1.50, n=7)``"""
    if m.n == 1:
        return f"{fmt(m.median, m.unit)} (n=1)"
    return f"{fmt(m.median, m.unit)} ({fmt(m.low)}-{fmt(m.high)}, n={m.n})"


def ratios(numerators: Sequence[float], denominators: Sequence[float]) -> list[float]:
    """Run-by-run ratios of measurements made side by side."""
    return [a / b for a, b in zip(numerators, denominators, strict=True) if b > 0]
