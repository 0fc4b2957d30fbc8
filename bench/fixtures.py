"""Fixture systems and recordings for the benchmarks, made with the project's own parts.

- :func:`host_tree`: a fake root with ``/proc/stat`` (``esatui.sim.interfaces.procfs``), the real
  ``/proc/sysinfo`` and ``/proc/cpuinfo`` captures of ``tests/data/host``, and a
  ``/sys/devices/system/cpu`` with one ``cpuN`` directory per CPU.
- the recorder runs on the simulated clock (``esatui.sim.clock``): every ``wait`` moves the
  fixture trees' counters on by the time that passed, so the real sources read real changes.
- :class:`MonitorFeed`: z/VM monitor D5R9 (and D0R2) records encoded (``monitor.encode``)
  and read back through the real frame walker and interval assembler, one sample a minute.
- :func:`record`: the real recorder (``esatui.sampling.session.Recording``) driving the real host
  and zcrypt sources over those trees plus the monitor feed, into the real store.
- :func:`cached_recording`: a recording built once and kept under ``bench/out/``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from esatui.collectors.base import SourceContext
from esatui.collectors.host import HostSource, node_name
from esatui.collectors.kinds import LCPU
from esatui.collectors.model import Availability, Kind, Sample
from esatui.collectors.monitor import encode as E
from esatui.collectors.monitor.assemble import IntervalAssembler
from esatui.collectors.monitor.frames import WalkStats
from esatui.collectors.monitor.kinds import CFG_SOURCE, CRYPTO, CRYPTO_AP
from esatui.collectors.monitor.layoutfile import builtin_layouts
from esatui.collectors.monitor.pipeline import feed_span
from esatui.collectors.sysinfo import parse_sysinfo
from esatui.collectors.zcrypt import ZcryptSource
from esatui.db.schema import READY_VALUE
from esatui.db.sqlite_reader import SqliteReader
from esatui.db.store import Store
from esatui.sampling.session import Recording
from esatui.sim.clock import SimClock
from esatui.sim.interfaces import aptree
from esatui.sim.interfaces.procfs import ProcStat

HOST_DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "host"
# 2025-11-22 00:00 UTC: a year of one-minute intervals ends 2026-11-22 00:00 UTC
YEAR_START_US = 1_763_769_600_000_000
MINUTE_S = 60
USER_HZ = 100  # the fake /proc/stat's tick rate (this machine's sysconf says the same)
RECIPE = 2  # bump when what a cached recording holds changes (2: hourly rollups)


# --- the host tree --------------------------------------------------------------------


@dataclass(frozen=True)
class HostCapture:
    """Which real captures make up ``/proc/sysinfo`` and ``/proc/cpuinfo``."""

    sysinfo: str
    cpuinfo: str


# A z/VM 7.2 guest on a z15 (the 8-CPU recordings) and, for 64 CPUs, the 64-processor z14
# cpuinfo with the z13 SMT LPAR's sysinfo (no single capture has both at that size).
ZVM_GUEST = HostCapture(
    "sysinfo-zvm72-guest-z15-8561-ansible.txt", "cpuinfo-zvm61-guest-z196-2817-util-linux.txt"
)
LPAR_64 = HostCapture(
    "sysinfo-lpar-z13-2964-smt-libvirt-sanitized.txt", "cpuinfo-z14-3906-64cpu-smt-ansible.txt"
)


def host_tree(root: Path, cpus: int, capture: HostCapture = ZVM_GUEST) -> ProcStat:
    """Writes a fake ``/proc`` and ``/sys/devices/system/cpu`` for ``cpus`` online CPUs."""
    proc = root / "proc"
    (proc / "sys" / "kernel").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(HOST_DATA / capture.sysinfo, proc / "sysinfo")
    shutil.copyfile(HOST_DATA / capture.cpuinfo, proc / "cpuinfo")
    (proc / "sys" / "kernel" / "hostname").write_text("lnxbench\n")
    cpu_dir = root / "sys" / "devices" / "system" / "cpu"
    cpu_dir.mkdir(parents=True, exist_ok=True)
    span = f"0-{cpus - 1}\n"
    for name in ("online", "possible", "present"):
        (cpu_dir / name).write_text(span)
    (cpu_dir / "offline").write_text("\n")
    (cpu_dir / "dispatching").write_text("1\n")
    for n in range(cpus):
        d = cpu_dir / f"cpu{n}"
        d.mkdir(exist_ok=True)
        (d / "online").write_text("1\n")
        (d / "configure").write_text("1\n")
        (d / "address").write_text(f"{n}\n")
        (d / "polarization").write_text("vertical:high\n" if n < 4 else "vertical:medium\n")
    stat = ProcStat(root, range(cpus))
    stat.write()
    return stat


def cpu_shares(step: int, cpu: int) -> dict[str, int]:
    """Percent of a CPU per /proc/stat field in one step: load and steal that rise and fall."""
    steal = (step * 7 + cpu * 3) % 23
    user = (step * 13 + cpu * 17) % 55
    system = 4 + (step + cpu) % 7
    iowait = (step + 2 * cpu) % 3
    irq, softirq, nice = 1, 2, cpu % 2
    idle = 100 - steal - user - system - iowait - irq - softirq - nice
    return {
        "user": user,
        "nice": nice,
        "system": system,
        "idle": idle,
        "iowait": iowait,
        "irq": irq,
        "softirq": softirq,
        "steal": steal,
    }


def advance_host(stat: ProcStat, step: int, seconds: float, files: _Files | None = None) -> None:
    """``seconds`` of every CPU's time, split by :func:`cpu_shares`, then the file rewritten
    (in place through ``files`` when given: the reader is the same thread)."""
    total = round(seconds * USER_HZ)
    for cpu in stat.ticks:
        shares = cpu_shares(step, cpu)
        ticks = {name: total * pct // 100 for name, pct in shares.items()}
        ticks["idle"] += total - sum(ticks.values())
        stat.advance(cpu, **ticks)
    if files is None:
        stat.write()
    else:
        files.write(str(stat.path), stat.render())


# --- the z/VM monitor's crypto records ----------------------------------------------------


def crypto_counters(minute: int) -> dict[str, int]:
    """Cumulative D5R9 counters after ``minute`` minutes: about 1,500 operations a second,
    2.97 ms NQ to DQ for the guests and 1.57 ms for CP (seed 001's 10:34 row)."""
    ops = 0
    for m in range(minute % 60):
        ops += 90_000 + (m * 7919) % 9000
    ops += (minute // 60) * sum(90_000 + (m * 7919) % 9000 for m in range(60))
    return {
        "virt_nq": ops,
        "real_nq": ops,
        "virt_dq": 2 * ops,
        "real_dq": ops + ops // 3,
        "virt_done": ops,
        "real_done": ops,
        "virt_rej": ops // 5000,
        "real_rej": 0,
        "vserv_us": ops * 2970,
        "rserv_us": ops * 1570,
        "hserv_us": ops * 1700,
        "nserv_us": ops * 130,
        "dserv_us": ops * 1270,
    }


def processor_times(minute: int, cpu: int) -> tuple[int, int, int, int]:
    """Cumulative D0R2 times (emulation, CP for users, CP system, wait) in µs after
    ``minute`` minutes of one logical processor: a third to two thirds busy."""
    emul = user = syst = 0
    for m in range(minute % 60):
        busy = 20 + (m * 7 + cpu * 11) % 45  # percent
        emul += busy * 480_000  # of 600,000 µs per percent-minute: 80% emulation
        user += busy * 90_000
        syst += busy * 30_000
    hours = minute // 60
    if hours:
        per_hour = [20 + (m * 7 + cpu * 11) % 45 for m in range(60)]
        emul += hours * sum(per_hour) * 480_000
        user += hours * sum(per_hour) * 90_000
        syst += hours * sum(per_hour) * 30_000
    wait = minute * 60_000_000 - emul - user - syst
    return emul, user, syst, wait


class MonitorFeed:
    """A stream source of z/VM monitor samples, one per interval, through the real record
    decoding: D5R9 crypto counters, and D0R2 for ``lcpus`` logical IFLs when asked."""

    name = "monitor"
    kinds: tuple[Kind, ...] = (CRYPTO, CRYPTO_AP, LCPU)

    def __init__(
        self, start_us: int, count: int, lcpus: int = 0, interval_s: int = MINUTE_S
    ) -> None:
        self._start_us = start_us
        self._count = count
        self._lcpus = lcpus
        self._interval_us = interval_s * 1_000_000
        self._asm = IntervalAssembler(
            builtin_layouts(), self.name, lambda _msg: None, {CFG_SOURCE: "monwrite"}
        )
        self._stats = WalkStats()

    def probe(self) -> Availability:
        return Availability(True, "encoded monitor records")

    def samples(self) -> Iterator[Sample]:
        for k in range(self._count + 1):
            end_us = self._start_us + k * self._interval_us
            records = [E.crypto_record(end_us - 1_000, crypto_counters(k))]
            for cpu in range(self._lcpus):
                emul, user, syst, wait = processor_times(k, cpu)
                records.append(
                    E.processor_record(
                        end_us - 1_000,
                        cpu=cpu,
                        cpu_type=3,  # IFL
                        emul_us=emul,
                        user_us=user,
                        syst_us=syst,
                        wait_us=wait,
                    )
                )
            span = E.interval_span(records, end_us=end_us)
            yield from feed_span(self._asm, span.element, memoryview(span.data), self._stats)

    def close(self) -> None:
        pass


# --- recordings --------------------------------------------------------------------------

DAY = 1440
MONTH = 30 * DAY
YEAR = 365 * DAY


@dataclass(frozen=True)
class RecordingSpec:
    """What a recording holds: ``intervals`` one-minute intervals from ``start_us``."""

    intervals: int
    cpus: int = 8
    cards: int = 2
    domains: int = 2  # 2 cards x 2 domains = 4 APQNs
    crypto: bool = True  # the z/VM monitor's D5R9
    lcpus: int = 0  # logical IFLs in the monitor's D0R2 (ESACPUU's view; needs crypto=True)
    hf_s: float | None = None  # gauges sampled between intervals (None: at boundaries only)
    start_us: int = YEAR_START_US
    recipe: int = RECIPE


# The year-long recording of the store, TUI and export benchmarks: 8 CPUs, 4 APQNs, the
# monitor's D5R9 and the hypervisor's D0R2 for 8 logical IFLs, so ESACPUU has data (issue 16).
YEAR_SPEC = RecordingSpec(intervals=YEAR, lcpus=8)


@dataclass(frozen=True)
class RecordingStats:
    intervals: int  # polled intervals the recorder completed
    written: int  # intervals committed, all sources
    wall_s: float
    cpu_s: float


class _Files:
    """Rewrites fixture files in place through kept descriptors (as the kernel's files change
    under a reader): the fake trees change every simulated minute of a year."""

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}

    def write(self, path: str, text: str) -> None:
        fd = self._fds.get(path)
        if fd is None:
            fd = self._fds[path] = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        data = text.encode()
        os.pwrite(fd, data, 0)  # written before truncating: a reader never sees it empty
        os.ftruncate(fd, len(data))

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()


class _Trees:
    """The fixture trees a recording reads, moved on by the clock: per-CPU times, and per
    APQN requests (about 200-800 a second) and queue depths, in the formats of
    ``sim.interfaces.procfs`` and ``sim.interfaces.aptree`` (which built them)."""

    def __init__(self, root: Path, spec: RecordingSpec) -> None:
        self.stat = host_tree(root, spec.cpus)
        self.ap = aptree.build(root, cards=spec.cards, domains=spec.domains)
        self._start_us = spec.start_us
        self._files = _Files()
        self._queue_req = dict.fromkeys(self.ap.apqns, 1_382_729)  # the lab capture's magnitude
        self._depths = dict.fromkeys(self.ap.apqns, (0, 0))
        cards = sorted({card for card, _ in self.ap.apqns})
        self._card_req = {
            c: sum(n for (k, _), n in self._queue_req.items() if k == c) for c in cards
        }
        self._dirs = {
            (card, domain): (str(self.ap.queue_dir(card, domain)), str(self.ap.card_dir(card)))
            for card, domain in self.ap.apqns
        }
        for card, domain in self.ap.apqns:
            self._write_requests(card, domain)

    def _write_requests(self, card: int, domain: int) -> None:
        queue, card_dir = self._dirs[card, domain]
        self._files.write(f"{queue}/request_count", f"{self._queue_req[card, domain]}\n")
        self._files.write(f"{card_dir}/request_count", f"{self._card_req[card]}\n")

    def _write_depths(self, card: int, domain: int, requestq: int, pendingq: int) -> None:
        self._depths[card, domain] = (requestq, pendingq)
        queue, card_dir = self._dirs[card, domain]
        self._files.write(f"{queue}/requestq_count", f"{requestq}\n")
        self._files.write(f"{queue}/pendingq_count", f"{pendingq}\n")
        mine = [d for (c, _), d in self._depths.items() if c == card]
        self._files.write(f"{card_dir}/requestq_count", f"{sum(r for r, _ in mine)}\n")
        self._files.write(f"{card_dir}/pendingq_count", f"{sum(p for _, p in mine)}\n")
        self._files.write(f"{card_dir}/load", f"{sum(p for _, p in mine)}\n")

    def advance(self, now_us: int, seconds: float) -> None:
        if seconds <= 0:
            return
        step = (now_us - self._start_us) // (MINUTE_S * 1_000_000)
        advance_host(self.stat, step, seconds, self._files)
        tick = now_us // 1_000_000
        for i, (card, domain) in enumerate(self.ap.apqns):
            rate = 200 + 150 * ((step + 3 * i) % 5)  # requests per second
            n = round(rate * seconds)
            self._queue_req[card, domain] += n
            self._card_req[card] += n
            self._write_requests(card, domain)
            self._write_depths(card, domain, (tick + i) % 3, (tick // 2 + 2 * i) % 8)

    def close(self) -> None:
        self._files.close()


def record(
    path: Path, spec: RecordingSpec, progress: Callable[[int], None] | None = None
) -> RecordingStats:
    """Records ``spec`` into ``path`` with the real recorder, sources, builder and store."""
    with (
        tempfile.TemporaryDirectory(prefix="esatui-bench-root-") as tmp,
        contextlib.ExitStack() as closing,
    ):
        trees = _Trees(Path(tmp), spec)
        done = 0

        last = spec.start_us

        def on_advance(now_us: int) -> None:
            nonlocal done, last
            trees.advance(now_us, (now_us - last) / 1e6)
            last = now_us
            minute = (now_us - spec.start_us) // (MINUTE_S * 1_000_000)
            if progress is not None and minute > done and minute % 1440 == 0:
                done = minute
                progress(minute)

        clock = SimClock(spec.start_us, on_advance=on_advance)
        closing.callback(trees.close)
        ctx = SourceContext(root=Path(tmp), clock=clock)
        sources: list[HostSource | ZcryptSource | MonitorFeed] = [
            HostSource(ctx),
            ZcryptSource(ctx),
        ]
        if spec.crypto:
            sources.append(MonitorFeed(spec.start_us, spec.intervals, spec.lcpus))
        # the node the host source would name (VM00), given at once: the monitor thread may
        # write before the host's first sample tells the recorder
        node = node_name(parse_sysinfo((Path(tmp) / "proc/sysinfo").read_text()), "lnxbench")
        wall0, cpu0 = time.perf_counter(), time.process_time()
        recording = Recording(
            path, sources, interval_s=MINUTE_S, hf_s=spec.hf_s, node=node, clock=clock
        )
        stats = recording.run(
            threading.Event(), warn=lambda msg: print(f"  recorder: {msg}"), count=spec.intervals
        )
        return RecordingStats(
            stats.intervals,
            stats.written,
            time.perf_counter() - wall0,
            time.process_time() - cpu0,
        )


def _rolled_up_as_now(path: Path, log: Callable[[str], None]) -> None:
    """A recording whose rollups an earlier esatui kept in an earlier way is opened for
    writing once, as the recorder opens a database, which rolls it up afresh this way (the
    year's recording: about a minute and a half)."""
    with SqliteReader.open(path) as reader:
        kept = reader.queries.rollups_kept()
    if kept != READY_VALUE:
        log(f"  {path.name}: rollups kept as {kept!r}: opened for writing to keep them as now")
        with Store.open(path) as store:
            store.checkpoint()


def cached_simulation(
    out_dir: Path, name: str, scenario: str, days: int, log: Callable[[str], None] = print
) -> Path:
    """``out_dir/name.sqlite``: ``days`` of one-minute intervals of the simulated system
    (``esatui sim --scenario SCENARIO``: every source, the z/VM monitor's spin lock, paging
    and AP records among them), built unless a build of the same is there."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.sqlite"
    meta = out_dir / f"{name}.json"
    wanted = {"scenario": scenario, "days": days, "interval_s": 60}
    if path.exists() and meta.exists():
        with contextlib.suppress(ValueError, KeyError, TypeError):
            if json.loads(meta.read_text())["sim"] == wanted:
                return path
    for stale in (*out_dir.glob(f"{name}.sqlite*"), *out_dir.glob(f"{name}.building.sqlite*")):
        stale.unlink()
    meta.unlink(missing_ok=True)
    building = out_dir / f"{name}.building.sqlite"
    log(f"  building {path} (esatui sim, {days} days of {scenario}; kept for later runs)")
    subprocess.run(
        [
            *(sys.executable, "-m", "esatui", "sim", "--scenario", scenario),
            *("--duration", f"{days}d", "--interval", "60", "--db", str(building)),
        ],
        check=True,
        capture_output=True,
    )
    with Store.open(building) as store:
        store.checkpoint()
    building.replace(path)
    for stale in out_dir.glob(f"{name}.building.sqlite*"):  # the store's lock file
        stale.unlink()
    meta.write_text(json.dumps({"sim": wanted}, indent=1))
    return path


def cached_recording(
    out_dir: Path, name: str, spec: RecordingSpec, log: Callable[[str], None] = print
) -> tuple[Path, RecordingStats | None]:
    """``out_dir/name.sqlite``, built by :func:`record` unless a build of the same spec is
    there; the stats are ``None`` when the cached file was used."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.sqlite"
    meta = out_dir / f"{name}.json"
    wanted = asdict(spec)
    if path.exists() and meta.exists():
        try:
            if RecordingSpec(**json.loads(meta.read_text())["spec"]) == spec:
                _rolled_up_as_now(path, log)
                return path, None
        except (ValueError, KeyError, TypeError):
            pass
    for stale in out_dir.glob(f"{name}.sqlite*"):
        stale.unlink()
    meta.unlink(missing_ok=True)
    building = out_dir / f"{name}.building.sqlite"
    for stale in out_dir.glob(f"{name}.building.sqlite*"):
        stale.unlink()
    log(f"  building {path} ({spec.intervals:,} intervals; kept for later runs)")

    def progress(minute: int) -> None:
        if minute % (1440 * 30) == 0:
            log(f"    {minute // 1440} days recorded")

    stats = record(building, spec, progress)
    with Store.open(building) as store:
        store.checkpoint()
    building.replace(path)
    meta.write_text(json.dumps({"spec": wanted, "stats": asdict(stats)}, indent=1))
    return path, stats
