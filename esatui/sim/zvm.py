"""CP's handling of APVIRT crypto: the NQ task, the DQ task and the real queues.

Seed 002 describes two persistent CP tasks. The NQ task forwards guest requests to the real
queues of the shared pool; the DQ task dequeues replies and posts them to the guests'
virtual queues. Before the PTF both were polling loops (``baseline``); with it the NQ task
runs on demand, and the DQ task either keeps polling (``polling``) or is driven by adapter
interrupts (``interrupts``).

Both tasks serialise on one lock (the pool's). A task that finds it held spins: the wait is
CP busy time, which is why CP time per operation grows with the operation rate. A request
that finds every real queue full stays queued in CP until a DQ frees an entry; with the PTF
the NQ task then starts a DQ pass at once.

Seed 002: "Depending on the frequency of crypto requests the wait time of the polling loops
varied between 50 µs and 200 ms". The NQ loop's period is inversely proportional to CP's
estimate of the request rate, clamped between its fitted minimum and ``cp_poll_max_us``;
passes that find nothing are counted (their CPU cost) without being simulated one by one.
The DQ loop runs while real requests are outstanding and adapts to what it finds: its wait
is halved after a pass that dequeued a reply and doubled after one that found none, between
``cp_poll_min_us`` (50 µs) and ``cp_poll_max_us`` (200 ms), and each pass runs after CP has
dispatched the task (``cp_loop_wake_us``). At seed 000's 5 requests a second that settles at
about one empty DQ per reply (2.2 real DQs per operation, there); with replies every few µs
it stays at 50 µs.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from esatui.sim.adapter import RealQueue
    from esatui.sim.requests import Request
    from esatui.sim.world import World

_IDLE, _WAKING, _RUNNING = 0, 1, 2


class _LockUser:
    """One of CP's lock users: when it first wanted the lock (for the spin time)."""

    __slots__ = ("pending", "since")

    def __init__(self) -> None:
        self.pending = False
        self.since = 0.0


class ControlProgram:
    def __init__(self, world: World, queues: list[RealQueue]) -> None:
        self.w = world
        m = world.mech
        f = world.cp_factor
        # a busy LPAR stretches CP's paths too (elapsed over CPU: ``Load.cpu_stretch``)
        self.slow = world.load.cpu_stretch
        self.mode = world.params.cp_crypto_mode
        self.queues = queues
        self.pending: deque[Request] = deque()  # received from guests, not yet on a real queue
        self.lock_free_at = 0.0
        self._rr = 0
        # durations of CP's paths (CPU x SMT factor x contention); CPU is charged unstretched
        self.c_rnq = m.cp_rnq_us * f * self.slow
        self.c_rdq = m.cp_rdq_us * f * self.slow
        self.c_rdq_empty = m.cp_rdq_empty_us * f * self.slow
        self.c_pass = m.cp_pass_us * f * self.slow
        self.c_int = m.cp_int_us * f
        self.depth = m.real_queue_depth
        self.nq_start = m.cp_nq_start_us
        self.nq_min = m.cp_nq_poll_min_us
        self.dq_min = m.cp_poll_min_us
        self.dq_max = m.cp_poll_max_us
        self.dq_wait = m.cp_poll_min_us  # the DQ loop's current wait (adapts pass by pass)
        self.dq_active = False
        self.task_wake = m.cp_task_wake_us * world.load.dispatch_stretch
        self.loop_wake = m.cp_loop_wake_us * world.load.dispatch_stretch
        # CP's estimate of the request rate (per µs), exponentially decayed; it starts in
        # the busy regime and settles during the window's warm-up.
        self._tau = m.cp_rate_tau_s * 1e6
        self._rate = 1.0 / m.cp_nq_poll_min_us
        self._rate_t = 0.0
        self.nq_next = 0.0
        self.nq_loop = _LockUser()  # a pass of the NQ polling loop is scheduled
        self.dq_loop = _LockUser()  # the DQ polling loop is active
        self.demand = _LockUser()
        self.kick = _LockUser()
        self.dq_task = _LockUser()
        self.dq_state = _IDLE
        self._waiting_since = 0.0
        self.outstanding = 0

    # --- bookkeeping ------------------------------------------------------------------
    def period(self, minimum: float) -> float:
        """The polling loops' wait: inversely proportional to the request rate, clamped."""
        m = self.w.mech
        rate_per_s = self._rate * 1e6
        p = m.cp_poll_scale / rate_per_s * 1e6 if rate_per_s > 0 else m.cp_poll_max_us
        return min(max(p, minimum), m.cp_poll_max_us)

    def _note_arrival(self, now: float) -> None:
        dt = now - self._rate_t
        self._rate = self._rate * math.exp(-dt / self._tau) + 1.0 / self._tau
        self._rate_t = now

    def _waiting_changed(self, now: float) -> None:
        self.w.tally.waiting_area += len(self.pending) * (now - self._waiting_since)
        self._waiting_since = now

    def flush(self, now: float) -> None:
        """Close the gauge integrals at ``now`` (end of a window)."""
        self._waiting_changed(now)

    def _acquire(self, now: float, user: _LockUser, retry: Callable[[float, object], None]) -> bool:
        """Take the lock at ``now`` or retry when it is free; the wait is spun (CP time)."""
        if self.lock_free_at > now:
            self.w.sched.at(self.lock_free_at, retry)
            return False
        self._spin(now - user.since)
        return True

    def _spin(self, us: float) -> None:
        if us > 0:
            t = self.w.tally
            t.spin_us += us
            t.cp_system_us += us

    def _hold(self, start: float, end: float) -> None:
        self.lock_free_at = end
        self.w.tally.cp_system_us += (end - start) / self.slow

    # --- from the guests --------------------------------------------------------------
    def virtual_nq(self, now: float, req: Request) -> None:
        """A guest NQAP delivered ``req`` (CP's simulation cost is charged by the guest)."""
        self._note_arrival(now)
        self._waiting_changed(now)
        self.pending.append(req)
        if self.mode == "baseline":
            self._ensure_nq_pass(now)
        elif not self.demand.pending:
            self.demand.pending = True
            self.demand.since = now + self.nq_start
            self.w.sched.at(now + self.nq_start, self._demand_run)

    # --- NQ: on demand ----------------------------------------------------------------
    def _demand_run(self, now: float, _: object = None) -> None:
        if not self._acquire(now, self.demand, self._demand_run):
            return
        self.demand.pending = False
        self._hold(now, self._forward(now))

    # --- NQ: the pre-PTF polling loop ---------------------------------------------------
    def _ensure_nq_pass(self, now: float) -> None:
        if self.nq_loop.pending:
            return
        if self.nq_next < now:
            p = self.period(self.nq_min)
            k = math.ceil((now - self.nq_next) / p)
            t = self.w.tally
            t.nq_passes += k
            t.cp_system_us += k * self.c_pass / self.slow
            self.nq_next += k * p
        self.nq_loop.pending = True
        self.nq_loop.since = self.nq_next
        self.w.sched.at(self.nq_next, self._nq_pass)

    def _nq_pass(self, now: float, _: object = None) -> None:
        if not self._acquire(now, self.nq_loop, self._nq_pass):
            return
        self.nq_loop.pending = False
        self.w.tally.nq_passes += 1
        self._hold(now, self._forward(now + self.c_pass))
        self.nq_next = now + self.period(self.nq_min)
        if self.pending:
            self.nq_loop.pending = True
            self.nq_loop.since = self.nq_next
            self.w.sched.at(self.nq_next, self._nq_pass)

    def _forward(self, t: float) -> float:
        """Enqueue waiting requests on real queues with room, from ``t``; returns the end."""
        if not self.pending:
            return t
        tally = self.w.tally
        queues = self.queues
        n = len(queues)
        sched = self.w.sched
        self._waiting_changed(t)
        while self.pending:
            best = None
            for i in range(n):
                q = queues[(self._rr + i) % n]
                if q.outstanding < self.depth and (
                    best is None or q.outstanding < best.outstanding
                ):
                    best = q
            if best is None:
                tally.nq_waits += 1
                if self.mode == "polling":
                    self._kick_dq(t)
                break
            self._rr = (self._rr + 1) % n
            req = self.pending.popleft()
            t += self.c_rnq
            req.t_rnq = t
            req.queue = best
            best.outstanding += 1
            self.outstanding += 1
            tally.rnq += 1
            tally.nserv += t - req.t_vnq
            sched.at(t, best.card.submit, req)
            if self.mode != "interrupts":
                self._ensure_dq_pass(t)
        self._waiting_changed(t)
        return t

    # --- DQ: adapter interrupts ---------------------------------------------------------
    def reply_arrived(self, now: float, queue: RealQueue) -> None:
        """A card finished a request of ``queue`` (an adapter interrupt if enabled)."""
        if self.mode != "interrupts" or queue.irq_pending:
            return
        # The queue raises an interrupt unless one is still pending since its last drain.
        queue.irq_pending = True
        t = self.w.tally
        t.cp_interrupts += 1
        t.cp_system_us += self.c_int
        if self.dq_state != _IDLE:
            return
        self.dq_state = _WAKING
        at = now + self.w.gamma(self.task_wake)
        self.dq_task.since = at
        self.w.sched.at(at, self._dq_run)

    def _dq_run(self, now: float, _: object = None) -> None:
        if not self._acquire(now, self.dq_task, self._dq_run):
            return
        self.dq_state = _RUNNING
        t = now
        for q in self.queues:
            if q.replies:
                t = self._drain(q, t)
        t = self._forward(t)
        self._hold(now, t)
        self.w.sched.at(t, self._dq_end)

    def _dq_end(self, now: float, _: object = None) -> None:
        if any(q.replies for q in self.queues):
            self.dq_task.since = now
            self._dq_run(now)
        else:
            self.dq_state = _IDLE

    # --- DQ: the polling loop -----------------------------------------------------------
    def _ensure_dq_pass(self, now: float) -> None:
        """Forwarding a request (re)starts the DQ loop if it was resting: its first pass
        comes after the loop's current wait and CP's dispatch of the task."""
        if self.dq_active:
            return
        self.dq_active = True
        self._schedule_dq_pass(now)

    def _schedule_dq_pass(self, after: float) -> None:
        at = after + self.dq_wait + self.w.gamma(self.loop_wake)
        self.dq_loop.pending = True
        self.dq_loop.since = at
        self.w.sched.at(at, self._dq_pass)

    def _dq_pass(self, now: float, _: object = None) -> None:
        if not self._acquire(now, self.dq_loop, self._dq_pass):
            return
        before = self.w.tally.rdone
        end = self._dq_pass_body(now)
        self._hold(now, end)
        # The wait adapts to what the pass found: halved after a pass that dequeued a
        # reply, doubled after one that found none, within the loop's 50 µs .. 200 ms.
        if self.w.tally.rdone > before:
            self.dq_wait = max(self.dq_min, self.dq_wait / 2.0)
        else:
            self.dq_wait = min(self.dq_max, self.dq_wait * 2.0)
        if self.outstanding:
            self._schedule_dq_pass(end)
        else:
            self.dq_loop.pending = False
            self.dq_active = False

    def _dq_pass_body(self, now: float) -> float:
        self.w.tally.dq_passes += 1
        t = now + self.c_pass
        for q in self.queues:
            if q.outstanding:
                t = self._drain(q, t)
        if self.mode != "baseline":
            t = self._forward(t)
        return t

    def _kick_dq(self, now: float) -> None:
        """With the PTF, an NQ that finds every real queue full starts a DQ pass at once."""
        if not self.kick.pending:
            self.kick.pending = True
            self.kick.since = now
            self.w.sched.at(now, self._dq_kicked)

    def _dq_kicked(self, now: float, _: object = None) -> None:
        if not self._acquire(now, self.kick, self._dq_kicked):
            return
        self.kick.pending = False
        self._hold(now, self._dq_pass_body(now))

    def _drain(self, q: RealQueue, t: float) -> float:
        """DQAP ``q`` until it has no reply; each reply is posted to its guest at its time."""
        tally = self.w.tally
        replies = q.replies
        q.irq_pending = False
        while replies:
            req = replies.popleft()
            t += self.c_rdq
            q.outstanding -= 1
            self.outstanding -= 1
            req.t_cpdq = t
            tally.rdq += 1
            tally.rdone += 1
            tally.rserv += t - req.t_rnq
            tally.hserv += t - req.t_vnq
            req.thread.guest.post_reply(t, req)
        if q.outstanding:
            # the last DQAP finds the queue still working: nothing to dequeue
            t += self.c_rdq_empty
            tally.rdq += 1
            tally.rdq_empty += 1
        return t
