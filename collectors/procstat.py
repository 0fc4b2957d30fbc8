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
    procs_running: int | None = None
    procs_blocked: int | None = None


def parse_proc_stat(text: str) -> ProcStat:
    """Parse ``/proc/stat``; malformed ``cpuN`` lines are skipped, never guessed."""
    cpus: dict[int, tuple[int | None, ...]] = {}
    running = blocked = None
    for line in text.splitlines():
        if line.startswith("cpu"):
            name, _, rest = line.partition(" ")
            number = name[3:]
            if not number.isdecimal():  # what int() accepts
                continue  # the aggregate "cpu" line
            try:
                ticks = list(map(int, rest.split()))
            except ValueError:
                continue
            if len(ticks) < 4 or min(ticks) < 0:
                continue
            ticks = ticks[: len(CPU_FIELDS)]
            cpus[int(number)] = tuple(ticks) + (None,) * (len(CPU_FIELDS) - len(ticks))
        elif line.startswith("procs_running "):
            running = _int_or_none(line.split()[1])
        elif line.startswith("procs_blocked "):
            blocked = _int_or_none(line.split()[1])
    return ProcStat(cpus, running, blocked)


def _int_or_none(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None
