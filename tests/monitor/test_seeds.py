"""The seeds' screens, reproduced from monitor records (the arithmetic of docs/MONITOR.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from esatui.collectors.base import SourceContext
from esatui.collectors.monitor.monwrite import MonwriteSource
from tests.monitor import fixtures as F
from tests.monitor.conftest import Warnings


def _f(x: float | None, decimals: int) -> str:
    return "." if x is None else f"{x:.{decimals}f}"


@pytest.mark.parametrize(
    ("rows", "date"),
    [(F.SEED000_0306_ESACRYPT, F.SEED000_0306_DATE), (F.SEED000_ESACRYPT, F.SEED000_DATE)],
)
@pytest.mark.parametrize("length", [112, 128, 360])
def test_esacrypt_rows(
    tmp_path: Path,
    ctx: SourceContext,
    rows: tuple[F.CryptRow, ...],
    date: tuple[int, int, int],
    length: int,
) -> None:
    path = F.write_monwrite(tmp_path / "crypt.mon", F.esacrypt_intervals(rows, date, length=length))
    samples = list(MonwriteSource(ctx, path).samples())
    assert len(samples) == len(rows) + 1
    for row, a, b in zip(rows, samples, samples[1:], strict=False):
        got = F.esacrypt_row(a, b)
        assert b.time_us == F.end_us(date, row.time)
        assert b.time_us - a.time_us == 60_000_000
        for col in ("nq_virt", "nq_real", "dq_virt", "dq_real", "done_virt", "done_real"):
            assert _f(got[col], 1) == f"{getattr(row, col):.1f}", (row.time, col)
        assert _f(got["ms_op_virt"], 2) == f"{row.ms_op_virt:.2f}"
        assert _f(got["ms_op_real"], 2) == f"{row.ms_op_real:.2f}"
        assert _f(got["queue_len"], 0) == str(row.queue_len)
        assert _f(got["rej_virt"], 0) == "0"
        assert _f(got["rej_real"], 0) == "0"


def test_seed000_1034_polling_columns(tmp_path: Path, ctx: SourceContext) -> None:
    rows = F.SEED000_0306_ESACRYPT
    path = F.write_monwrite(tmp_path / "c.mon", F.esacrypt_intervals(rows, F.SEED000_0306_DATE))
    s = list(MonwriteSource(ctx, path).samples())
    row = F.esacrypt_row(s[1], s[2])  # 10:34
    assert _f(row["ms_op_virt"], 2) == "2.97"
    assert _f(row["ms_op_real"], 2) == "1.57"
    # "CP did almost 2 tests for each request, and the virtual machine close to 3 times"
    assert _f(row["dq_per_op_real"], 2) == "1.83"
    assert _f(row["dq_per_op_virt"], 2) == "2.48"
    assert _f(row["poll_ms"], 2) == "1.40"


def test_seed000_esacrypa(tmp_path: Path, ctx: SourceContext, warnings: Warnings) -> None:
    path = F.write_monwrite(tmp_path / "a.mon", F.seed000_intervals(per_record=3))
    samples = list(MonwriteSource(ctx, path).samples())
    assert warnings == []
    a, b = samples[-2], samples[-1]
    rows = F.esacrypa_rows(a, b)
    assert sorted(rows) == ["00", "01", "02", "03"]
    fn = F.SEED000_FUNCTION
    for exp in F.SEED000_ESACRYPA:
        got = rows[f"{exp.ap:02x}"]
        r = F.reading(b, "crypto_ap", f"{exp.ap:02x}")
        assert r is not None and r.attrs["type"] == str(exp.ap_type) and r.attrs["mode"] == "accel"
        assert _f(got["util_pct"], 2) == f"{exp.util_pct:.2f}"
        assert _f(got[f"{fn}_count"], 0) == str(exp.count)
        assert _f(got[f"{fn}_time_s"], 3) == f"{exp.time_s:.3f}"
        assert _f(got[f"{fn}_ops_s"], 1) == f"{exp.ops_s:.1f}"
        assert _f(got[f"{fn}_ms_op"], 2) == f"{exp.ms_op:.2f}"
        # RSA 2048 ME: nothing happened: 0 operations, 0 s, ms/op unavailable
        assert got["rsa2048_me_count"] == 0
        assert got["rsa2048_me_ms_op"] is None
    total = sum(e.count for e in F.SEED000_ESACRYPA)
    assert total == 575  # "the total of 575 gives an average of 9.6 per second"
    assert f"{total / 60:.1f}" == "9.6"


@pytest.mark.parametrize("col", F.SEED002_TABLE1, ids=lambda c: c.method)
def test_seed002_table1(tmp_path: Path, ctx: SourceContext, col: F.PollColumn) -> None:
    path = F.write_monwrite(tmp_path / "p.mon", F.seed002_intervals(col))
    a, b = list(MonwriteSource(ctx, path).samples())
    row = F.esapoll_row(a, b)
    assert _f(row["nserv_us"], 3) == f"{col.nserv:.3f}"
    assert _f(row["rserv_us"], 3) == f"{col.rserv:.3f}"
    assert _f(row["hserv_us"], 3) == f"{col.hserv:.3f}"
    assert _f(row["dserv_us"], 3) == f"{col.dserv:.3f}"
    assert _f(row["vserv_us"], 3) == f"{col.vserv:.3f}"
    assert _f(row["ops_s"], 2) == f"{col.etr:.2f}"
    assert row["unsucc_dq_s"] == pytest.approx(200_000 / 60)
    assert row["dserv_pct"] == pytest.approx(100 * col.dserv / col.vserv, abs=1e-3)
