"""ESAPOLL's note and the simulator tell one story about guest poll latency.

docs/ZCRYPT.md section 5: a thread that waits for each reply before its next request is in
step with its guest's poll timer (nearly a whole tick per operation), requests arriving
independently of the ticks wait half of one, and many requests' enqueues read replies
between ticks. The note's classifier (``esapoll.poll_regime``) must name the regime the
simulated mechanism is in.
"""

from __future__ import annotations

import pytest

from esatui.screens.esapoll import poll_regime
from esatui.sim.calibration import measure
from esatui.sim.model import DEFAULT_START_US, SimulatedSystem
from esatui.sim.scenarios import scenario


@pytest.mark.parametrize(
    ("name", "changes", "regime"),
    [
        ("seed002-t3-polling", {}, "in step"),
        ("seed002-t3-interrupts", {}, "in step"),
        ("seed002-t1-baseline", {}, "in step"),  # ten threads, released together by a tick
        ("seed002-t1-interrupts", {}, "between its ticks"),  # the chain of enqueue polls
        ("seed002-t3-polling", {"poll_timeout_us": 50.0}, "shorter than HSERV"),
        ("seed002-t3-polling", {"rate": 2000.0}, "independent"),  # open arrivals
    ],
)
def test_the_note_names_the_simulated_regime(
    name: str, changes: dict[str, object], regime: str
) -> None:
    m = measure(name, changes, interval_s=30.0)
    timeout = changes.get("poll_timeout_us", 1500.0)
    assert isinstance(timeout, float)
    poll = round(timeout)
    text = poll_regime(m.dserv_us, m.hserv_us, poll)
    assert text is not None and regime in text, (text, m.dserv_us, m.hserv_us)


def test_seed000_open_arrivals_wait_half_a_tick() -> None:
    """Seed 000's SSL handshakes arrive on their own: DSERV is about half the 1.5 ms tick."""
    start = DEFAULT_START_US + 18 * 3600 * 1_000_000
    system = SimulatedSystem(scenario("mode-vm-day"), seed=2, start_us=start)
    system.advance(120)
    b = system.snapshot()
    system.advance(600)
    a = system.snapshot()
    ops = a.crypto.vnq - b.crypto.vnq
    dserv = (a.crypto.dserv_us - b.crypto.dserv_us) / ops
    hserv = (a.crypto.hserv_us - b.crypto.hserv_us) / ops
    assert 0.3 * 1500 < dserv < 0.7 * 1500
    # its HSERV (pre-PTF NQ loop and a 2.16 ms card) is longer than a tick, which puts the
    # reply at a random phase too: either way the note says half a tick
    text = poll_regime(dserv, hserv, 1500)
    assert text is not None and "half a tick" in text


def test_no_regime_without_the_guest_timeout() -> None:
    assert poll_regime(1300.0, 120.0, None) is None
    assert poll_regime(1300.0, 120.0, "irq") is None
    assert poll_regime(None, 120.0, 1500) is None
