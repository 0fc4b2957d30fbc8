"""MONWRITE files and recordings for the crypto screens, from the seeds (tests/monitor/fixtures).

- :func:`seed000_0306_file`: D5R9 records 60 s apart whose counters advance like seed 000's (03/06)
  ESACRYPT rows 10:33-10:36;
- :func:`seed000_file`: seed 000's ESACRYPT rows 18:48-18:53 plus D5R10 records (4 CEX4A
  APs doing RSA 2048 CRT, the 18:53 ESACRYPA figures in every interval);
- :func:`seed002_file`: seed 002 Table 1's three runs as three consecutive one-minute
  intervals of one D5R9 stream (baseline, polling, interrupts), with D0R2 records of eight
  IFLs (spelled out byte by byte, tests/monitor/published.py) busy as the table says;
- :func:`growing_esacrypa_file`: seed 000's intervals with each AP's load growing, interval
  ``i`` doing ``i`` times its 18:53 figures (Util% differs every interval);
- :func:`add_guest_poll`: this Linux's AP bus (``zcrypt_bus``) recorded next to them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from esatui.collectors.model import Reading, Sample
from esatui.collectors.monitor import encode as E
from esatui.collectors.monitor import kinds as K
from esatui.collectors.zcrypt.kinds import BUS, BUS_KEY
from esatui.db.store import Store
from tests.fixtures.recording import write
from tests.monitor import fixtures as F
from tests.monitor import published as P

SEED002_START_US = F.utc_us(2022, 5, 10, 12, 0)
MINUTE_US = 60_000_000
NODE = "ZVMSIM"  # the D1R4 system name the encoder writes


def seed000_0306_file(path: Path, length: int = 112) -> Path:
    return F.write_monwrite(
        path, F.esacrypt_intervals(F.SEED000_0306_ESACRYPT, F.SEED000_0306_DATE, length=length)
    )


def seed000_file(path: Path) -> Path:
    return F.write_monwrite(path, F.seed000_intervals(per_record=3))


def growing_esacrypa_file(path: Path) -> Path:
    """Seed 000's ESACRYPT intervals with D5R10 records (packed from the published structs)
    whose RSA 2048 CRT work grows: interval ``i`` (1-6, 18:48-18:53) does ``i`` times each
    AP's 18:53 count and time, so the busy (Util%) is ``i`` times seed 000's."""
    intervals = F.esacrypt_intervals(F.SEED000_ESACRYPT, F.SEED000_DATE)
    scale = F._scale()
    for i, interval in enumerate(intervals):
        done = i * (i + 1) // 2  # intervals 1..i, interval k doing k times the figures
        cmbs = []
        for r in F.SEED000_ESACRYPA:
            pairs = [(1_000_000 + 17 * j, 5000 + j) for j in range(6)]
            t0, c0 = pairs[F.SEED000_PAIR]
            pairs[F.SEED000_PAIR] = (
                t0 + done * round(r.exact_time_s / scale),
                c0 + done * r.count,
            )
            cmbs.append(P.Cmb(ct=r.ap_type, ax=r.ap, s=1e-6, pairs=tuple(pairs), mt=F.SEED000_MODE))
        interval.records += P.d5r10_set(interval.end_us, cmbs, 3)
    return F.write_monwrite(path, intervals)


def seed002_counters(
    columns: Sequence[F.PollColumn] = F.SEED002_TABLE1, interval_s: int = 60
) -> list[dict[str, int]]:
    """Cumulative D5R9 counters at the start and after each column's interval."""
    cur = {f.name: 7_000_000_000 + 1000 * i for i, f in enumerate(K.CRYPTO.counters)}
    out = [dict(cur)]
    for col in columns:
        vnq = round(col.etr * interval_s)
        for name in ("virt_nq", "real_nq", "real_dq", "real_done", "virt_done"):
            cur[name] += vnq
        cur["virt_dq"] += vnq + col.unsuccessful_dq_per_interval
        for name, per in (
            ("nserv_us", col.nserv),
            ("rserv_us", col.rserv),
            ("hserv_us", col.hserv),
            ("dserv_us", col.dserv),
            ("vserv_us", col.vserv),
        ):
            cur[name] += round(per * vnq)
        out.append(dict(cur))
    return out


IFLS = 8  # seed 002: z15 8561-T01 with 8 dedicated IFL cores
IFL_TYPE = 3  # PFXCPUTY


def seed002_processors(
    columns: Sequence[F.PollColumn], interval_s: int = 60
) -> list[list[P.ProcessorTimes]]:
    """Each IFL's cumulative times at the start and after each column's interval: guest and
    CP busy per 1000 VNQ × VNQ/s / 1000 = % of one processor, spread evenly (CP's all on the
    guests' behalf; the rest waits)."""
    times = [P.ProcessorTimes(10**9, 10**8, 10**7, 10**10) for _ in range(IFLS)]
    out = [list(times)]
    for col in columns:
        share_us = interval_s * 1e6 / 100.0 * col.etr / 1000.0 / IFLS  # per % of a processor
        emul, user = round(col.guest_busy * share_us), round(col.cp_busy * share_us)
        wait = interval_s * 1_000_000 - emul - user
        times = [
            P.ProcessorTimes(t.emul + emul, t.user + user, t.syst, t.wait + wait) for t in times
        ]
        out.append(list(times))
    return out


def seed002_file(path: Path, columns: Sequence[F.PollColumn] = F.SEED002_TABLE1) -> Path:
    """``columns`` as consecutive one-minute intervals of a z/VM 7.2 (PTF level) D5R9 stream,
    with the processors' D0R2 records."""
    intervals = []
    processors = seed002_processors(columns)
    for i, counters in enumerate(seed002_counters(columns)):
        us = SEED002_START_US + i * MINUTE_US
        records = [E.crypto_record(us, counters, length=360)]
        records += [P.d0r2(us, cpu, IFL_TYPE, t) for cpu, t in enumerate(processors[i])]
        if i == 0:
            records = [
                E.system_record(
                    us, machine_type="8561", machine_serial="0000000000012345", level=(7, 2, 0)
                ),
                E.sample_config_record(us, 60),
                *records,
            ]
        intervals.append(E.IntervalRecords(us, records))
    return F.write_monwrite(path, intervals)


def add_guest_poll(db: Path, start_us: int, settings: Sequence[int | str]) -> None:
    """This Linux's AP bus, one interval per setting (``"irq"`` or a poll timeout in µs),
    sampled on the monitor's minute boundaries plus a few ms (another clock)."""
    samples = []
    for i in range(len(settings) + 1):
        setting = settings[max(i - 1, 0)]
        irq = 1 if setting == "irq" else 0
        timeout_ns = 250_000 if setting == "irq" else int(setting) * 1000
        values = {"ap_interrupts": irq, "poll_thread": 0, "poll_timeout_ns": timeout_ns}
        samples.append(
            Sample(
                "zcrypt",
                start_us + i * MINUTE_US + 3_000,
                (Reading("zcrypt_bus", BUS_KEY, values),),
            )
        )
    with Store.open(db) as store:
        write(store, "zcrypt", (BUS,), samples, node=NODE)


def cmb_only_file(path: Path) -> Path:
    """Seed 000's D5R10 records without any D5R9: ESACRYPA has data, ESACRYPT none."""
    intervals = F.seed000_intervals(per_record=4)
    for iv in intervals:
        iv.records[:] = [r for r in iv.records if not _is_d5r9(r)]
    return F.write_monwrite(path, intervals)


def _is_d5r9(record: bytes) -> bool:
    return record[4] == 5 and int.from_bytes(record[6:8], "big") == 9
