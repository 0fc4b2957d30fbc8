"""Against a real Prometheus: three simulated nodes scraped, their counters queried back.

Three ``esatui collect --source sim:... --listen`` recorders (2 s intervals, the simulated
CP's monitor at the same interval) are scraped every second by the distribution's
``prometheus`` (installed by ``make test``: .ci/system-deps; this test fails, never skips,
without it), configured from contrib/prometheus.yml. Through Prometheus's HTTP API,
``increase()`` over each 10 s bucket matches the node's own ``esatui export`` of that
bucket within a scrape's rounding (docs/METRICS.md), and every query of
contrib/grafana-esatui.json returns data for every node.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
# node2 pages encrypted (z/VM 6.4, D3R2), so ESAPAGE has a node to compare; node3 is z/VM 6.3
NODES = {"node1": "seed002-t3-polling", "node2": "seed003-t3-medium", "node3": "mode-vm-day"}
INTERVAL_S = 2
BUCKET_S = 10
SCRAPE_S = 1
RECORD_S = 32  # long enough for two whole buckets after the first scrapes

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Fleet:
    url: str
    dbs: dict[str, Path]
    stopped_at: float

    def query(self, expr: str, at: float) -> list[dict[str, Any]]:
        params = urllib.parse.urlencode({"query": expr, "time": f"{at:.3f}"})
        with urllib.request.urlopen(f"{self.url}/api/v1/query?{params}", timeout=10) as r:
            answer = json.load(r)
        assert answer["status"] == "success", answer
        result: list[dict[str, Any]] = answer["data"]["result"]
        return result


def prometheus_binary() -> str:
    found = shutil.which("prometheus")
    if found is None:
        pytest.fail(
            "prometheus is not installed: `make test` installs it (.ci/system-deps, as root: "
            "apt-get install -y --no-install-recommends prometheus)"
        )
    return found


def wait_until(check: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}")


def start_prometheus(tmp: Path, ports: list[int]) -> tuple[subprocess.Popen[bytes], str]:
    """The distribution's Prometheus on loopback, scraping ``ports`` (its data below
    ``tmp``): the process and its URL."""
    config = tmp / "prometheus.yml"
    config.write_text(scrape_config(ports))
    web = free_port()
    server = subprocess.Popen(
        [
            prometheus_binary(),
            f"--config.file={config}",
            f"--storage.tsdb.path={tmp / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{web}",
            "--log.level=warn",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return server, f"http://127.0.0.1:{web}"


def scrape_config(ports: list[int]) -> str:
    """contrib/prometheus.yml, pointed at the test's nodes and scraping every second."""
    text = (ROOT / "contrib" / "prometheus.yml").read_text()
    targets = ", ".join(f"'127.0.0.1:{p}'" for p in ports)
    text = text.replace("scrape_interval: 30s", f"scrape_interval: {SCRAPE_S}s")
    text = text.replace("scrape_timeout: 10s", f"scrape_timeout: {SCRAPE_S}s")
    lines = [
        f"      - targets: [{targets}]" if "- targets:" in line else line
        for line in text.splitlines()
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    prometheus_binary()  # before any recorder starts
    tmp = tmp_path_factory.mktemp("fleet")
    env = {**os.environ, "TZ": "UTC"}
    ports = [free_port() for _ in NODES]
    dbs = {node: tmp / f"{node}.sqlite" for node in NODES}
    recorders = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "esatui",
                "collect",
                "--source",
                f"sim:{scenario}",
                "--interval",
                str(INTERVAL_S),
                "--hf",
                "1",
                "--node",
                node,
                "--db",
                str(dbs[node]),
                "--listen",
                f"127.0.0.1:{port}",
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for (node, scenario), port in zip(NODES.items(), ports, strict=True)
    ]
    server, url = start_prometheus(tmp, ports)
    try:
        wait_until(
            lambda: urllib.request.urlopen(f"{url}/-/ready", timeout=2).status == 200,
            30,
            "Prometheus to be ready",
        )
        time.sleep(RECORD_S)
        for recorder in recorders:
            assert recorder.poll() is None, "a recorder stopped early"
            recorder.send_signal(signal.SIGTERM)
        stopped_at = time.time()
        for recorder in recorders:
            recorder.wait(timeout=30)
        yield Fleet(url, dbs, stopped_at)
    finally:
        for process in (*recorders, server):
            if process.poll() is None:
                process.kill()
                process.wait()


def exported_zcrypt_requests(db: Path, end_s: int) -> tuple[float, float]:
    """The node's own export of the bucket ending at ``end_s``: requests in it, and the
    most one interval at either side of its ends held (the rounding a scrape's timing
    allows: such an interval can fall on either side)."""
    env = {**os.environ, "TZ": "UTC"}

    def export(start_s: int, stop_s: int, *extra: str) -> list[dict[str, Any]]:
        when = [
            datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S") for t in (start_s, stop_s)
        ]
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "esatui",
                "export",
                "ESASSUM",
                "--db",
                str(db),
                "--from",
                when[0],
                "--to",
                when[1],
                "--format",
                "json",
                *extra,
            ],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        rows: list[dict[str, Any]] = json.loads(out)["rows"]
        return rows

    bucket = export(end_s - BUCKET_S, end_s, "--interval-len", f"{BUCKET_S}s")
    assert len(bucket) == 1
    intervals = export(end_s - BUCKET_S - INTERVAL_S, end_s + INTERVAL_S)
    most = max(r["zcrypt_req_s"] for r in intervals) * INTERVAL_S
    return bucket[0]["zcrypt_req_s"] * BUCKET_S, most


def first_end_s(db: Path) -> float:
    import sqlite3

    with sqlite3.connect(db) as c:
        (end_us,) = c.execute("SELECT min(end_us) FROM interval").fetchone()
    return float(end_us) / 1e6


def test_increase_matches_each_node_s_export(fleet: Fleet) -> None:
    """Prometheus's increase() over a bucket against the node's export of it. They differ by
    a scrape's rounding: increase() takes the samples inside the range and extrapolates their
    span to its ends (Prometheus's documented behaviour: here by up to a scrape interval at
    each end, a tenth of the range), and an interval that ends near a range's end can fall
    on either side of it. A counter's first interval is in no increase() (Prometheus needs
    a sample before it): buckets start after the first scrapes. The exact read-back is
    test_every_screen_from_prometheus_is_its_sqlite_export's."""
    last = math.floor((fleet.stopped_at - 2 * SCRAPE_S) / BUCKET_S) * BUCKET_S
    warm = max(first_end_s(db) for db in fleet.dbs.values()) + 2 * SCRAPE_S
    buckets = [end for end in (last - BUCKET_S, last) if end - BUCKET_S >= warm]
    assert buckets, "no whole bucket after the first scrapes: record longer"
    checked, wanted = 0, 0.0
    for end_s in buckets:
        # the bucket's intervals are scraped within a second of their ends: look a scrape later
        at = end_s + SCRAPE_S
        result = fleet.query(
            f"sum by (node) (increase(esatui_zcrypt_requests_total[{BUCKET_S}s]))", at
        )
        got = {r["metric"]["node"]: float(r["value"][1]) for r in result}
        assert set(got) == set(NODES)
        for node, db in fleet.dbs.items():
            # mode-vm-day's guests are quiet at night (UTC: its profile's hours): a bucket
            # of theirs may hold no request, which must then be Prometheus's answer too
            want, one_interval = exported_zcrypt_requests(db, end_s)
            wanted += want
            extrapolated = 2 * SCRAPE_S / BUCKET_S * max(want, got[node])
            assert abs(got[node] - want) <= 2 * one_interval + extrapolated, (
                node,
                end_s,
                got[node],
                want,
            )
            checked += 1
    assert checked == len(buckets) * len(NODES)
    assert wanted > 0, "no request in any bucket: nothing was compared"


def test_every_dashboard_query_returns_data_for_every_node(fleet: Fleet) -> None:
    dashboard = json.loads((ROOT / "contrib" / "grafana-esatui.json").read_text())
    titles = " ".join(p["title"] for p in dashboard["panels"])
    for screen in ("ESACPUU", "ESACRYPT", "ESAPOLL", "ESACRYQ"):
        assert screen in titles
    at = fleet.stopped_at - 2 * SCRAPE_S
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            expr = (
                target["expr"]
                .replace("$__rate_interval", f"{BUCKET_S}s")
                .replace("$node", ".*")
                .replace("$lcpu_source", "monitor")
            )
            nodes = {r["metric"].get("node") for r in fleet.query(expr, at)}
            assert nodes == set(NODES), (panel["title"], expr, nodes)


def test_every_processor_view_of_the_dashboard_shows_busy(fleet: Fleet) -> None:
    """The "Processor view" choices: each source the simulated systems have (the monitor,
    SMAPI, vmcp; hypfs needs an LPAR) gives busy for every node, SMAPI's for the node's
    own LPAR only (it reports every LPAR's processors, as ESACPUU shows its own); steal is
    the monitor's alone (the others cannot tell a wait from steal)."""
    dashboard = json.loads((ROOT / "contrib" / "grafana-esatui.json").read_text())
    views = next(v for v in dashboard["templating"]["list"] if v["name"] == "lcpu_source")
    choices = [o["value"] for o in views["options"]]
    assert choices == ["monitor", "hypfs", "smapi", "vmcp"]
    panel = next(p for p in dashboard["panels"] if p["title"].startswith("ESACPUU"))
    at = fleet.stopped_at - 2 * SCRAPE_S
    for choice in choices:
        for target in panel["targets"]:
            expr = (
                target["expr"]
                .replace("$__rate_interval", f"{BUCKET_S}s")
                .replace("$node", ".*")
                .replace("$lcpu_source", choice)
            )
            found = fleet.query(expr, at)
            shows = choice != "hypfs" and ("steal" not in expr or choice == "monitor")
            assert {r["metric"]["node"] for r in found} == (set(NODES) if shows else set()), (
                choice,
                expr,
            )
            if choice == "smapi":
                for r in found:  # the node's own processors, each at most one busy
                    node = json.dumps(r["metric"]["node"])
                    own = f'{{node={node},source="monitor"}}'
                    count = fleet.query(
                        f"count(esatui_lpar_processor_online_seconds_total{own})", at
                    )
                    assert float(r["value"][1]) <= 100 * float(count[0]["value"][1]), r


def test_a_processor_s_modes_add_up_to_its_online_time(fleet: Fleet) -> None:
    """As ESACPUU's total + idle + steal = 100: the steal mode is what is left after busy and
    idle, not the monitor's time undispatched (which holds the idle wait: docs/METRICS.md)."""

    def summed(family: str) -> str:
        return f"sum by (node, processor) (increase(esatui_lpar_processor_{family}[{BUCKET_S}s]))"

    ratios = fleet.query(
        f"{summed('seconds_total')} / {summed('online_seconds_total')}",
        fleet.stopped_at - 2 * SCRAPE_S,
    )
    assert {r["metric"]["node"] for r in ratios} == set(NODES)
    for r in ratios:
        assert 0.99 <= float(r["value"][1]) <= 1.01, r


STALE_ALERTS = (
    "time() - esatui_source_last_interval_end_timestamp_seconds > ignoring (source) "
    "group_left 3 * esatui_recorder_interval_seconds",
    'time() - node_textfile_mtime_seconds{file=~"(.*/)?esatui.prom"} > 180',
)


def test_the_staleness_alerts_of_the_docs_are_quiet_while_sources_record(fleet: Fleet) -> None:
    """docs/METRICS.md's alerts on a source's age: valid PromQL, and no node of the fleet
    (every source recording) in them; the age of every node's sources is there."""
    doc = " ".join((ROOT / "docs" / "METRICS.md").read_text().split())
    at = fleet.stopped_at - 2 * SCRAPE_S
    for expr in STALE_ALERTS:
        assert expr in doc
        assert fleet.query(expr, at) == [], expr
    ends = fleet.query("esatui_source_last_interval_end_timestamp_seconds", at)
    assert {(r["metric"]["node"], r["metric"]["source"]) for r in ends} >= {
        (node, source) for node in NODES for source in ("esatui", "monitor")
    }
    for r in ends:
        assert at - float(r["value"][1]) < 3 * INTERVAL_S, r


DOC_QUERIES = {
    # one view per z/VM system of what every guest of it exports
    "sum by (zvm_system) (max by (zvm_system, phase) "
    "(rate(esatui_crypto_service_seconds_total[5m])))": ("zvm_system", "zvm_system"),
    # a virtual CPU's real type, from z/VM
    'sum by (node, vcpu_type) (rate(esatui_cpu_seconds_total{mode!~"idle|iowait|steal"}[5m]) '
    "* on (node, address) group_left (vcpu_type) label_replace(label_replace(esatui_vcpu_info, "
    '"address", "$1", "vcpu", "(.+)"), "vcpu_type", "$1", "type", "(.+)"))': ("node", "vcpu_type"),
    # an APQN's requests by its state, from the info family
    "sum by (node, state) (rate(esatui_zcrypt_requests_total[5m]) * on (node, card, domain) "
    "group_left (state) esatui_zcrypt_info)": ("node", "state"),
}


def test_the_fleet_queries_of_the_docs_answer(fleet: Fleet) -> None:
    """docs/METRICS.md's queries across nodes, for a virtual CPU's type and for an APQN's
    state: in the doc, and answered for every node (the simulated systems all call
    themselves SIMVM), each answer with its label."""
    doc = " ".join((ROOT / "docs" / "METRICS.md").read_text().split())
    at = fleet.stopped_at - 2 * SCRAPE_S
    for expr, (by, label) in DOC_QUERIES.items():
        assert expr in doc
        found = fleet.query(expr.replace("[5m]", f"[{BUCKET_S}s]"), at)
        assert found, expr
        assert all(r["metric"].get(label) for r in found), found
        if by == "node":
            assert {r["metric"]["node"] for r in found} == set(NODES), found


def test_contrib_scrape_config_is_valid() -> None:
    prometheus_binary()
    promtool = shutil.which("promtool")
    assert promtool is not None, "promtool comes with the prometheus package"
    subprocess.run(
        [promtool, "check", "config", str(ROOT / "contrib" / "prometheus.yml")],
        check=True,
        capture_output=True,
    )


def run_cli(*argv: str) -> str:
    """``esatui ...`` in this process; what it printed."""
    import contextlib
    import io

    from esatui.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(argv)) == 0
    return out.getvalue()


def export_text(*argv: str) -> str:
    """``esatui export ...`` in this process, as text."""
    return run_cli("export", *argv)


def export_or_why(*argv: str) -> tuple[int, str]:
    """``esatui export ...`` in this process: its exit status and its text, or its error."""
    import contextlib
    import io

    from esatui.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["export", *argv])
    return code, out.getvalue() if code == 0 else err.getvalue()


def interior(text: str) -> list[str]:
    """A text export without its first header line (the range shown) and without its oldest
    and newest interval: the rows a range's edges can change in either backend."""
    lines = text.splitlines()
    body_at = next(i for i, line in enumerate(lines) if line.startswith("--------")) + 1
    groups: list[list[str]] = []
    for line in lines[body_at:]:
        if line[:8].strip() or not groups:
            groups.append([])
        groups[-1].append(line)
    assert len(groups) >= 4, text
    return lines[1:body_at] + [line for group in groups[1:-1] for line in group]


def test_every_screen_from_prometheus_is_its_sqlite_export(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every screen, every node: read back from Prometheus, the text export is the one of
    the node's own recording, character for character (docs/METRICS.md says when it is)."""
    from esatui.screens import catalog

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    start = max(first_end_s(db) for db in fleet.dbs.values()) + 3 * INTERVAL_S
    when = [
        datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")
        for t in (start - 0.5, fleet.stopped_at - INTERVAL_S - 0.5)
    ]
    compared = 0
    shown: set[str] = set()
    for node, db in fleet.dbs.items():
        for screen, defined in catalog.screens().items():
            if defined.fleet:
                continue  # every node: against the merged recordings, below
            rng = ("--node", node, "--from", when[0], "--to", when[1])
            code, from_sqlite = export_or_why(screen, "--db", str(db), *rng)
            if code != 0:  # a screen this node's system does not feed: refused by both
                refused, why = export_or_why(screen, "--prometheus", fleet.url, *rng)
                assert (refused, screen in why) == (code, True), (node, screen, why, from_sqlite)
                compared += 1
                continue
            from_prometheus = export_text(screen, "--prometheus", fleet.url, *rng)
            assert interior(from_prometheus) == interior(from_sqlite), (node, screen)
            shown.add(screen)
            compared += 1
    every_screen = {name for name, s in catalog.screens().items() if not s.fleet}
    assert shown == every_screen  # each compared with data on at least one node
    merged = next(iter(fleet.dbs.values())).with_name("fleet.sqlite")
    run_cli("db", "merge", "--db", str(merged), *map(str, fleet.dbs.values()))
    fleet_screens = [name for name, s in catalog.screens().items() if s.fleet]
    for screen in fleet_screens:
        every = ("--from", when[0], "--to", when[1])
        from_prometheus = export_text(screen, "--prometheus", fleet.url, *every)
        from_sqlite = export_text(screen, "--db", str(merged), *every)
        assert interior(from_prometheus) == interior(from_sqlite), screen
        assert all(node in from_sqlite for node in NODES)
        compared += 1
    assert compared == len(NODES) * (len(catalog.screens()) - len(fleet_screens)) + len(
        fleet_screens
    )


async def test_the_monitor_replays_a_node_from_prometheus(fleet: Fleet) -> None:
    """The TUI on the Prometheus backend: a node's ESASSUM, drilled into the screen of the
    column under the cursor and back, stepped to the previous interval."""
    from esatui.exposition.prometheus_reader import PrometheusReader
    from esatui.tui.app import MonitorApp
    from esatui.tui.pilot import settle

    app = MonitorApp(
        None,
        live=False,
        screen="ESASSUM",
        node="node2",
        until_us=round((fleet.stopped_at - INTERVAL_S) * 1e6),
        open_with=lambda: PrometheusReader(fleet.url),
    )
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert app.model is not None and app.model.name == "ESASSUM"
        assert app.model.node == "node2" and len(app.model.rows) >= 5
        await pilot.press("enter")
        await settle(pilot)
        assert app.model.name != "ESASSUM" and app.model.rows
        await pilot.press("escape", "left_square_bracket")
        await settle(pilot)
        assert app.model.name == "ESASSUM" and app.model.rows
