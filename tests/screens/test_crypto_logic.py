"""The crypto screens' arithmetic and explanations on hand-made deltas (no store)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from esatui.db.slots import EntityData, KindSlice, Slot
from esatui.screens import crypto as C
from esatui.screens.esacrypa import ap_values, card_id, reported
from esatui.screens.esapoll import explain, guest_poll
from esatui.screens.poll_trade import NOTE_WIDTH

MINUTE = 60_000_000


def deltas(**values: int | None) -> C.CryptoDeltas:
    return C.CryptoDeltas(values, MINUTE)


def split(nserv: int, rserv: int, dserv: int, vnq: int = 1000, **more: int) -> C.CryptoDeltas:
    return deltas(
        virt_nq=vnq,
        real_nq=vnq,
        vserv_us=(nserv + rserv + dserv) * vnq,
        nserv_us=nserv * vnq,
        rserv_us=rserv * vnq,
        hserv_us=(nserv + rserv) * vnq,
        dserv_us=dserv * vnq,
        **more,
    )


PTF = C.RecordFacts("7.2.0", frozenset({360}))  # the records of a CP with PTF UM35974
PRE_PTF = C.RecordFacts("7.1.0", frozenset({128}))


def test_nserv_dominates_before_the_ptf() -> None:
    note = explain(split(900, 100, 100, real_dq=1000))
    assert note.startswith("NSERV 82% of 1100 µs/op: CP's NQ polling (pre-PTF UM35974)")
    with_ptf = explain(split(900, 100, 100, real_dq=1000), facts=PTF)
    assert "pre-PTF" not in with_ptf and "on-demand NQ" in with_ptf


def test_rserv_with_cp_polling_and_with_interrupts() -> None:
    polling = explain(split(5, 900, 100, real_dq=3000), facts=PTF)
    assert polling.startswith("RSERV 90% of 1005 µs/op: adapter + CP's DQ polling (3.00 DQ/op)")
    assert "SET CRYPTO POLLING OFF cuts it" in polling
    adapter = explain(split(5, 900, 100, real_dq=1000), facts=PTF)
    # one CP DQ per operation: none wasted, but a busy polling DQ loop looks the same
    assert "adapter + CP's DQ (1.00 DQ/op, none wasted); if CP still polls" in adapter
    assert "SET CRYPTO POLLING OFF" in adapter
    before = explain(split(5, 900, 100, real_dq=1000), facts=PRE_PTF)
    assert "PTF UM35974 brings SET CRYPTO POLLING OFF" in before


def test_interrupt_advice_only_where_the_level_has_it() -> None:
    d = split(5, 900, 100, real_dq=3000)
    assert "PTF UM35974 brings SET CRYPTO POLLING OFF" in explain(d, facts=PRE_PTF)
    assert "with PTF UM35974, SET CRYPTO POLLING OFF" in explain(d)  # level unknown
    off = C.RecordFacts("7.3.0", frozenset({360}), polling="off", polling_source="vmcp")
    told = explain(d, facts=off)
    assert "SET CRYPTO POLLING" not in told and "CP's DQ by interrupts" in told


def test_dserv_names_the_guest_setting_and_the_cost() -> None:
    d = split(5, 100, 900, virt_dq=61_000, virt_done=1000)
    # 900 µs is more than this guest's 250 µs tick: not its timer alone (docs/ZCRYPT.md 5)
    assert explain(d, 250) == (
        "DSERV 90% of 1005 µs/op: guest poll timer (here 250 µs), over its tick (others "
        "slower?); faster polling: more DQs (1000/s) and CPU"
    )
    # in step with a 1000 µs tick: each reply releases the next request
    assert "(here 1000 µs), in step (a whole tick per op)" in explain(d, 1000)
    assert "(here: interrupts)" in explain(d, "irq")
    assert "unsuccessful DQs and CPU" in explain(split(5, 100, 900))  # no DQ counts


def test_without_the_split() -> None:
    small = deltas(virt_nq=100, real_nq=100, vserv_us=100_000, rserv_us=90_000)
    assert explain(small).startswith("CP's NQ to DQ is 0.90 of 1.00 ms/op: adapter and CP")
    big = deltas(virt_nq=100, real_nq=100, vserv_us=300_000, rserv_us=100_000, virt_dq=500)
    assert explain(big, 1500) == (
        "Guests wait 67% of 3.00 ms/op beyond CP: polling + CP's NQ wait (here 1500 µs, "
        "5.0 DQ/op); faster polling trades it for DQs and CPU"
    )
    assert explain(deltas(virt_nq=5)).startswith("NQ to DQ times not recorded")
    assert explain(deltas(virt_nq=0)).startswith("No guest crypto operations")
    assert explain(None).startswith("No guest crypto operations")


def test_zero_accumulators_mean_not_kept() -> None:
    """A 360-byte D5R9 from a CP without HSERV/NSERV/DSERV carries zeros there."""
    d = deltas(virt_nq=10, vserv_us=5000, rserv_us=2000, hserv_us=0, nserv_us=0, dserv_us=0)
    st_ = C.service_times(d)
    assert (st_.nserv, st_.dserv, st_.hserv, st_.dserv_pct) == (None, None, None, None)
    assert st_.vserv == 500 and st_.rserv == 200
    idle = C.service_times(deltas(virt_nq=0, vserv_us=0, hserv_us=0, nserv_us=0, dserv_us=0))
    assert idle.nserv is None  # no operations: nothing per operation either
    assert C.split_recorded(deltas(vserv_us=0, hserv_us=0, nserv_us=0, dserv_us=0))


def test_unsuccessful_dequeues_never_negative() -> None:
    assert C.unsuccessful_dq_s(deltas(virt_dq=10, virt_done=70)) is None
    assert C.unsuccessful_dq_s(deltas(virt_dq=130, virt_done=70)) == 1.0
    assert C.unsuccessful_dq_s(deltas(virt_dq=130)) is None


def test_combine_drops_a_counter_missing_anywhere() -> None:
    both = C.combine([deltas(virt_nq=1, vserv_us=5), deltas(virt_nq=2)])
    assert both is not None
    assert both.values == {"virt_nq": 3} and both.duration_us == 2 * MINUTE
    assert C.combine([]) is None


def _ap(values: dict[str, int | float | None], scale: str = "1e-06") -> EntityData:
    return EntityData("0a", {"type": "11", "mode": "accel", "scale": scale}, values, 0, 0)


def test_ap_values() -> None:
    ap = _ap(
        {
            "rsa2048_crt_count": 120,
            "rsa2048_crt_time": 240_000,
            "rsa1024_me_count": 0,
            "rsa1024_me_time": 0,
        }
    )
    v = ap_values(ap, MINUTE)
    assert [f.name for f in reported(ap)] == ["rsa1024_me", "rsa2048_crt"]
    assert v["rsa2048_crt_time_s"] == 0.24 and v["rsa2048_crt_ops_s"] == 2.0
    assert v["rsa2048_crt_ms_op"] == 2.0 and v["rsa1024_me_ms_op"] is None
    assert v["util_pct"] == 0.4
    assert "rsa4096_me_count" not in v  # not reported: no value, not 0
    assert card_id("0a") == "0a" and card_id("0a.0011") == "0a" and card_id("x") is None


def test_ap_without_a_usable_scale() -> None:
    v = ap_values(_ap({"rsa2048_crt_count": 120, "rsa2048_crt_time": 240_000}, "nan"), MINUTE)
    assert v["rsa2048_crt_count"] == 120 and v["rsa2048_crt_ops_s"] == 2.0
    assert v["rsa2048_crt_time_s"] is None and v["util_pct"] is None


_count = st.one_of(st.none(), st.integers(0, 10**15))


@given(
    st.fixed_dictionaries(dict.fromkeys(C.COUNTERS, _count)),
    st.one_of(st.none(), st.just("irq"), st.just("mixed"), st.integers(0, 10**7)),
    st.integers(1, 10**12),
)
def test_the_explanation_is_one_line_whatever_the_numbers(
    values: dict[str, int | None], poll: int | str | None, duration_us: int
) -> None:
    note = explain(C.CryptoDeltas(values, duration_us), poll)
    assert 0 < len(note) <= NOTE_WIDTH and "\n" not in note


def _bus_slot(**values: float | None) -> Slot:
    entity = EntityData("ap", {}, values, 0, 2)
    bus = KindSlice("zcrypt", MINUTE, 0, {"ap": entity})
    return Slot(0, MINUTE, MINUTE, 0, {"zcrypt_bus": {"zcrypt": bus}})


def test_guest_poll() -> None:
    assert guest_poll(_bus_slot(ap_interrupts=1.0, poll_timeout_ns=250_000.0)) == "irq"
    assert guest_poll(_bus_slot(ap_interrupts=0.0, poll_timeout_ns=1_500_000.0)) == 1500
    assert guest_poll(_bus_slot(ap_interrupts=0.5, poll_timeout_ns=250_000.0)) == "mixed"
    # an hour of 1500 then 50 µs: its samples' mean is no setting (nor 775 µs)
    changed = _bus_slot(ap_interrupts=0.0, poll_timeout_ns=775_000.0, poll_timeout_ns_max=1.5e6)
    assert guest_poll(changed) == "mixed"
    kept = _bus_slot(ap_interrupts=0.0, poll_timeout_ns=1.5e6, poll_timeout_ns_max=1.5e6)
    assert guest_poll(kept) == 1500
    assert guest_poll(_bus_slot(poll_timeout_ns=250_000.0)) == 250  # no interrupt attribute
    assert guest_poll(_bus_slot(ap_interrupts=0.0)) is None
    assert guest_poll(Slot(0, MINUTE, MINUTE, 0, {})) is None


def test_the_records_note_says_the_level_the_length_and_cp_s_polling_mode() -> None:
    def note(lengths: set[int], kept: bool = True, **config: str) -> str:
        facts = C.RecordFacts.of({"zvm_level": "6.3.0", **config}, None)
        return C.RecordFacts(
            facts.level, frozenset(lengths), facts.polling, facts.polling_source, kept
        ).note()

    assert note({112}) == (
        "Records: z/VM 6.3.0, D5R9 112 bytes: no NSERV/HSERV/DSERV (before APAR VM66534). "
        "CP crypto: NQ and DQ polling (pre-PTF, inferred)."
    )
    assert "D5R9 128 and 360 bytes: NSERV/HSERV/DSERV only in the longer ones" in note({128, 360})
    assert note({360}).endswith("CP crypto: SET CRYPTO POLLING ON or OFF, not known.")
    assert "fields, not kept. CP crypto: mode unknown." in note({360}, kept=False)
    told = note({360}, cp_crypto_polling="off", cp_crypto_polling_source="CP QUERY CRYPTO AP")
    assert told.endswith("CP crypto: SET CRYPTO POLLING OFF (CP QUERY CRYPTO AP).")
    assert C.RecordFacts("7.1.0", frozenset({128})).ptf is False
    assert C.RecordFacts("", frozenset({128}), polling="on").ptf is True  # a source says so
