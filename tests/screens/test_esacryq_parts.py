"""ESACRYQ's pure pieces: the AP bus header, pending, totals and shares on hand-made slots."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from esatui.db.records import Flag, Value, max_column
from esatui.db.slots import EntityData, KindSlice, Slot
from esatui.screens.esacryq import (
    BusSettings,
    bus_notes,
    bus_settings,
    change_note,
    pending,
    requests_total,
    slot_rows,
    zcrypt_req_s,
)
from esatui.screens.model import DEFAULT_THRESHOLDS, Threshold
from esatui.screens.render import note_style

T0 = 1_795_269_600_000_000
MINUTE = 60_000_000


def entity(
    key: str, values: dict[str, Value], flags: int = 0, hf_n: int = 3, **attrs: str
) -> EntityData:
    return EntityData(key, attrs, values, flags, hf_n)


def kind(*entities: EntityData, duration_us: int = MINUTE, flags: int = 0) -> KindSlice:
    return KindSlice("zcrypt", duration_us, flags, {e.key: e for e in entities})


def slot(**kinds: KindSlice) -> Slot:
    data = {name: {"zcrypt": k} for name, k in kinds.items()}
    return Slot(T0, T0 + MINUTE, MINUTE, 0, data)


def settings(interrupts: int | None, thread: int | None, timeout_ns: int | None) -> BusSettings:
    values = {"ap_interrupts": interrupts, "poll_thread": thread, "poll_timeout_ns": timeout_ns}
    return BusSettings(
        T0, {k: None if v is None else float(v) for k, v in values.items()}, frozenset()
    )


def test_interrupts_are_not_highlighted() -> None:
    notes = bus_notes(settings(1, 0, 250_000), DEFAULT_THRESHOLDS)
    assert notes == [
        "AP bus: ap_interrupts 1  poll_thread 0  poll_timeout 250 µs  (replies signalled by "
        "interrupt)"
    ]
    assert note_style(notes[0]) == "note"


def test_queues_without_interrupts_are_said_polled_under_an_interrupt_bus() -> None:
    """Found from outside (ap_queue.c: ap_sm_read and ap_sm_write wait the poll timer for a
    queue whose interrupts are not enabled, whatever ap_interrupts says). Before: the header
    said every reply was signalled by interrupt."""
    on: dict[str, Value] = {"ap_interrupts": 1.0, "poll_thread": 0.0, "poll_timeout_ns": 1.5e6}
    bus = entity("ap", on | {max_column(k): v for k, v in on.items()})
    queues = [
        entity(key, {}, online=online, interrupt=irq)
        for key, online, irq in (
            ("01.0011", "1", "1"),
            ("01.0012", "1", "0"),
            ("03.0011", "1", "pending"),
            ("03.0012", "0", "0"),  # offline: no replies to wait for
            ("05.0011", "1", ""),  # a kernel before 4.10 has no interrupt file
        )
    ]
    found = bus_settings(slot(zcrypt_bus=kind(bus), zcrypt_queue=kind(*queues)))
    assert found is not None and found.polled == ("01.0012", "03.0011") and found.queues == 3
    assert bus_notes(found, DEFAULT_THRESHOLDS) == [
        "AP bus: ap_interrupts 1  poll_thread 0  poll_timeout 1500 µs  (replies signalled by "
        "interrupt; 2 of 3 queues without: 01.0012, 03.0011 polled every 1500 µs)"
    ]


def test_polling_says_its_cost_and_is_marked_only_when_the_wait_matters() -> None:
    """Before: every polling guest (the usual case under z/VM) was marked critical."""
    notes = bus_notes(settings(0, 0, 1_500_000), DEFAULT_THRESHOLDS)
    assert notes[0] == (
        "POLLING: ap_interrupts 0  poll_thread 0  poll_timeout 1500 µs: "
        "up to 1500 µs added latency per request"
    )
    assert note_style(notes[0]) == "note"
    # the dserv_us threshold: 2,000 µs more than the default timer explains, 5,000 µs a
    # whole RSA 2048 operation in software
    assert note_style(bus_notes(settings(0, 0, 2_000_000), DEFAULT_THRESHOLDS)[0]) == "warn"
    assert note_style(bus_notes(settings(0, 0, 5_000_000), DEFAULT_THRESHOLDS)[0]) == "crit"
    strict = {**DEFAULT_THRESHOLDS, "dserv_us": Threshold(1000.0, 1400.0)}
    assert bus_notes(settings(0, 0, 1_500_000), strict)[0].startswith("! POLLING:")
    # docs/ZCRYPT.md section 5: both regimes, never "half" alone
    assert "nearly the whole timeout" in notes[1]
    assert "independent requests half" in notes[1]
    threaded = bus_notes(settings(0, 1, 50_500), DEFAULT_THRESHOLDS)
    assert "poll_timeout 50.5 µs: up to 50.5 µs added" in threaded[0]
    assert "poll thread" in threaded[1]


def test_unknown_settings_show_as_dots() -> None:
    assert bus_notes(settings(None, None, None), DEFAULT_THRESHOLDS) == [
        "AP bus: ap_interrupts .  poll_thread .  poll_timeout ."
    ]
    assert bus_notes(settings(0, None, None), DEFAULT_THRESHOLDS)[0].endswith(
        "poll_timeout .: up to the poll timeout added latency per request"
    )


def test_settings_changed_within_a_slot_are_mixed() -> None:
    bus = entity(
        "ap",
        {
            "ap_interrupts": 0.5,
            max_column("ap_interrupts"): 1.0,
            "poll_thread": 0.0,
            max_column("poll_thread"): 0.0,
            "poll_timeout_ns": 1_500_000.0,
            max_column("poll_timeout_ns"): 1_500_000.0,
        },
        hf_n=2,
    )
    found = bus_settings(slot(zcrypt_bus=kind(bus)))
    assert found is not None
    assert found.mixed == {"ap_interrupts"}
    assert found.polling  # it polled for part of the slot
    assert found.value("ap_interrupts") is None
    assert "ap_interrupts changed" in bus_notes(found, DEFAULT_THRESHOLDS)[0]
    later = BusSettings(T0 + MINUTE, dict(found.values), frozenset())
    assert change_note([found, later]) == (
        "* AP bus settings changed in this range: ap_interrupts within the interval ending 14:01:00"
    )


def test_pending_prefers_the_sum_as_sampled() -> None:
    e = entity(
        "0a",
        {
            "pending_count": 4.5,
            max_column("pending_count"): 7.0,
            "requestq_count": 1.5,
            max_column("requestq_count"): 4.0,
            "pendingq_count": 3.0,
            max_column("pendingq_count"): 6.0,
        },
    )
    assert pending(e) == (4.5, 7.0)


@pytest.mark.parametrize(
    ("rq_max", "pq_max", "hf_n", "expected_max"),
    [(4.0, 6.0, 3, None), (0.0, 6.0, 3, 6.0), (4.0, 6.0, 1, 10.0)],
)
def test_pending_without_the_sum(
    rq_max: float, pq_max: float, hf_n: int, expected_max: float | None
) -> None:
    """Older recordings: the maximum of a sum is known only when it cannot be wrong."""
    e = entity(
        "0a",
        {
            "requestq_count": 1.5,
            max_column("requestq_count"): rq_max,
            "pendingq_count": 3.0,
            max_column("pendingq_count"): pq_max,
        },
        hf_n=hf_n,
    )
    assert pending(e) == (4.5, expected_max)


def test_an_unreadable_card_leaves_the_total_unknown() -> None:
    good = entity("01", {"request_count": 120})
    new = entity("05", {}, flags=Flag.NEW)
    unreadable = entity("03", {"request_count": None})
    assert requests_total(kind(good, new)) == 120
    assert requests_total(kind(good, unreadable)) is None
    assert requests_total(kind(new)) is None
    assert zcrypt_req_s(slot(zcrypt_card=kind(good, new))) == pytest.approx(2.0)
    assert zcrypt_req_s(slot()) is None


def test_a_queue_without_its_card_still_shows() -> None:
    rows = slot_rows(slot(zcrypt_queue=kind(entity("0a.0011", {"request_count": 60}))))
    assert [r.values["device"] for r in rows] == ["0a.0011"]
    assert rows[0].values["req_s"] == 1.0
    assert rows[0].values["share_pct"] is None  # no card: no base for a share
    assert rows[0].first


def test_entity_filter_accepts_card_spellings() -> None:
    cards = kind(entity("0a", {"request_count": 6}), entity("0b", {"request_count": 6}))
    queues = kind(entity("0a.0011", {"request_count": 6}), entity("0b.0011", {"request_count": 6}))
    s = slot(zcrypt_card=cards, zcrypt_queue=queues)
    for spelling in ("0a", "0A", "card0a"):
        assert [r.values["device"] for r in slot_rows(s, spelling)] == ["0a", "0a.0011"]
    assert [r.values["device"] for r in slot_rows(s, "0b.0011")] == ["0b.0011"]


@st.composite
def ap_slots(draw: st.DrawFn) -> Slot:
    cards, queues = [], []
    for c in draw(st.lists(st.integers(0, 255), min_size=1, max_size=5, unique=True)):
        domains = draw(st.lists(st.integers(0, 84), min_size=0, max_size=4, unique=True))
        counts = [draw(st.integers(0, 10**9)) for _ in domains]
        flags = draw(st.sampled_from([0, Flag.RESET, Flag.NEW]))
        card_count: Value = None if flags & Flag.NEW else sum(counts)
        cards.append(entity(f"{c:02x}", {"request_count": card_count}, flags))
        for d, n in zip(domains, counts, strict=True):
            q_count: Value = None if flags & Flag.NEW else n
            queues.append(entity(f"{c:02x}.{d:04x}", {"request_count": q_count}, flags))
    duration = draw(st.integers(1, 10**10))
    return slot(
        zcrypt_card=kind(*cards, duration_us=duration),
        zcrypt_queue=kind(*queues, duration_us=duration),
    )


@given(ap_slots())
def test_rates_and_shares_add_up(s: Slot) -> None:
    rows = slot_rows(s)
    cards = [r for r in rows if "." not in str(r.values["device"])]
    for row in rows:
        for column in ("req_s", "share_pct"):
            value = row.values[column]
            assert value is None or (isinstance(value, float) and value >= 0)
    total = zcrypt_req_s(s)
    rates = [float(str(r.values["req_s"])) for r in cards if r.values["req_s"] is not None]
    if total is None:
        assert not rates
    else:
        assert total == pytest.approx(sum(rates))
        shares = [r.values["share_pct"] for r in cards if r.values["share_pct"] is not None]
        if total > 0:
            assert sum(float(str(v)) for v in shares) == pytest.approx(100.0)
    # every card is followed by its own queues
    current = None
    for row in rows:
        device = str(row.values["device"])
        if "." in device:
            assert device.partition(".")[0] == current
        else:
            current = device
