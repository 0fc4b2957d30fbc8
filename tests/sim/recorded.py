"""Helpers for tests that run ``esatui sim`` and read what it recorded, as a user would."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from esatui.cli import main
from esatui.db.reading import IntervalInfo, Queries
from esatui.db.sqlite_reader import SqliteReader
from esatui.screens import catalog

START = "2026-01-05T00:00+00:00"


def sim(capsys: pytest.CaptureFixture[str], db: Path, *args: str, duration: str = "2m") -> str:
    """``esatui sim ... --duration DUR --db DB`` (from START unless ``--start`` is given)."""
    argv = ["sim", *args, "--duration", duration, "--db", str(db)]
    if "--start" not in args:
        argv += ["--start", START]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def export(
    capsys: pytest.CaptureFixture[str], db: Path, screen: str, fmt: str = "json", *args: str
) -> str:
    code = main(["export", screen, "--db", str(db), "--format", fmt, *args])
    out, err = capsys.readouterr()
    assert code == 0, f"export {screen} --format {fmt}: {err}"
    return out


def export_json(
    capsys: pytest.CaptureFixture[str], db: Path, screen: str, *args: str
) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(export(capsys, db, screen, "json", *args))
    return doc


def has_screen(name: str) -> bool:
    return name in catalog.screens()


@dataclass(frozen=True)
class Metrics:
    """Seed 002's metrics for one interval (µs per VNQ, busy per 1000 VNQs, VNQ/s)."""

    values: dict[str, float]
    origin: str  # which exports (or recorded kinds) they came from


def newest_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = doc["rows"]
    newest = rows[0]["time"]
    return [r for r in rows if r["time"] == newest]


def from_exports(capsys: pytest.CaptureFixture[str], db: Path) -> Metrics:
    """ESAPOLL's service times, rate and busy per 1000 VNQ (newest interval), its busy split
    checked against ESACPUU's processors."""
    (poll,) = [r for r in newest_rows(export_json(capsys, db, "ESAPOLL")) if r.get("ops_s")]
    etr = float(poll["ops_s"])
    values = {
        "NSERV": poll["nserv_us"],
        "RSERV": poll["rserv_us"],
        "HSERV": poll["hserv_us"],
        "DSERV": poll["dserv_us"],
        "VSERV": poll["vserv_us"],
        "ETR": etr,
        "total": poll["total_busy_per_kvnq"],
        "guest": poll["guest_busy_per_kvnq"],
        "CP": poll["cp_busy_per_kvnq"],
    }
    assert poll["guest_us_op"] == pytest.approx(10 * poll["guest_busy_per_kvnq"], abs=0.05)
    assert poll["cp_us_op"] == pytest.approx(10 * poll["cp_busy_per_kvnq"], abs=0.05)
    cpus = [
        r for r in newest_rows(export_json(capsys, db, "ESACPUU")) if str(r.get("id", "")).isdigit()
    ]
    guest = sum(float(r["emul"]) for r in cpus)
    cp = sum(float(r["user"]) + float(r["syst"]) for r in cpus)
    rounding = len(cpus) * 2 * 0.05 / (etr / 1000)  # ESACPUU: 0.1% per processor and part
    for name, value in _busy(guest, cp, etr).items():
        assert values[name] == pytest.approx(value, abs=rounding), name
    return Metrics({k: float(v) for k, v in values.items()}, "ESAPOLL (checked with ESACPUU)")


def num(value: object) -> float:
    """A recorded value that must be there."""
    assert isinstance(value, int | float), value
    return float(value)


def _busy(guest_pct: float, cp_pct: float, etr: float) -> dict[str, float]:
    kvnq = etr / 1000.0
    return {"guest": guest_pct / kvnq, "CP": cp_pct / kvnq, "total": (guest_pct + cp_pct) / kvnq}


def _newest(queries: Queries, source: str) -> IntervalInfo:
    node = queries.node_id(None)
    assert node is not None
    return queries.intervals(node, [source], limit=1)[0]


def from_recorded(db: Path) -> Metrics:
    """The same metrics from the recorded ``crypto`` and ``lcpu`` kinds (monitor source)."""
    with SqliteReader.open(db) as reader:
        iv = _newest(reader.queries, "monitor")
        (crypto,) = reader.queries.kind_rows("crypto", [iv])
        v = crypto.values
        vnq = num(v["virt_nq"])
        values = {
            "NSERV": num(v["nserv_us"]) / vnq,
            "RSERV": num(v["rserv_us"]) / vnq,
            "HSERV": num(v["hserv_us"]) / vnq,
            "DSERV": num(v["dserv_us"]) / vnq,
            "VSERV": num(v["vserv_us"]) / vnq,
            "ETR": vnq / (iv.duration_us / 1e6),
        }
    values |= busy_recorded(db)
    return Metrics(values, "recorded crypto + lcpu")


def busy_recorded(db: Path) -> dict[str, float]:
    with SqliteReader.open(db) as reader:
        queries = reader.queries
        iv = _newest(queries, "monitor")
        (crypto,) = queries.kind_rows("crypto", [iv])
        lcpus = [r for r in queries.kind_rows("lcpu", [iv]) if r.values.get("emul_us") is not None]
        seconds = iv.duration_us / 1e6
        etr = num(crypto.values["virt_nq"]) / seconds
        guest = sum(num(r.values["emul_us"]) for r in lcpus) / iv.duration_us * 100
        cp = (
            sum(num(r.values["user_us"]) + num(r.values["syst_us"]) for r in lcpus)
            / iv.duration_us
            * 100
        )
    return _busy(guest, cp, etr)
