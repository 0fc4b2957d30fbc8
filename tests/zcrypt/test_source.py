"""The zcrypt source driven through fake AP trees whose counters the tests advance."""

from __future__ import annotations

import os
import string
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from esatui.collectors.base import PolledSource, SourceContext
from esatui.collectors.model import Reading, Role, Sample
from esatui.collectors.zcrypt import BUS, CARD, QUEUE, ZcryptSource
from esatui.collectors.zcrypt.source import _plain_uints
from esatui.sim.interfaces.aptree import ApTree, build


def write_garbage(tree: ApTree, relpath: str, content: str | bytes) -> None:
    """Put ``content`` into a file below /sys/devices/ap (``card0a/request_count``)."""
    path = tree.devices / relpath
    data = content.encode() if isinstance(content, str) else content
    with path.open("r+b" if path.exists() else "wb") as f:
        f.write(data)
        f.truncate()


def by_key(sample: Sample, kind: str) -> dict[str, Reading]:
    return {r.key: r for r in sample.all_readings() if r.kind == kind}


@pytest.fixture
def warnings() -> list[str]:
    return []


@pytest.fixture
def tree(tmp_path: Path) -> ApTree:
    return build(tmp_path, cards=3, domains=2, vfio_domains=(0x11,))


@pytest.fixture
def source(tmp_path: Path, tree: ApTree, warnings: list[str]) -> Iterator[ZcryptSource]:
    del tree
    src = ZcryptSource(SourceContext(root=tmp_path, warn=warnings.append))
    yield src
    src.close()


def test_is_a_polled_source_with_documented_kinds(source: ZcryptSource) -> None:
    assert isinstance(source, PolledSource)
    assert source.probe().available
    assert [k.name for k in source.kinds] == ["zcrypt_bus", "zcrypt_card", "zcrypt_queue"]
    assert CARD.field("request_count").role is Role.COUNTER
    assert {f.name for f in CARD.gauges} == {
        "requestq_count",
        "pendingq_count",
        "pending_count",
        "load",
    }
    assert {f.name for f in QUEUE.gauges} == {"requestq_count", "pendingq_count", "pending_count"}


def test_probe_without_ap_bus(tmp_path: Path) -> None:
    probe = ZcryptSource(SourceContext(root=tmp_path)).probe()
    assert not probe.available
    assert "no AP bus" in probe.reason


def test_cards_and_queues_with_types_modes_and_keys(source: ZcryptSource) -> None:
    sample = source.sample()
    cards = by_key(sample, "zcrypt_card")
    assert list(cards) == ["01", "03", "05"]
    assert [cards[k].attrs["type"] for k in cards] == ["CEX7A", "CEX7C", "CEX8P"]
    assert [cards[k].attrs["mode"] for k in cards] == ["ACCEL", "CCA", "EP11"]
    assert cards["05"].attrs["function_letters"] == "-----XN-F-"
    assert cards["05"].attrs["hwtype"] == "14"
    assert cards["01"].attrs["state"] == "online"
    assert cards["01"].attrs["driver"] == "cex4card"
    queues = by_key(sample, "zcrypt_queue")
    assert sorted(queues) == ["01.0010", "01.0011", "03.0010", "03.0011", "05.0010", "05.0011"]
    q = queues["03.0010"]
    assert q.attrs["card"] == "03"
    assert q.attrs["domain"] == "0010"
    assert q.attrs["type"] == "CEX7C"
    assert q.attrs["mode"] == "CCA"
    assert q.attrs["interrupt"] == "1"
    assert q.attrs["state"] == "online"
    assert q.values == {
        "request_count": 0,
        "requestq_count": 0,
        "pendingq_count": 0,
        "pending_count": 0,
    }


def test_bus_settings(tmp_path: Path) -> None:
    build(tmp_path, cards=1, domains=1, interrupts=False, poll_timeout_ns=1500000)
    sample = ZcryptSource(SourceContext(root=tmp_path)).sample()
    bus = by_key(sample, BUS.name)["ap"]
    assert bus.values["ap_interrupts"] == 0
    assert bus.values["poll_thread"] == 0
    assert bus.values["poll_timeout_ns"] == 1500000
    assert bus.values["bound_apqns"] == 1
    assert bus.values["total_apqns"] == 1
    assert bus.attrs["ap_domain"] == "-1"
    assert bus.attrs["bindings"] == "1/1 (complete)"
    assert bus.attrs["features"] == "APSC APXA QACT RC8A APSB"
    assert bus.attrs["ap_usage_domain_mask"].startswith("0x0000800000")
    queue = by_key(sample, "zcrypt_queue")["01.0010"]
    assert queue.attrs["interrupt"] == "0"


def test_counters_follow_the_tree(tree: ApTree, source: ZcryptSource) -> None:
    source.sample()
    tree.advance(1, 0x10, 1382729)
    tree.advance(1, 0x11, 5)
    s2 = source.sample()
    assert by_key(s2, "zcrypt_queue")["01.0010"].values["request_count"] == 1382729
    assert by_key(s2, "zcrypt_card")["01"].values["request_count"] == 1382734
    tree.reset_card_counter(1)
    s3 = source.sample()
    assert by_key(s3, "zcrypt_card")["01"].values["request_count"] == 0
    assert by_key(s3, "zcrypt_queue")["01.0010"].values["request_count"] == 0
    assert s3.mono_ns is not None
    assert s2.mono_ns is not None
    assert s3.mono_ns >= s2.mono_ns


def test_a_kernel_before_5_6_counts_past_2_31_in_negative_numbers(
    tree: ApTree, source: ZcryptSource, warnings: list[str]
) -> None:
    """Before Linux 5.6 (upstream fcd98d4002539) ``request_count`` was a 32-bit counter
    printed with ``%d``: past 2**31 requests it reads negative. Before: every such value was
    garbage, and the card's rates and shares blank until the counter came back to 0."""
    write_garbage(tree, "card01/request_count", f"{2**31 - 3}\n")
    write_garbage(tree, "card01/01.0010/request_count", "-2147483648\n")  # 2**31
    first = source.sample()
    write_garbage(tree, "card01/request_count", "-7\n")  # 2**32 - 7: 2**31 - 4 more
    write_garbage(tree, "card01/01.0010/request_count", "-1\n")
    second = source.sample()
    assert by_key(first, "zcrypt_queue")["01.0010"].values["request_count"] == 2**31
    assert by_key(second, "zcrypt_card")["01"].values["request_count"] == 2**32 - 7
    assert by_key(second, "zcrypt_queue")["01.0010"].values["request_count"] == 2**32 - 1
    assert warnings == []


def test_gauges_read_only_the_queue_depths(tree: ApTree, source: ZcryptSource) -> None:
    assert source.sample_gauges() is None  # nothing known before the first full sample
    source.sample()
    tree.set_depths(3, 0x10, requestq=2, pendingq=7)
    tree.set_depths(3, 0x11, requestq=1, pendingq=3)
    g = source.sample_gauges()
    assert g is not None
    assert g.reads == 2 * (3 + 6)
    cards = by_key(g, "zcrypt_card")
    assert cards["03"].values == {"requestq_count": 3, "pendingq_count": 10, "pending_count": 13}
    assert by_key(g, "zcrypt_queue")["03.0011"].values == {
        "requestq_count": 1,
        "pendingq_count": 3,
        "pending_count": 4,
    }
    gauges = {"requestq_count", "pendingq_count", "pending_count"}
    assert all(set(r.values) == gauges for r in g.all_readings())
    assert all(not r.attrs for r in g.all_readings())
    assert not g.readings  # as tables: no object per device per tick


def test_vfio_ap_bound_queue(source: ZcryptSource) -> None:
    queue = by_key(source.sample(), "zcrypt_queue")["01.0011"]
    assert queue.values["request_count"] is None
    assert queue.attrs["driver"] == "vfio_ap"
    assert queue.attrs["status"] == "in use"
    assert "online" not in queue.attrs
    assert queue.attrs["state"] == "vfio:in use"


def test_rebinding_a_queue(tree: ApTree, source: ZcryptSource) -> None:
    source.sample()
    tree.bind_queue(1, 0x10, "vfio_ap", status="assigned")
    q = by_key(source.sample(), "zcrypt_queue")["01.0010"]
    assert q.attrs["driver"] == "vfio_ap"
    assert q.attrs["state"] == "vfio:assigned"
    assert q.values["request_count"] is None
    tree.bind_queue(1, 0x10, "cex4queue")
    q = by_key(source.sample(), "zcrypt_queue")["01.0010"]
    assert q.attrs["driver"] == "cex4queue"
    assert q.attrs["state"] == "online"
    assert q.values["request_count"] == 0


def test_cards_come_and_go(tree: ApTree, source: ZcryptSource) -> None:
    source.sample()
    tree.remove_card(3)
    s = source.sample()
    assert sorted(by_key(s, "zcrypt_card")) == ["01", "05"]
    assert not any(k.startswith("03.") for k in by_key(s, "zcrypt_queue"))
    tree.add_card(3, "CEX6A")
    tree.add_queue(3, 0x20)
    s = source.sample()
    assert by_key(s, "zcrypt_card")["03"].attrs["type"] == "CEX6A"
    assert "03.0020" in by_key(s, "zcrypt_queue")


def test_recreated_card_is_read_afresh(tree: ApTree, source: ZcryptSource) -> None:
    tree.advance(5, 0x10, 100)
    assert by_key(source.sample(), "zcrypt_card")["05"].values["request_count"] == 100
    tree.recreate_card(5)
    tree.advance(5, 0x10, 3)
    s = source.sample()
    assert by_key(s, "zcrypt_card")["05"].values["request_count"] == 3
    assert by_key(s, "zcrypt_queue")["05.0010"].values["request_count"] == 3


def test_state_changes(tree: ApTree, source: ZcryptSource) -> None:
    source.sample()
    tree.set_state(1, online=False)
    tree.set_state(3, 0x10, online=False)
    s = source.sample()
    assert by_key(s, "zcrypt_card")["01"].attrs["state"] == "offline"
    assert by_key(s, "zcrypt_queue")["03.0010"].attrs["state"] == "offline"
    tree.set_state(5, config=False)
    s = source.sample()
    assert by_key(s, "zcrypt_card")["05"].attrs["state"] == "deconfig"


def test_queue_config_is_read_on_its_own_schedule(tmp_path: Path) -> None:
    tree = build(tmp_path, cards=1, domains=1)
    lazy = ZcryptSource(SourceContext(root=tmp_path), state_refresh_s=3600)
    eager = ZcryptSource(SourceContext(root=tmp_path), state_refresh_s=0)
    lazy.sample()
    eager.sample()
    tree.set_state(1, 0x10, chkstop=True)
    assert by_key(eager.sample(), "zcrypt_queue")["01.0010"].attrs["state"] == "checkstop"
    # not yet due, nothing else changed: the lazy one still shows what it read
    assert by_key(lazy.sample(), "zcrypt_queue")["01.0010"].attrs["state"] == "online"
    tree.set_state(1, chkstop=True)  # the card's state changes: its queues are re-read
    s = lazy.sample()
    assert by_key(s, "zcrypt_queue")["01.0010"].attrs["state"] == "checkstop"


def test_features_that_print_nothing_are_none_without_a_warning(tmp_path: Path) -> None:
    """With QCI but none of APSC, APXA, QACT, RC8A, APSB, the kernel's ``features_show``
    (drivers/s390/crypto/ap_bus.c, 6.4 on) writes its newline past the length it returns:
    the file reads as 0 bytes."""
    build(tmp_path, cards=1, domains=1)
    (tmp_path / "sys/bus/ap/features").write_bytes(b"")
    warnings: list[str] = []
    sample = ZcryptSource(SourceContext(root=tmp_path, warn=warnings.append)).sample()
    assert by_key(sample, BUS.name)["ap"].attrs["features"] == ""
    assert not warnings


def test_old_kernel_without_load_config_chkstop(tmp_path: Path) -> None:
    build(tmp_path, cards=2, domains=2, old_kernel=True)
    warnings: list[str] = []
    s = ZcryptSource(SourceContext(root=tmp_path, warn=warnings.append)).sample()
    card = by_key(s, "zcrypt_card")["01"]
    assert card.values["load"] is None
    assert "config" not in card.attrs
    assert card.attrs["state"] == "online"
    bus = by_key(s, "zcrypt_bus")["ap"]
    assert bus.values["scans"] is None
    assert bus.values.get("bound_apqns") is None
    assert "features" not in bus.attrs
    assert not warnings


def test_card_without_zcrypt_driver_gets_type_from_hwtype(tmp_path: Path) -> None:
    tree = ApTree(tmp_path)
    tree.add_card(0x0A, "CEX7C", driver="")
    card = by_key(ZcryptSource(SourceContext(root=tmp_path)).sample(), "zcrypt_card")["0a"]
    assert card.attrs["type"] == "CEX7C"
    assert card.attrs["type_source"] == "hwtype"
    assert card.attrs["mode"] == "CCA"
    assert card.attrs["state"] == "-"
    assert "driver" not in card.attrs


def test_garbage_is_a_skipped_value_with_one_warning(
    tree: ApTree, source: ZcryptSource, warnings: list[str]
) -> None:
    source.sample()
    write_garbage(tree, "card01/01.0010/request_count", "12x4\n")
    write_garbage(tree, "card01/online", "yes\n")
    s = source.sample()
    assert by_key(s, "zcrypt_queue")["01.0010"].values["request_count"] is None
    assert "online" not in by_key(s, "zcrypt_card")["01"].attrs
    assert len(warnings) == 2
    assert all(w.startswith("zcrypt: skipped ") for w in warnings)
    assert any("01.0010/request_count: not a non-negative integer" in w for w in warnings)
    source.sample()
    assert len(warnings) == 2  # reported once, not every sample
    tree.advance(1, 0x10, 9)
    tree.set_state(1, online=True)
    s = source.sample()
    assert by_key(s, "zcrypt_queue")["01.0010"].values["request_count"] == 9
    assert by_key(s, "zcrypt_card")["01"].attrs["online"] == "1"


def test_garbage_on_the_bus(tree: ApTree, source: ZcryptSource) -> None:
    tree.set_bus("poll_timeout", "fast")
    tree.set_bus("bindings", "lots")
    bus = by_key(source.sample(), "zcrypt_bus")["ap"]
    assert bus.values["poll_timeout_ns"] is None
    assert "bindings" not in bus.attrs
    assert bus.values["ap_interrupts"] == 1


def test_never_reads_attributes_that_talk_to_the_card(
    tree: ApTree, source: ZcryptSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    del tree
    opened: list[str] = []
    writes: list[str] = []
    real_open = os.open

    def spy(path: str, flags: int, *args: int, **kwargs: int) -> int:
        opened.append(str(path))
        if flags & (os.O_WRONLY | os.O_RDWR):
            writes.append(str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy)
    source.sample()
    source.sample_gauges()
    forbidden = {"serialnr", "mkvps", "FW_version", "API_ordinalnr", "op_modes", "reset"}
    assert opened
    assert not [p for p in opened if p.rsplit("/", 1)[1] in forbidden]
    assert not writes


def test_descriptor_budget_does_not_change_values(tmp_path: Path, tree: ApTree) -> None:
    tree.advance(3, 0x11, 77)
    tree.set_depths(3, 0x11, 4, 5)
    samples = []
    for budget in (0, 5, 10_000):
        src = ZcryptSource(SourceContext(root=tmp_path), fd_budget=budget)
        samples.append(
            [(r.kind, r.key, dict(r.values), dict(r.attrs)) for r in src.sample().readings]
        )
        src.close()
    assert samples[0] == samples[1] == samples[2]


def test_sixteen_cards_sixteen_domains(tmp_path: Path) -> None:
    build(tmp_path, cards=16, domains=16)
    warnings: list[str] = []
    s = ZcryptSource(SourceContext(root=tmp_path, warn=warnings.append)).sample()
    assert len(by_key(s, "zcrypt_card")) == 16
    assert len(by_key(s, "zcrypt_queue")) == 256
    assert not warnings


_FILES = ("request_count", "requestq_count", "pendingq_count", "online", "config", "interrupt")


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    garbage=st.lists(
        st.tuples(
            st.sampled_from(_FILES),
            st.one_of(
                st.binary(max_size=30),
                st.text(string.printable, max_size=30).map(str.encode),
            ),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_any_garbage_never_crashes(
    tmp_path_factory: pytest.TempPathFactory, garbage: list[tuple[str, bytes]]
) -> None:
    root = tmp_path_factory.mktemp("ap")
    tree = build(root, cards=1, domains=2)
    src = ZcryptSource(SourceContext(root=root))
    src.sample()
    for name, content in garbage:
        write_garbage(tree, f"card01/01.0010/{name}", content)
        write_garbage(tree, f"card01/{name}" if name != "interrupt" else "card01/load", content)
    for sample in (src.sample(), src.sample_gauges()):
        assert sample is not None
        for reading in sample.all_readings():
            for value in reading.values.values():
                assert value is None or (isinstance(value, int) and value >= 0)
            assert all(isinstance(v, str) for v in reading.attrs.values())
    src.close()


@pytest.mark.parametrize(
    "raws",
    [
        [b"1_0\n", b"2\n"],  # int() takes these; the fast path must not
        [b" 5\n", b"2\n"],
        [b"+5\n", b"2\n"],
        [b"5", b"6\n7\n"],  # the right count of newlines, in the wrong files
        [b"\n", b"2\n"],
        [b"18446744073709551616\n", b"1\n"],  # 2**64
        [None, b"1\n"],
        [b"1\n\n", b"2"],
    ],
)
def test_gauges_parsed_at_once_only_when_each_file_is_a_plain_number(
    raws: list[bytes | None],
) -> None:
    assert _plain_uints(raws) is None


def test_gauges_parsed_at_once_are_the_values() -> None:
    assert _plain_uints([b"0\n", b"18446744073709551615\n", b"42\n"]) == [0, 2**64 - 1, 42]


def test_a_gauge_file_longer_than_a_number_is_read_whole(
    tree: ApTree, source: ZcryptSource, warnings: list[str]
) -> None:
    source.sample()
    write_garbage(tree, "card03/03.0010/requestq_count", b"0" * 70 + b"5\n")
    g = source.sample_gauges()
    assert g is not None
    assert by_key(g, "zcrypt_queue")["03.0010"].values["requestq_count"] == 5
    assert not warnings
