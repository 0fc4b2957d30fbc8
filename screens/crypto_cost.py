"""What the guests' crypto operations cost in CPU, as seed 002 prices them (ESAPOLL).

Seed 002: "Total, guest, and CP busy per 1000 VNQs are expressed as a percentage of total
available CPU", with ETR the virtual NQs per second. The unit is a percent of *one*
processor (total busy 1.5029 at 172,346 VNQ/s would be 259% of the whole LPAR otherwise;
docs/MODEL.md section 2), so busy per 1000 VNQ = busy % / (VNQ per second / 1000), and
1.0 is 10 µs of CPU per operation.

The busy times are the LPAR's own logical processors (``lcpu``) over the same interval:
guest busy is their emulation time, CP busy is CP's time on behalf of the guests plus CP's
own (D0R2). Like seed 002, this charges *all* of that time to crypto: on a system doing
other work too, the figures are an upper bound of what crypto costs. A source that cannot
split busy time (hypfs, SMAPI, vmcp) gives the total only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from esatui.db.slots import Slot
from esatui.screens.common import number
from esatui.screens.esacpuu import LCPU_READS, PREFER, own_processors

LCPU = LCPU_READS.kind


@dataclass(frozen=True, slots=True)
class CpuTime:
    """The LPAR's processors over an interval: µs of guest emulation, of CP (on behalf of
    guests and for itself), of busy time in all (when the source cannot split it), and the
    measured duration. None where the source did not give it."""

    guest_us: float | None
    cp_us: float | None
    busy_us: float | None
    duration_us: int

    @property
    def total_us(self) -> float | None:
        if self.guest_us is not None and self.cp_us is not None:
            return self.guest_us + self.cp_us
        return self.busy_us


def _sum(values: Iterable[float | None]) -> float | None:
    got = list(values)
    if not got or any(v is None for v in got):
        return None
    return sum(v for v in got if v is not None)


def cpu_time(slot: Slot, config: Mapping[str, str]) -> CpuTime | None:
    """The slot's processor times, from the preferred source that recorded ``lcpu``."""
    cpus = slot.get(LCPU, PREFER)
    if cpus is None or not cpus.rows:
        return None
    entities = own_processors(cpus, config)
    guest = _sum(number(e.values.get("emul_us")) for e in entities)
    user = _sum(number(e.values.get("user_us")) for e in entities)
    syst = _sum(number(e.values.get("syst_us")) for e in entities)
    busy = _sum(number(e.values.get("busy_us")) for e in entities)
    cp = None if user is None or syst is None else user + syst
    return CpuTime(guest, cp, busy, cpus.duration_us)


def combine(parts: Iterable[CpuTime]) -> CpuTime | None:
    """Several intervals as one: times summed (missing in any part: missing in the whole)."""
    items = list(parts)
    if not items:
        return None
    return CpuTime(
        _sum(p.guest_us for p in items),
        _sum(p.cp_us for p in items),
        _sum(p.busy_us for p in items),
        sum(p.duration_us for p in items),
    )


@dataclass(frozen=True, slots=True)
class OperationCost:
    """Seed 002's cost figures for one interval: busy per 1000 VNQ (% of one processor per
    thousand virtual NQs a second) and CPU µs per virtual NQ."""

    total_busy_per_kvnq: float | None
    guest_busy_per_kvnq: float | None
    cp_busy_per_kvnq: float | None
    guest_us_op: float | None
    cp_us_op: float | None

    @property
    def total_us_op(self) -> float | None:
        if self.guest_us_op is None or self.cp_us_op is None:
            return None
        return self.guest_us_op + self.cp_us_op


NO_COST = OperationCost(None, None, None, None, None)


def operation_cost(cpu: CpuTime | None, vnq: object, crypto_duration_us: int) -> OperationCost:
    """The cost of the ``vnq`` virtual NQs measured over ``crypto_duration_us``, from the
    processors' times ``cpu`` over (about) the same interval."""
    ops = number(vnq)
    if cpu is None or not ops or ops <= 0 or cpu.duration_us <= 0 or crypto_duration_us <= 0:
        return NO_COST
    kvnq_s = ops / (crypto_duration_us / 1e6) / 1000.0
    cpu_s = cpu.duration_us / 1e6

    def per_kvnq(busy_us: float | None) -> float | None:
        return None if busy_us is None else busy_us / 1e6 / cpu_s * 100.0 / kvnq_s

    def per_op(busy_us: float | None) -> float | None:
        # the CPU of the processors' interval per NQ of the crypto record's interval
        return None if busy_us is None else busy_us / cpu_s / (ops / (crypto_duration_us / 1e6))

    return OperationCost(
        per_kvnq(cpu.total_us),
        per_kvnq(cpu.guest_us),
        per_kvnq(cpu.cp_us),
        per_op(cpu.guest_us),
        per_op(cpu.cp_us),
    )
