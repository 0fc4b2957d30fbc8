"""Configurations nobody published: the mechanisms must move the numbers the right way and
by a sensible amount (seed 002's closing section for the 50 µs poll time)."""

from __future__ import annotations

import pytest

from esatui.sim.analysis import PollingMetrics
from esatui.sim.calibration import measure
from esatui.sim.published import UNSUCCESSFUL_DQ_PER_INTERVAL

# IBM's runs of seed 002 used 30-second monitor intervals: 200,000 unsuccessful dequeues
# per interval at 6,666 single-thread operations per second is one per operation (the
# immediate DQAP after every NQAP), which the model reproduces.
MONITOR_INTERVAL_S = 30.0


def _m(name: str, **changes: object) -> PollingMetrics:
    return measure(name, changes, interval_s=MONITOR_INTERVAL_S)


@pytest.fixture(scope="module")
def default_t3() -> PollingMetrics:
    return _m("seed002-t3-polling")


@pytest.fixture(scope="module")
def fast_t3() -> PollingMetrics:
    return _m("seed002-t3-polling", poll_timeout_us=50.0)


def test_default_poll_time_unsuccessful_dequeues(default_t3: PollingMetrics) -> None:
    expected = UNSUCCESSFUL_DQ_PER_INTERVAL["default"]
    assert abs(default_t3.unsuccessful_vdq / expected - 1) < 0.25


def test_50us_poll_time_trade_off(default_t3: PollingMetrics, fast_t3: PollingMetrics) -> None:
    # DSERV shrinks by more than an order of magnitude ...
    assert fast_t3.dserv_us < default_t3.dserv_us / 10
    # ... so a single thread turns around much faster ...
    assert fast_t3.etr > 4 * default_t3.etr
    # ... at the price of many more unsuccessful dequeues (report: ~200,000 -> ~6,000,000)
    ratio = fast_t3.unsuccessful_vdq / default_t3.unsuccessful_vdq
    assert 10 < ratio < 60
    expected = UNSUCCESSFUL_DQ_PER_INTERVAL["50us"]
    assert expected / 2 < fast_t3.unsuccessful_vdq < expected * 2
    # ... and of guest CPU, per second and per operation
    assert fast_t3.guest_cpu_us > 5 * default_t3.guest_cpu_us
    assert fast_t3.guest_busy_per_kvnq > default_t3.guest_busy_per_kvnq


def test_guest_interrupts_remove_the_poll_latency(default_t3: PollingMetrics) -> None:
    irq = _m("seed002-t3-polling", poll_timeout_us="irq")
    assert irq.dserv_us < default_t3.dserv_us / 10
    # no ticks: only each enqueue's own DQAP finds nothing (docs/ZCRYPT.md section 5)
    per_op = irq.unsuccessful_vdq / (irq.etr * irq.interval_s)
    assert per_op == pytest.approx(1.0, abs=0.05)


def test_more_threads_more_throughput() -> None:
    etr = [_m("seed002-t1-polling", threads=n).etr for n in (1, 4, 10)]
    assert etr[0] < etr[1] < etr[2]
    # one thread per guest is gated by the 1.5 ms poll timer: 10 guests / 1.5 ms
    assert etr[0] == pytest.approx(10 / 1.5e-3, rel=0.02)


def test_bigger_keys_take_the_card_longer() -> None:
    small = _m("seed002-t3-interrupts")
    big = _m("seed002-t3-interrupts", key_bits=2048)
    huge = _m("seed002-t3-interrupts", key_bits=4096)
    assert small.rserv_us < big.rserv_us < huge.rserv_us
    assert huge.rserv_us > 5 * small.rserv_us
    # with one thread the 1.5 ms poll timer sets the pace while the card is quicker ...
    assert big.etr == pytest.approx(small.etr, rel=0.02)
    assert huge.etr == pytest.approx(small.etr, rel=0.02)
    # ... and the card once it is not: RSA-4096 CRT on a CEX4A takes about 11.6 ms
    slow = _m("seed002-t3-interrupts", key_bits=4096, op="rsa_sign", card_type="CEX4A")
    assert slow.etr < small.etr / 5


def test_one_card_queues_more() -> None:
    two = _m("seed002-t1-interrupts")
    one = _m("seed002-t1-interrupts", cards=1)
    assert one.nserv_us > two.nserv_us
    assert one.etr < two.etr


def test_cp_modes_order() -> None:
    base = _m("seed002-t3-baseline")
    poll = _m("seed002-t3-polling")
    irq = _m("seed002-t3-interrupts")
    assert base.nserv_us > 10 * poll.nserv_us  # on-demand NQ
    assert irq.rserv_us < poll.rserv_us * 0.75  # interrupt-driven DQ
    assert base.cp_busy_per_kvnq > poll.cp_busy_per_kvnq  # pre-PTF loops poll for nothing
