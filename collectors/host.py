"""The ``host`` source: this Linux's CPUs as the guest sees them, and what it knows of the box.

Every sample reads ``/proc/stat``: one ``pread`` of a kept descriptor, parsed as bytes (after
a second's sleep, opening the file and decoding it as text cost three times the kernel's
read). The slower-changing facts (``/proc/sysinfo``, ``/proc/cpuinfo``,
``/sys/devices/system/cpu``) are re-read only at start, when the set of CPUs changes, and
every ``refresh_s`` seconds: on IBM Z, reading ``/proc/sysinfo`` runs STSI
instructions that a hypervisor has to intercept, which is exactly the load a monitor must
not add every interval.
"""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path

from esatui.collectors.base import SourceContext
from esatui.collectors.cpuinfo import CpuInfo, parse_cpuinfo
from esatui.collectors.model import Availability, Kind, Reading, Sample, counter, unsigned
from esatui.collectors.procstat import CPU_FIELDS, parse_proc_stat
from esatui.collectors.sysfs_cpu import CpuFacts, read_cpu_facts
from esatui.collectors.sysfsio import WholeFile
from esatui.collectors.sysinfo import SysInfo, parse_sysinfo

_US_FIELDS = tuple(f"{name}_us" for name in CPU_FIELDS)

# proc(5) and the kernel's Documentation/filesystems/proc.rst: "the value of iowait field in
# /proc/stat will decrease in certain conditions" (a task's wait is moved to another CPU's
# account when it wakes there). The other fields only grow; all are unsigned 64-bit.
_MAY_DECREASE = frozenset({"iowait"})

CPU = Kind(
    name="cpu",
    doc="virtual CPU of this Linux, guest view (/proc/stat)",
    fields=unsigned(
        64,
        tuple(
            counter(us, "us", f"/proc/stat {name} time", monotonic=name not in _MAY_DECREASE)
            for us, name in zip(_US_FIELDS, CPU_FIELDS, strict=True)
        ),
    ),
    attrs=("type", "type_source", "address", "polarization"),
)

# The label for CPUs whose real type (CP, IFL, zIIP ...) no source has proved.
_ARCH_LABELS = {"s390": "CPU", "x86": "X86", "i686": "X86", "aarch64": "ARM", "ppc64": "PPC"}


def user_hz() -> int:
    return os.sysconf("SC_CLK_TCK")


# /proc/cpuinfo's vendor_id of x86 processors (arch/x86/kernel/cpu: the CPUID vendor string)
_X86_VENDORS = frozenset(
    {"GenuineIntel", "AuthenticAMD", "HygonGenuine", "CentaurHauls", "Shanghai"}
)


def arch_label(cpuinfo: CpuInfo, *, local: bool = True) -> str:
    """The generic CPU label of the architecture the (possibly captured) tree comes from:
    this machine's only when the tree is this machine's (``local``); a captured tree is
    known by its own /proc/cpuinfo, else given the generic ``CPU``."""
    if cpuinfo.vendor.startswith("IBM/S390"):
        machine = "s390"
    elif local:
        machine = platform.machine()
    else:
        machine = "x86" if cpuinfo.vendor in _X86_VENDORS else ""
    for prefix, label in _ARCH_LABELS.items():
        if machine.startswith(prefix):
            return label
    return machine[:4].upper() or "CPU"


class HostSource:
    name: str = "host"
    kinds: tuple[Kind, ...] = (CPU,)

    def __init__(self, ctx: SourceContext, refresh_s: float = 900.0) -> None:
        self._ctx = ctx
        self._refresh_ns = int(refresh_s * 1e9)
        self._us_per_tick = 1_000_000 / user_hz()
        self._exact_ticks = 1_000_000 % user_hz() == 0
        self._facts: dict[int, CpuFacts] = {}
        self._attrs: dict[int, dict[str, str]] = {}
        self._config: dict[str, str] = {}
        self._known_cpus: frozenset[int] = frozenset()
        self._refreshed_ns: int | None = None
        self._stat = WholeFile.shared(str(ctx.path("/proc/stat")))

    def probe(self) -> Availability:
        path = self._ctx.path("/proc/stat")
        if not path.exists():
            return Availability(False, f"{path} does not exist: not a Linux /proc")
        if not os.access(path, os.R_OK):
            return Availability(False, f"{path} is not readable")
        return Availability(True, f"per-CPU times from {path}")

    def sample(self) -> Sample:
        data = self._stat.read()
        time_us, mono_ns = self._ctx.clock.time_us(), self._ctx.clock.mono_ns()
        stat = parse_proc_stat(data)
        if not stat.cpus:
            # the kernel prints a line for every online CPU and one is always online: an
            # empty or foreign file is no sample (skipped with this reason), never zero CPUs
            raise ValueError(
                f"{self._ctx.path('/proc/stat')} has no cpuN line: not the kernel's /proc/stat"
            )
        reads = 1
        cpus = frozenset(stat.cpus)
        if (
            self._refreshed_ns is None
            or cpus != self._known_cpus
            or mono_ns - self._refreshed_ns >= self._refresh_ns
        ):
            reads += self._refresh(cpus)
            self._refreshed_ns = mono_ns
        readings = tuple(
            Reading("cpu", str(n), self._times(ticks), self._attrs.get(n, {}))
            for n, ticks in sorted(stat.cpus.items())
        )
        return Sample(
            self.name, time_us, readings, mono_ns=mono_ns, config=self._config, reads=reads
        )

    def sample_gauges(self) -> Sample | None:
        return None

    def close(self) -> None:
        self._stat.close()

    def _times(self, ticks: tuple[int | None, ...]) -> dict[str, int | float | None]:
        scale = self._us_per_tick
        if self._exact_ticks:
            step = int(scale)
            values = [None if t is None else t * step for t in ticks]
        else:
            values = [None if t is None else round(t * scale) for t in ticks]
        return dict(zip(_US_FIELDS, values, strict=True))

    def _refresh(self, cpus: frozenset[int]) -> int:
        reads = 0
        texts: dict[str, str] = {}
        for name in ("/proc/sysinfo", "/proc/cpuinfo", "/proc/sys/kernel/hostname"):
            try:
                texts[name] = self._ctx.path(name).read_text(errors="replace")
                reads += 1
            except OSError:
                continue
        sysinfo = parse_sysinfo(texts.get("/proc/sysinfo", ""))
        cpuinfo = parse_cpuinfo(texts.get("/proc/cpuinfo", ""))
        self._facts, n = read_cpu_facts(self._ctx.path("/sys/devices/system/cpu"))
        reads += n
        hostname = texts.get("/proc/sys/kernel/hostname", "").strip() or self._unnamed(sysinfo)
        local = self._ctx.root == Path("/")
        self._config = host_config(sysinfo, cpuinfo, hostname, local=local)
        label = arch_label(cpuinfo, local=local)
        self._attrs = {n: cpu_attrs(self._facts.get(n), label) for n in cpus}
        self._known_cpus = cpus
        return reads

    def _unnamed(self, sysinfo: SysInfo) -> str:
        """The name of a system whose files give no host name: this machine's, but below
        another root (a captured tree) the LPAR's it names, else the root's, never this
        machine's."""
        if self._ctx.root == Path("/"):
            return socket.gethostname()
        return sysinfo.lpar_name or self._ctx.root.resolve().name


def node_name(sysinfo: SysInfo, hostname: str) -> str:
    """The VM00 name (the guest this Linux is) when there is one, else the host name."""
    return sysinfo.vm[0].name if sysinfo.vm and sysinfo.vm[0].name else hostname


def host_config(
    sysinfo: SysInfo, cpuinfo: CpuInfo, hostname: str, *, local: bool = True
) -> dict[str, str]:
    config = sysinfo.config()
    config["node"] = node_name(sysinfo, hostname)
    config["host.hostname"] = hostname
    config["host.arch"] = arch_label(cpuinfo, local=local)
    if cpuinfo.ids:
        config["host.virtual_cpus"] = "yes" if cpuinfo.is_virtual else "no"
        # the machine type of every processor's identification line (STIDP), for when
        # /proc/sysinfo is absent or says nothing of the machine
        config["host.machine_type"] = next(iter(cpuinfo.ids.values())).machine
    if sysinfo.capability is not None:
        config["cec.capability_rating"] = str(sysinfo.capability)
    if sysinfo.secondary_capability is not None:
        config["cec.secondary_capability_rating"] = str(sysinfo.secondary_capability)
    return config


def cpu_attrs(facts: CpuFacts | None, label: str) -> dict[str, str]:
    attrs = {"type": label, "type_source": "arch"}
    if facts is not None:
        if facts.address is not None:
            attrs["address"] = str(facts.address)
        if facts.polarization:
            attrs["polarization"] = facts.polarization
    return attrs
