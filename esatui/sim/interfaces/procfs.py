"""A fake ``/proc/stat`` whose per-CPU counters advance as told, written like the kernel's."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from esatui.collectors.procstat import CPU_FIELDS


class ProcStat:
    """Per-CPU tick counters under ``root/proc/stat``; ``advance`` adds ticks, ``write``
    renders the file (the aggregate ``cpu`` line first, offline CPUs absent)."""

    def __init__(self, root: Path, cpus: Sequence[int]) -> None:
        self.path = root / "proc" / "stat"
        self.ticks: dict[int, list[int]] = {n: [0] * len(CPU_FIELDS) for n in cpus}
        self.procs_running = 1
        self.procs_blocked = 0

    def advance(self, cpu: int, **ticks: int) -> None:
        """Add ticks by field name (``user=50, idle=40, steal=10``)."""
        counters = self.ticks.setdefault(cpu, [0] * len(CPU_FIELDS))
        for name, value in ticks.items():
            counters[CPU_FIELDS.index(name)] += value

    def set_online(self, cpus: Sequence[int]) -> None:
        """CPUs not listed disappear (offline); new ones start at zero."""
        self.ticks = {n: self.ticks.get(n, [0] * len(CPU_FIELDS)) for n in cpus}

    def reset(self, cpu: int) -> None:
        self.ticks[cpu] = [0] * len(CPU_FIELDS)

    def render(self, extra: Mapping[str, str] | None = None) -> str:
        totals = [sum(col) for col in zip(*self.ticks.values(), strict=True)] if self.ticks else []
        lines = ["cpu  " + " ".join(str(t) for t in totals)]
        lines += [
            f"cpu{n} " + " ".join(str(t) for t in ticks) for n, ticks in sorted(self.ticks.items())
        ]
        lines += ["intr 0", "ctxt 0", "btime 1700000000", "processes 1"]
        lines += [f"procs_running {self.procs_running}", f"procs_blocked {self.procs_blocked}"]
        lines += [f"{k} {v}" for k, v in (extra or {}).items()]
        return "\n".join(lines) + "\n"

    def write(self) -> None:
        """Rewritten in place, as the kernel's file is to a reader: a source keeps it open
        and reads it again (written before truncating, so it is never empty)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = self.render().encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            os.pwrite(fd, data, 0)
            os.ftruncate(fd, len(data))
        finally:
            os.close(fd)
