"""The model's mechanism constants: service times, CPU costs and latencies.

These are not scenario parameters: they describe how the machine, CP and Linux behave, and
they are the same for every configuration. Each is justified in docs/MODEL.md (section
"Mechanism constants"); the ones fitted to seed 002 are marked *fitted* there. Times are in
microseconds of an IFL-speed processor.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Mechanism:
    # --- Linux guest (AP bus driver, scheduler) -----------------------------------------
    linux_queue_limit: int = 7
    """Requests Linux keeps outstanding on one AP queue: the TAPQ queue depth field (8
    entries - 1); ap_sm_write goes to QUEUE_FULL at ``queue_count == queue_depth``."""
    guest_op_us: float = 3.09
    """Guest CPU per crypto operation outside polling (openssl, libica, zcrypt ioctl, NQAP)."""
    guest_dqap_us: float = 0.48
    """Guest CPU per DQAP it issues (the AP bus state machine step)."""
    guest_tick_us: float = 2.6
    """Guest CPU per poll timer expiry or adapter interrupt (hrtimer, tasklet entry)."""
    guest_wake_us: float = 1.62
    """Guest CPU to leave the enabled wait state (idle exit, scheduler)."""
    vcpu_wake_us: float = 49.0
    """Mean latency from waking an idle virtual CPU (IPI or timer) until it runs (CP
    dispatch of a waiting virtual CPU); gamma distributed with shape ``latency_shape``."""
    latency_shape: float = 8.0
    """Shape of the gamma distributions of dispatch latencies (1 = exponential)."""
    op_user_fraction: float = 0.35
    """Part of ``guest_op_us`` that /proc/stat shows as user time (openssl, libica)."""

    # --- CP: simulation of the guest's AP instructions (CP time charged to the guest) -----
    cp_vnq_us: float = 0.51
    """CP simulating one guest NQAP."""
    cp_vdq_us: float = 0.51
    """CP simulating one guest DQAP that returns a reply."""
    cp_vdq_empty_us: float = 0.54
    """CP simulating one guest DQAP that finds nothing (the price of guest polling)."""
    cp_vwake_us: float = 3.0
    """CP dispatching a virtual CPU out of its enabled wait (interrupt or SIGP delivery)."""
    cp_vtimer_us: float = 0.8
    """CP presenting a guest's clock comparator (poll timer) or adapter interrupt."""

    # --- CP: NQ and DQ tasks on the real queues -------------------------------------------
    cp_rnq_us: float = 1.1
    """CP NQ task forwarding one request to a real queue (NQAP and bookkeeping)."""
    cp_nq_start_us: float = 1.3
    """Latency of initiating the NQ task on demand (with the PTF), before it runs."""
    cp_rdq_us: float = 1.7
    """CP DQ task dequeuing one reply (DQAP, copy, posting it to the guest's queue)."""
    cp_rdq_empty_us: float = 0.8
    """CP DQ task DQAP that finds no reply."""
    cp_pass_us: float = 1.44
    """One pass of a CP polling loop (timer pop, task dispatch, scan of the queues)."""
    cp_int_us: float = 1.68
    """CP handling one crypto adapter interrupt (SET CRYPTO POLLING OFF)."""
    cp_task_wake_us: float = 34.0
    """Mean latency from an adapter interrupt to the idle DQ task running; gamma, shape 2."""
    cp_nq_poll_min_us: float = 123.0
    """Period of the pre-PTF NQ task's polling loop when requests are frequent."""
    cp_dq_poll_min_us: float = 165.0
    """Period of the DQ task's polling loop when replies are frequent."""
    cp_poll_max_us: float = 200_000.0
    """Longest period of the polling loops (seed 002: "between 50 µs and 200 ms")."""
    cp_poll_scale: float = 0.0095
    """Polling loop period = scale / request rate (seconds x requests/s), clamped to the
    loop's minimum and ``cp_poll_max_us``."""
    cp_rate_tau_s: float = 1.0
    """Time constant of CP's estimate of the request rate that sets the loop period."""
    real_queue_depth: int = 8
    """Entries of a real AP queue that CP fills."""
    smt_thread_speed: float = 0.55
    """Speed of an SMT-2 thread while its sibling is busy, relative to a whole core. CP's
    paths run 1/speed longer then; with a sibling busy a fraction u of the time they grow by
    (1/speed - 1) x u on average."""

    # --- Crypto Express adapters ----------------------------------------------------------
    card_variation: float = 0.15
    """Service times vary uniformly by ± this fraction around the table value."""

    # --- Background work and the LPAR -----------------------------------------------------
    bg_cp_user_ratio: float = 0.08
    """CP time on behalf of guests per unit of their background emulation time."""
    bg_cp_system_ratio: float = 0.04
    """CP system time per unit of guest emulation time (dispatching, paging, timers)."""
    idle_system_fraction: float = 0.0002
    """CP system time of an idle logical processor (timers, monitor)."""
    steal_shared: float = 0.05
    """Steal per unit of busy time on shared logical processors."""
    hf_sample_s: float = 2.0
    """CP high-frequency state sampling period (DIAGNOSE X'2FC' sample counts)."""


DEFAULT = Mechanism()
