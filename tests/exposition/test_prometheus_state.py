"""Against a real Prometheus: an APQN that goes offline and back keeps one counter series.

One ``esatui collect --listen`` recorder (2 s intervals) reads a fake AP bus that the test
drives (``--source zcrypt --root``) and the loopback SMAPI server (the node's only source
of logical processors); the distribution's ``prometheus`` scrapes it every second, as in
test_prometheus.py. Two APQNs of one card get the same requests throughout; one of them is
set offline for four intervals and online again. Requests keep coming while it is offline
(the fake bus counts what it is told), so an interval lost at a change would show. Its
counter must stay one series (the state is ``esatui_zcrypt_info``'s), whose rate() across
both changes is its twin's, and esatui reads the node back from Prometheus as its own
database shows it: ESACRYQ across the changes, and ESACPUU from SMAPI alone.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from esatui.sim.interfaces.aptree import ApTree, build
from esatui.sim.interfaces.smapi_server import SimCpu, SimLpar
from tests.exposition.test_prometheus import (
    DOC_QUERIES,
    export_or_why,
    export_text,
    first_end_s,
    free_port,
    interior,
    start_prometheus,
    wait_until,
)
from tests.fakes.smapi_server import SimGuest, SmapiTestServer

NODE = "solo"
INTERVAL_S = 2
PHASE_S = 4 * INTERVAL_S  # online, offline, online again
PER_TICK, TICK_S = 5, 0.05  # requests to each APQN: 100 a second
CARD, CHANGED, TWIN = 1, 0x10, 0x11
PASSWORD = "Zq7-state-pw"

pytestmark = pytest.mark.slow


@dataclass
class Run:
    url: str
    db: Path
    tree: ApTree
    offline_at: float  # when the APQN went offline (s)
    online_at: float  # and online again
    traffic_end: float
    stopped_at: float

    def get(self, path: str, **params: str) -> Any:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}{path}?{query}", timeout=10) as r:
            answer = json.load(r)
        assert answer["status"] == "success", answer
        return answer["data"]

    def value(self, expr: str, at: float) -> float:
        result = self.get("/api/v1/query", query=expr, time=f"{at:.3f}")["result"]
        assert len(result) == 1, (expr, result)
        return float(result[0]["value"][1])

    def series(self, selector: str) -> list[dict[str, str]]:
        """Every label set of ``selector`` over the whole run."""
        found: list[dict[str, str]] = self.get(
            "/api/v1/series",
            **{"match[]": selector, "start": "0", "end": f"{self.stopped_at:.3f}"},
        )
        return found


def requests_of(domain: int) -> str:
    return f'esatui_zcrypt_requests_total{{node="{NODE}",card="01",domain="{domain:04x}"}}'


def smapi_server() -> SmapiTestServer:
    lpars = [SimLpar("LP1", 1, [SimCpu("CP", 40.0), SimCpu("IFL", 70.0)])]
    guests = [SimGuest("LNXT01", step_cpu_us=250_000, step_elapsed_us=1_000_000)]
    return SmapiTestServer(
        userid="ESATUI", password=PASSWORD.encode(), guests=guests, lpars=lpars, my_lpar="LP1"
    )


def recorder(root: Path, db: Path, smapi_port: int, port: int) -> subprocess.Popen[bytes]:
    argv = ["collect", "--source", "zcrypt", "--root", str(root)]
    argv += ["--source", f"smapi:127.0.0.1:{smapi_port}", "--smapi-user", "esatui"]
    argv += ["--interval", str(INTERVAL_S), "--hf", "1", "--node", NODE, "--db", str(db)]
    argv += ["--listen", f"127.0.0.1:{port}"]
    env = {**os.environ, "TZ": "UTC", "ESATUI_SMAPI_PASSWORD": PASSWORD}
    return subprocess.Popen(
        [sys.executable, "-m", "esatui", *argv],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def scraped(url: str, selector: str) -> bool:
    query = urllib.parse.urlencode({"query": selector})
    with urllib.request.urlopen(f"{url}/api/v1/query?{query}", timeout=2) as r:
        return bool(json.load(r)["data"]["result"])


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    tmp = tmp_path_factory.mktemp("state")
    tree = build(tmp / "root", cards=1, domains=2)
    db = tmp / f"{NODE}.sqlite"
    port = free_port()
    stop = threading.Event()

    def traffic() -> None:
        while not stop.wait(TICK_S):
            tree.advance(CARD, CHANGED, PER_TICK)
            tree.advance(CARD, TWIN, PER_TICK)

    with smapi_server() as smapi:
        node = recorder(tmp / "root", db, smapi.port, port)
        server, url = start_prometheus(tmp, [port])
        sender = threading.Thread(target=traffic, daemon=True)
        try:
            wait_until(lambda: scraped(url, requests_of(CHANGED)), 60, "the first scrapes")
            sender.start()
            time.sleep(PHASE_S)
            offline_at = time.time()
            tree.set_state(CARD, CHANGED, online=False)
            time.sleep(PHASE_S)
            online_at = time.time()
            tree.set_state(CARD, CHANGED, online=True)
            time.sleep(PHASE_S)
            stop.set()
            sender.join()
            traffic_end = time.time()
            time.sleep(2 * INTERVAL_S + 1)  # the last requests recorded and scraped
            assert node.poll() is None, "the recorder stopped early"
            node.send_signal(signal.SIGTERM)
            stopped_at = time.time()
            node.wait(timeout=30)
            yield Run(url, db, tree, offline_at, online_at, traffic_end, stopped_at)
        finally:
            stop.set()
            for process in (node, server):
                if process.poll() is None:
                    process.kill()
                    process.wait()


def test_the_state_is_the_info_family_s_and_the_counter_one_series(run: Run) -> None:
    counters = run.series(requests_of(CHANGED))
    assert len(counters) == 1, counters
    assert not {"online", "state", "mode"} & set(counters[0])
    info = run.series(f'esatui_zcrypt_info{{node="{NODE}",domain="{CHANGED:04x}"}}')
    assert {(s["online"], s["state"]) for s in info} == {("1", "online"), ("0", "offline")}
    assert {s["mode"] for s in info} == {"ACCEL"}
    offline = (run.offline_at + run.online_at) / 2
    state = f'esatui_zcrypt_info{{node="{NODE}",domain="{CHANGED:04x}",state="offline"}}'
    assert run.value(state, offline) == 1
    # docs/METRICS.md's requests by state: the one offline (rated as its twin online)
    by_state = next(expr for expr in DOC_QUERIES if "esatui_zcrypt_info" in expr)
    expr = by_state.replace("[5m]", f"[{INTERVAL_S * 2}s]")
    found = run.get("/api/v1/query", query=expr, time=f"{offline:.3f}")["result"]
    rates = {r["metric"]["state"]: float(r["value"][1]) for r in found}
    assert set(rates) == {"online", "offline"}
    assert rates["offline"] == pytest.approx(rates["online"], rel=1e-9)
    assert rates["offline"] > 0


def test_the_counter_holds_every_request_and_its_rate_is_its_twin_s(run: Run) -> None:
    at = run.stopped_at - 1
    sent = run.tree._queues[(CARD, CHANGED)].request_count
    assert sent == run.tree._queues[(CARD, TWIN)].request_count > 0
    # every request the bus counted, in the one series (traffic began after the first scrape)
    assert run.value(requests_of(CHANGED), at) == sent == run.value(requests_of(TWIN), at)
    # rate() over a range holding both changes: what the twin, never offline, shows
    start = run.offline_at - PHASE_S / 2
    stop = run.online_at + PHASE_S / 2
    seconds = round(stop - start)
    changed = run.value(f"rate({requests_of(CHANGED)}[{seconds}s])", stop)
    twin = run.value(f"rate({requests_of(TWIN)}[{seconds}s])", stop)
    assert changed == pytest.approx(twin, rel=1e-9)
    # the requests sent a second, within an interval's requests (the counter moves in steps
    # of one interval, which a range can hold one more or less of)
    per_s = PER_TICK / TICK_S
    assert abs(changed - per_s) * seconds <= 1.5 * per_s * INTERVAL_S, changed


def test_esatui_reads_the_node_back_as_its_database_shows_it(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ESACRYQ across both changes (the state read from the info family), and ESACPUU from a
    node whose processors come from SMAPI alone (its busy ratio is no family's first)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    start = first_end_s(run.db) + 3 * INTERVAL_S
    when = [
        datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")
        for t in (start - 0.5, run.stopped_at - INTERVAL_S - 0.5)
    ]
    rng = ("--node", NODE, "--from", when[0], "--to", when[1])
    differ: dict[str, str] = {}
    for screen in ("ESACRYQ", "ESACPUU"):
        code, from_sqlite = export_or_why(screen, "--db", str(run.db), *rng)
        assert code == 0, from_sqlite
        code, from_prometheus = export_or_why(screen, "--prometheus", run.url, *rng)
        if code != 0 or interior(from_prometheus) != interior(from_sqlite):
            differ[screen] = from_prometheus
    assert not differ, differ
    queues = export_text("ESACRYQ", "--prometheus", run.url, *rng)
    assert "offline" in queues and "01.0010" in queues
