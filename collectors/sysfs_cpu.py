"""``/sys/devices/system/cpu``: which CPUs are online, their polarization and CPU address."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class CpuFacts:
    online: bool | None = None  # None: no ``online`` file (cpu0 on many kernels)
    polarization: str | None = None  # horizontal, vertical:high|medium|low, vertical:unknown
    address: int | None = None  # the CPU address the hypervisor knows it by
    configured: bool | None = None


def parse_cpu_list(text: str) -> set[int]:
    """``0-3,5,7-8`` -> {0, 1, 2, 3, 5, 7, 8}; an empty list is the empty set."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return cpus


def read_cpu_facts(cpu_dir: Path) -> tuple[dict[int, CpuFacts], int]:
    """Facts per ``cpuN`` directory below ``cpu_dir``, and the number of files read."""
    facts: dict[int, CpuFacts] = {}
    reads = 0
    try:
        entries = list(cpu_dir.iterdir())
    except OSError:
        return facts, reads
    for entry in entries:
        number = entry.name[3:]
        if not (entry.name.startswith("cpu") and number.isdigit()):
            continue
        values: dict[str, str] = {}
        for name in ("online", "polarization", "address", "configure"):
            try:
                values[name] = (entry / name).read_text().strip()
                reads += 1
            except (OSError, UnicodeDecodeError):
                continue
        facts[int(number)] = CpuFacts(
            online=_flag(values.get("online")),
            polarization=values.get("polarization") or None,
            address=_int(values.get("address")),
            configured=_flag(values.get("configure")),
        )
    return facts, reads


def _flag(text: str | None) -> bool | None:
    return {"0": False, "1": True}.get(text or "")


def _int(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None
