"""Monitor data reproducing the seed documents' screens, for tests now and screen tests later.

- :data:`SEED000_0306_ESACRYPT`: seed 000's ESACRYPT rows 10:33-10:36 (03/06, its second screen);
- :data:`SEED000_ESACRYPT`, :data:`SEED000_ESACRYPA`: seed 000's ESACRYPT rows 18:48-18:53 and
  its ESACRYPA at 18:53 (4 CEX4A APs doing RSA 2048 CRT);
- :data:`SEED002_TABLE1`: seed 002 Table 1 (service times per virtual NQ, ETR).

Builders turn them into records (60 s apart, counters cumulative from arbitrary large bases)
and into MONWRITE files or monreader read scripts. The ``*_row`` functions are the screen
formulas of ``docs/MONITOR.md`` applied to two consecutive samples, so tests can check the
arithmetic before the screens exist.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from esatui.collectors.model import Number, Reading, Sample
from esatui.collectors.monitor import encode as E
from esatui.collectors.monitor import kinds as K
from tests.monitor import published as P

MINUTE_US = 60_000_000


def utc_us(y: int, mo: int, d: int, h: int, mi: int) -> int:
    return int(datetime(y, mo, d, h, mi, tzinfo=UTC).timestamp()) * 1_000_000


# --- the seeds' numbers ------------------------------------------------------------------


@dataclass(frozen=True)
class CryptRow:
    """One ESACRYPT row as printed (rates per second, ms per operation)."""

    time: str  # HH:MM, end of the interval
    nq_virt: float
    nq_real: float
    dq_virt: float
    dq_real: float
    done_virt: float
    done_real: float
    queue_len: int
    ms_op_virt: float
    ms_op_real: float
    rej_virt: float = 0.0
    rej_real: float = 0.0


SEED000_0306_DATE = (2016, 3, 6)
SEED000_0306_ESACRYPT = (
    CryptRow("10:33", 33.6, 33.6, 793.3, 53.3, 33.6, 33.6, 0, 2.53, 1.15),
    CryptRow("10:34", 336.9, 336.9, 834.1, 615.8, 336.9, 336.9, 0, 2.97, 1.57),
    CryptRow("10:35", 36.5, 36.5, 949.9, 146.5, 36.5, 36.5, 0, 7.02, 5.44),
    CryptRow("10:36", 0.6, 0.6, 262.2, 1.5, 0.6, 0.6, 0, 5.14, 3.25),
)

SEED000_DATE = (2016, 3, 1)
SEED000_ESACRYPT = (
    CryptRow("18:48", 5.0, 5.0, 17.9, 11.0, 5.0, 5.0, 0, 4.79, 3.10),
    CryptRow("18:49", 5.0, 5.0, 17.9, 11.1, 5.0, 5.0, 0, 4.74, 3.10),
    CryptRow("18:50", 5.4, 5.4, 19.4, 12.0, 5.4, 5.4, 0, 4.74, 3.06),
    CryptRow("18:51", 4.8, 4.8, 17.5, 10.8, 4.8, 4.8, 0, 4.87, 3.19),
    CryptRow("18:52", 4.6, 4.6, 17.3, 10.6, 4.6, 4.6, 0, 4.85, 3.15),
    CryptRow("18:53", 4.9, 4.9, 17.4, 10.9, 4.9, 4.9, 0, 4.70, 3.12),
)


@dataclass(frozen=True)
class CrypaRow:
    """One ESACRYPA row as printed for one function (RSA 2048 CRT in seed 000)."""

    time: str
    ap: int
    ap_type: int
    util_pct: float
    count: int
    time_s: float  # printed to 3 decimals; the fixture uses ``exact_time_s``
    ops_s: float
    ms_op: float
    exact_time_s: float


# AP 2 prints 0.306 s but 2.16 ms/op, so its true time lies in [0.30601, 0.30650)
SEED000_ESACRYPA = (
    CrypaRow("18:53", 0, 10, 0.52, 145, 0.313, 2.4, 2.16, 0.3130),
    CrypaRow("18:53", 1, 10, 0.52, 144, 0.311, 2.4, 2.16, 0.3110),
    CrypaRow("18:53", 2, 10, 0.51, 142, 0.306, 2.4, 2.16, 0.3064),
    CrypaRow("18:53", 3, 10, 0.52, 144, 0.311, 2.4, 2.16, 0.3110),
)
SEED000_FUNCTION = "rsa2048_crt"


@dataclass(frozen=True)
class PollColumn:
    """One measurement column of seed 002 Table 1 (µs per virtual NQ; ETR per second)."""

    run: str
    method: str
    nserv: float
    rserv: float
    hserv: float
    dserv: float
    vserv: float
    etr: float
    unsuccessful_dq_per_interval: int = 200_000  # "approximately 200,000 ... per interval"
    # guest and CP busy per 1000 VNQs (% of one processor per 1000 VNQ/s, docs/MODEL.md §2)
    guest_busy: float = 0.0
    cp_busy: float = 0.0


SEED002_TABLE1 = (
    PollColumn(
        "DBDN",
        "baseline",
        72.643,
        116.751,
        189.394,
        1296.170,
        1485.551,
        46717.08,
        guest_busy=0.5178,
        cp_busy=0.6299,
    ),
    PollColumn(
        "DPDN",
        "polling",
        4.713,
        112.622,
        117.293,
        1256.676,
        1373.969,
        50319.05,
        guest_busy=0.5352,
        cp_busy=0.7719,
    ),
    PollColumn(
        "DIDN",
        "interrupts",
        14.520,
        45.552,
        60.078,
        317.990,
        378.067,
        172346.20,
        guest_busy=0.5641,
        cp_busy=0.9388,
    ),
)
SEED002_TABLE2 = (
    PollColumn(
        "DBD2",
        "baseline",
        87.734,
        118.234,
        205.968,
        1279.835,
        1485.803,
        46704.28,
        guest_busy=0.522,
        cp_busy=0.656,
    ),
    PollColumn(
        "DPD2",
        "polling",
        3.626,
        111.302,
        114.853,
        1242.840,
        1357.692,
        50910.57,
        guest_busy=0.5331,
        cp_busy=0.7995,
    ),
    PollColumn(
        "DID2",
        "interrupts",
        17.073,
        46.006,
        63.074,
        303.880,
        366.953,
        174790.20,
        guest_busy=0.5833,
        cp_busy=1.088,
    ),
)
SEED002_TABLE3 = (
    PollColumn(
        "CBDN",
        "baseline",
        53.954,
        123.162,
        177.115,
        1316.767,
        1493.897,
        6666.17,
        guest_busy=0.8668,
        cp_busy=1.2054,
    ),
    PollColumn(
        "CPDN",
        "polling",
        2.546,
        121.836,
        124.497,
        1369.687,
        1494.210,
        6666.17,
        guest_busy=0.8169,
        cp_busy=0.9993,
    ),
    PollColumn(
        "CIDN",
        "interrupts",
        2.291,
        71.348,
        73.755,
        1420.626,
        1494.416,
        6666.17,
        guest_busy=0.7982,
        cp_busy=0.952,
    ),
)


# --- records ----------------------------------------------------------------------------

_BASE = 7_000_000_000  # counters start high: they are cumulative since IPL


def esacrypt_counters(rows: Sequence[CryptRow], interval_s: int = 60) -> list[dict[str, int]]:
    """Cumulative ``crypto`` counters at the start of the first row and at each row's end."""
    cur = {f.name: _BASE + 1000 * i for i, f in enumerate(K.CRYPTO.counters)}
    out = [dict(cur, nq_waiting=0)]
    for r in rows:
        n_v = round(r.nq_virt * interval_s)
        n_r = round(r.nq_real * interval_s)
        cur["virt_nq"] += n_v
        cur["real_nq"] += n_r
        cur["virt_dq"] += round(r.dq_virt * interval_s)
        cur["real_dq"] += round(r.dq_real * interval_s)
        cur["virt_done"] += round(r.done_virt * interval_s)
        cur["real_done"] += round(r.done_real * interval_s)
        cur["virt_rej"] += round(r.rej_virt * interval_s)
        cur["real_rej"] += round(r.rej_real * interval_s)
        cur["vserv_us"] += round(r.ms_op_virt * 1000 * n_v)
        cur["rserv_us"] += round(r.ms_op_real * 1000 * n_r)
        out.append(dict(cur, nq_waiting=r.queue_len))
    return out


def end_us(date: tuple[int, int, int], hhmm: str) -> int:
    h, m = (int(x) for x in hhmm.split(":"))
    return utc_us(*date, h, m)


def esacrypt_intervals(
    rows: Sequence[CryptRow],
    date: tuple[int, int, int],
    *,
    length: int = 112,
    config: bool = True,
    level: tuple[int, int, int] = (6, 3, 0),
) -> list[E.IntervalRecords]:
    """One interval per row plus the one before the first row, each with a D5R9 record (by
    default the 112-byte record of z/VM 6.3, the level of the seeds' 2016 systems)."""
    first = end_us(date, rows[0].time) - MINUTE_US
    times = [first] + [end_us(date, r.time) for r in rows]
    out = []
    for i, (us, ctr) in enumerate(zip(times, esacrypt_counters(rows), strict=True)):
        recs = []
        if config and i == 0:
            recs += [
                E.system_record(us, machine_type="2827", machine_serial="00000", level=level),
                E.sample_config_record(us, 60),
            ]
        recs.append(E.crypto_record(us, ctr, length=length))
        out.append(E.IntervalRecords(us, recs))
    return out


def _scale() -> float:
    return float(struct.unpack(">f", struct.pack(">f", 1e-6))[0])


# zcryptstats counter_accel order: RSA 1024 ME, 2048 ME, 1024 CRT, 2048 CRT, 4096 ME, 4096 CRT
SEED000_PAIR = 3  # RSA 2048 CRT
SEED000_MODE = 8  # accelerator (mode_cex4567[8])


def esacrypa_cmbs(rows: Sequence[CrypaRow], intervals: int) -> list[list[P.Cmb]]:
    """Card blocks per AP at ``intervals + 1`` sample times, each interval adding the row's
    figures, as the hardware stores them (``published``: not esatui's encoder)."""
    scale = _scale()
    out: list[list[P.Cmb]] = []
    for i in range(intervals + 1):
        cmbs = []
        for r in rows:
            pairs = [(1_000_000 + 17 * j, 5000 + j) for j in range(6)]
            t0, c0 = pairs[SEED000_PAIR]
            pairs[SEED000_PAIR] = (t0 + i * round(r.exact_time_s / scale), c0 + i * r.count)
            cmbs.append(P.Cmb(ct=r.ap_type, ax=r.ap, s=1e-6, pairs=tuple(pairs), mt=SEED000_MODE))
        out.append(cmbs)
    return out


def seed000_intervals(per_record: int = 3) -> list[E.IntervalRecords]:
    """Seed 000: D5R9 for ESACRYPT 18:48-18:53 and D5R10 (P-bit records of ``per_record``
    blocks, packed from the published structs) for ESACRYPA, every interval with the 18:53
    AP figures."""
    ivs = esacrypt_intervals(SEED000_ESACRYPT, SEED000_DATE)
    cmbs = esacrypa_cmbs(SEED000_ESACRYPA, len(ivs) - 1)
    for iv, cm in zip(ivs, cmbs, strict=True):
        iv.records += P.d5r10_set(iv.end_us, cm, per_record)
    return ivs


def seed002_intervals(col: PollColumn, interval_s: int = 60) -> list[E.IntervalRecords]:
    """Two D5R9 samples ``interval_s`` apart whose deltas give ``col``'s figures."""
    vnq = round(col.etr * interval_s)
    start = {f.name: _BASE + 1000 * i for i, f in enumerate(K.CRYPTO.counters)}
    end = dict(start)
    end["virt_nq"] += vnq
    end["real_nq"] += vnq
    end["real_dq"] += vnq
    end["real_done"] += vnq
    end["virt_done"] += vnq
    end["virt_dq"] += vnq + col.unsuccessful_dq_per_interval
    for name, per in (
        ("nserv_us", col.nserv),
        ("rserv_us", col.rserv),
        ("hserv_us", col.hserv),
        ("dserv_us", col.dserv),
        ("vserv_us", col.vserv),
    ):
        end[name] += round(per * vnq)
    t0 = utc_us(2022, 5, 10, 12, 0)
    return [
        E.IntervalRecords(t0, [E.sample_config_record(t0, interval_s), E.crypto_record(t0, start)]),
        E.IntervalRecords(
            t0 + interval_s * 1_000_000, [E.crypto_record(t0 + interval_s * 1_000_000, end)]
        ),
    ]


def write_monwrite(path: Path, intervals: Sequence[E.IntervalRecords]) -> Path:
    with path.open("wb") as f:
        for block in E.monwrite_intervals(intervals):
            f.write(block)
    return path


# --- the screens' arithmetic (docs/MONITOR.md), on two consecutive samples ----------------


def reading(sample: Sample, kind: str, key: str) -> Reading | None:
    for r in sample.readings:
        if r.kind == kind and r.key == key:
            return r
    return None


def deltas(a: Reading, b: Reading) -> dict[str, int]:
    out: dict[str, int] = {}
    for k, v in b.values.items():
        u = a.values.get(k)
        if isinstance(v, int) and isinstance(u, int):
            out[k] = v - u if v >= u else v  # a decrease is a reset
    return out


def _div(a: float, b: float) -> float | None:
    return a / b if b else None


def esacrypt_row(a: Sample, b: Sample) -> dict[str, float | None]:
    """ESACRYPT's columns for the interval from sample ``a`` to sample ``b``."""
    ra, rb = reading(a, "crypto", K.CRYPTO_KEY), reading(b, "crypto", K.CRYPTO_KEY)
    assert ra is not None and rb is not None
    d = deltas(ra, rb)
    dt = (b.time_us - a.time_us) / 1e6
    ms_v = _div(d["vserv_us"], d["virt_nq"] * 1000)
    ms_r = _div(d["rserv_us"], d["real_nq"] * 1000)
    q = rb.values.get("nq_waiting")
    return {
        "nq_virt": d["virt_nq"] / dt,
        "nq_real": d["real_nq"] / dt,
        "dq_virt": d["virt_dq"] / dt,
        "dq_real": d["real_dq"] / dt,
        "done_virt": d["virt_done"] / dt,
        "done_real": d["real_done"] / dt,
        "queue_len": float(q) if isinstance(q, int) else None,
        "ms_op_virt": ms_v,
        "ms_op_real": ms_r,
        "rej_virt": d["virt_rej"] / dt,
        "rej_real": d["real_rej"] / dt,
        "dq_per_op_virt": _div(d["virt_dq"], d["virt_nq"]),
        "dq_per_op_real": _div(d["real_dq"], d["real_nq"]),
        "poll_ms": None if ms_v is None or ms_r is None else ms_v - ms_r,
    }


def esapoll_row(a: Sample, b: Sample) -> dict[str, float | None]:
    """ESAPOLL's monitor columns (all but ``guest_poll``) for the interval ``a`` to ``b``."""
    ra, rb = reading(a, "crypto", K.CRYPTO_KEY), reading(b, "crypto", K.CRYPTO_KEY)
    assert ra is not None and rb is not None
    d = deltas(ra, rb)
    dt = (b.time_us - a.time_us) / 1e6
    vnq = d["virt_nq"]
    v = _div(d["vserv_us"], vnq)
    ds = _div(d["dserv_us"], vnq)
    row = esacrypt_row(a, b)
    return {
        "ops_s": vnq / dt,
        "vserv_us": v,
        "nserv_us": _div(d["nserv_us"], vnq),
        "rserv_us": _div(d["rserv_us"], vnq),
        "hserv_us": _div(d["hserv_us"], vnq),
        "dserv_us": ds,
        "dserv_pct": None if v is None or ds is None or not v else 100 * ds / v,
        "dq_per_op_virt": row["dq_per_op_virt"],
        "dq_per_op_real": row["dq_per_op_real"],
        "unsucc_dq_s": (d["virt_dq"] - d["virt_done"]) / dt,
        "poll_ms": row["poll_ms"],
    }


def esacrypa_rows(a: Sample, b: Sample) -> dict[str, dict[str, float | None]]:
    """ESACRYPA per AP: ``util_pct`` and per function ``_count _time_s _ops_s _ms_op``."""
    dt = (b.time_us - a.time_us) / 1e6
    out: dict[str, dict[str, float | None]] = {}
    for rb in b.readings:
        if rb.kind != "crypto_ap":
            continue
        ra = reading(a, "crypto_ap", rb.key)
        if ra is None or not rb.attrs.get("scale"):
            continue
        scale = float(rb.attrs["scale"])
        d = deltas(ra, rb)
        row: dict[str, float | None] = {}
        total_s = 0.0
        for fn in K.ALL_FUNCTIONS:
            c, t = d.get(f"{fn}_count"), d.get(f"{fn}_time")
            if c is None or t is None:
                continue
            secs = t * scale
            total_s += secs
            row[f"{fn}_count"] = float(c)
            row[f"{fn}_time_s"] = secs
            row[f"{fn}_ops_s"] = c / dt
            row[f"{fn}_ms_op"] = _div(secs * 1000, c)
        row["util_pct"] = 100 * total_s / dt
        out[rb.key] = row
    return out


def values_of(sample: Sample, kind: str) -> dict[str, Mapping[str, Number | None]]:
    return {r.key: r.values for r in sample.readings if r.kind == kind}
