"""The simulated z/VM system on a simulated clock: cumulative counters at any moment.

Time advances in steps aligned to a fixed grid (``STEP_S``). For each step the day profile
gives the load level; the event-level window for that (quantised) level, simulated once and
memoised, gives the per-second rates of every crypto-path counter; the step adds rate x
duration to the running totals, with the Poisson noise of the step's operation count.
Background CPU load is added as a fluid, then all CPU time is placed onto the logical
processors. See docs/MODEL.md ("Speed") for why.

Everything is deterministic for a given seed: the windows' seeds and each step's noise
derive from it, and splitting ``advance`` calls differently does not change the totals.
"""

from __future__ import annotations

import calendar
import math
import random
from dataclasses import dataclass, field

from esatui.sim import adapter_table as table
from esatui.sim.cpu import CAPACITY_US, TypeDemand, place
from esatui.sim.lpar import guest_cpu_type, logical_processors
from esatui.sim.mechanism import DEFAULT, Mechanism
from esatui.sim.params import SimParams
from esatui.sim.profile import Levels, levels, quantise
from esatui.sim.snapshot import (
    AdapterCounters,
    ApBusState,
    ApQueueState,
    CmbFunction,
    CryptoCounters,
    GuestCounters,
    Identity,
    ProcessorCounters,
    SystemSnapshot,
    VcpuTicks,
)
from esatui.sim.window import WindowResult, steady_window
from esatui.sim.world import Load

STEP_S = 60.0
"""Grid of the steps the clock advances in (one load level and one noise draw each)."""
DEFAULT_START_US = calendar.timegm((2026, 1, 5, 0, 0, 0)) * 1_000_000
USER_HZ = 100
LINUX_MEM_KIB = 4 * 1024 * 1024
VSE_MEM_KIB = 512 * 1024
# How a Linux guest's background load shows in /proc/stat (user, system, irq, softirq).
_BG_SPLIT = (0.80, 0.14, 0.02, 0.04)
_CRYPTO_KEYS = (
    "vserv",
    "rserv",
    "hserv",
    "nserv",
    "dserv",
    "rnq",
    "rdq",
    "rdone",
    "rnq_rejected",
    "vnq_rejected",
    "nq_waits",
)
# /proc/stat columns
_U, _N, _S, _I, _W, _IRQ, _SIRQ, _ST = range(8)


@dataclass
class _GuestAcc:
    userid: str
    os: str
    vcpus: int
    emul: float = 0.0
    cp: float = 0.0
    samp_total: float = 0.0
    samp_cpu: float = 0.0
    samp_delay: float = 0.0
    samp_idle: float = 0.0
    request_count: float = 0.0
    vnq: float = 0.0
    vdq: float = 0.0
    vdone: float = 0.0
    stat: list[list[float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.stat = [[0.0] * 8 for _ in range(self.vcpus)]


class SimulatedSystem:
    """One z/VM LPAR with its guests and crypto adapters, on a simulated clock."""

    def __init__(
        self,
        params: SimParams,
        *,
        seed: int = 0,
        start_us: int = DEFAULT_START_US,
        mechanism: Mechanism = DEFAULT,
        identity: Identity | None = None,
    ) -> None:
        self.params = params
        self.seed = seed
        self.mech = mechanism
        self.identity = identity or Identity()
        self.start_us = start_us
        self._elapsed = 0.0  # seconds
        self._lps = logical_processors(params)
        self._gtype = guest_cpu_type(params)
        self._gspeed = params.cp_speed if self._gtype == "CP" else 1.0
        self._windows: dict[float, WindowResult] = {}
        self._crypto = dict.fromkeys(_CRYPTO_KEYS, 0.0)
        self._cards = [
            ([0.0] * len(table.FUNCTIONS), [0.0] * len(table.FUNCTIONS), [0.0])
            for _ in range(params.cards)
        ]
        self._procs = [[0.0] * 6 for _ in self._lps]  # online emul user syst wait steal
        self._guests = [
            _GuestAcc(f"LINUX{i + 1:02d}", "linux", params.vcpus) for i in range(params.guests)
        ]
        self._guests += [_GuestAcc(f"VSE{i + 1:02d}", "vse", 1) for i in range(params.vse_guests)]
        self._last: WindowResult | None = None

    # --- the clock ---------------------------------------------------------------------
    @property
    def time_us(self) -> int:
        return self.start_us + round(self._elapsed * 1e6)

    @property
    def elapsed_s(self) -> float:
        return self._elapsed

    def advance_to(self, time_us: int) -> None:
        self.advance((time_us - self.time_us) / 1e6)

    def advance(self, seconds: float) -> None:
        """Move the clock forward, accumulating every counter (negative: ignored)."""
        end = self._elapsed + max(seconds, 0.0)
        while self._elapsed < end - 1e-9:
            cell = math.floor(self._elapsed / STEP_S + 1e-9)
            stop = min(end, (cell + 1) * STEP_S)
            self._step(cell, self._elapsed, stop - self._elapsed)
            self._elapsed = stop

    # --- the load ----------------------------------------------------------------------
    def levels_at(self, elapsed_s: float) -> Levels:
        seconds_of_day = (self.start_us / 1e6 + elapsed_s) % 86400.0
        return levels(self.params.profile, seconds_of_day)

    def load_for(self, interactive: float) -> Load:
        p = self.params
        level = interactive if p.profile == "day" else 1.0
        cpu_load = min(p.cpu_load * level, 0.95)
        bg_util = cpu_load * p.vcpus * p.guests / max(self._count(self._gtype), 1)
        if self._gtype == "CP":
            bg_util += p.vse_load / max(self._count("CP"), 1)
        stretch = 1.0 / (1.0 - min(bg_util, 0.9))
        return Load(rate=p.rate * level, cpu_load=cpu_load, dispatch_stretch=stretch)

    def window(self, interactive: float) -> WindowResult:
        """The memoised event-level window at a (quantised) interactive level."""
        key = quantise(interactive) if self.params.profile == "day" else 1.0
        cached = self._windows.get(key)
        if cached is None:
            wseed = (self.seed * 1_000_003 + round(key * 1000)) & 0x7FFFFFFF
            cached = steady_window(self.params, self.mech, self.load_for(key), wseed)
            self._windows[key] = cached
        return cached

    @property
    def windows_simulated(self) -> int:
        """Distinct load levels this system has needed an event-level window for."""
        return len(self._windows)

    def _count(self, ptype: str) -> int:
        return sum(1 for lp in self._lps if lp.ptype == ptype)

    # --- one step ------------------------------------------------------------------------
    def _step(self, cell: int, t0: float, dt: float) -> None:
        p = self.params
        m = self.mech
        lv = self.levels_at(t0 + dt / 2)
        w = self.window(lv.interactive)
        self._last = w
        rng = random.Random((self.seed * 7_919 + cell * 104_729) & 0x7FFFFFFF)
        ops = w.vnq * STEP_S
        eps = max(-0.3, min(0.3, rng.gauss(0.0, 1.0 / math.sqrt(ops)))) if ops > 0 else 0.0
        f = dt * (1.0 + eps)
        c = self._crypto
        for key in _CRYPTO_KEYS:
            c[key] += getattr(w, key) * f
        for (count, time_us, busy), cr in zip(self._cards, w.cards, strict=True):
            for i in range(len(count)):
                count[i] += cr.count[i] * f
                time_us[i] += cr.time_us[i] * f
            busy[0] += cr.busy_us * f
        # Guests' demand for processors (µs per second of time on their processors)
        level = lv.interactive if p.profile == "day" else 1.0
        linux = self._guests[: p.guests]
        vse = self._guests[p.guests :]
        emul_rate: list[list[float]] = []  # per guest: per vCPU user, system, irq, softirq
        cp_rate: list[list[float]] = []
        bg_emul_total = 0.0
        for g, gr in zip(linux, w.guests, strict=True):
            bg = min(p.cpu_load * level * (1.0 + rng.gauss(0.0, 0.03)), 0.95) * CAPACITY_US
            bg = max(bg, 0.0)
            bg_emul_total += bg * g.vcpus
            # per vCPU: the crypto path's time by category, plus the background load
            emul_rate.append(
                [
                    gr.vcpu_emul[j][k] * (1.0 + eps) / self._gspeed + bg * _BG_SPLIT[k]
                    for j in range(g.vcpus)
                    for k in range(4)
                ]
            )
            cp_rate.append(
                [
                    gr.vcpu_cp[j] * (1.0 + eps) / self._gspeed + bg * m.bg_cp_user_ratio
                    for j in range(g.vcpus)
                ]
            )
        vse_emul = []
        for _ in vse:
            load = p.vse_load * lv.batch * (1.0 + rng.gauss(0.0, 0.03))
            vse_emul.append(min(max(load, 0.0), 0.98) * CAPACITY_US)
        demand: dict[str, TypeDemand] = {}

        def add(ptype: str, emul: float, user: float, syst: float) -> None:
            d = demand.get(ptype, TypeDemand(0.0, 0.0))
            demand[ptype] = TypeDemand(d.emul_us + emul, d.user_us + user, d.syst_us + syst)

        add(
            self._gtype,
            sum(sum(r) for r in emul_rate),
            sum(sum(r) for r in cp_rate),
            bg_emul_total * m.bg_cp_system_ratio,
        )
        if vse:
            total = sum(vse_emul)
            add("CP", total, total * m.bg_cp_user_ratio, total * m.bg_cp_system_ratio)
        sys_work = w.cp_system_us * (1.0 + eps)
        pl = place(
            self._lps,
            demand=demand,
            cp_system_work_us=sys_work,
            idle_system_fraction=m.idle_system_fraction,
            steal_shared=m.steal_shared,
            dedicated=p.dedicated,
        )
        for acc, pr in zip(self._procs, pl.processors, strict=True):
            acc[0] += CAPACITY_US * dt
            acc[1] += pr.emul_us * dt
            acc[2] += pr.user_us * dt
            acc[3] += pr.syst_us * dt
            acc[4] += pr.wait_us * dt
            acc[5] += pr.steal_us * dt
        steal_frac = {
            t: sum(
                pr.steal_us
                for pr, lp in zip(pl.processors, self._lps, strict=True)
                if lp.ptype == t
            )
            / (CAPACITY_US * self._count(t))
            for t in pl.utilisation
        }
        # Linux guests: /proc/stat per virtual CPU, DIAGNOSE X'2FC' samples
        served = pl.served.get(self._gtype, 1.0)
        util = pl.utilisation.get(self._gtype, 0.0)
        for g, gr, rows, cps in zip(linux, w.guests, emul_rate, cp_rate, strict=True):
            running_sum = 0.0
            delay_sum = 0.0
            for j in range(g.vcpus):
                cats = [x * served for x in rows[4 * j : 4 * j + 4]]
                cp_j = cps[j] * served
                emul_j = sum(cats)
                running = min(emul_j + cp_j, CAPACITY_US)
                delay = min(running * util * util, CAPACITY_US - running)
                steal = min(
                    cp_j + delay + running * steal_frac.get(self._gtype, 0.0), CAPACITY_US - emul_j
                )
                idle = max(CAPACITY_US - emul_j - steal, 0.0)
                st = g.stat[j]
                st[_U] += cats[0] * dt
                st[_S] += cats[1] * dt
                st[_IRQ] += cats[2] * dt
                st[_SIRQ] += cats[3] * dt
                st[_ST] += steal * dt
                st[_I] += idle * dt
                g.emul += emul_j * dt
                g.cp += cp_j * dt
                running_sum += running
                delay_sum += delay
            self._samples(g, running_sum, delay_sum, dt)
            g.request_count += gr.request_count * f
            g.vnq += gr.vnq * f
            g.vdq += gr.vdq * f
            g.vdone += gr.vdone * f
        vse_served = pl.served.get("CP", 1.0)
        cp_util = pl.utilisation.get("CP", 0.0)
        for g, wanted in zip(vse, vse_emul, strict=True):
            e = wanted * vse_served
            g.emul += e * dt
            g.cp += e * m.bg_cp_user_ratio * dt
            running = min(e * (1.0 + m.bg_cp_user_ratio), CAPACITY_US)
            self._samples(g, running, min(running * cp_util * cp_util, CAPACITY_US - running), dt)

    def _samples(self, g: _GuestAcc, running: float, delay: float, dt: float) -> None:
        n = dt * g.vcpus / self.mech.hf_sample_s
        cap = CAPACITY_US * g.vcpus
        g.samp_total += n
        g.samp_cpu += n * running / cap
        g.samp_delay += n * delay / cap
        g.samp_idle += n * max(cap - running - delay, 0.0) / cap

    # --- what the interfaces show -------------------------------------------------------
    def snapshot(self) -> SystemSnapshot:
        p = self.params
        c = self._crypto
        vnq = sum(g.vnq for g in self._guests)
        vdq = sum(g.vdq for g in self._guests)
        vdone = sum(g.vdone for g in self._guests)
        # VSERV and DSERV accrue at completion in the window; all five accumulators are
        # kept per VNQ so that ΔX/ΔVNQ over any interval is the window's mean.
        w = self._last
        rng = random.Random((self.seed * 31 + self.time_us) & 0x7FFFFFFF)
        waiting = _poisson(rng, w.waiting_avg) if w else 0
        crypto = CryptoCounters(
            vserv_us=int(c["vserv"]),
            rserv_us=int(c["rserv"]),
            hserv_us=int(c["hserv"]),
            nserv_us=int(c["nserv"]),
            dserv_us=int(c["dserv"]),
            vnq=int(vnq),
            rnq=int(c["rnq"]),
            vdq=int(vdq),
            rdq=int(c["rdq"]),
            vdone=int(vdone),
            rdone=int(c["rdone"]),
            vnq_rejected=int(c["vnq_rejected"]),
            rnq_rejected=int(c["rnq_rejected"]),
            nq_waits=int(c["nq_waits"]),
            waiting_nq=waiting,
        )
        hwtype = table.CARD_HWTYPE[p.card_type]
        adapters = tuple(
            AdapterCounters(
                ap=i,
                card_type=p.card_type,
                hwtype=hwtype,
                mode="accelerator",
                functions=tuple(
                    CmbFunction(name, int(count[k]), int(time_us[k]))
                    for k, name in enumerate(table.FUNCTION_NAMES)
                ),
                busy_us=int(busy[0]),
            )
            for i, (count, time_us, busy) in enumerate(self._cards)
        )
        processors = tuple(
            ProcessorCounters(
                address=lp.address,
                ptype=lp.ptype,
                core=lp.core,
                thread=lp.thread,
                online_us=int(acc[0]),
                emul_us=int(acc[1]),
                user_us=int(acc[2]),
                syst_us=int(acc[3]),
                wait_us=int(acc[4]),
                steal_us=int(acc[5]),
            )
            for lp, acc in zip(self._lps, self._procs, strict=True)
        )
        guests = tuple(self._guest_view(i, g, rng) for i, g in enumerate(self._guests))
        return SystemSnapshot(
            time_us=self.time_us,
            elapsed_us=round(self._elapsed * 1e6),
            identity=self.identity,
            crypto=crypto,
            adapters=adapters,
            processors=processors,
            guests=guests,
        )

    def _guest_view(self, index: int, g: _GuestAcc, rng: random.Random) -> GuestCounters:
        p = self.params
        linux = g.os == "linux"
        elapsed = self._elapsed * 1e6
        mem_max = LINUX_MEM_KIB if linux else VSE_MEM_KIB
        drift = 0.06 * math.sin(self._elapsed / 3600.0 + index)
        mem_used = int(mem_max * (0.68 + drift))
        ticks: tuple[VcpuTicks, ...] = ()
        apq = None
        bus = None
        if linux:
            ticks = tuple(
                VcpuTicks(j, *(int(x * USER_HZ / 1e6) for x in st)) for j, st in enumerate(g.stat)
            )
            w = self._last
            gr = w.guests[index] if w else None
            apq = ApQueueState(
                card=0,
                domain=0,
                card_type=p.card_type,
                request_count=int(g.request_count),
                requestq_count=_poisson(rng, gr.requestq_avg) if gr else 0,
                pendingq_count=min(_poisson(rng, gr.pendingq_avg), self.mech.linux_queue_limit)
                if gr
                else 0,
            )
            timeout = 0 if p.poll_timeout_us == "irq" else round(float(p.poll_timeout_us) * 1000)
            bus = ApBusState(
                ap_interrupts=p.guest_irq,
                poll_thread=False,
                poll_timeout_ns=timeout or 1_500_000,
                domain=0,
            )
        return GuestCounters(
            userid=g.userid,
            os=g.os,
            vcpu_type=self._gtype if linux else "CP",
            vcpus=g.vcpus,
            cpu_us=int(g.emul + g.cp),
            emul_us=int(g.emul),
            cp_us=int(g.cp),
            elapsed_us=int(elapsed),
            mem_max_kib=mem_max,
            mem_used_kib=mem_used,
            samp_total=int(g.samp_total),
            samp_cpu=int(g.samp_cpu),
            samp_delay=int(g.samp_delay),
            samp_page=0,
            samp_idle=int(g.samp_idle),
            samp_other=0,
            ticks=ticks,
            ap_queue=apq,
            ap_bus=bus,
        )


def _poisson(rng: random.Random, mean: float) -> int:
    """A gauge reading around ``mean`` (Knuth's method; means here are small)."""
    if mean <= 0:
        return 0
    if mean > 30:
        return max(0, round(rng.gauss(mean, math.sqrt(mean))))
    limit = math.exp(-mean)
    k = 0
    prod = rng.random()
    while prod > limit:
        k += 1
        prod *= rng.random()
    return k
