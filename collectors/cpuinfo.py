"""``/proc/cpuinfo`` on s390: the processor identification lines and per-CPU blocks.

Two renderings exist: old kernels print only ``processor N: version = .., identification =
.., machine = ..`` lines; newer ones add a ``cpu number : N`` block per CPU (MHz, and on
recent kernels topology ids, ``dedicated`` and ``address``). Version ``FF`` means the CPU is
virtual (z/VM); other architectures' cpuinfo yields only the vendor and the CPU count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_ID_LINE = re.compile(
    r"^processor (\d+): version = ([0-9A-Fa-f]+),\s+identification = (\w+),\s+machine = (\w+)"
)


@dataclass(frozen=True, slots=True)
class CpuId:
    version: str
    identification: str
    machine: str


@dataclass(frozen=True, slots=True)
class CpuInfo:
    vendor: str = ""
    processors: int | None = None
    max_thread_id: int | None = None
    features: tuple[str, ...] = ()
    ids: dict[int, CpuId] = field(default_factory=dict)
    details: dict[int, dict[str, str]] = field(default_factory=dict)

    @property
    def is_virtual(self) -> bool:
        """Version ``FF`` on the identification lines: a z/VM guest's virtual CPUs."""
        return bool(self.ids) and all(i.version.upper() == "FF" for i in self.ids.values())


def parse_cpuinfo(text: str) -> CpuInfo:
    vendor = ""
    processors = max_thread = None
    features: tuple[str, ...] = ()
    ids: dict[int, CpuId] = {}
    details: dict[int, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in text.splitlines():
        if m := _ID_LINE.match(line):
            ids[int(m.group(1))] = CpuId(m.group(2), m.group(3), m.group(4))
            continue
        key, sep, value = line.partition(":")
        if not sep:
            current = None  # blank line ends a per-CPU block
            continue
        key, value = key.strip(), value.strip()
        if key == "cpu number" and value.isdigit():
            current = details.setdefault(int(value), {})
        elif current is not None:
            current[key] = value
        elif key == "vendor_id":
            vendor = value
        elif key == "# processors":
            processors = int(value) if value.isdigit() else None
        elif key == "max thread id":
            max_thread = int(value) if value.isdigit() else None
        elif key == "features":
            features = tuple(value.split())
    return CpuInfo(vendor, processors, max_thread, features, ids, details)
