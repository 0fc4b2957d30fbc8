"""What an analyst computes from two snapshots, the way seed 002 and the screens do.

Service times per VNQ are the accumulator's delta over the delta of virtual NQs; ETR is
virtual NQs per second of the interval; busy per 1000 VNQs is the LPAR's busy time as a
percentage of one processor, per thousand VNQs per second (so 1.0 is 10 µs of CPU per
operation). Guest busy is emulation time; CP busy is CP time on behalf of guests plus CP's
own time. Nothing here reads the model's internals: only the snapshots' counters.
"""

from __future__ import annotations

from dataclasses import dataclass

from esatui.sim.snapshot import SystemSnapshot


@dataclass(frozen=True, slots=True)
class PollingMetrics:
    """Seed 002's key metrics for one interval, plus the polling counts of its closing part."""

    interval_s: float
    nserv_us: float
    rserv_us: float
    hserv_us: float
    dserv_us: float
    vserv_us: float
    total_busy_per_kvnq: float
    guest_busy_per_kvnq: float
    cp_busy_per_kvnq: float
    etr: float
    unsuccessful_vdq: int
    """Guest DQAPs that found no reply, in the interval."""
    unsuccessful_rdq: int
    """CP DQAPs that found no reply, in the interval."""
    guest_cpu_us: int
    """CPU charged to the Linux guests in the interval (emulation plus CP on their behalf)."""

    def as_row(self) -> dict[str, float]:
        return {
            "NSERV": self.nserv_us,
            "RSERV": self.rserv_us,
            "HSERV": self.hserv_us,
            "DSERV": self.dserv_us,
            "VSERV": self.vserv_us,
            "total": self.total_busy_per_kvnq,
            "guest": self.guest_busy_per_kvnq,
            "CP": self.cp_busy_per_kvnq,
            "ETR": self.etr,
        }


def polling_metrics(before: SystemSnapshot, after: SystemSnapshot) -> PollingMetrics:
    """The interval from ``before`` to ``after``; ``ValueError`` if it holds no operation."""
    dt = (after.time_us - before.time_us) / 1e6
    a, b = after.crypto, before.crypto
    vnq = a.vnq - b.vnq
    if dt <= 0 or vnq <= 0:
        raise ValueError("the interval holds no virtual NQ")
    emul = sum(p.emul_us for p in after.processors) - sum(p.emul_us for p in before.processors)
    cp = sum(p.user_us + p.syst_us for p in after.processors) - sum(
        p.user_us + p.syst_us for p in before.processors
    )
    etr = vnq / dt

    def per_kvnq(busy_us: int) -> float:
        return busy_us / 1e6 / dt * 100.0 / (etr / 1000.0)

    linux_after = sum(g.cpu_us for g in after.guests if g.os == "linux")
    linux_before = sum(g.cpu_us for g in before.guests if g.os == "linux")
    return PollingMetrics(
        interval_s=dt,
        nserv_us=(a.nserv_us - b.nserv_us) / vnq,
        rserv_us=(a.rserv_us - b.rserv_us) / vnq,
        hserv_us=(a.hserv_us - b.hserv_us) / vnq,
        dserv_us=(a.dserv_us - b.dserv_us) / vnq,
        vserv_us=(a.vserv_us - b.vserv_us) / vnq,
        total_busy_per_kvnq=per_kvnq(emul + cp),
        guest_busy_per_kvnq=per_kvnq(emul),
        cp_busy_per_kvnq=per_kvnq(cp),
        etr=etr,
        unsuccessful_vdq=(a.vdq - b.vdq) - (a.vdone - b.vdone),
        unsuccessful_rdq=(a.rdq - b.rdq) - (a.rdone - b.rdone),
        guest_cpu_us=linux_after - linux_before,
    )
