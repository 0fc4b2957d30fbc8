"""``/proc/stat``: per-CPU time counters by CPU identity.

Each ``cpuN`` line carries up to ten fields in USER_HZ ticks (user, nice, system, idle,
iowait, irq, softirq, steal, guest, guest_nice); older kernels print fewer, and a field the
kernel does not print stays ``None``. Offline CPUs have no line at all, so CPUs are keyed by
their number, never by their position (psutil's per-CPU list loses that identity).
"""

from __future__ import annotations

from dataclasses import dataclass

CPU_FIELDS = (
    "user",
    "nice",
    "system",
    "idle",
    "iowait",
    "irq",
    "softirq",
    "steal",
    "guest",
    "guest_nice",
)


@dataclass(frozen=True, slots=True)
class ProcStat:
    cpus: dict[int, tuple[int | None, ...]]  # cpu number -> ticks per CPU_FIELDS


def parse_proc_stat(data: bytes) -> ProcStat:
    """Parse ``/proc/stat`` as read (bytes); malformed ``cpuN`` lines are skipped, never
    guessed. The kernel prints the CPU lines together, first (``fs/proc/stat.c``: ``cpu``,
    then ``cpuN`` for each online CPU, then ``intr`` ...): the rest is not looked at."""
    cpus: dict[int, tuple[int | None, ...]] = {}
    width = len(CPU_FIELDS)
    for line in data.splitlines():
        if not line.startswith(b"cpu"):
            if cpus:
                break
            continue
        name, _, rest = line.partition(b" ")
        number = name[3:]
        if not number.isdigit():  # ASCII digits, what int() takes from bytes
            continue  # the aggregate "cpu" line
        try:
            ticks = list(map(int, rest.split()))
        except ValueError:
            continue
        if len(ticks) < 4 or min(ticks) < 0:
            continue
        del ticks[width:]
        cpus[int(number)] = (*ticks, *(None,) * (width - len(ticks)))
    return ProcStat(cpus)
