"""The cached exposition: the bytes prometheus_client's encoders give, made once per interval."""

from __future__ import annotations

import functools
import gzip
import urllib.request
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, exposition
from prometheus_client.openmetrics import exposition as openmetrics

from esatui.db.records import EntityRow, Interval
from esatui.exposition.cache import ExpositionCache
from esatui.exposition.exporter import Exporter
from esatui.exposition.serve import Exposition, Listen

ENCODERS: dict[str, Callable[..., bytes]] = {
    "openmetrics": openmetrics.generate_latest,
    "text": exposition.generate_latest,
    "text, UTF-8 names": functools.partial(
        exposition.generate_latest, escaping=openmetrics.ALLOWUTF8
    ),
}

# label values as collectors may read them: quotes, backslashes, newlines, other line ends
LABEL = st.text(alphabet=st.sampled_from('aZ09 "\\\n\r\x1c\u2028é_-.'), max_size=6)
COUNT = st.integers(min_value=0, max_value=10**15)
GAUGE = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**12), max_value=10**12),
)


@st.composite
def intervals(draw: st.DrawFn) -> list[Interval]:
    """A few intervals of CPUs and cards that come, go and change their labels."""
    out: list[Interval] = []
    keys = draw(st.lists(LABEL, min_size=1, max_size=3, unique=True))
    for n in range(draw(st.integers(min_value=1, max_value=4))):
        rows: list[EntityRow] = []
        for key in draw(st.lists(st.sampled_from(keys), unique=True)):
            attrs = {"type": draw(st.sampled_from(["IFL", "CP"])), "address": draw(LABEL)}
            rows.append(
                EntityRow("cpu", key, attrs, {"user_us": draw(st.none() | COUNT), "idle_us": 7})
            )
            card = {"type": draw(LABEL), "mode": "ACCEL"}
            rows.append(EntityRow("zcrypt_card", key, card, {"pending_count": draw(GAUGE)}))
        end_us = (n + 1) * 60_000_000
        config = {"lpar_name": draw(LABEL)} if draw(st.booleans()) else None
        out.append(
            Interval(
                "host", "node1", end_us - 60_000_000, end_us, 60_000_000, tuple(rows), 0, config
            )
        )
    return out


@settings(max_examples=150, deadline=None)
@given(intervals())
def test_the_bytes_are_the_encoders(recorded: list[Interval]) -> None:
    exporter = Exporter(60.0)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(exporter)
    cache = ExpositionCache(exporter)
    for interval in recorded:
        exporter.interval(interval)
        for name, encoder in ENCODERS.items():
            assert cache.body(name, encoder) == encoder(registry), name


def test_made_once_per_interval() -> None:
    """The encoder formats a shape once; after that only values are formatted."""
    calls: list[object] = []

    def encoder(collector: object) -> bytes:
        calls.append(collector)
        return openmetrics.generate_latest(collector)  # type: ignore[no-any-return, no-untyped-call]

    exporter = Exporter()
    cache = ExpositionCache(exporter)
    row = EntityRow("cpu", "0", {"type": "IFL"}, {"user_us": 1_000_000})
    exporter.interval(Interval("host", "n", 0, 60_000_000, 60_000_000, (row,)))
    first = cache.body("om", encoder)
    assert cache.body("om", encoder) is first  # nothing new: as made
    assert gzip.decompress(cache.body("om", encoder, gzipped=True)) == first
    exporter.interval(Interval("host", "n", 60_000_000, 120_000_000, 60_000_000, (row,)))
    second = cache.body("om", encoder)
    assert len(calls) == 1  # the second interval: the template's
    assert b'mode="user",node="n",type="IFL",type_source="",zvm_system=""} 2.0\n' in second


def test_an_attribute_that_is_no_label_keeps_the_count() -> None:
    """A new series starts only when a label changes: else Prometheus would see a reset."""
    exporter = Exporter()
    registry = CollectorRegistry(auto_describe=False)
    registry.register(exporter)
    for n, (cpu_type, other) in enumerate([("IFL", "a"), ("IFL", "b"), ("CP", "b")]):
        row = EntityRow("cpu", "0", {"type": cpu_type, "unused": other}, {"user_us": 1_000_000})
        exporter.interval(Interval("host", "n", 0, (n + 1) * 60_000_000, 60_000_000, (row,)))
        text = openmetrics.generate_latest(registry).decode()  # type: ignore[no-untyped-call]
        user = [line for line in text.splitlines() if 'mode="user"' in line]
        assert len(user) == 1
        assert user[0].endswith(" 2.0" if n == 1 else " 1.0"), (n, user)


def test_a_scrape_gzipped_and_plain() -> None:
    shown = Exposition(Listen("127.0.0.1", 0))
    try:
        row = EntityRow("cpu", "0", {"type": "IFL"}, {"user_us": 1_000_000})
        shown.interval(Interval("host", "n", 0, 60_000_000, 60_000_000, (row,)))
        assert shown._server is not None
        url = f"http://127.0.0.1:{shown._server.server_port}/metrics"
        asked = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(asked, timeout=5) as answer:
            assert answer.headers["Content-Encoding"] == "gzip"
            assert answer.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            text = gzip.decompress(answer.read())
        assert text == exposition.generate_latest(shown.registry)
        with urllib.request.urlopen(url + "?name[]=esatui_cpu_seconds_total", timeout=5) as answer:
            assert b"esatui_config_info" not in answer.read()  # the library's filter
    finally:
        shown.close()
