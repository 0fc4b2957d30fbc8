"""The model's mechanism constants: service times, CPU costs and latencies.

These are not scenario parameters: they describe how the machine, CP and Linux behave, and
they are the same for every configuration. docs/MODEL.md ("Mechanism constants") gives each
one's source. *Fact*: from kernel source or hardware documentation. *Derived*: read off a
published number by a mechanism. *Fitted*: chosen, with the others, so that seed 002's
Tables 1-3 come out within 25%: the timing constants on a grid and the CPU costs by least
squares (``esatui.sim.fit``, docs/MODEL.md section 6; ``tests/sim/test_fit.py`` checks these
values are that fit's). *Assumed*: a plausible value nothing published pins down.
Times are microseconds on an IFL-speed processor.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Mechanism:
    # --- Linux guest (AP bus driver, scheduler) -----------------------------------------
    linux_queue_limit: int = 7
    """Fact: requests a 4.x kernel keeps outstanding on one AP queue: TAPQ's depth field
    (7 for 8 entries); ap_sm_write stops at ``queue_count == qd`` (fixed in 2026 by
    "s390/ap: Fix wrong APQN fill calculation"). Derived too: 10 guests x 7 per 1.5 ms tick
    = 46,667 VNQ/s, seed 002's baseline ETR of 46,717."""
    guest_op_us: float = 4.55
    """Fitted: guest CPU per operation outside polling (openssl, libica, zcrypt ioctl)."""
    guest_dqap_us: float = 0.0
    """Fitted: guest CPU per DQAP it issues (one AP bus state machine step)."""
    guest_tick_us: float = 2.31
    """Fitted: guest CPU per poll timer expiry or adapter interrupt (hrtimer, tasklet)."""
    guest_wake_us: float = 1.31
    """Fitted: guest CPU to leave the enabled wait state (idle exit, scheduler)."""
    vcpu_wake_us: float = 49.0
    """Fitted: mean latency from one virtual CPU waking another, idle one (the scheduler's
    IPI: a SIGP that CP intercepts and simulates) until the woken one runs: CP has to find
    a real processor for a virtual CPU that loaded a wait PSW. Seed 002's ten-thread runs
    rest on it (the chains of enqueue polls, docs/MODEL.md section 2)."""
    vcpu_interrupt_wake_us: float = 12.0
    """Assumed, bounded by seed 002's text: mean latency from an interruption CP itself
    presents to an idle virtual CPU (its clock comparator, an adapter interruption) until
    it runs. CP has the virtual CPU's timer in its own timer queue and redispatches it on
    the processor where it pops. The report's ~6,000,000 unsuccessful dequeues per 30-s
    interval at a 50 µs poll time are one per timer tick of every guest, so nearly every
    tick's tasklet ran before the next tick: this latency is well under 50 µs (at 36 µs
    the model loses 17% of the ticks). With the timer's fixed grid the value hardly
    matters as long as ticks are not lost (docs/ZCRYPT.md, guest poll latency)."""
    latency_shape: float = 8.0
    """Fitted: shape of the gamma distributions of dispatch latencies (1 = exponential)."""
    op_user_fraction: float = 0.35
    """Assumed: part of ``guest_op_us`` that /proc/stat shows as user (openssl, libica)."""

    # --- CP: simulation of the guest's AP instructions (CP time charged to the guest) -----
    cp_vnq_us: float = 0.641
    """Fitted: CP simulating one guest NQAP."""
    cp_vdq_us: float = 0.641
    """Fitted: CP simulating one guest DQAP that returns a reply."""
    cp_vdq_empty_us: float = 0.641
    """Fitted: CP simulating one guest DQAP that finds nothing (the price of guest polling)."""
    cp_vwake_us: float = 2.72
    """Fitted: CP dispatching a virtual CPU out of its wait state."""
    cp_vtimer_us: float = 0.670
    """Fitted: CP presenting a guest's clock comparator or adapter interrupt."""

    # --- CP: NQ and DQ tasks on the real queues -------------------------------------------
    cp_rnq_us: float = 1.0
    """Fitted: NQ task forwarding one request to a real queue, holding the pool lock."""
    cp_nq_start_us: float = 1.45
    """Fitted: latency of initiating the NQ task on demand (PTF); with ``cp_rnq_us`` it is
    NSERV of a lone request: 2.45 µs against the single-thread runs' 2.3 and 2.5."""
    cp_rdq_us: float = 1.45
    """Fitted: DQ task dequeuing one reply and posting it to the guest, holding the lock."""
    cp_rdq_empty_us: float = 0.8
    """Fitted: DQ task DQAP that finds no reply."""
    cp_pass_us: float = 1.64
    """Fitted: one pass of a polling loop (timer pop, task dispatch, scan)."""
    cp_int_us: float = 1.94
    """Fitted: CP handling one adapter interrupt (SET CRYPTO POLLING OFF)."""
    cp_task_wake_us: float = 34.0
    """Fitted: mean latency from an adapter interrupt until the idle DQ task runs; with the
    card's time it is the single-thread RSERV with interrupts (71 µs)."""
    cp_nq_poll_min_us: float = 123.0
    """Fitted: NQ loop period (pre-PTF) when requests are frequent; half of it is most of the
    baseline NSERV (54-88 µs)."""
    cp_loop_wake_us: float = 70.0
    """Fitted: mean latency from the DQ loop's timer until CP's task runs its pass (gamma,
    like the other dispatch latencies). With the loop's 50 µs it is what polling adds to
    RSERV over the card when requests come one at a time (seed 002: 112-123 µs against
    46-71 µs with interrupts)."""
    cp_poll_min_us: float = 50.0
    """Fact (seed 002): the shortest wait of CP's polling loops ("between 50 µs and 200 ms
    depending on the frequency of crypto requests"). The DQ loop's wait adapts between the
    two: halved after a pass that dequeued a reply, doubled after one that found none (seed
    000's "doubling the delay on each pass"; assumed factor 2 both ways)."""
    cp_poll_max_us: float = 200_000.0
    """Fact (seed 002): the longest wait of CP's polling loops."""
    cp_poll_scale: float = 0.0095
    """Derived (seed 000): NQ loop period = scale / request rate, clamped. At 5 requests/s
    it is 1.9 ms: a request waits about 0.9 ms for CP's NQ, which with the guests' half
    tick is seed 000's 1.4-1.7 ms between the virtual and the real ms per operation."""
    cp_rate_tau_s: float = 1.0
    """Assumed: time constant of CP's estimate of the request rate (the NQ loop's)."""
    real_queue_depth: int = 8
    """Fact: entries of a real AP queue (TAPQ depth field 7 = 8 entries)."""
    smt_thread_speed: float = 0.55
    """Assumed, consistent with seed 002: speed of an SMT-2 thread while its sibling is
    busy. CP's paths take (1/speed - 1) x u longer when the LPAR is busy a fraction u (CP
    busy per 1000 VNQs rose 4% at baseline, 16% with interrupts; guest busy did not)."""

    # --- Crypto Express adapters ----------------------------------------------------------
    card_variation: float = 0.15
    """Assumed: service times vary uniformly by ± this fraction around the table value."""

    # --- Background work and the LPAR -----------------------------------------------------
    bg_cp_user_ratio: float = 0.08
    """Assumed: CP time on behalf of guests per unit of their background emulation time
    (seed 000's IFLs at 00:59: 5.5% user for 19.1% emulation)."""
    bg_cp_system_ratio: float = 0.12
    """Assumed: CP's own time per unit of the guests' background emulation, on their
    processors (seed 000's IFLs at 00:59: 2.3% system for 19% emulation; the CP running
    z/VSE batch: 15.6% for 77%)."""
    idle_system_fraction: float = 0.0002
    """Assumed: CP system time of an idle logical processor (timers, monitor)."""
    steal_shared: float = 0.05
    """Assumed: steal per unit of busy time on shared logical processors (seed 000 shows
    0.3-5% steal)."""
    hf_sample_s: float = 2.0
    """Assumed: CP high-frequency state sampling period (DIAGNOSE X'2FC' sample counts)."""


DEFAULT = Mechanism()
