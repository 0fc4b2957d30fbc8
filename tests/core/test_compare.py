"""``esatui compare``: two runs side by side, laid out like seed 002's tables (issue 17)."""

from __future__ import annotations

import csv
import functools
import io
import json
import operator
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from esatui.cli import main
from esatui.db.sqlite_reader import SqliteReader
from tests.fixtures.recording import START_US, host_recording
from tests.sim.recorded import export_json

MINUTE_US = 60_000_000


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Seed 002's single-thread polling run simulated with the default poll timer and with
    50 µs (the README's what-if), 20 minutes each."""
    base = tmp_path_factory.mktemp("compare")
    default, poll50 = base / "default.sqlite", base / "poll50.sqlite"
    for db, extra in ((default, []), (poll50, ["--set", "poll_timeout_us=50"])):
        code = main(
            [
                "sim",
                "--scenario",
                "seed002-t3-polling",
                *extra,
                "--duration",
                "20m",
                "--start",
                "2026-01-05T00:00+00:00",
                "--db",
                str(db),
            ]
        )
        assert code == 0
    return default, poll50


def recorded_vserv(db: Path) -> float:
    """VSERV per virtual NQ over the whole recording, from the recorded counters: the
    deltas summed, then divided (seed 002's per-run figure, not a mean of intervals')."""
    with SqliteReader.open(db) as reader:
        q = reader.queries
        node = q.node_id(None)
        assert node is not None
        intervals = q.intervals(node, ["monitor"], newest_first=False)
        rows = q.kind_rows("crypto", intervals)
    assert len(rows) >= 2, "a comparison over several intervals"
    vserv = sum(float(r.values["vserv_us"] or 0) for r in rows)
    vnq = sum(float(r.values["virt_nq"] or 0) for r in rows)
    return vserv / vnq


def test_esapoll_default_against_50us_is_laid_out_like_seed_002(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    default, poll50 = runs
    args = ["compare", "ESAPOLL", "--db", str(default), "--with-db", str(poll50)]
    labels = ["--label", "default", "--with-label", "poll 50 µs"]
    code, text, err = run(capsys, *args, *labels)
    assert code == 0, err
    lines = text.splitlines()
    # seed 002: "Run ID DBDN DPDN ... DPDN Delta", then one line per metric with the delta
    (head,) = [ln for ln in lines if ln.startswith("Run ID")]
    assert "default" in head and "poll 50 µs" in head and head.rstrip().endswith("Delta")
    (vserv,) = [ln for ln in lines if " vserv_us " in ln]
    a, b = recorded_vserv(default), recorded_vserv(poll50)
    words = vserv.split()
    assert words[-3:] == [f"{a:.3f}", f"{b:.3f}", f"{(b - a) / a * 100:.1f}%"]
    assert words[-4] == "µs"  # as the screen's headers write it (CSV and JSON: "us")
    # every value column of the screen is there, each with both runs' values
    doc = export_json(capsys, default, "ESAPOLL")
    value_ids = [c["id"] for c in doc["columns"] if c["id"] != "time"]
    for column in value_ids:
        assert any(f" {column} " in ln for ln in lines), column

    code, out, err = run(capsys, *args, *labels, "--format", "csv")
    assert code == 0, err
    records = list(csv.DictReader(io.StringIO(out)))
    assert list(records[0]) == ["column", "header", "unit", "default", "poll 50 µs", "delta_pct"]
    (row,) = [r for r in records if r["column"] == "vserv_us"]
    assert float(row["default"]) == pytest.approx(a, rel=1e-12)
    assert float(row["poll 50 µs"]) == pytest.approx(b, rel=1e-12)
    assert float(row["delta_pct"]) == pytest.approx((b - a) / a * 100, rel=1e-12)
    assert row["header"] == "Service time per virtual NQ, µs: VSERV"

    code, out, err = run(capsys, *args, *labels, "--format", "json")
    assert code == 0, err
    document = json.loads(out)
    assert [r["label"] for r in document["runs"]] == ["default", "poll 50 µs"]
    assert [r["database"] for r in document["runs"]] == ["default.sqlite", "poll50.sqlite"]
    (row,) = [r for r in document["rows"] if r["column"] == "dserv_us"]
    va, vb = row["values"]["default"], row["values"]["poll 50 µs"]
    assert vb < va / 10  # 50 µs polling cuts DSERV by an order of magnitude
    assert row["delta_pct"] == pytest.approx((vb - va) / va * 100)


def test_labels_default_to_the_databases_names(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    default, poll50 = runs
    code, out, err = run(
        capsys, "compare", "poll", "--db", str(default), "--with-db", str(poll50), "--format", "csv"
    )
    assert code == 0, err
    assert out.splitlines()[0] == "column,header,unit,default,poll50,delta_pct"


def test_two_ranges_of_one_database_per_entity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ESALNXC's CPUs over 14:00-14:02 against 14:02-14:04: each CPU's value over a range is
    what one interval that long holds, the same as ``export --interval-len`` gives."""
    db = host_recording(tmp_path / "h.sqlite", n_intervals=4, cpus=(0, 1))
    t = [START_US + i * MINUTE_US for i in (0, 2, 4)]
    code, out, err = run(
        capsys,
        "compare",
        "ESALNXC",
        "--db",
        str(db),
        "--from",
        "2026-11-21T14:00",
        "--to",
        "2026-11-21T14:02",
        "--with-from",
        "2026-11-21T14:02",
        "--with-to",
        "2026-11-21T14:04",
        "--format",
        "json",
    )
    assert code == 0, err
    document = json.loads(out)
    assert [r["label"] for r in document["runs"]] == [
        "11/21 14:00-14:02",
        "11/21 14:02-14:04",
    ]
    for half, (after, until) in enumerate(((t[0], t[1]), (t[1], t[2]))):
        code, exported, err = run(
            capsys,
            "export",
            "ESALNXC",
            "--db",
            str(db),
            "--from",
            "2026-11-21T14:0" + str(2 * half),
            "--to",
            "2026-11-21T14:0" + str(2 * half + 2),
            "--interval-len",
            "2m",
            "--format",
            "json",
        )
        assert code == 0, err
        rows = json.loads(exported)["rows"]
        label = document["runs"][half]["label"]
        for row in rows:
            parts = (row["type"], str(row["id"]), "" if row["row"] == "data" else row["row"])
            entity = " ".join(p for p in parts if p)
            for column in ("steal", "user", "total"):
                (line,) = [
                    r for r in document["rows"] if r["entity"] == entity and r["column"] == column
                ]
                assert line["values"][label] == row[column], (entity, column)
                # the keys as the export has them, to join on: 0, not "0" (outside check)
                assert (line["type"], line["id"]) == (row["type"], row["id"])
        assert after < until


@pytest.mark.parametrize(
    ("extra", "code", "says"),
    [
        ([], 2, "compare needs two runs"),
        (["--with-db", "missing.sqlite"], 1, "no database"),
        (["--from", "14:05", "--to", "14:01", "--with-db", "x"], 2, "--from must be before"),
        (
            ["--label", "same", "--with-label", "same", "--with-from", "14:02"],
            2,
            "labelled 'same': choose another with --label or --with-label",
        ),
        (
            ["--label", "unit", "--with-from", "14:02", "--format", "csv"],
            2,
            "'unit' would share its CSV column's name: choose another with --label",
        ),
        (
            ["--with-label", "id", "--with-from", "14:02", "--format", "csv"],
            2,
            "'id' would share its CSV column's name: choose another with --with-label",
        ),
        (["--with-label", "delta_pct", "--with-from", "14:02", "--format", "csv"], 2, "share"),
    ],
)
def test_bad_arguments_say_why_in_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    code: int,
    says: str,
) -> None:
    db = host_recording(tmp_path / "h.sqlite", n_intervals=2, cpus=(0,))
    got, out, err = run(capsys, "compare", "ESALNXC", "--db", str(db), *extra)
    assert got == code, err
    assert says in err and len(err.strip().splitlines()) == 1 and out == ""


@pytest.mark.parametrize(
    "second",
    [
        ["--with-db", "{db}"],
        ["--from", "14:01", "--with-from", "14:01"],
        ["--to", "14:02", "--with-db", "{db}", "--with-to", "14:02"],
    ],
)
def test_a_second_run_that_is_the_first_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], second: list[str]
) -> None:
    """Before: `--with-db` naming `--db` again was told to give --with-db."""
    db = host_recording(tmp_path / "h.sqlite", n_intervals=2, cpus=(0,))
    extra = [a.format(db=db) for a in second]
    got, out, err = run(capsys, "compare", "ESALNXC", "--db", str(db), *extra)
    assert got == 2 and out == ""
    assert f"both runs are {db} over the same range" in err
    assert len(err.strip().splitlines()) == 1


def test_jsonl_is_json_rows_one_a_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: compare refused --format jsonl, which export takes, for a pipeline's jq."""
    db = host_recording(tmp_path / "h.sqlite", n_intervals=4, cpus=(0, 1))
    argv = ["compare", "ESALNXC", "--db", str(db), "--to", "2026-11-21T14:02"]
    argv += ["--with-from", "2026-11-21T14:02"]
    code, out, err = run(capsys, *argv, "--format", "json")
    assert code == 0, err
    rows = json.loads(out)["rows"]
    code, out, err = run(capsys, *argv, "--format", "jsonl")
    assert code == 0, err
    assert [json.loads(line) for line in out.splitlines()] == rows and len(rows) > 2


def test_a_fleet_screen_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = host_recording(tmp_path / "h.sqlite", n_intervals=2, cpus=(0,))
    got, _, err = run(capsys, "compare", "ESANODE", "--db", str(db), "--with-from", "14:01")
    assert got == 2 and "every node" in err


def test_compare_and_export_stats_never_load_textual(tmp_path: Path) -> None:
    db = host_recording(tmp_path / "h.sqlite", n_intervals=4, cpus=(0,))
    script = (
        "import sys\n"
        "from esatui.cli import main\n"
        f"db = {str(db)!r}\n"
        "assert main(['compare', 'ESALNXC', '--db', db, '--to', '2026-11-21T14:02',"
        " '--with-from', '2026-11-21T14:02']) == 0\n"
        "assert main(['export', 'ESALNXC', '--db', db, '--interval-len', '2m',"
        " '--stats', 'p99']) == 0\n"
        "assert 'textual' not in sys.modules, 'textual was imported'\n"
    )
    env = {**os.environ, "TZ": "UTC"}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, env=env
    )
    assert result.returncode == 0, result.stderr


def test_esacrypa_cards_are_matched_though_their_util_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ESACRYPA keeps Util% among its keys, but a card is its AP and type: each card of one
    range meets itself in the other, its Util% and rates compared (the load grows: interval
    i does i times seed 000's work, so 18:47-18:50 is 2/5 of 18:50-18:53)."""
    from tests.screens import crypto_data as D

    db = tmp_path / "g.sqlite"
    mon = D.growing_esacrypa_file(tmp_path / "g.mon")
    assert main(["collect", "--source", f"monwrite:{mon}", "--db", str(db)]) == 0
    capsys.readouterr()
    day = "2016-03-01T18:"
    code, out, err = run(
        capsys,
        "compare",
        "ESACRYPA",
        "--db",
        str(db),
        *("--from", f"{day}47+00:00", "--to", f"{day}50+00:00"),
        *("--with-from", f"{day}50+00:00", "--with-to", f"{day}53+00:00"),
        "--format",
        "json",
    )
    assert code == 0, err
    document = json.loads(out)
    first, second = (r["label"] for r in document["runs"])
    lines = {(r["entity"], r["column"]): r for r in document["rows"]}
    assert {e for e, _ in lines} == {"00 10", "01 10", "02 10", "03 10"}
    for card in ("00 10", "01 10", "02 10", "03 10"):
        for column in ("util_pct", "rsa2048_crt_ops_s"):
            values = lines[(card, column)]["values"]
            assert values[first] > 0 and values[second] > 0, (card, column)
            assert values[second] / values[first] == pytest.approx(15 / 6), (card, column)


def test_a_delta_of_a_million_percent_stays_in_its_column(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a delta wider than its 9 places pushed its line past the others' end."""
    from dataclasses import replace

    from esatui.screens import catalog
    from esatui.screens.compare import Line, Side, compare, range_model, render_text

    default, _ = runs
    with SqliteReader.open(default) as reader:
        model = range_model(reader, "ESAPOLL", catalog.Query())
    side = Side("default", default.name, model)
    found = compare(side, side)
    first = found.lines[0]
    huge = Line(first.entity, first.column, 1.0, 10_038.668, ())  # +1,003,766.8%
    text = render_text(replace(found, lines=(huge, *found.lines[1:])))
    rule = next(line for line in text.splitlines() if line.startswith("---"))
    table = text.splitlines()[text.splitlines().index(rule) + 1 :]
    assert "1003766.8%" in table[0]
    assert {len(line) for line in table if line.endswith("%")} == {len(rule)}


def _lines_as_text(default: Path, pairs: list[tuple[float, float]]) -> list[list[str]]:
    """The value and delta cells of a line of ESAPOLL's first one-decimal column per pair
    (A, B), as the text comparison shows them."""
    from dataclasses import replace

    from esatui.screens import catalog
    from esatui.screens.compare import Line, Side, compare, range_model, render_text

    with SqliteReader.open(default) as reader:
        model = range_model(reader, "ESAPOLL", catalog.Query())
    side = Side("default", default.name, model)
    found = compare(side, side)
    first = next(line for line in found.lines if line.column.decimals == 1)
    lines = tuple(Line(first.entity, first.column, a, b, ()) for a, b in pairs)
    table = render_text(replace(found, lines=lines)).splitlines()[-len(pairs) :]
    return [line.split()[-3:] for line in table]


def test_a_value_that_rounds_to_zero_keeps_its_decimals(runs: tuple[Path, Path]) -> None:
    """Before: a steal of 0.0012 showed as ``0`` (an exact zero, as ESAMON shows it) beside
    its -99.1%: the screens' rule is that only an exact zero loses its decimals (and the
    line shows its larger value to four digits)."""
    assert _lines_as_text(runs[0], [(0.13, 0.0012), (0.13, 0.0)]) == [
        ["0.1300", "0.0012", "-99.1%"],
        ["0.1300", "0", "-100.0%"],
    ]


def test_a_line_shows_its_values_to_four_digits_as_seed_002_does(
    runs: tuple[Path, Path],
) -> None:
    """A delta beside values rounded to the screen's one decimal read as wrong (0.15 and
    0.13 shown 0.2 and 0.1 beside -13.3%): a line shows the larger of its values to four
    digits at least, as seed 002 prints "0.5178" and "72.643"; never fewer decimals than
    the screen's. Values that six decimals show as zero have no delta (outside check: a
    steal of 1e-7 % beside 5.6e-8 % read -50.0%)."""
    pairs = [(0.15, 0.13), (72.6432, 4.7129), (46717.08, 50319.05), (3, 4), (1.1e-7, 5.6e-8)]
    assert _lines_as_text(runs[0], pairs) == [
        ["0.1500", "0.1300", "-13.3%"],
        ["72.64", "4.71", "-93.5%"],
        ["46717.1", "50319.1", "7.7%"],
        ["3.0", "4.0", "33.3%"],
        ["0.0", "0.0", "."],  # a steal of 1-2 µs in half an hour: no -50%
    ]


def test_columns_of_one_run_only_are_compared_in_the_screens_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ESASSUM's CPU types are the ones recorded: the LPAR's CP and IFLs in the second half
    of this recording only. Before, the columns were the first run's: the CP was left out."""
    from dataclasses import replace as with_time
    from datetime import UTC, datetime

    from esatui.collectors.kinds import LCPU
    from esatui.db.store import Store
    from tests.fixtures.hypervisor import hypervisor_samples
    from tests.fixtures.recording import CONFIG, write

    db = host_recording(tmp_path / "late.sqlite", n_intervals=10)
    cpus, _ = hypervisor_samples()
    with Store.open(db) as store:
        late = [with_time(s, time_us=s.time_us + 5 * MINUTE_US) for s in cpus]
        write(store, "monitor", (LCPU,), late, node=CONFIG["node"])
    middle = datetime.fromtimestamp((START_US + 5 * MINUTE_US) / 1e6, UTC).isoformat()
    code, out, err = run(
        capsys,
        "compare",
        "ESASSUM",
        "--db",
        str(db),
        *("--to", middle, "--with-from", middle),
        "--format",
        "json",
    )
    assert code == 0, err
    rows = json.loads(out)["rows"]
    columns = list(dict.fromkeys(r["column"] for r in rows))
    assert columns[:5] == ["cpus_cp", "busy_cp", "cpus_ifl", "busy_ifl", "steal_pct"]
    first, second = (r["label"] for r in json.loads(out)["runs"])
    cp = next(r for r in rows if r["column"] == "cpus_cp")["values"]
    assert cp[first] is None and cp[second] == 1


def test_merged_puts_each_column_of_the_second_after_the_one_it_follows() -> None:
    from esatui.screens.compare import merged
    from esatui.screens.model import Column

    def cols(*ids: str) -> tuple[Column, ...]:
        return tuple(Column(i, ("", i), 6, 1) for i in ids)

    got = merged(cols("a", "c", "e"), cols("b", "c", "d", "e", "f"))
    assert [c.id for c in got] == ["b", "a", "c", "d", "e", "f"]
    assert [c.id for c in merged(cols("a"), ())] == ["a"]
    assert [c.id for c in merged((), cols("x", "y"))] == ["x", "y"]


def test_a_range_is_added_up_by_the_database_as_its_window_is(tmp_path: Path) -> None:
    """``Reader.range_window`` (SQL's sums over the range) is the range's window with its
    spans added up: the same source, start, end, recorded time and flags, also where the
    timeline's preferred source recorded only the older part of the range."""
    from esatui.collectors.model import Kind, Reading, Sample, counter
    from esatui.db.reader import Timeline
    from esatui.db.records import Flag
    from esatui.db.store import Store
    from tests.fixtures.recording import write

    db = tmp_path / "r.sqlite"
    host_recording(db, n_intervals=10)
    other = Kind("other", "test", (counter("ops", "count"),))
    with Store.open(db) as store:  # four minutes of a source the timeline prefers
        write(
            store,
            "early",
            [other],
            [
                Sample(
                    "other", START_US + 100 + i * MINUTE_US, (Reading("other", "x", {"ops": i}),)
                )
                for i in range(5)
            ],
        )
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE interval SET flags = ? WHERE source IN ('host', 'early') AND end_us < ?",
            (Flag.RESET, START_US + 3 * MINUTE_US),
        )
    with SqliteReader.open(db) as reader:
        for kinds, prefer in ((("cpu",), ()), (("other", "cpu"), ("early",))):
            timeline = Timeline(reader.node(None), kinds, prefer)
            for after, until in (
                (None, None),
                (START_US + MINUTE_US, START_US + 9 * MINUTE_US),
                (START_US + 3 * MINUTE_US, None),
            ):
                window = reader.window(timeline, after, until)
                found = reader.range_window(timeline, after, until)
                assert found.source == window.source
                assert (found.after_us, found.until_us) == (after, until)
                (whole,) = found.spans
                spans = window.spans
                assert whole.start_us == spans[0].start_us
                assert whole.end_us == spans[-1].end_us
                assert whole.duration_us == sum(s.duration_us for s in spans)
                assert whole.flags == functools.reduce(operator.or_, (s.flags for s in spans))
        timeline = Timeline(reader.node(None), ("cpu",))
        assert reader.range_window(timeline, START_US + 20 * MINUTE_US, None).spans == ()
