"""Fake hypfs: the mounted ``/sys/hypervisor/s390`` tree and the debugfs snapshots
``/sys/kernel/debug/s390_hypfs/diag_204`` (LPAR) and ``diag_2fc`` (z/VM).

A model holds cumulative times that a test (or the simulated system) advances; ``write``
renders the model in the kernel's layouts (see ``collectors/hypfs/tree.py`` and
``collectors/hypfs/dbfs.py``). The tree is rebuilt as a whole, as a hypfs update does.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from esatui.collectors.cputype import DIAG224_INDEX
from esatui.collectors.diag2fc import Diag2fcRecord
from esatui.collectors.hypfs.dbfs import (
    Diag204,
    LparCpu,
    Partition,
    PhysCpu,
    encode_diag2fc,
    encode_diag204,
    unix_us_to_tod,
)

_INDEX = {name.upper(): index for index, name in DIAG224_INDEX.items()}
_UNKNOWN = 1  # an index the name table leaves blank
START_US = 1_790_000_000_000_000  # a fixed wall-clock start (late 2026) for reproducible TODs


@dataclass
class FakeLparCpu:
    address: int
    type: str = "IFL"  # as the hypervisor's name table spells it: CP, IFL, ZIIP, ICF
    cputime_us: int = 0
    mgmtime_us: int = 0
    onlinetime_us: int = 0
    wait_us: int = 0


@dataclass
class FakeLpar:
    name: str
    number: int
    cpus: list[FakeLparCpu] = field(default_factory=list)
    threads: int = 1


def lpar(name: str, number: int, types: str, *, threads: int = 1) -> FakeLpar:
    """An LPAR from a type list like ``"CP,IFL,IFL"`` (addresses 0, 1, 2 ...)."""
    cpus = [FakeLparCpu(i, t.strip()) for i, t in enumerate(types.split(",")) if t.strip()]
    return FakeLpar(name, number, cpus, threads)


class _HypfsRoot:
    """Where the mounted hypfs tree and the debugfs files are below a fake root."""

    root: Path

    @property
    def tree(self) -> Path:
        return self.root / "sys/hypervisor/s390"

    @property
    def debugfs(self) -> Path:
        return self.root / "sys/kernel/debug/s390_hypfs"


class HypfsLpar(_HypfsRoot):
    """An LPAR hypervisor as one LPAR's Linux sees it through hypfs."""

    def __init__(
        self,
        root: Path,
        lpars: list[FakeLpar],
        this: str,
        *,
        physical: Mapping[int, str] | None = None,
        now_us: int = START_US,
        sysinfo: bool = True,
    ) -> None:
        self.root = Path(root)
        self.lpars = lpars
        self.this = this
        self.physical = dict(physical or {})
        self.phys_mgmt_us = dict.fromkeys(self.physical, 0)
        self.now_us = now_us
        self.sysinfo = sysinfo

    def cpu(self, lpar_name: str, address: int) -> FakeLparCpu:
        part = next(p for p in self.lpars if p.name == lpar_name)
        return next(c for c in part.cpus if c.address == address)

    def advance(
        self,
        seconds: float,
        busy: float | Mapping[tuple[str, int], float] = 0.5,
        *,
        mgmt: float = 0.01,
        wait: float | None = None,
    ) -> None:
        """``seconds`` pass: every logical CPU is online, dispatched ``busy`` of the time
        (per (lpar, address) if a mapping), with ``mgmt`` of the time LPAR management and
        ``wait`` of the time in wait (default: the rest of the time not dispatched)."""
        us = round(seconds * 1_000_000)
        self.now_us += us
        for part in self.lpars:
            for c in part.cpus:
                frac = (
                    busy if isinstance(busy, float | int) else busy.get((part.name, c.address), 0.0)
                )
                c.onlinetime_us += us
                c.cputime_us += round(us * frac)
                c.mgmtime_us += round(us * mgmt)
                c.wait_us += round(us * (1 - frac if wait is None else wait))
        for addr in self.phys_mgmt_us:
            self.phys_mgmt_us[addr] += round(us * mgmt)

    def write(self, *, tree: bool = True, debugfs: bool = True) -> None:
        if tree:
            self.write_tree()
        if debugfs:
            self.write_debugfs()
        if self.sysinfo:
            sysinfo = self.root / "proc/sysinfo"
            if not sysinfo.exists():
                sysinfo.parent.mkdir(parents=True, exist_ok=True)
                sysinfo.write_text(f"LPAR Number:          1\nLPAR Name:            {self.this}\n")

    def write_tree(self) -> None:
        t = self.tree
        for sub in ("systems", "cpus"):
            shutil.rmtree(t / sub, ignore_errors=True)
        _put(t / "hyp/type", "LPAR Hypervisor")
        _put(t / "update", "")
        for part in self.lpars:
            for c in part.cpus:
                d = t / "systems" / part.name / "cpus" / str(c.address)
                _put(d / "type", c.type)
                _put(d / "cputime", str(c.cputime_us))
                _put(d / "mgmtime", str(c.mgmtime_us))
                _put(d / "onlinetime", str(c.onlinetime_us))
        for addr, kind in self.physical.items():
            d = t / "cpus" / str(addr)
            _put(d / "type", kind)
            _put(d / "mgmtime", str(self.phys_mgmt_us[addr]))

    def snapshot(self) -> Diag204:
        this = next(n for n, p in enumerate(self.lpars) if p.name == self.this)
        parts = [
            Partition(
                p.number,
                p.name,
                p.threads,
                tuple(
                    LparCpu(
                        c.address,
                        _INDEX.get(c.type.upper(), _UNKNOWN),
                        c.cputime_us + c.mgmtime_us,
                        c.cputime_us,
                        c.onlinetime_us,
                        c.wait_us,
                    )
                    for c in p.cpus
                ),
            )
            for p in self.lpars
        ]
        phys = [
            PhysCpu(a, _INDEX.get(k.upper(), _UNKNOWN), self.phys_mgmt_us[a])
            for a, k in self.physical.items()
        ]
        return Diag204(7, this, unix_us_to_tod(self.now_us), parts, phys)

    def write_debugfs(self) -> None:
        self.debugfs.mkdir(parents=True, exist_ok=True)
        (self.debugfs / "diag_204").write_bytes(encode_diag204(self.snapshot()))


def guest(
    userid: str,
    *,
    vcpus: int = 2,
    mem_max_kib: int = 4 << 20,
    mem_used_kib: int = 1 << 20,
    lcpus: int = 4,
) -> Diag2fcRecord:
    """A logged-on guest with zero times and samples (advance them with HypfsVm.advance)."""
    return Diag2fcRecord(
        version=2,
        flags=0,
        used_cpu_us=0,
        elapsed_us=0,
        mem_min_kib=0,
        mem_max_kib=mem_max_kib,
        mem_share_kib=0,
        mem_used_kib=mem_used_kib,
        pcpus=lcpus,
        lcpus=lcpus,
        vcpus=vcpus,
        ocpus=vcpus,
        cpu_max=10000,
        cpu_shares=100,
        samp_cpu=0,
        samp_delay=0,
        samp_page=0,
        samp_idle=0,
        samp_other=0,
        samp_total=0,
        guest=userid.upper(),
    )


class HypfsVm(_HypfsRoot):
    """z/VM as one guest's Linux sees it through hypfs (DIAGNOSE X'2FC')."""

    def __init__(
        self, root: Path, guests: list[Diag2fcRecord], *, lcpus: int = 4, now_us: int = START_US
    ) -> None:
        self.root = Path(root)
        self.guests = {g.guest: g for g in guests}
        self.lcpus = lcpus
        self.now_us = now_us

    def advance(
        self,
        seconds: float,
        cpu: float | Mapping[str, float] = 0.2,
        *,
        samples_per_s: int = 1,
    ) -> None:
        """``seconds`` pass; each guest uses ``cpu`` (fraction of one CPU) and CP takes
        ``samples_per_s`` state samples a second, split in proportion: using, delay, idle."""
        us = round(seconds * 1_000_000)
        self.now_us += us
        n = round(seconds * samples_per_s)
        for name, g in list(self.guests.items()):
            frac = cpu if isinstance(cpu, float | int) else cpu.get(name, 0.0)
            using = round(n * min(1.0, frac))
            delay = round((n - using) * 0.1)
            idle = n - using - delay
            self.guests[name] = dataclasses.replace(
                g,
                used_cpu_us=g.used_cpu_us + round(us * frac),
                elapsed_us=g.elapsed_us + us,
                samp_cpu=g.samp_cpu + using,
                samp_delay=g.samp_delay + delay,
                samp_idle=g.samp_idle + idle,
                samp_total=g.samp_total + n,
            )

    def write(self, *, tree: bool = True, debugfs: bool = True) -> None:
        if tree:
            self.write_tree()
        if debugfs:
            self.debugfs.mkdir(parents=True, exist_ok=True)
            records = [
                dataclasses.replace(g, lcpus=self.lcpus, pcpus=self.lcpus)
                for g in self.guests.values()
            ]
            data = encode_diag2fc(unix_us_to_tod(self.now_us), records)
            (self.debugfs / "diag_2fc").write_bytes(data)

    def write_tree(self) -> None:
        t = self.tree
        for sub in ("systems", "cpus"):
            shutil.rmtree(t / sub, ignore_errors=True)
        _put(t / "hyp/type", "z/VM Hypervisor")
        _put(t / "update", "")
        _put(t / "cpus/count", str(self.lcpus))
        for g in self.guests.values():
            d = t / "systems" / g.guest
            files = {
                "onlinetime_us": g.elapsed_us,
                "cpus/cputime_us": g.used_cpu_us,
                "cpus/capped": (g.flags & 6) >> 1,
                "cpus/dedicated": (g.flags & 8) >> 3,
                "cpus/count": g.vcpus,
                "cpus/weight_min": g.ocpus,
                "cpus/weight_max": g.cpu_max,
                "cpus/weight_cur": g.cpu_shares,
                "mem/min_KiB": g.mem_min_kib,
                "mem/max_KiB": g.mem_max_kib,
                "mem/used_KiB": g.mem_used_kib,
                "mem/share_KiB": g.mem_share_kib,
                "samples/cpu_using": g.samp_cpu,
                "samples/cpu_delay": g.samp_delay,
                "samples/mem_delay": g.samp_page,
                "samples/idle": g.samp_idle,
                "samples/other": g.samp_other,
                "samples/total": g.samp_total,
            }
            for rel, value in files.items():
                _put(d / rel, str(value))


def _put(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n" if text else "")
