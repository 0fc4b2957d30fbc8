"""The exposition: names from the kind declarations, counters that sum the recorded deltas,
gauges, labels, the snapshot a scrape reads, the textfile and the HTTP endpoint."""

from __future__ import annotations

import importlib
import pkgutil
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

import esatui.collectors
from esatui.collectors.model import Kind
from esatui.db.records import EntityRow, Flag, Interval
from esatui.exposition.catalog import EXPOSED_KINDS, families
from esatui.exposition.doc import render
from esatui.exposition.exporter import Exporter
from esatui.exposition.serve import TEXTFILE_NAME, Exposition, Listen

ROOT = Path(__file__).resolve().parents[2]


def declared_kinds() -> dict[str, Kind]:
    """Every Kind any collector module declares."""
    found: dict[str, Kind] = {}
    for info in pkgutil.walk_packages(esatui.collectors.__path__, "esatui.collectors."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, Kind):
                found[value.name] = value
    return found


def test_every_kind_with_fields_is_exposed() -> None:
    exposed = {k.name for k in EXPOSED_KINDS}
    missing = {n for n, k in declared_kinds().items() if k.fields and n not in exposed}
    assert not missing


def test_every_field_is_in_one_family_and_names_are_unique() -> None:
    fams = families()
    names = [f.exposed for f in fams]
    assert len(names) == len(set(names))
    for kind in EXPOSED_KINDS:
        fields = [
            m.field.name
            for f in fams
            if f.kind == kind.name and not f.maximum
            for m in f.members
            if not m.derived
        ]
        assert sorted(fields) == sorted(f.name for f in kind.fields)


def test_every_attribute_and_maximum_a_screen_reads_is_exposed() -> None:
    """So every screen works on what Prometheus holds: an attribute on every series of its
    kind, or (one that changes) on its info family."""
    from esatui.exposition.catalog import ENTITY_LABELS
    from esatui.screens import catalog

    fams = families()
    for screen in catalog.screens().values():
        for reads in screen.reads:
            if reads.kind not in ENTITY_LABELS:
                continue  # a kind with nothing to expose
            labelled = {attr for _, attr in ENTITY_LABELS[reads.kind].labelled}
            assert set(reads.attrs) <= labelled, (screen.name, reads.kind)
            for field in reads.fields:
                if field.endswith("_max"):
                    gauge = field.removesuffix("_max")
                    assert any(
                        f.maximum and f.members[0].field.name == gauge
                        for f in fams
                        if f.kind == reads.kind
                    ), (screen.name, field)


def test_no_family_repeats_a_target_label() -> None:
    from esatui.exposition.catalog import TARGET_LABELS

    for family in families():
        labels = [*TARGET_LABELS, *family.labels]
        assert len(labels) == len(set(labels)), family.exposed


def test_the_issue_s_names_and_labels() -> None:
    by_name = {f.exposed: f for f in families()}
    assert {"cpu", "type", "mode"} <= set(by_name["esatui_cpu_seconds_total"].labels)
    assert {"card", "domain", "type"} <= set(by_name["esatui_zcrypt_requests_total"].labels)
    phases = {m.value for m in by_name["esatui_crypto_service_seconds_total"].members}
    assert {"VSERV", "NSERV", "RSERV", "DSERV"} <= phases
    sides = {m.value for m in by_name["esatui_crypto_operations_total"].members}
    assert sides == {"virt", "real"}
    assert "esatui_crypto_dequeues_total" in by_name
    assert "esatui_self_cpu_seconds_total" in by_name
    assert "esatui_lpar_processor_seconds_total" in by_name


def test_metrics_doc_is_in_step() -> None:
    assert (ROOT / "docs" / "METRICS.md").read_text() == render()


def test_the_metrics_table_lists_every_family_exposed() -> None:
    """``esatui metrics``: a row for every family a scrape may show, the recorder's own
    (its interval, the sources' measured seconds and newest intervals, the facts) too."""
    import re

    described = {m.name + ("_total" if m.type == "counter" else "") for m in Exporter().describe()}
    listed = set(re.findall(r"^\| `(esatui_\w+)` \|", render(), re.MULTILINE))
    assert listed == described
    assert {"esatui_recorder_interval_seconds", "esatui_config_info"} <= listed


def cpu_row(user_us: int | None, steal_us: int | None, flags: int = 0) -> EntityRow:
    attrs = {"type": "IFL", "type_source": "vmcp", "address": "0"}
    return EntityRow("cpu", "0", attrs, {"user_us": user_us, "steal_us": steal_us}, flags=flags)


def interval(end_s: int, *rows: EntityRow, source: str = "host") -> Interval:
    return Interval(
        source,
        "LNX1",
        (end_s - 60) * 1_000_000,
        end_s * 1_000_000,
        60_000_000,
        rows,
        config={"lpar_name": "LP01"},
    )


def exposed(exporter: Exporter) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the exposition, in OpenMetrics as Prometheus asks for it."""
    from prometheus_client import CollectorRegistry
    from prometheus_client.openmetrics.exposition import generate_latest as om_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(exporter)
    text = om_latest(registry).decode()  # type: ignore[no-untyped-call]
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in text_string_to_metric_families(text)  # type: ignore[no-untyped-call]
        for s in fam.samples
    }


def cpu_key(mode: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    labels = {
        "cpu": "0",
        "type": "IFL",
        "type_source": "vmcp",
        "address": "0",
        "mode": mode,
        "node": "LNX1",
        "lpar": "LP01",
        "zvm_system": "",
    }
    return ("esatui_cpu_seconds_total", tuple(sorted(labels.items())))


def test_counters_are_the_sum_of_the_recorded_deltas_in_seconds() -> None:
    exporter = Exporter()
    exporter.interval(interval(60, cpu_row(None, None, Flag.NEW)))
    assert cpu_key("user") not in exposed(exporter)  # no value yet: absent, never 0
    exporter.interval(interval(120, cpu_row(1_500_000, 100_000)))
    exporter.interval(interval(180, cpu_row(2_250_000, None)))  # steal not read: unchanged
    exporter.interval(interval(240, cpu_row(70_000, 30_000, Flag.RESET)))  # post-reset delta
    samples = exposed(exporter)
    assert samples[cpu_key("user")] == 3.82  # (1.5e6 + 2.25e6 + 7e4) µs, exactly
    assert samples[cpu_key("steal")] == 0.13


def test_gauges_are_the_latest_average_and_entities_that_leave_go() -> None:
    exporter = Exporter()
    card = EntityRow(
        "zcrypt_card", "0a", {"type": "CEX7A", "mode": "ACCEL"}, {"pending_count": 2.5}
    )
    exporter.interval(interval(60, card, source="zcrypt"))
    exporter.interval(interval(60, cpu_row(10, 10)))
    names = {name for name, _ in exposed(exporter)}
    assert "esatui_zcrypt_card_queued" in names
    exporter.interval(interval(120, source="zcrypt"))  # the card has gone
    names = {name for name, _ in exposed(exporter)}
    assert "esatui_zcrypt_card_queued" not in names
    assert "esatui_cpu_seconds_total" in names  # another source's series stay


def test_the_recorder_never_waits_for_a_scrape() -> None:
    exporter = Exporter()
    done = threading.Event()
    with exporter._lock:  # a scrape (or the textfile) in the middle of its work

        def record() -> None:
            exporter.interval(interval(60, cpu_row(None, None, Flag.NEW)))
            exporter.interval(interval(120, cpu_row(1, 1)))
            done.set()

        threading.Thread(target=record, daemon=True).start()
        assert done.wait(5)
    assert exposed(exporter)[cpu_key("user")] == 1e-6  # added by the next scrape


def test_textfile_and_http_endpoint(tmp_path: Path) -> None:
    shown = Exposition(Listen("127.0.0.1", 0), tmp_path, warn=pytest.fail)
    try:
        shown.interval(interval(120, cpu_row(1_000_000, 0)))
        prom = tmp_path / TEXTFILE_NAME
        assert not prom.exists()  # written after the pass: the recorder's own interval
        shown.interval(interval(120, source="esatui"))
        deadline = time.monotonic() + 5
        while not prom.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert 'esatui_cpu_seconds_total{address="0",cpu="0"' in prom.read_text()
        assert shown._server is not None
        port = shown._server.server_port
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/metrics",
            headers={"Accept": "application/openmetrics-text; version=1.0.0"},
        )
        with urllib.request.urlopen(request, timeout=5) as answer:
            assert answer.headers["Content-Type"].startswith("application/openmetrics-text")
            body = answer.read().decode()
        assert "# UNIT esatui_cpu_seconds seconds" in body
        assert body.rstrip().endswith("# EOF")
    finally:
        shown.close()


def test_a_name_filter_gives_those_families_as_the_library_s_app_does() -> None:
    """``/metrics?name[]=...`` is answered by prometheus_client's own app, which asks its
    registry for the collectors of those names: the exporter describes its families."""
    shown = Exposition(Listen("127.0.0.1", 0), warn=pytest.fail, interval_s=60.0)
    try:
        shown.interval(interval(120, cpu_row(1_000_000, 0)))
        shown.interval(interval(120, source="esatui"))
        assert shown._server is not None
        url = f"http://127.0.0.1:{shown._server.server_port}/metrics"
        query = "name[]=esatui_cpu_seconds_total&name[]=esatui_recorder_interval_seconds"
        with urllib.request.urlopen(f"{url}?{query}", timeout=5) as answer:
            body = answer.read().decode()
        samples = {line.split("{")[0] for line in body.splitlines() if not line.startswith("#")}
        assert samples == {"esatui_cpu_seconds_total", "esatui_recorder_interval_seconds"}
    finally:
        shown.close()


def test_listen_in_use_is_one_line(tmp_path: Path) -> None:
    first = Exposition(Listen("127.0.0.1", 0))
    try:
        assert first._server is not None
        with pytest.raises(RuntimeError, match=r"cannot listen on 127\.0\.0\.1:"):
            Exposition(Listen("127.0.0.1", first._server.server_port))
    finally:
        first.close()
    with pytest.raises(RuntimeError, match="not a directory"):
        Exposition(None, tmp_path / "missing")


def unwritable(tmp_path: Path) -> Path:
    """A directory no file can be made in (root writes in any mode bits: sysfs then)."""
    import os

    if os.geteuid() == 0:
        return Path("/sys")
    shut = tmp_path / "shut"
    shut.mkdir(mode=0o555)
    return shut


@pytest.mark.parametrize(
    ("where", "code", "why"),
    [
        ("", 2, "an empty name"),
        ("missing", 2, "no such directory"),
        ("file", 2, "not a directory"),
        ("unwritable", 1, "cannot write there"),
    ],
)
def test_textfile_is_refused_before_anything_is_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, code: int, why: str
) -> None:
    """--textfile DIR that cannot be written: one line and an exit status at the start (2 for
    a bad name, 1 for a directory that refuses), as --listen on a port in use, not a warning
    every interval while collect records and exits 0 ('' was taken as '.')."""
    from esatui.cli import main

    (tmp_path / "file").write_text("")
    directory = {
        "": "",
        "missing": str(tmp_path / "missing"),
        "file": str(tmp_path / "file"),
        "unwritable": str(unwritable(tmp_path)),
    }[where]
    db = tmp_path / "rec.sqlite"
    argv = ["collect", "--source", "sim:mode-vm-day", "--interval", "1", "--count", "1"]
    argv += ["--db", str(db), "--textfile", directory]
    try:
        got = main(argv)
    except SystemExit as exited:  # argparse's refusal of an argument
        got = int(str(exited.code))
    err = capsys.readouterr().err
    assert got == code and why in err.splitlines()[-1]
    assert "Traceback" not in err and not db.exists()


@pytest.mark.parametrize(
    ("text", "want"),
    [("9650", ("127.0.0.1", 9650)), ("0.0.0.0:80", ("0.0.0.0", 80)), ("[::1]:9", ("::1", 9))],
)
def test_listen_argument(text: str, want: tuple[str, int]) -> None:
    from esatui.commands.arguments import listen

    assert listen(text) == want


@pytest.mark.parametrize("text", ["x", "host:", "70000", "h:0"])
def test_listen_argument_refused(text: str) -> None:
    import argparse

    from esatui.commands.arguments import listen

    with pytest.raises(argparse.ArgumentTypeError):
        listen(text)


def family_values(exporter: Exporter, name: str, by: str) -> dict[str, float]:
    """One family's samples, by the value of one label."""
    return {
        dict(labels)[by]: value
        for (sample, labels), value in exposed(exporter).items()
        if sample == name
    }


def lcpu_row(flags: int = 0, **values: int) -> EntityRow:
    attrs = {"type": "IFL", "lpar": "LP01", "type_source": "monitor"}
    return EntityRow("lcpu", "0", attrs, dict(values), flags=flags)


MODES = "esatui_lpar_processor_seconds_total"


def test_a_processor_s_modes_are_its_online_time_as_esacpuu_splits_it() -> None:
    """The monitor records steal_us as the time PR/SM did not dispatch the processor (its
    idle wait included): the modes are emul, user, syst, idle and the steal ESACPUU shows,
    which add up to the online time; the raw time and management have families of their
    own."""
    from esatui.db.slots import EntityData
    from esatui.screens.esacpuu import lcpu_percentages

    recorded = {
        "elapsed_us": 60_000_000,
        "emul_us": 10_000_000,
        "user_us": 5_000_000,
        "syst_us": 3_000_000,
        "idle_us": 41_000_000,
        "steal_us": 42_000_000,  # D0R16: online less dispatched, the idle wait included
        "mgmt_us": 500_000,
    }
    exporter = Exporter()
    exporter.interval(interval(60, lcpu_row(**recorded), source="monitor"))
    modes = family_values(exporter, MODES, "mode")
    assert modes == {"emul": 10.0, "user": 5.0, "syst": 3.0, "idle": 41.0, "steal": 1.0}
    online = family_values(exporter, "esatui_lpar_processor_online_seconds_total", "source")
    assert sum(modes.values()) == online["monitor"] == 60.0
    screen = lcpu_percentages(EntityData("0", {}, recorded, 0, 1), 60_000_000)
    steal = screen["steal"]
    assert steal is not None and modes["steal"] == pytest.approx(steal * 60 / 100)
    raw = family_values(exporter, "esatui_lpar_processor_not_dispatched_seconds_total", "source")
    assert raw == {"monitor": 42.0}
    mgmt = family_values(exporter, "esatui_lpar_processor_management_seconds_total", "source")
    assert mgmt == {"monitor": 0.5}
    # busy and idle above the elapsed time (a record's rounding): no steal, never negative
    recorded["idle_us"] = 43_000_000
    exporter.interval(interval(120, lcpu_row(**recorded), source="monitor"))
    assert family_values(exporter, MODES, "mode")["steal"] == 1.0


def test_a_source_that_gives_no_idle_exposes_no_steal_mode() -> None:
    """hypfs' online time less dispatched holds the idle wait: it cannot be ESACPUU's steal
    (the screen shows '.'), so it is only the not-dispatched family."""
    exporter = Exporter()
    row = lcpu_row(elapsed_us=60_000_000, busy_us=20_000_000, steal_us=40_000_000, mgmt_us=1)
    exporter.interval(interval(60, row, source="hypfs"))
    assert family_values(exporter, MODES, "mode") == {"busy": 20.0}
    raw = family_values(exporter, "esatui_lpar_processor_not_dispatched_seconds_total", "source")
    assert raw == {"hypfs": 40.0}
    exporter.interval(interval(120, lcpu_row(Flag.NEW), source="monitor"))  # nothing yet
    assert "monitor" not in family_values(exporter, MODES, "source")


def test_the_derived_steal_is_never_read_back_as_a_field() -> None:
    """esatui --prometheus reads the modes back into the recorded fields; the steal mode is
    the screen's own computation (and an unknown mode no field at all)."""
    from esatui.exposition.prometheus_reader import _field

    family = next(f for f in families() if f.exposed == MODES)
    assert _field(family, {"mode": "idle"}) == ("idle_us", None)
    assert _field(family, {"mode": "steal"}) is None
    assert _field(family, {"mode": "other"}) is None
    raw = next(f for f in families() if f.exposed.endswith("not_dispatched_seconds_total"))
    assert _field(raw, {}) == ("steal_us", None)


def test_the_lpar_label_of_the_host_source_alone() -> None:
    """docs/METRICS.md: the LPAR from /proc/sysinfo (the host source's ``lpar.name``)."""
    from esatui.collectors.cpuinfo import parse_cpuinfo
    from esatui.collectors.host import host_config
    from esatui.collectors.sysinfo import parse_sysinfo

    data = ROOT / "tests" / "data" / "host"
    sysinfo = parse_sysinfo((data / "sysinfo-zvm72-guest-z15-8561-ansible.txt").read_text())
    config = host_config(sysinfo, parse_cpuinfo(""), "lnx1")
    exporter = Exporter()
    exporter.interval(
        Interval("host", "LNX1", 0, 60_000_000, 60_000_000, (cpu_row(1, 1),), config=config)
    )
    assert {dict(labels)["lpar"] for (_, labels) in exposed(exporter)} == {"L32"}


def test_every_help_says_what_the_exposed_value_is() -> None:
    """A field's doc says what its source reads; the HELP is of the value exposed: ratios
    are no percentages, seconds no raw units or nanoseconds, counters count from the
    recorder's start (the sum of its deltas), not from a device's creation or the boot."""
    for family in families():
        help_text = family.help.lower()
        if family.unit == "ratio":
            assert "%" not in help_text, family.exposed
        if family.unit == "seconds":
            assert "in raw units" not in help_text and "ns)" not in help_text, family.exposed
        if family.type.value == "counter":
            for claim in ("since boot", "since the device", "operations operations"):
                assert claim not in help_text, family.exposed
    by_name = {f.exposed: f.help for f in families()}
    assert by_name["esatui_zcrypt_requests_total"].endswith("since the recorder started")
    assert "ratio" in by_name["esatui_lpar_processor_busy_ratio"]
    # review: these sentences sat in the table of metric names, where nothing read them
    assert "counted in user time already" in by_name["esatui_cpu_guest_seconds_total"]


def test_a_source_that_stops_leaves_the_exposition_and_says_since_when() -> None:
    """A hung source's last values are not served as fresh: after two of its intervals
    without one its series leave (not after one: a polled source that misses a deadline
    closes its next interval late), the timestamp of its newest interval stays, and its
    counters go on from where they were when it comes back."""
    from esatui.exposition.exporter import LAST_END_METRIC

    exporter = Exporter()

    def recorded(end_s: int, *rows: EntityRow) -> None:
        if rows:
            exporter.interval(interval(end_s, *rows))
        exporter.interval(interval(end_s, source="esatui"))  # the pass's own, last

    def shown() -> tuple[set[str], dict[str, float]]:
        samples = exposed(exporter)
        sources = {
            dict(labels).get("source", "")
            for (name, labels) in samples
            if name == "esatui_source_measured_seconds_total"
        }
        return sources, family_values(exporter, LAST_END_METRIC, "source")

    recorded(60, cpu_row(None, None, Flag.NEW))
    recorded(120, cpu_row(1_000_000, 0))
    assert shown() == ({"host", "esatui"}, {"host": 120.0, "esatui": 120.0})
    recorded(180)  # one pass missed: late, not stale
    assert exposed(exporter)[cpu_key("user")] == 1.0
    recorded(240)
    sources, ends = shown()
    assert sources == {"esatui"} and ends == {"host": 120.0, "esatui": 240.0}
    assert cpu_key("user") not in exposed(exporter)
    recorded(300, cpu_row(500_000, 0))
    assert exposed(exporter)[cpu_key("user")] == 1.5
    assert shown()[1]["host"] == 300.0


def test_guest_time_is_a_family_of_its_own() -> None:
    """/proc/stat's guest time is in user already (guest_nice in nice): among the modes of
    esatui_cpu_seconds_total it counted twice (a KVM host's CPU over 1 s a second). It is
    esatui_cpu_guest_seconds_total, as node_exporter's node_cpu_guest_seconds_total, and
    esatui --prometheus reads it back into its fields."""
    from esatui.exposition.prometheus_reader import _field

    attrs = {"type": "IFL", "type_source": "vmcp", "address": "0"}
    values = {"user_us": 40_000_000, "idle_us": 20_000_000, "guest_us": 30_000_000}
    exporter = Exporter()
    exporter.interval(interval(60, EntityRow("cpu", "0", attrs, {**values, "guest_nice_us": 0})))
    modes = family_values(exporter, "esatui_cpu_seconds_total", "mode")
    assert modes == {"user": 40.0, "idle": 20.0}
    guest = family_values(exporter, "esatui_cpu_guest_seconds_total", "mode")
    assert guest == {"user": 30.0, "nice": 0.0}
    family = next(f for f in families() if f.exposed == "esatui_cpu_guest_seconds_total")
    assert _field(family, {"mode": "user"}) == ("guest_us", None)
    assert _field(family, {"mode": "nice"}) == ("guest_nice_us", None)


def queue_row(
    state: str, requests: int | None, flags: int = 0, card_type: str = "CEX7A"
) -> EntityRow:
    attrs = {
        "card": "01",
        "domain": "0010",
        "type": card_type,
        "mode": "ACCEL",
        "online": "1" if state == "online" else "0",
        "state": state,
        "driver": "cex4queue",
    }
    values = {"request_count": requests, "pending_count": 0.5}
    return EntityRow("zcrypt_queue", "01.0010", attrs, values, flags=flags)


def text_of(exporter: Exporter) -> list[str]:
    """The sample lines of the Prometheus text format, as node_exporter's textfile holds."""
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(exporter)
    text = generate_latest(registry).decode()
    return [line for line in text.splitlines() if line.startswith("esatui_zcrypt")]


QUEUE_LABELS = 'card="01",domain="0010",lpar="LP01",node="LNX1",type="CEX7A",zvm_system=""'


def test_a_queue_that_goes_offline_keeps_its_counter_series() -> None:
    """The state is the info family's label alone: the counter and the gauge keep their one
    series and their totals through the change; the info series is the new state's."""
    exporter = Exporter()
    exporter.interval(interval(60, queue_row("online", None, Flag.NEW), source="zcrypt"))
    exporter.interval(interval(120, queue_row("online", 500), source="zcrypt"))
    before = text_of(exporter)
    exporter.interval(interval(180, queue_row("offline", 300), source="zcrypt"))
    info = 'esatui_zcrypt_info{card="01",domain="0010",interrupt="",lpar="LP01",mode="ACCEL",'
    assert before == [
        f'{info}node="LNX1",online="1",state="online",type="CEX7A",zvm_system=""}} 1.0',
        f"esatui_zcrypt_requests_total{{{QUEUE_LABELS}}} 500.0",
        f"esatui_zcrypt_queued{{{QUEUE_LABELS}}} 0.5",
    ]
    assert text_of(exporter) == [
        f'{info}node="LNX1",online="0",state="offline",type="CEX7A",zvm_system=""}} 1.0',
        f"esatui_zcrypt_requests_total{{{QUEUE_LABELS}}} 800.0",
        f"esatui_zcrypt_queued{{{QUEUE_LABELS}}} 0.5",
    ]
    exporter.interval(interval(240, queue_row("online", 100), source="zcrypt"))
    assert f"esatui_zcrypt_requests_total{{{QUEUE_LABELS}}} 900.0" in text_of(exporter)


def test_a_device_re_created_as_another_type_is_new_series() -> None:
    """type is the device's identity: the kernel re-creates a card whose type or functions
    change (its counters from 0), and esatui's series start again with it."""
    exporter = Exporter()
    exporter.interval(interval(60, queue_row("online", 500), source="zcrypt"))
    exporter.interval(interval(120, queue_row("online", 7, card_type="CEX7C"), source="zcrypt"))
    requests = [line for line in text_of(exporter) if "_requests_total" in line]
    relabelled = QUEUE_LABELS.replace('type="CEX7A"', 'type="CEX7C"')
    assert requests == [f"esatui_zcrypt_requests_total{{{relabelled}}} 7.0"]


def test_a_measurement_block_keeps_its_series_through_a_mode_change() -> None:
    """crypto_ap: mode (the card reconfigured on the SE) is its info family's; type and the
    block's scale, which convert its raw times to seconds, stay on every series."""
    exporter = Exporter()

    def block(mode: str, count: int) -> EntityRow:
        attrs = {"type": "13", "mode": mode, "scale": "0.5", "valid": "ffffffff", "layout": "x"}
        values = {"rsa2048_crt_count": count, "rsa2048_crt_time": 2 * count}
        return EntityRow("crypto_ap", "0a", attrs, values)

    exporter.interval(interval(60, block("accel", 10), source="monitor"))
    exporter.interval(interval(120, block("cca", 5), source="monitor"))
    samples = exposed(exporter)
    count = {k: v for k, v in samples.items() if k[0] == "esatui_crypto_ap_operations_total"}
    assert list(count.values()) == [15.0]
    (labels,) = [dict(k[1]) for k in count]
    assert "mode" not in labels and labels["scale"] == "0.5" and labels["type"] == "13"
    busy = [v for k, v in samples.items() if k[0] == "esatui_crypto_ap_busy_seconds_total"]
    assert busy == [15.0]  # 30 raw units of 0.5 s
    modes = [dict(k[1])["mode"] for k in samples if k[0] == "esatui_crypto_ap_info"]
    assert modes == ["cca"]


def test_an_entity_that_comes_back_goes_on_from_its_totals() -> None:
    """A CPU set offline and online again: its counters go on from where they were, so
    a range over its absence (a bucket read from Prometheus) is the deltas recorded in it,
    not the new total less the old one."""
    exporter = Exporter()
    exporter.interval(interval(60, cpu_row(None, None, Flag.NEW)))
    exporter.interval(interval(120, cpu_row(5_000_000, 0)))
    exporter.interval(interval(180))  # offline
    assert cpu_key("user") not in exposed(exporter)
    exporter.interval(interval(240, cpu_row(None, None, Flag.NEW)))
    exporter.interval(interval(300, cpu_row(1_000_000, 0)))
    assert exposed(exporter)[cpu_key("user")] == 6.0
