"""What the simulated system shows at one moment: the counters its real interfaces expose.

Counters are cumulative integers since the simulated system started (like the real ones);
gauges are the values at the snapshot's time. Names follow the raw interfaces the artifact
writers will render: D5R9 MRPRCAPC, D5R10 crypto measurement blocks, D0R2 per logical
processor, /proc/stat per virtual CPU, /sys/bus/ap, DIAGNOSE X'2FC'.
"""

from __future__ import annotations

from dataclasses import dataclass

from esatui.sim.locks import LockTotals
from esatui.sim.paging import NONE as NO_PAGING
from esatui.sim.paging import PagingTotals


@dataclass(frozen=True, slots=True)
class CryptoCounters:
    """D5R9 MRPRCAPC: the hypervisor's APVIRT crypto counters (times in µs)."""

    vserv_us: int
    """CRYVSERV: guest NQ delivered to CP until the guest starts to receive the reply."""
    rserv_us: int
    """CRYRSERV: CP's real NQ until CP has the reply."""
    hserv_us: int
    """CRYHSERV: guest NQ delivered until CP has the reply."""
    nserv_us: int
    """CRYNSERV: guest NQ delivered until CP's real NQ."""
    dserv_us: int
    """CRYDSERV: CP has the reply until the guest starts to receive it."""
    vnq: int
    """CRYNOVNQ: virtual NQs."""
    rnq: int
    """CRYNOFNQ: real NQs."""
    vdq: int
    """virtual DQs (CRYNOVPR, provisional meaning): every guest DQAP, successful or not."""
    rdq: int
    """CRYNOFDQ: real DQs, successful or not."""
    vdone: int
    """virtual completions (CRYNOVPC, provisional): guest DQAPs that returned a reply."""
    rdone: int
    """real completions (CRYNORPR, provisional): CP DQAPs that returned a reply."""
    vnq_rejected: int
    """CRYNOXVN."""
    rnq_rejected: int
    """CRYNOXRN."""
    nq_waits: int
    """Requests that found every real queue full and waited in CP (cumulative)."""
    waiting_nq: int
    """CRYNOWNQ as a gauge: requests received from guests, not yet on a real queue."""


@dataclass(frozen=True, slots=True)
class CmbFunction:
    """One (time, count) pair of an adapter's crypto measurement block."""

    name: str
    """``rsa1024_me``, ``rsa2048_crt`` ... (the accelerator pairs of SPEC section 3)."""
    count: int
    time_us: int


@dataclass(frozen=True, slots=True)
class AdapterCounters:
    """D5R10: one Crypto Express adapter as its CMB shows it (all LPARs' work)."""

    ap: int
    card_type: str
    hwtype: int
    mode: str
    """``accelerator`` (CMB mode 8) or ``cca`` (a coprocessor, CMB mode 9)."""
    functions: tuple[CmbFunction, ...]
    busy_us: int


@dataclass(frozen=True, slots=True)
class ProcessorCounters:
    """D0R2-like: one logical processor of the LPAR (µs)."""

    address: int
    ptype: str
    core: int
    thread: int
    online_us: int
    emul_us: int
    """Guest emulation (SIE) time."""
    user_us: int
    """CP time on behalf of guests."""
    syst_us: int
    """CP time for itself (NQ/DQ tasks, dispatching ...)."""
    wait_us: int
    """Voluntary wait (idle)."""
    steal_us: int
    """Online but not dispatched by PR/SM."""
    paging: PagingTotals = NO_PAGING
    """Encrypted paging on this processor (D3R2), its CPU included in ``syst_us``."""
    spins: int = 0
    """Spins on formal spin locks on this processor (D0R2 PFXSPINC)."""
    spin_us: int = 0
    """Time spent in them (D0R2 PFXSPINT), included in ``syst_us``."""


@dataclass(frozen=True, slots=True)
class VcpuTicks:
    """One line ``cpuN`` of a guest's /proc/stat, in USER_HZ ticks (100 per second)."""

    cpu: int
    user: int
    nice: int
    system: int
    idle: int
    iowait: int
    irq: int
    softirq: int
    steal: int


@dataclass(frozen=True, slots=True)
class ApQueueState:
    """The guest's one APVIRT queue as /sys/bus/ap shows it."""

    card: int
    domain: int
    card_type: str
    request_count: int
    """Cumulative requests the driver accepted (``request_count``)."""
    requestq_count: int
    """Gauge: requests waiting in the driver (``requestq_count``)."""
    pendingq_count: int
    """Gauge: requests sent and not yet received (``pendingq_count``)."""


@dataclass(frozen=True, slots=True)
class ApBusState:
    """/sys/bus/ap attributes of a guest."""

    ap_interrupts: bool
    poll_thread: bool
    poll_timeout_ns: int
    domain: int


@dataclass(frozen=True, slots=True)
class GuestCounters:
    """One z/VM guest: CP's view (DIAGNOSE X'2FC') and, for Linux, its own."""

    userid: str
    os: str
    """``linux`` or ``vse``."""
    vcpu_type: str
    vcpus: int
    cpu_us: int
    """Total CPU charged to the guest: emulation plus CP time on its behalf."""
    emul_us: int
    cp_us: int
    elapsed_us: int
    mem_max_kib: int
    mem_used_kib: int
    samp_total: int
    samp_cpu: int
    samp_delay: int
    samp_page: int
    samp_idle: int
    samp_other: int
    ticks: tuple[VcpuTicks, ...]
    """/proc/stat per virtual CPU (Linux guests; empty for z/VSE)."""
    ap_queue: ApQueueState | None
    ap_bus: ApBusState | None


@dataclass(frozen=True, slots=True)
class Identity:
    """Facts about the simulated system the sources report (sysinfo, monitor D1)."""

    node: str = "SIMVM"
    lpar: str = "SIMLPAR"
    machine_type: str = "8561"
    zvm_level: str = "7.3.0"
    linux_kernel: str = "4.12.14"
    d5r9_length: int | None = None
    """The D5R9 (MRPRCAPC) record the simulated CP writes; None: its level's
    (``monitor_feed.d5r9_length``)."""

    @property
    def level(self) -> tuple[int, int, int]:
        """``zvm_level`` as (version, release, modification)."""
        parts = [int(p) for p in self.zvm_level.split(".") if p.isdigit()][:3]
        parts += [0] * (3 - len(parts))
        return parts[0], parts[1], parts[2]


@dataclass(frozen=True, slots=True)
class SystemSnapshot:
    """Everything the simulated system's interfaces would show at ``time_us``."""

    time_us: int
    """Wall-clock time (UTC µs since the epoch) on the simulated clock."""
    elapsed_us: int
    """Since the simulated system started."""
    identity: Identity
    crypto: CryptoCounters
    adapters: tuple[AdapterCounters, ...]
    processors: tuple[ProcessorCounters, ...]
    guests: tuple[GuestCounters, ...]
    locks: tuple[LockTotals, ...] = ()
    """CP's formal spin locks (D0R23), cumulative."""

    def guest(self, userid: str) -> GuestCounters:
        for g in self.guests:
            if g.userid == userid:
                return g
        raise KeyError(userid)
