"""The simulated z/VM system on a simulated clock: cumulative counters at any moment.

Time advances in steps aligned to a fixed grid (``step_s``, 10 s by default). For each step
the day profile, with its seeded drift, gives the load level; the event-level windows of
the two quantised levels around it, each simulated once and memoised, are interpolated to
give the mean per-second rate of every crypto-path counter, and the windows' own variation
gives the step's (an actual stretch of a window as long as the step, or for steps longer
than that the batch-means deviation; ``variation``). The step adds rate x duration to the
running totals. Background CPU load is added as a fluid
with a little noise, then all CPU time is placed onto the logical processors. See
docs/MODEL.md ("Speed", "Variation") for why.

Everything is deterministic for a given seed: the windows' seeds and each step's draws
derive from it and from the step's place on the grid, so splitting ``advance`` calls
differently does not change the totals.
"""

from __future__ import annotations

import calendar
import math
import random
from dataclasses import dataclass, field

from esatui.sim import adapter_table as table
from esatui.sim.batches import CRYPTO, GUEST, Layout
from esatui.sim.cpu import CAPACITY_US, TypeDemand, place
from esatui.sim.locks import lock_totals, spin_rates
from esatui.sim.lpar import guest_cpu_type, logical_processors
from esatui.sim.mechanism import DEFAULT, Mechanism
from esatui.sim.paging import processor_totals
from esatui.sim.params import SimParams
from esatui.sim.profile import LEVEL_STEP, Levels, levels
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
from esatui.sim.variation import GOLDEN, VARIABILITY, Variability, draw, drift, white
from esatui.sim.window import WindowResult, steady_window
from esatui.sim.world import Load

STEP_S = 10.0
"""Default grid of the steps the clock advances in (one level and one set of draws each):
the shortest interval esatui's own demo records, so no two of its intervals are alike."""
DEFAULT_START_US = calendar.timegm((2026, 1, 5, 0, 0, 0)) * 1_000_000
USER_HZ = 100
LINUX_MEM_KIB = 4 * 1024 * 1024
VSE_MEM_KIB = 512 * 1024
# How a Linux guest's background load shows in /proc/stat (user, system, irq, softirq).
_BG_SPLIT = (0.80, 0.14, 0.02, 0.04)
_C = {name: i for i, name in enumerate(CRYPTO)}
# /proc/stat columns
_U, _N, _S, _I, _W, _IRQ, _SIRQ, _ST = range(8)
# _GuestAcc.values: emulation, CP, DIAGNOSE X'2FC' samples (total, running, delay, idle)
_EMUL, _CP, _SAMP, _SCPU, _SDELAY, _SIDLE = range(6)
# drift streams
_INTERACTIVE, _BATCH, _BACKGROUND = 0, 1, 10


@dataclass
class _GuestAcc:
    userid: str
    os: str
    vcpus: int
    values: list[float] = field(default_factory=lambda: [0.0] * 6)
    stat: list[list[float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.stat = [[0.0] * 8 for _ in range(self.vcpus)]


@dataclass(frozen=True, slots=True)
class _Step:
    """Every per-second rate of one step of the grid (what its draws made of the model)."""

    index: int
    path: list[float]
    """Crypto-path rates in :class:`~esatui.sim.batches.Layout` order (never negative)."""
    processors: list[list[float]]
    """Per logical processor: online, emulation, user, system, wait, steal."""
    guests: list[tuple[list[float], list[list[float]]]]
    """Per guest: :class:`_GuestAcc` values and ``/proc/stat`` rows."""
    waiting_avg: float
    requestq_avg: list[float]
    pendingq_avg: list[float]


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
        step_s: float = STEP_S,
        variability: Variability = VARIABILITY,
    ) -> None:
        self.params = params
        self.seed = seed
        self.mech = mechanism
        self.var = variability
        self.identity = identity or Identity()
        self.start_us = start_us
        self.step_s = step_s
        self._step_us = max(1, round(step_s * 1e6))
        self._elapsed_us = 0
        self._lps = logical_processors(params)
        self._gtype = guest_cpu_type(params)
        self._gspeed = params.cp_speed if self._gtype == "CP" else 1.0
        self._layout = Layout(params.guests, params.vcpus, params.cards, len(table.FUNCTIONS))
        self._windows: dict[int, WindowResult] = {}
        self._path = [0.0] * self._layout.size
        self._procs = [[0.0] * 6 for _ in self._lps]  # online emul user syst wait steal
        self._spins = [0.0, 0.0]  # the scheduler lock's spins and spin µs since the start
        self._guests = [
            _GuestAcc(f"LINUX{i + 1:02d}", "linux", params.vcpus) for i in range(params.guests)
        ]
        self._guests += [_GuestAcc(f"VSE{i + 1:02d}", "vse", 1) for i in range(params.vse_guests)]
        self._last: _Step | None = None
        self._phase = random.Random(f"esatui-sim/{seed}/stretch").random()

    # --- the clock ---------------------------------------------------------------------
    @property
    def time_us(self) -> int:
        return self.start_us + self._elapsed_us

    @property
    def elapsed_s(self) -> float:
        return self._elapsed_us / 1e6

    def advance(self, seconds: float) -> None:
        """Move the clock forward, accumulating every counter (negative: ignored)."""
        self.advance_to(self.time_us + round(max(seconds, 0.0) * 1e6))

    def advance_to(self, time_us: int) -> None:
        """Move the clock to ``time_us`` (earlier: ignored). Steps are cells of a grid of
        absolute time, so where the clock stops on the way changes nothing."""
        now = self.time_us
        while now < time_us:
            cell = now // self._step_us
            stop = min(time_us, (cell + 1) * self._step_us)
            self._accumulate(self._step(cell), (stop - now) / 1e6)
            now = stop
            self._elapsed_us = now - self.start_us

    # --- the load ----------------------------------------------------------------------
    def levels_at(self, elapsed_s: float) -> Levels:
        """The profile's levels ``elapsed_s`` after the start, wandering around the profile
        (``day``)."""
        return self._levels(self.start_us / 1e6 + elapsed_s)

    def _levels(self, now_s: float) -> Levels:
        base = levels(self.params.profile, now_s % 86400.0)
        if self.params.profile != "day":
            return base
        v = self.var
        return Levels(
            base.interactive
            * (1.0 + v.interactive_drift * self._drift(_INTERACTIVE, now_s, v.interactive_knot_s)),
            base.batch * (1.0 + v.batch_drift * self._drift(_BATCH, now_s, v.batch_knot_s)),
        )

    def _drift(self, stream: int, now_s: float, knot_s: float) -> float:
        return drift(self.seed, stream, now_s, knot_s)

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
        """The memoised event-level window at the nearest quantised interactive level."""
        if self.params.profile != "day":
            return self._window(round(1.0 / LEVEL_STEP))
        return self._window(max(1, round(interactive / LEVEL_STEP)))

    def _window(self, index: int) -> WindowResult:
        cached = self._windows.get(index)
        if cached is None:
            key = index * LEVEL_STEP
            wseed = (self.seed * 1_000_003 + round(key * 1000)) & 0x7FFFFFFF
            cached = steady_window(self.params, self.mech, self.load_for(key), wseed)
            self._windows[index] = cached
        return cached

    def _windows_around(self, interactive: float) -> list[tuple[float, WindowResult]]:
        """The windows of the quantised levels on either side of ``interactive``, with the
        weight of each in a linear interpolation (flat profile: the one window)."""
        if self.params.profile != "day":
            return [(1.0, self.window(1.0))]
        x = interactive / LEVEL_STEP
        low = max(1, math.floor(x + 1e-9))
        a = min(max(x - low, 0.0), 1.0)
        if a < 1e-6:
            return [(1.0, self._window(low))]
        return [(1.0 - a, self._window(low)), (a, self._window(low + 1))]

    @property
    def windows_simulated(self) -> int:
        """Distinct load levels this system has needed an event-level window for."""
        return len(self._windows)

    def _count(self, ptype: str) -> int:
        return sum(1 for lp in self._lps if lp.ptype == ptype)

    # --- one step ------------------------------------------------------------------------
    def _accumulate(self, st: _Step, dt: float) -> None:
        self._last = st
        self._path = _added(self._path, st.path, dt)
        rates, spins, spin_us = self._spinning(st)
        self._procs = [_added(a, r, dt) for a, r in zip(self._procs, rates, strict=True)]
        self._spins = _added(self._spins, [spins, spin_us], dt)
        for g, (values, stat) in zip(self._guests, st.guests, strict=True):
            g.values = _added(g.values, values, dt)
            g.stat = [_added(a, r, dt) for a, r in zip(g.stat, stat, strict=True)]

    def _spinning(self, st: _Step) -> tuple[list[list[float]], float, float]:
        """The step's processor rates with the scheduler lock's spinning moved from wait to
        CP's own time (docs/MODEL.md), and the spins and spin µs a second."""
        lay = self._layout
        vnq = GUEST.index("vnq")
        trips = sum(st.path[lay.guest(i) + vnq] for i in range(self.params.guests))
        # the lock word's cache line moves between cores (SMT threads share a core's cache)
        cores = len({lp.core for lp in self._lps})
        spin = spin_rates(trips, cores, self.params.lock_hold_us)
        if spin.spin_us <= 0:
            return st.processors, 0.0, 0.0
        share = spin.spin_us / len(self._lps)
        out = []
        moved_us = 0.0
        for r in st.processors:
            moved = min(share, r[4])  # a processor without wait left cannot spin more
            moved_us += moved
            out.append([r[0], r[1], r[2], r[3] + moved, r[4] - moved, r[5]])
        return out, spin.spins * moved_us / spin.spin_us, moved_us

    def _step(self, cell: int) -> _Step:  # noqa: PLR0915 - one draw per rate of the model, in a fixed order (the seed decides)
        """The rates of step ``cell`` of the grid: a function of the seed and ``cell`` only
        (the last one is kept: the clock often stops inside a step)."""
        last = self._last
        if last is not None and last.index == cell:
            return last
        p = self.params
        m = self.mech
        v = self.var
        lay = self._layout
        now_s = (cell + 0.5) * self._step_us / 1e6
        lv = self._levels(now_s)
        rng = random.Random((self.seed * 7_919 + cell * 104_729) & 0x7FFFFFFF)
        # The crypto path: interpolated means plus this step's sampling deviation.
        around = self._windows_around(lv.interactive)
        position = (self._phase + cell * GOLDEN) % 1.0
        path = draw([(a, w.vector, w.spread) for a, w in around], rng, self.step_s, position)
        # Guests' demand for processors (µs per second of time on their processors)
        level = lv.interactive if p.profile == "day" else 1.0
        linux = self._guests[: p.guests]
        vse = self._guests[p.guests :]
        emul_rate: list[list[float]] = []  # per guest: per vCPU user, system, irq, softirq
        cp_rate: list[list[float]] = []
        bg_emul_total = 0.0
        for gi, g in enumerate(linux):
            wander = 1.0
            if p.profile == "day":
                own = self._drift(_BACKGROUND + gi, now_s, v.background_knot_s)
                wander = max(1.0 + v.background_drift * own, 0.0)
            load = p.cpu_load * level * wander * white(rng, v.background_white, self.step_s)
            bg = min(load, 0.95) * CAPACITY_US
            bg_emul_total += bg * g.vcpus
            # per vCPU: the crypto path's time by category, plus the background load
            base = [lay.vcpu(gi, j) for j in range(g.vcpus)]
            emul_rate.append(
                [path[b + k] / self._gspeed + bg * _BG_SPLIT[k] for b in base for k in range(4)]
            )
            cp_rate.append([path[b + 4] / self._gspeed + bg * m.bg_cp_user_ratio for b in base])
        vse_emul = []
        for _ in vse:
            load = p.vse_load * lv.batch * white(rng, v.background_white, self.step_s)
            vse_emul.append(min(load, 0.98) * CAPACITY_US)
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
        pl = place(
            self._lps,
            demand=demand,
            cp_system_work_us=path[_C["cp_system_us"]],
            idle_system_fraction=m.idle_system_fraction,
            steal_shared=m.steal_shared,
            dedicated=p.dedicated,
            jitter=[white(rng, v.placement_white, self.step_s) for _ in self._lps],
            steal_jitter=[white(rng, v.steal_white, self.step_s) for _ in self._lps],
        )
        processors = [
            [CAPACITY_US, pr.emul_us, pr.user_us, pr.syst_us, pr.wait_us, pr.steal_us]
            for pr in pl.processors
        ]
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
        guests: list[tuple[list[float], list[list[float]]]] = []
        served = pl.served.get(self._gtype, 1.0)
        util = pl.utilisation.get(self._gtype, 0.0)
        for g, rows, cps in zip(linux, emul_rate, cp_rate, strict=True):
            values = [0.0] * 6
            stat: list[list[float]] = []
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
                row = [0.0] * 8
                row[_U], row[_S], row[_IRQ], row[_SIRQ] = cats
                row[_ST] = steal
                row[_I] = idle
                stat.append(row)
                values[_EMUL] += emul_j
                values[_CP] += cp_j
                running_sum += running
                delay_sum += delay
            self._samples(values, g.vcpus, running_sum, delay_sum)
            guests.append((values, stat))
        vse_served = pl.served.get("CP", 1.0)
        cp_util = pl.utilisation.get("CP", 0.0)
        for g, wanted in zip(vse, vse_emul, strict=True):
            e = wanted * vse_served
            values = [0.0] * 6
            values[_EMUL] = e
            values[_CP] = e * m.bg_cp_user_ratio
            running = min(e * (1.0 + m.bg_cp_user_ratio), CAPACITY_US)
            delay = min(running * cp_util * cp_util, CAPACITY_US - running)
            self._samples(values, g.vcpus, running, delay)
            guests.append((values, [[0.0] * 8 for _ in range(g.vcpus)]))
        return _Step(
            index=cell,
            path=path,
            processors=processors,
            guests=guests,
            waiting_avg=sum(a * w.waiting_avg for a, w in around),
            requestq_avg=[
                sum(a * w.guests[i].requestq_avg for a, w in around) for i in range(p.guests)
            ],
            pendingq_avg=[
                sum(a * w.guests[i].pendingq_avg for a, w in around) for i in range(p.guests)
            ],
        )

    def _samples(self, values: list[float], vcpus: int, running: float, delay: float) -> None:
        """DIAGNOSE X'2FC' state samples per second of a guest running and delayed that much."""
        n = vcpus / self.mech.hf_sample_s
        cap = CAPACITY_US * vcpus
        values[_SAMP] = n
        values[_SCPU] = n * running / cap
        values[_SDELAY] = n * delay / cap
        values[_SIDLE] = n * max(cap - running - delay, 0.0) / cap

    # --- what the interfaces show -------------------------------------------------------
    def snapshot(self) -> SystemSnapshot:
        p = self.params
        lay = self._layout
        c = self._path
        g0 = [lay.guest(i) for i in range(p.guests)]
        vnq = sum(c[b + GUEST.index("vnq")] for b in g0)
        vdq = sum(c[b + GUEST.index("vdq")] for b in g0)
        vdone = sum(c[b + GUEST.index("vdone")] for b in g0)
        # VSERV and DSERV accrue at completion in the window; all five accumulators are
        # kept per VNQ so that ΔX/ΔVNQ over any interval is that interval's mean.
        last = self._last
        rng = random.Random((self.seed * 31 + self.time_us) & 0x7FFFFFFF)
        waiting = _poisson(rng, last.waiting_avg) if last else 0

        def count(name: str) -> int:
            return int(c[_C[name]])

        crypto = CryptoCounters(
            vserv_us=count("vserv"),
            rserv_us=count("rserv"),
            hserv_us=count("hserv"),
            nserv_us=count("nserv"),
            dserv_us=count("dserv"),
            vnq=int(vnq),
            rnq=count("rnq"),
            vdq=int(vdq),
            rdq=count("rdq"),
            vdone=int(vdone),
            rdone=count("rdone"),
            vnq_rejected=count("vnq_rejected"),
            rnq_rejected=count("rnq_rejected"),
            nq_waits=count("nq_waits"),
            waiting_nq=waiting,
        )
        hwtype = table.CARD_HWTYPE[p.card_type]
        mode = table.mode_of(p.card_type)
        nf = lay.functions

        def functions(i: int) -> tuple[CmbFunction, ...]:
            counts = [int(c[lay.card(i) + k]) for k in range(nf)]
            times = [int(c[lay.card(i) + nf + k]) for k in range(nf)]
            if mode == "cca":  # a coprocessor's CMB counts all CCA requests together
                return (CmbFunction("cca_all", sum(counts), sum(times)),)
            return tuple(
                CmbFunction(name, n, t)
                for name, n, t in zip(table.FUNCTION_NAMES, counts, times, strict=True)
            )

        adapters = tuple(
            AdapterCounters(
                ap=i,
                card_type=p.card_type,
                hwtype=hwtype,
                mode=mode,
                functions=functions(i),
                busy_us=int(c[lay.card(i) + 2 * nf]),
            )
            for i in range(p.cards)
        )
        # encrypted paging: CP's own CPU, taken from the processors' wait (docs/MODEL.md)
        paging = processor_totals(
            p.paging_cipher, p.paging_out_s, p.paging_in_s, self._elapsed_us, len(self._lps)
        )
        n = len(self._lps)
        spins, spin_us = self._spins
        processors = tuple(
            ProcessorCounters(
                address=lp.address,
                ptype=lp.ptype,
                core=lp.core,
                thread=lp.thread,
                online_us=int(acc[0]),
                emul_us=int(acc[1]),
                user_us=int(acc[2]),
                syst_us=int(acc[3]) + paging.cpu_us,
                wait_us=max(0, int(acc[4]) - paging.cpu_us),
                steal_us=int(acc[5]),
                paging=paging,
                # each processor's even share of the spinning, already in ``syst_us``
                spins=int(spins / n),
                spin_us=int(spin_us / n),
            )
            for lp, acc in zip(self._lps, self._procs, strict=True)
        )
        guests = tuple(self._guest_view(i, g, rng) for i, g in enumerate(self._guests))
        return SystemSnapshot(
            time_us=self.time_us,
            elapsed_us=self._elapsed_us,
            identity=self.identity,
            crypto=crypto,
            adapters=adapters,
            processors=processors,
            guests=guests,
            locks=lock_totals(spins, spin_us),
        )

    def _guest_view(self, index: int, g: _GuestAcc, rng: random.Random) -> GuestCounters:
        p = self.params
        linux = g.os == "linux"
        elapsed = self._elapsed_us
        mem_max = LINUX_MEM_KIB if linux else VSE_MEM_KIB
        wave = 0.06 * math.sin(self._elapsed_us / 3.6e9 + index)
        mem_used = int(mem_max * (0.68 + wave))
        ticks: tuple[VcpuTicks, ...] = ()
        apq = None
        bus = None
        if linux:
            ticks = tuple(
                VcpuTicks(j, *(int(x * USER_HZ / 1e6) for x in st)) for j, st in enumerate(g.stat)
            )
            last = self._last
            # each thread waits for its reply: a guest never has more requests out than
            # threads (seed 002: a single-threaded guest "will find at most one reply"),
            # and no more on the AP queue than its depth
            drawn = _poisson(rng, last.pendingq_avg[index]) if last else 0
            pendingq = min(drawn, p.threads, self.mech.linux_queue_limit)
            drawn = _poisson(rng, last.requestq_avg[index]) if last else 0
            requestq = min(drawn, p.threads - pendingq)
            requests = self._path[self._layout.guest(index) + GUEST.index("request_count")]
            apq = ApQueueState(
                card=0,
                domain=0,
                card_type=p.card_type,
                request_count=int(requests),
                requestq_count=requestq,
                pendingq_count=pendingq,
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
            cpu_us=int(g.values[_EMUL] + g.values[_CP]),
            emul_us=int(g.values[_EMUL]),
            cp_us=int(g.values[_CP]),
            elapsed_us=int(elapsed),
            mem_max_kib=mem_max,
            mem_used_kib=mem_used,
            samp_total=int(g.values[_SAMP]),
            samp_cpu=int(g.values[_SCPU]),
            samp_delay=int(g.values[_SDELAY]),
            samp_page=0,
            samp_idle=int(g.values[_SIDLE]),
            samp_other=0,
            ticks=ticks,
            ap_queue=apq,
            ap_bus=bus,
        )


def _added(totals: list[float], rates: list[float], dt: float) -> list[float]:
    return [t + r * dt for t, r in zip(totals, rates, strict=True)]


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
