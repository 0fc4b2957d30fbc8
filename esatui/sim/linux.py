"""A Linux guest: virtual CPUs, crypto threads and the AP bus driver's polling.

The AP bus part follows drivers/s390/crypto/ap_queue.c and ap_bus.c (the 4.x kernels of
seed 002's SLES 12 SP5, unchanged in substance since):

* ``ap_queue_message`` puts a request on the queue's requestq and runs the queue's state
  machine at once: it sends what it can (NQAP) and reads what it finds (DQAP), so every
  enqueue is also a poll of that queue;
* a queue keeps at most ``queue_depth`` (the TAPQ depth field, 7) requests outstanding;
  beyond that the queue is QUEUE_FULL and new requests wait in the requestq;
* when requests are outstanding and no reply was found, ``ap_wait`` arms the one poll
  hrtimer, unless it is already queued, with ``hrtimer_forward_now``: expiries stay on a
  fixed grid of ``poll_timeout`` (1.5 ms under z/VM); its tasklet polls every queue;
* with adapter interrupts (``poll_timeout_us=irq``) the interrupt schedules the tasklet
  and no timer is armed.

A thread is woken on its home virtual CPU: if that CPU is idle it has to be dispatched by
CP first (``vcpu_wake_us``), if it is the CPU that read the reply the thread runs after the
poll, otherwise it waits its turn there.
"""

from __future__ import annotations

import math
from collections import deque
from typing import TYPE_CHECKING

from esatui.sim import adapter_table as table
from esatui.sim.requests import Request
from esatui.sim.tally import IRQ, SOFTIRQ, SYSTEM, USER

if TYPE_CHECKING:
    from esatui.sim.world import World

_AGAIN, _WAIT, _NONE = 0, 1, 2
_IDLE, _WORKING, _FULL = 0, 1, 2
_TASKLET = "tasklet"


class GuestThread:
    __slots__ = ("ephemeral", "guest", "home", "method_crt", "replied")

    def __init__(self, guest: LinuxGuest, home: VirtualCpu, method_crt: bool, ephemeral: bool):
        self.guest = guest
        self.home = home
        self.method_crt = method_crt
        self.ephemeral = ephemeral
        self.replied = -1.0  # when it last took a reply (closed loops)


class VirtualCpu:
    __slots__ = ("busy", "index", "runq", "waking")

    def __init__(self, index: int) -> None:
        self.index = index
        self.busy = False
        self.waking = False
        self.runq: deque[GuestThread | str] = deque()


class LinuxGuest:
    def __init__(self, world: World, index: int) -> None:
        self.w = world
        self.index = index
        p = world.params
        m = world.mech
        self.vcpus = [VirtualCpu(i) for i in range(p.vcpus)]
        self.irq = p.guest_irq
        self.tau = 0.0 if p.poll_timeout_us == "irq" else float(p.poll_timeout_us)
        # hrtimer grid phase: spread over the guests (jittered), so that one window stands
        # for the average over the phases rather than for one random clustering of them
        n = world.params.guests
        self.anchor = (index + 0.25 + 0.5 * world.rng.random()) / n * self.tau
        self.timer_armed = False
        self.timer_cpu = self.vcpus[0]
        self.irq_pending = False
        self.requestq: deque[Request] = deque()
        self.replies: deque[Request] = deque()  # CP's side of the virtual queue
        self.queue_count = 0
        self.state = _IDLE
        self.depth = m.linux_queue_limit
        self._gauge_t = 0.0
        stretch = 1.0 / (1.0 - world.load.cpu_load)
        self.c_op = m.guest_op_us * stretch
        self.c_dqap = m.guest_dqap_us
        self.c_tick = m.guest_tick_us
        self.c_wake = m.guest_wake_us
        # elapsed time per µs of CPU: a busy LPAR makes every burst wait for a processor
        self.slow = world.load.cpu_stretch
        self.cp_vnq = m.cp_vnq_us * world.cp_factor
        self.cp_vdq = m.cp_vdq_us * world.cp_factor
        self.cp_vdq_empty = m.cp_vdq_empty_us * world.cp_factor
        self.cp_vwake = m.cp_vwake_us * world.cp_factor
        self.cp_vtimer = m.cp_vtimer_us * world.cp_factor
        self.user_part = m.op_user_fraction
        self.wake_mean = m.vcpu_wake_us * world.load.dispatch_stretch
        self.cp_wake_mean = m.vcpu_interrupt_wake_us * world.load.dispatch_stretch
        self.bg_busy = world.load.cpu_load
        bits = p.key_bits
        crt = table.function_index("CRT", bits)
        me = table.function_index("ME", bits)
        self.fn = (me, crt)
        self.base = (
            table.service_us(p.card_type, "ME", bits),
            table.service_us(p.card_type, "CRT", bits),
        )
        self.threads: list[GuestThread] = []

    def bind(self) -> None:
        """Refer to the current tally (after a window reset)."""
        self.t = self.w.tally.guests[self.index]

    # --- threads ------------------------------------------------------------------------
    def start_closed_loop(self, threads: int, op: str) -> None:
        n = len(self.vcpus)
        for i in range(threads):
            crt = op == "rsa_sign" or (op == "rsa_sign_verify" and i % 2 == 0)
            th = GuestThread(self, self.vcpus[i % n], crt, ephemeral=False)
            self.threads.append(th)
            self._make_runnable(0.0, th, None)

    def arrival(self, now: float, crt: bool) -> None:
        """An open-workload operation (e.g. an SSL handshake) starts on a random CPU."""
        home = self.vcpus[self.w.rng.randrange(len(self.vcpus))]
        self._make_runnable(now, GuestThread(self, home, crt, ephemeral=True), None)

    def _make_runnable(self, now: float, th: GuestThread, current: VirtualCpu | None) -> None:
        v = th.home
        v.runq.append(th)
        if v is not current and not v.busy and not v.waking:
            self._wake_cpu(now, v)

    def _wake_cpu(self, now: float, v: VirtualCpu, by_cp: bool = False) -> None:
        """Wake ``v``: by another virtual CPU's signal (SIGP, simulated by CP) or, with
        ``by_cp``, by an interruption CP itself presents (clock comparator, adapter)."""
        v.waking = True
        w = self.w
        if self.bg_busy and w.rng.random() < self.bg_busy:
            # already running background work: only the scheduler's wake-up preemption
            w.sched.at(now + self.c_wake * self.slow, self._woken, v)
            return
        self.t.vcpu_wakes += 1
        self.t.charge(v.index, IRQ, self.c_wake, self.cp_vwake)
        mean = self.cp_wake_mean if by_cp else self.wake_mean
        w.sched.at(now + (w.gamma(mean) + self.c_wake) * self.slow, self._woken, v)

    def _woken(self, now: float, v: VirtualCpu) -> None:
        v.waking = False
        if not v.busy:
            self._run_next(now, v)

    def _run_next(self, now: float, v: VirtualCpu) -> None:
        if not v.runq:
            v.busy = False
            return
        v.busy = True
        item = v.runq.popleft()
        if isinstance(item, str):  # the poll tasklet (timer expiry or adapter interrupt)
            self.irq_pending = False
            self.t.tasklets += 1
            self.t.charge(v.index, IRQ, self.c_tick, self.cp_vtimer)
            cost = self._poll(now, v, SOFTIRQ)
            self.w.sched.at(now + (self.c_tick + cost) * self.slow, self._free, v)
        else:
            self.t.charge(v.index, USER, self.c_op * self.user_part, 0.0)
            self.t.charge(v.index, SYSTEM, self.c_op * (1.0 - self.user_part), 0.0)
            self.w.sched.at(now + self.c_op * self.slow, self._burst_end, (item, v))

    def _free(self, now: float, v: VirtualCpu) -> None:
        self._run_next(now, v)

    def _burst_end(self, now: float, arg: tuple[GuestThread, VirtualCpu]) -> None:
        th, v = arg
        i = 1 if th.method_crt else 0
        base = self.base[i]
        var = self.w.mech.card_variation
        service = base * (1.0 - var + 2.0 * var * self.w.rng.random())
        self._gauges(now)
        if th.replied >= 0.0:
            self.w.tally.think_us += now - th.replied
        self.requestq.append(Request(th, self.fn[i], service, now))
        self.t.request_count += 1
        cost = self._poll(now, v, SYSTEM)
        self.w.sched.at(now + cost * self.slow, self._free, v)

    # --- the AP queue state machine -------------------------------------------------------
    def _poll(self, now: float, v: VirtualCpu, category: int) -> float:
        """ap_sm_event_loop(POLL) on this guest's queue at ``now``; returns CPU time used."""
        self._gauges(now)
        cost = 0.0
        guest_us = 0.0
        cp_us = 0.0
        woken: list[GuestThread] = []
        r = _AGAIN
        while r == _AGAIN:
            st = self.state
            if st == _IDLE:
                r, g, c = self._write(now)
                guest_us += g
                cp_us += c
            elif st == _WORKING:
                r1, g1, c1 = self._read(now, woken)
                r2, g2, c2 = self._write(now)
                r = min(r1, r2)
                guest_us += g1 + g2
                cp_us += c1 + c2
            else:
                r, g, c = self._read(now, woken)
                guest_us += g
                cp_us += c
        cost = guest_us + cp_us
        self.t.charge(v.index, category, guest_us, cp_us)
        if r == _WAIT and not self.irq and not self.timer_armed:
            self._arm(now, v)
        for th in woken:
            if not th.ephemeral:
                th.method_crt = th.method_crt ^ (self.w.params.op == "rsa_sign_verify")
                self._make_runnable(now, th, v)
        return cost

    def _read(self, now: float, woken: list[GuestThread]) -> tuple[int, float, float]:
        t = self.t
        t.vdq += 1
        replies = self.replies
        if replies and replies[0].t_cpdq <= now:
            req = replies.popleft()
            t.vdone += 1
            tally = self.w.tally
            tally.dserv += now - req.t_cpdq
            tally.vserv += now - req.t_vnq
            self.queue_count -= 1
            req.thread.replied = now
            woken.append(req.thread)
            if self.queue_count > 0:
                self.state = _WORKING
                return _AGAIN, self.c_dqap, self.cp_vdq
            self.state = _IDLE
            return _NONE, self.c_dqap, self.cp_vdq
        t.vdq_empty += 1
        if self.queue_count > 0:
            return _WAIT, self.c_dqap, self.cp_vdq_empty
        self.state = _IDLE
        return _NONE, self.c_dqap, self.cp_vdq_empty

    def _write(self, now: float) -> tuple[int, float, float]:
        if not self.requestq:
            return _NONE, 0.0, 0.0
        req = self.requestq.popleft()
        req.t_vnq = now
        self.w.tally.requestq_wait_us += now - req.t_made
        self.t.vnq += 1
        self.queue_count += 1
        self.w.cp.virtual_nq(now, req)
        if self.queue_count < self.depth:
            self.state = _WORKING
            return _AGAIN, 0.0, self.cp_vnq
        self.state = _FULL
        return _WAIT, 0.0, self.cp_vnq

    # --- what wakes the tasklet -----------------------------------------------------------
    def _arm(self, now: float, v: VirtualCpu) -> None:
        tau = self.tau
        k = math.floor((now - self.anchor) / tau) + 1
        self.timer_armed = True
        self.timer_cpu = v
        self.w.sched.at(self.anchor + k * tau, self._expire)

    def _expire(self, now: float, _: object = None) -> None:
        self.timer_armed = False
        self.t.timer_pops += 1
        self._tasklet(now, self.timer_cpu)

    def _tasklet(self, now: float, v: VirtualCpu) -> None:
        if _TASKLET in v.runq:
            return
        v.runq.appendleft(_TASKLET)
        if not v.busy and not v.waking:
            self._wake_cpu(now, v, by_cp=True)

    def post_reply(self, at: float, req: Request) -> None:
        """CP made a reply available in this guest's virtual queue at ``at``."""
        self.replies.append(req)
        if self.irq and not self.irq_pending:
            self.irq_pending = True
            self.t.guest_interrupts += 1
            self.w.sched.at(at, self._interrupt)

    def _interrupt(self, now: float, _: object = None) -> None:
        self._tasklet(now, self.timer_cpu)

    # --- gauges ---------------------------------------------------------------------------
    def _gauges(self, now: float) -> None:
        dt = now - self._gauge_t
        if dt > 0:
            self.t.requestq_area += len(self.requestq) * dt
            self.t.pendingq_area += self.queue_count * dt
            self._gauge_t = now

    def flush(self, now: float) -> None:
        self._gauges(now)

    @property
    def requestq_len(self) -> int:
        return len(self.requestq)
