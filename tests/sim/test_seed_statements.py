"""What the seeds say in words, not only in tables, holds in the simulator.

Seed 002's text (unsuccessful dequeues at the default and at a 50 µs poll time; the PTF's
NSERV and RSERV reductions across IBM's other workloads; Table 3's unchanged ETR), seed
000's ESACRYPT and ESACRYPA rows. None of these numbers was fitted (docs/MODEL.md section 6).
"""

from __future__ import annotations

import pytest

from esatui.sim import adapter_table
from esatui.sim.analysis import PollingMetrics
from esatui.sim.calibration import measure
from esatui.sim.model import DEFAULT_START_US, SimulatedSystem
from esatui.sim.published import UNSUCCESSFUL_DQ_PER_INTERVAL
from esatui.sim.scenarios import identity, scenario

MONITOR_INTERVAL_S = 30.0  # IBM's, from 200,000 = 6,666/s x 30 s (docs/MODEL.md section 2)
MODES = ("baseline", "polling", "interrupts")
_cache: dict[tuple[str, tuple[tuple[str, object], ...]], PollingMetrics] = {}


def m(name: str, **changes: object) -> PollingMetrics:
    key = (name, tuple(sorted(changes.items())))
    if key not in _cache:
        _cache[key] = measure(name, changes, interval_s=MONITOR_INTERVAL_S)
    return _cache[key]


@pytest.mark.parametrize("mode", MODES)
def test_unsuccessful_dequeues_default_and_50us(mode: str) -> None:
    """ "runs CBDN, CPDN, and CIDN using the default Linux poll-time experienced
    approximately 200,000 unsuccessful dequeue requests per monitor interval, whereas runs
    CB5N, CP5N, and CI5N using a 50 µs Linux poll-time experienced approximately
    6,000,000" (seed 002)."""
    default = m(f"seed002-t3-{mode}")
    fast = m(f"seed002-t3-{mode}", poll_timeout_us=50.0)
    expected_default = UNSUCCESSFUL_DQ_PER_INTERVAL["default"]
    expected_fast = UNSUCCESSFUL_DQ_PER_INTERVAL["50us"]
    assert default.unsuccessful_vdq == pytest.approx(expected_default, rel=0.05)
    assert fast.unsuccessful_vdq == pytest.approx(expected_fast, rel=0.10)
    # "reducing both DSERV and VSERV ... significantly higher ETR"
    assert fast.dserv_us < default.dserv_us / 10
    assert fast.vserv_us < default.vserv_us / 3
    assert fast.etr > 3 * default.etr


def test_table3_etr_unchanged_dserv_absorbs_hserv() -> None:
    """ "ETR, however, remained constant across all three runs because the decrease in
    HSERV was negated by increases in DSERV, thus causing VSERV to remain constant.\""""
    runs = [m(f"seed002-t3-{mode}") for mode in MODES]
    etr = [r.etr for r in runs]
    assert max(etr) / min(etr) < 1.01
    vserv = [r.vserv_us for r in runs]
    assert max(vserv) / min(vserv) < 1.01
    hserv = [r.hserv_us for r in runs]
    dserv = [r.dserv_us for r in runs]
    assert hserv[0] > hserv[1] > hserv[2]
    assert dserv[0] < dserv[1] < dserv[2]


# IBM's other workloads are not described; these vary what the report varied (threads,
# SMT) and what a lab would (key size, adapters, the guests' poll time).
OTHER_WORKLOADS: tuple[tuple[str, dict[str, object]], ...] = (
    ("t3", {"key_bits": 2048}),
    ("t1", {"threads": 4}),
    ("t1", {"cards": 1}),
    ("t3", {"poll_timeout_us": 250.0}),
    ("t2", {"threads": 2}),
)


@pytest.mark.parametrize(("table", "changes"), OTHER_WORKLOADS)
def test_ptf_reductions_within_the_labs_range(table: str, changes: dict[str, object]) -> None:
    """ "Additional workloads in our lab saw an NSERV reduction in the range of 42.7% to
    99.2%" and "an RSERV reduction in the range of 22.7% to 89.5% when the DQ-task was
    initiated by crypto adapter interrupts" (seed 002)."""
    base, poll, irq = (m(f"seed002-{table}-{mode}", **changes) for mode in MODES)
    for run in (poll, irq):
        reduction = 1 - run.nserv_us / base.nserv_us
        assert 0.427 <= reduction <= 0.992, (changes, run.nserv_us, base.nserv_us)
    reduction = 1 - irq.rserv_us / base.rserv_us
    assert 0.227 <= reduction <= 0.895, (changes, irq.rserv_us, base.rserv_us)


def test_seed000_esacrypt_and_esacrypa() -> None:
    """Seed 000 at 18:48-18:53: about 5 operations/s; virtual minus real NQ-to-DQ 1.4-1.7
    ms/op under z/VM's default poll time; 17.9 virtual and 11.0 real dequeues a second
    (3.6 and 2.2 per operation); the four CEX4A cards each about 0.5% busy with 140-145
    RSA-2048 CRT operations a minute at 2.16 ms, half of them the other LPAR's."""
    start = DEFAULT_START_US + (18 * 3600 + 30 * 60) * 1_000_000
    system = SimulatedSystem(
        scenario("mode-vm-day"), seed=3, start_us=start, identity=identity("mode-vm-day")
    )
    system.advance(18 * 60)
    before = system.snapshot()
    system.advance(5 * 60)
    after = system.snapshot()
    dt = (after.time_us - before.time_us) / 1e6
    a, b = after.crypto, before.crypto
    ops = a.vnq - b.vnq
    assert 3.5 < ops / dt < 7.0
    ms_virt = (a.vserv_us - b.vserv_us) / ops / 1000
    ms_real = (a.rserv_us - b.rserv_us) / (a.rnq - b.rnq) / 1000
    assert ms_virt == pytest.approx(4.8, rel=0.2)
    assert ms_real == pytest.approx(3.1, rel=0.2)
    assert 1.2 <= ms_virt - ms_real <= 2.0
    assert (a.vdq - b.vdq) / ops == pytest.approx(3.6, rel=0.25)
    assert (a.rdq - b.rdq) / (a.rnq - b.rnq) == pytest.approx(2.2, rel=0.25)
    crt = adapter_table.FUNCTION_NAMES.index("rsa2048_crt")
    for x, y in zip(after.adapters, before.adapters, strict=True):
        count = x.functions[crt].count - y.functions[crt].count
        busy = (x.functions[crt].time_us - y.functions[crt].time_us) / 1e6
        assert busy / count * 1000 == pytest.approx(2.16, rel=0.05)
        assert 0.3 < busy / dt * 100 < 0.8  # % of the card
        assert 100 < count / (dt / 60) < 190  # per minute


@pytest.mark.parametrize(("bits", "exec_us"), [(1024, 226.0), (2048, 631.0), (4096, 3761.0)])
def test_seed004_cex8s_coprocessor_exec_time(bits: int, exec_us: float) -> None:
    """Seed 004: a Crypto Express 8S coprocessor's EXEC TIME per TLS handshake's RSA
    private-key request: 226, 631 and 3,761 µs for 1024, 2048 and 4096-bit keys. The
    simulated card's measurement block gives the same per operation; the guest sees it
    and some latency on top (RSERV)."""
    params = scenario("seed002-t3-interrupts").replace(
        card_type="CEX8C", op="rsa_sign", key_bits=bits, guests=2
    )
    system = SimulatedSystem(params, seed=1)
    system.advance(20)
    before = system.snapshot()
    system.advance(40)
    after = system.snapshot()
    count = time_us = 0
    for x, y in zip(after.adapters, before.adapters, strict=True):
        assert x.mode == "cca"
        (fx,), (fy,) = x.functions, y.functions
        assert fx.name == "cca_all"
        count += fx.count - fy.count
        time_us += fx.time_us - fy.time_us
    assert count > 100
    assert time_us / count == pytest.approx(exec_us, rel=0.02)
    rserv = (after.crypto.rserv_us - before.crypto.rserv_us) / (
        after.crypto.rnq - before.crypto.rnq
    )
    assert exec_us < rserv < exec_us * 1.5 + 100
