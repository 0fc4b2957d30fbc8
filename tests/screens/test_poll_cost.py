"""ESAPOLL's price of an operation (screens/crypto_cost.py) and the trade-off line
(screens/poll_trade.py), from seed 002's published figures."""

from __future__ import annotations

import pytest

from esatui.screens import crypto as C
from esatui.screens.crypto_cost import CpuTime, OperationCost, combine, operation_cost
from esatui.screens.esapoll import explain
from esatui.screens.poll_trade import NOTE_WIDTH, cost_note, trade_off

MINUTE = 60_000_000


def _cpu(guest_busy: float, cp_busy: float, etr: float) -> CpuTime:
    """The processors' µs in a minute for seed 002's busy per 1000 VNQ at ``etr``."""
    per_pct = MINUTE / 100 * etr / 1000
    return CpuTime(guest_busy * per_pct, cp_busy * per_pct, None, MINUTE)


def _deltas(etr: float, nserv: float, rserv: float, dserv: float) -> C.CryptoDeltas:
    vnq = round(etr * 60)
    values = {
        "virt_nq": vnq,
        "real_nq": vnq,
        "virt_dq": vnq,
        "real_dq": vnq,
        "virt_done": vnq,
        "real_done": vnq,
        "nserv_us": round(nserv * vnq),
        "rserv_us": round(rserv * vnq),
        "hserv_us": round((nserv + rserv) * vnq),
        "dserv_us": round(dserv * vnq),
        "vserv_us": round((nserv + rserv + dserv) * vnq),
    }
    return C.CryptoDeltas(values, MINUTE, lengths=frozenset((360,)))


def test_busy_per_1000_vnq_is_percent_of_one_processor_per_thousand_vnq_a_second() -> None:
    # seed 002 Table 3 CBDN: 6,666.17 VNQ/s, guest 0.8668, CP 1.2054
    cost = operation_cost(_cpu(0.8668, 1.2054, 6666.17), round(6666.17 * 60), MINUTE)
    assert cost.guest_busy_per_kvnq == pytest.approx(0.8668, rel=1e-4)
    assert cost.cp_busy_per_kvnq == pytest.approx(1.2054, rel=1e-4)
    assert cost.total_busy_per_kvnq == pytest.approx(2.0722, rel=1e-4)
    assert cost.guest_us_op == pytest.approx(8.668, rel=1e-4)  # 1.0 = 10 µs per operation
    assert cost.cp_us_op == pytest.approx(12.054, rel=1e-4)


def test_no_processor_times_or_no_operations_cost_nothing_known() -> None:
    assert operation_cost(None, 1000, MINUTE).total_busy_per_kvnq is None
    assert operation_cost(_cpu(1, 1, 1000), 0, MINUTE).guest_us_op is None
    assert "not known" in cost_note(operation_cost(None, 1000, MINUTE))


def test_a_source_without_the_split_gives_the_total_only() -> None:
    cost = operation_cost(CpuTime(None, None, 600_000.0, MINUTE), 60_000, MINUTE)
    assert cost.guest_busy_per_kvnq is None and cost.cp_us_op is None
    assert cost.total_busy_per_kvnq == pytest.approx(1.0)
    assert cost_note(cost).startswith("Cost per operation: 10.0 µs of CPU")


def test_a_cost_of_milliseconds_is_given_in_ms() -> None:
    """A system doing other work charges each of few operations all of its CPU."""
    # 1.2 VNQ/s; the guests' half a CPU and CP's tenth all counted as crypto's
    cost = operation_cost(CpuTime(30_000_000.0, 6_000_000.0, None, MINUTE), 72, MINUTE)
    assert cost.total_us_op == pytest.approx(500_000.0)
    assert cost_note(cost).startswith("Cost per operation: guest 416.7 + CP 83.3 = 500.0 ms of CPU")
    total_only = operation_cost(CpuTime(None, None, 60_000_000.0, MINUTE), 600, MINUTE)
    assert cost_note(total_only).startswith("Cost per operation: 100.0 ms of CPU")
    small = operation_cost(_cpu(0.8668, 1.2054, 6666.17), round(6666.17 * 60), MINUTE)
    assert cost_note(small).startswith("Cost per operation: guest 8.7 + CP 12.1 = 20.7 µs")


def test_combine_drops_what_any_part_lacks() -> None:
    both = combine([CpuTime(1.0, 2.0, None, 10), CpuTime(3.0, None, None, 10)])
    assert both is not None and both.guest_us == 4.0 and both.cp_us is None
    assert both.duration_us == 20


def _cost(d: C.CryptoDeltas, guest: float, cp: float) -> OperationCost:
    etr = C.rate(d, "virt_nq")
    assert etr is not None
    return operation_cost(_cpu(guest, cp, etr), d.get("virt_nq"), d.duration_us)


def test_interrupts_are_priced_at_a_high_rate() -> None:
    """CP's DQ polling dominating at ~50,000/s (Table 1 DPDN, RSERV made dominant): interrupts
    would cut RSERV 61% for 49-66% more CP per operation (Tables 1-2; Table 3's 42% went with
    21% less CP at 6,666/s, and is not this rate's)."""
    d = _deltas(50319.05, 4.713, 1000.0, 256.676)
    facts = C.RecordFacts.of({}, d)
    line = trade_off(d, _cost(d, 0.5352, 0.7719), 250, facts)
    assert line == (
        "Trade-off: SET CRYPTO POLLING OFF would cut RSERV ~610 µs/op for +3.8-5.1 µs CP/op "
        "(now 7.7)."
    )
    assert len(line) <= NOTE_WIDTH


def test_interrupts_at_a_low_rate_cost_no_more_cp() -> None:
    d = _deltas(6666.17, 2.5, 1500.0, 100.0)
    line = trade_off(d, _cost(d, 0.8169, 0.9993), 250, C.RecordFacts.of({}, d))
    assert line.startswith("Trade-off: SET CRYPTO POLLING OFF would cut RSERV ~630 µs/op for ")
    assert "no more CP/op at this rate (now 10.0 µs" in line


def test_on_demand_nq_before_the_ptf() -> None:
    d = _deltas(46717.08, 900.0, 116.751, 300.0)
    pre_ptf = C.CryptoDeltas(d.values, d.duration_us, lengths=frozenset((128,)))
    facts = C.RecordFacts.of({}, pre_ptf)
    assert facts.ptf is False
    line = trade_off(d, _cost(d, 0.5178, 0.6299), None, facts)
    assert line.startswith("Trade-off: PTF UM35974's on-demand NQ would cut NSERV 846-864 µs/op")


def test_the_adapter_itself_when_cp_takes_replies_by_interrupts() -> None:
    d = _deltas(172346.2, 14.52, 500.0, 100.0)
    facts = C.RecordFacts.of({C.POLLING_KEY: "off"}, d)
    line = trade_off(d, _cost(d, 0.5641, 0.9388), "irq", facts)
    assert line.startswith("Trade-off: RSERV is the adapter's and CP's own time (15.0 µs CPU/op)")


def test_a_shorter_poll_timeout_halves_dserv() -> None:
    d = _deltas(46717.08, 72.643, 116.751, 1296.17)
    line = trade_off(d, _cost(d, 0.5178, 0.6299), 1500, C.RecordFacts.of({}, d))
    assert line.startswith("Trade-off: a poll timeout of 750 µs would cut DSERV ~648 µs/op")


def _pre_ptf(etr: float, vserv: float, rserv: float) -> C.CryptoDeltas:
    """A 112-byte D5R9's deltas: no NSERV, HSERV, DSERV."""
    vnq = round(etr * 60)
    values = {
        "virt_nq": vnq,
        "real_nq": vnq,
        "virt_dq": 3 * vnq,
        "real_dq": vnq,
        "virt_done": vnq,
        "real_done": vnq,
        "vserv_us": round(vserv * vnq),
        "rserv_us": round(rserv * vnq),
    }
    return C.CryptoDeltas(values, MINUTE, lengths=frozenset((112,)))


def test_a_trade_off_gives_a_cost_of_milliseconds_in_ms() -> None:
    d = _pre_ptf(1.2, 5834.16, 2560.37)  # the guests wait beyond CP: half the poll timeout
    cost = operation_cost(CpuTime(30_000_000.0, 6_000_000.0, None, MINUTE), 72, MINUTE)
    line = trade_off(d, cost, 1500, C.RecordFacts.of({}, d))
    assert line.endswith(", CPU/op now 500.0 ms."), line


def test_without_the_split_the_guests_wait_beyond_cp_stands_for_dserv() -> None:
    # seed 000 at 10:34 (03/06): 2.97 ms for the guests, 1.57 ms for CP
    d = _pre_ptf(336.9, 2970.0, 1570.0)
    facts = C.RecordFacts.of({}, d)
    line = trade_off(d, _cost(d, 0.5, 0.5), 1500, facts)
    assert line == (
        "Trade-off: half the poll timeout: up to ~700 µs/op less wait beyond CP, twice the "
        "unsuccessful DQs (2.0/op now), CPU/op now 10.0 µs."
    )


def test_without_the_split_the_poll_timer_bounds_what_a_shorter_timeout_buys() -> None:
    """The wait beyond CP's NQ to DQ is NSERV + DSERV: CP's NQ wait is in it too, and the
    guest's timer holds a reply at most a tick. Before: half of all of it was promised."""
    d = _pre_ptf(336.9, 4640.0, 1500.0)  # 3,140 µs beyond CP, a 1,500 µs poll timeout
    facts = C.RecordFacts.of({}, d)
    line = trade_off(d, _cost(d, 0.5, 0.5), 1500, facts)
    assert line.startswith("Trade-off: half the poll timeout: up to ~750 µs/op less wait beyond")
    irq = trade_off(d, _cost(d, 0.5, 0.5), "irq", facts)
    assert irq.startswith("Trade-off: the wait beyond CP (3140 µs/op) is CP's NQ wait, not poll")
    assert explain(d, "irq") == (
        "Guests wait 68% of 4.64 ms/op beyond CP: CP's NQ wait (the guest takes interrupts, "
        "no polling)"
    )


def test_without_the_split_cp_dominating_before_the_ptf() -> None:
    d = _pre_ptf(336.9, 2000.0, 1800.0)
    line = trade_off(d, _cost(d, 0.5, 0.5), 1500, C.RecordFacts.of({}, d))
    assert line.startswith("Trade-off: CP's NQ to DQ (1800 µs/op) dominates: PTF UM35974")


def test_the_cost_keeps_its_caveat_when_the_figures_are_long() -> None:
    cost = OperationCost(13328.2, 11072.9, 2255.4, 110728.7, 22553.6)
    line = cost_note(cost)
    assert len(line) <= NOTE_WIDTH
    assert line.endswith("all of the LPAR's CPU counted as crypto's (an upper bound).")
