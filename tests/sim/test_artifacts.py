"""The simulated system drives the real collectors: what is recorded is what the ordinary
sources parse from the artifacts, and nothing else reads the simulator."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from esatui.cli import main
from esatui.collectors.base import SourceContext
from esatui.collectors.diag2fc import parse_record
from esatui.collectors.model import Sample
from esatui.collectors.monitor.layoutfile import builtin_layouts
from esatui.collectors.monitor.monreader import MonreaderSource
from esatui.collectors.monitor.monwrite import MonwriteSource
from esatui.collectors.procstat import parse_proc_stat
from esatui.collectors.smapi.source import build_source
from esatui.commands.common import registry
from esatui.db.sqlite_reader import SqliteReader
from esatui.registry import SourceOptions
from esatui.sampling.session import Recording
from esatui.sim.clock import SimClock
from esatui.sim.run import EndingEvent
from esatui.sim.scenarios import identity, scenario
from esatui.sim.site import SIMULATED_KEY, SimPolled, SimulatedSite
from esatui.sim.smapi_feed import SMAPI_USER
from tests.sim.recorded import num

START_US = 1_767_571_200_000_000  # 2026-01-05T00:00Z
ROOT = Path(__file__).resolve().parents[2]
ORDINARY = {"host", "zcrypt", "vmcp", "smapi", "monitor"}


def _site(tmp_path: Path, name: str = "seed002-t3-polling", **kw: object) -> SimulatedSite:
    return SimulatedSite(
        scenario(name),
        label=name,
        start_us=START_US,
        identity=identity(name),
        root=tmp_path / "root",
        **kw,  # type: ignore[arg-type]
    )


def _sum(reader: SqliteReader, kind: str, source: str, key: str, field: str) -> int:
    queries = reader.queries
    node = queries.node_id(None)
    assert node is not None
    rows = queries.kind_rows(kind, queries.intervals(node, [source]))
    return round(sum(num(r.values[field]) for r in rows if r.key == key))


def test_recorded_values_are_what_the_real_parsers_read(tmp_path: Path) -> None:
    db = tmp_path / "sim.sqlite"
    monwrite = tmp_path / "monitor.monwrite"
    warnings: list[str] = []
    with _site(tmp_path, monwrite=monwrite, monitor_interval_s=60) as site:
        clock = SimClock(START_US, on_advance=site.sync)
        recording = Recording(
            db,
            site.sources(SourceContext(site.root, warnings.append, clock)),
            interval_s=60,
            hf_s=20,
            clock=clock,
        )
        stats = recording.run(EndingEvent(site.monitor.end), warn=warnings.append, duration_s=180)
        assert stats.written == 18 and not stats.stopped_sources, warnings
        assert sorted(stats.sources_written) == sorted([*ORDINARY, "esatui"])
        store = SqliteReader.open(db)

        # the guest's own files, parsed by the real parsers now, against the sums of deltas
        stat = parse_proc_stat((site.root / "proc/stat").read_bytes())
        user_ticks = stat.cpus[0][0]
        assert user_ticks is not None and user_ticks > 0
        assert _sum(store, "cpu", "host", "0", "user_us") == user_ticks * 10_000
        queue = site.root / "sys/devices/ap/card00/00.0000/request_count"
        assert _sum(store, "zcrypt_queue", "zcrypt", "00.0000", "request_count") == int(
            queue.read_text()
        )
        # the DIAGNOSE X'2FC' record the SMAPI server serves now, by the real parser
        guest = parse_record(site.smapi.server.guests["LINUX01"].record())
        assert _sum(store, "guest", "smapi", "LINUX01", "cpu_us") == guest.used_cpu_us > 0
        monitor_vnq = _sum(store, "crypto", "monitor", "system", "virt_nq")
        store.close()

    # the monitor records, read back from the MONWRITE copy by the ordinary import
    samples = list(MonwriteSource(SourceContext(), str(monwrite), builtin_layouts()).samples())
    assert len(samples) == 4
    (last,) = [r for r in samples[-1].readings if r.kind == "crypto"]
    assert monitor_vnq == last.values["virt_nq"]
    assert monitor_vnq > 0
    imported = tmp_path / "imported.sqlite"
    assert main(["collect", "--source", f"monwrite:{monwrite}", "--db", str(imported)]) == 0
    with SqliteReader.open(imported) as reader:
        assert _sum(reader, "crypto", "monitor", "system", "virt_nq") == monitor_vnq


def test_the_database_holds_only_the_ordinary_sources(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = tmp_path / "s.sqlite"
    assert main(["sim", "--scenario", "mode-vm-day", "--duration", "2m", "--db", str(db)]) == 0
    capsys.readouterr()
    with SqliteReader.open(db) as reader:
        kinds = reader.queries.kind_fields()
        sources = {s for kind in kinds for s in reader.queries.sources_of(kind)}
        config = reader.queries.config_at(reader.queries.node_id(None) or 0, 2**62)
    assert sources == ORDINARY | {"esatui"}
    assert {t.name for t in registry()} | {"monitor"} >= ORDINARY
    assert config[SIMULATED_KEY] == "mode-vm-day"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_no_screen_or_store_module_imports_the_simulator() -> None:
    files = [*(ROOT / "screens").rglob("*.py"), *(ROOT / "db").rglob("*.py")]
    assert files
    for path in files:
        bad = {m for m in _imports(path) if m.startswith("esatui.sim")}
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_monitor_records_carry_the_snapshot_counters(tmp_path: Path) -> None:
    with _site(tmp_path) as site:
        site.sync(START_US)
        site.sync(START_US + 60_000_000)
        snap = site.snapshot()
        source = MonreaderSource(SourceContext(), "sim", opener=site.monitor.open)
        site.monitor.end()
        samples: list[Sample] = list(source.samples())
    assert [s.time_us for s in samples] == [START_US, START_US + 60_000_000]
    readings = {(r.kind, r.key): r for r in samples[-1].readings}
    crypto = readings[("crypto", "system")].values
    c = snap.crypto
    assert (crypto["virt_nq"], crypto["real_nq"], crypto["virt_dq"]) == (c.vnq, c.rnq, c.vdq)
    assert (crypto["vserv_us"], crypto["dserv_us"], crypto["nserv_us"]) == (
        c.vserv_us,
        c.dserv_us,
        c.nserv_us,
    )
    for p in snap.processors:
        lcpu = readings[("lcpu", str(p.address))]
        assert lcpu.attrs["type"] == p.ptype
        assert lcpu.values["emul_us"] == p.emul_us
        # D0R16: not dispatched = stolen + waiting (PR/SM takes a waiting processor off)
        dispatched = p.online_us - p.steal_us - p.wait_us
        assert lcpu.values["steal_us"] == START_US + 60_000_000 - dispatched
        assert lcpu.values["idle_us"] == p.wait_us
    for a in snap.adapters:
        ap = readings[("crypto_ap", f"{a.ap:02x}")]
        by_name = {f.name: f for f in a.functions}
        assert ap.values["rsa1024_crt_count"] == by_name["rsa1024_crt"].count
        seconds = ap.values["rsa1024_crt_time"] * float(ap.attrs["scale"])  # type: ignore[operator]
        assert seconds == pytest.approx(by_name["rsa1024_crt"].time_us / 1e6, rel=1e-6)


def test_smapi_answers_with_the_simulated_guests(tmp_path: Path) -> None:
    with _site(tmp_path) as site:
        site.sync(START_US + 60_000_000)
        client = build_source(
            f"smapi:127.0.0.1:{site.smapi.port}",
            user=SMAPI_USER,
            password_file=site.smapi.password_file,
        )
        sample = client.sample()
        snap = site.snapshot()
    guests = {r.key: r for r in sample.readings if r.kind == "guest"}
    assert sorted(guests) == sorted(g.userid for g in snap.guests)
    assert guests["LINUX03"].values["cpu_us"] == snap.guest("LINUX03").cpu_us
    lcpus = [r for r in sample.readings if r.kind == "lcpu"]
    assert [r.key for r in lcpus] == [f"ZVMLP1/{p.address}" for p in snap.processors]
    assert all(r.attrs["type"] == "IFL" for r in lcpus)
    assert sample.config is not None and sample.config["machine_type"] == "8561"


def test_source_sim_builds_the_ordinary_sources_and_cleans_up(tmp_path: Path) -> None:
    warnings: list[str] = []
    sources = registry().make_sources(
        ["sim:seed002-t3-baseline"], SourceOptions(warn=warnings.append)
    )
    assert sorted(s.name for s in sources) == sorted(ORDINARY)
    assert all(s.probe().available for s in sources)
    host = next(s for s in sources if s.name == "host")
    assert isinstance(host, SimPolled)
    sample = host.sample()
    assert sample.config is not None and sample.config[SIMULATED_KEY] == "seed002-t3-baseline"
    root = host.site.root
    assert (root / "proc/stat").exists()
    for s in sources:
        s.close()
    assert not root.exists()
    assert not warnings
