"""ESACRYQ end to end: a fake AP tree whose counters a script advances, recorded by the real
recorder on a stepped clock, exported through ``esatui export``."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from esatui.cli import main
from esatui.db.sqlite_reader import SqliteReader
from esatui.formats import render
from esatui.screens import catalog
from esatui.screens.esacryq import BusSettings, _runs, change_note, zcrypt_req_s
from esatui.screens.model import Drill, Row
from esatui.screens.render import STYLE_NOTE, header_lines, pages
from esatui.tui.state import ViewState
from tests.fixtures.cryq_recording import MAX_LAG_US, CryptoGuest, record
from tests.fixtures.reading import load_slots
from tests.screens.golden import check

Recorded = tuple[Path, CryptoGuest]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    """One recording for the module's read-only tests (intervals align to local time: UTC)."""
    tmp = tmp_path_factory.mktemp("cryq")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TZ", "UTC")
        time.tzset()
        yield tmp / "esatui.sqlite", record(tmp / "esatui.sqlite", tmp / "root")
    time.tzset()


def export(capsys: pytest.CaptureFixture[str], db_path: Path, *args: str) -> str:
    code = main(["export", "ESACRYQ", "--db", str(db_path), *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def interval_of(guest: CryptoGuest, time_us: int) -> int:
    """The interval whose closing sample a row's time is: the recorder stamps a sample read
    up to 50 ms late (the fixture's lag) with the minute it was asked at."""
    return next(k for k, t in guest.script.full_us.items() if 0 <= t - time_us <= MAX_LAG_US)


def iso_us(text: str) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(text).timestamp() * 1_000_000)


def test_json_rates_are_exact_to_the_deltas_over_the_measured_durations(
    capsys: pytest.CaptureFixture[str], recorded: Recorded
) -> None:
    db_path, guest = recorded
    doc = json.loads(export(capsys, db_path, "--format", "json"))
    script = guest.script
    rows = doc["rows"]
    assert len({r["time"] for r in rows}) == 4
    assert len(rows) == 4 * 7 + 3 * 2  # cards 01 and 03 with 5 APQNs; 05 from interval 2
    seen_flags = set()
    for r in rows:
        k = interval_of(guest, iso_us(r["time"]))
        device = r["device"]
        requests = script.requests.get((k, device))
        duration = script.duration_us(k)
        assert duration != 60_000_000  # the clock woke late: measured, not nominal
        if requests is None:
            assert r["req_s"] is None and r["share_pct"] is None
        else:
            assert r["req_s"] == pytest.approx(requests * 1_000_000 / duration, rel=1e-12)
            cards = sum(n for (i, d), n in script.requests.items() if i == k and "." not in d)
            assert r["share_pct"] == pytest.approx(requests * 100 / cards, rel=1e-12)
        depths = script.depths[(k, device)]
        assert len(depths) == (1 if (k, device) in script.new else 3)
        assert r["pending_avg"] == pytest.approx(statistics.mean(depths), rel=1e-12)
        assert r["pending_max"] == max(depths)
        for column in ("req_s", "pending_avg", "pending_max", "share_pct"):
            assert r[column] is None or r[column] >= 0
        expected = (
            "reset"
            if (k, device) in script.resets
            else "new"
            if (k, device) in script.new
            else None
        )
        assert r["flags"] == expected
        seen_flags.add(expected)
    assert seen_flags == {None, "reset", "new"}
    assert doc["header"] == {
        "ap_interrupts": 0,
        "poll_thread": 0,
        "poll_timeout_us": 1500,
        "polling": True,
        "settings_changed": False,
    }
    polling = doc["notes"][0]
    assert polling.startswith("POLLING: ap_interrupts 0  poll_thread 0  poll_timeout 1500 µs")
    assert "up to 1500 µs added latency per request" in polling
    assert any(n.startswith("Flags: R counter reset") for n in doc["notes"])


def test_the_model_carries_the_unrounded_rates(recorded: Recorded) -> None:
    db_path, guest = recorded
    with SqliteReader.open(db_path) as reader:
        model = catalog.build_model(reader, "ESACRYQ", catalog.Query())
    for row in model.rows:
        k = interval_of(guest, row.end_us)
        requests = guest.script.requests.get((k, str(row.values["device"])))
        if requests is not None:
            rate = requests * 1_000_000 / guest.script.duration_us(k)
            assert row.values["req_s"] == pytest.approx(rate, rel=1e-12)


def test_cards_come_with_their_apqns_below_them(recorded: Recorded) -> None:
    db_path, _ = recorded
    with SqliteReader.open(db_path) as reader:
        model = catalog.build_model(reader, "ESACRYQ", catalog.Query())
    newest = [r for r in model.rows if r.end_us == model.rows[0].end_us]
    assert [r.values["device"] for r in newest] == [
        *("01", "01.0010", "01.0011", "01.0012"),
        *("03", "03.0010", "03.0011"),
        *("05", "05.0010"),
    ]
    assert [r.first for r in newest] == [True] + [False] * 8
    by_device = {r.values["device"]: r.values for r in newest}
    assert [by_device[d]["mode"] for d in ("01", "03", "05")] == ["ACCEL", "CCA", "EP11"]
    assert by_device["03.0011"]["online"] == "vfio:in use"
    assert by_device["01.0011"]["online"] == "offline"
    card_shares = [float(str(by_device[c]["share_pct"])) for c in ("01", "03", "05")]
    assert sum(card_shares) == pytest.approx(100.0)
    queues = [float(str(by_device[q]["share_pct"])) for q in ("01.0010", "01.0011", "01.0012")]
    assert sum(queues) == pytest.approx(card_shares[0])


def test_aggregated_intervals_add_up_exactly(
    capsys: pytest.CaptureFixture[str], recorded: Recorded
) -> None:
    db_path, guest = recorded
    doc = json.loads(export(capsys, db_path, "--format", "json", "--interval-len", "5m"))
    rows = {r["device"]: r for r in doc["rows"]}
    script = guest.script
    total_us = sum(script.duration_us(k) for k in range(1, 5))
    requests = sum(script.requests[(k, "01.0010")] for k in range(1, 5))
    assert rows["01.0010"]["req_s"] == pytest.approx(requests * 1_000_000 / total_us, rel=1e-12)
    depths = [d for k in range(1, 5) for d in script.depths[(k, "01.0010")]]
    assert rows["01.0010"]["pending_avg"] == pytest.approx(statistics.mean(depths), rel=1e-12)
    assert rows["01.0010"]["pending_max"] == max(depths)
    assert rows["03"]["flags"] == "reset"


@pytest.mark.parametrize("fmt", ["text", "csv", "json", "jsonl"])
def test_golden_exports(capsys: pytest.CaptureFixture[str], recorded: Recorded, fmt: str) -> None:
    db_path, _ = recorded
    check(f"ESACRYQ.{fmt}", export(capsys, db_path, "--format", fmt))


def test_every_format_carries_the_same_numbers(
    capsys: pytest.CaptureFixture[str], recorded: Recorded
) -> None:
    db_path, _ = recorded
    doc = json.loads(export(capsys, db_path, "--format", "json"))
    lines = export(capsys, db_path, "--format", "jsonl").splitlines()
    assert [json.loads(line) for line in lines] == doc["rows"]
    csv_lines = export(capsys, db_path, "--format", "csv").splitlines()
    assert csv_lines[0].split(",")[-1] == "flags"
    for record_, line in zip(doc["rows"], csv_lines[1:], strict=True):
        cells = line.split(",")
        assert cells[1] == record_["device"]
        assert cells[5] == ("" if record_["req_s"] is None else str(record_["req_s"]))
        assert cells[-1] == (record_["flags"] or "")


def test_text_marks_reset_and_new_rows_and_says_polling(
    capsys: pytest.CaptureFixture[str], recorded: Recorded
) -> None:
    db_path, _ = recorded
    text = export(capsys, db_path)
    lines = text.splitlines()
    assert lines[2].startswith("POLLING:")
    flagged = [ln for ln in lines if ln.endswith((" R", " N"))]
    assert len(flagged) == 4
    assert all(" R" in ln for ln in flagged if "03" in ln.split()[0:2])
    with SqliteReader.open(db_path) as reader:
        model = catalog.build_model(reader, "ESACRYQ", catalog.Query())
    columns = pages(model, 132)[0]
    head = header_lines(model, columns, 0, 1, 132)
    assert head[2][0][1] == "note"  # polling at the default timer: said, not marked
    assert head[3][0][1] == STYLE_NOTE


def _drill_rows(db_path: Path, drill: Drill) -> tuple[Row, ...]:
    state = ViewState().drill(drill)
    after, until, limit = state.query_window(20)
    query = catalog.Query(
        after_us=after, until_us=until, limit=limit, entity=state.entity, snap=state.drilled
    )
    with SqliteReader.open(db_path) as reader:
        model = catalog.build_model(reader, state.screen, query)
    check("ESACRYQ-drill.text", render(model, "text"))
    return model.rows


def test_drill_from_a_card_to_its_apqns(recorded: Recorded) -> None:
    db_path, _ = recorded
    with SqliteReader.open(db_path) as reader:
        full = catalog.build_model(reader, "ESACRYQ", catalog.Query())
    card = next(r for r in full.rows if r.values["device"] == "03" and r.flags)
    assert card.drill == Drill("ESACRYQ", card.start_us, card.end_us, "03")
    assert all(r.drill is None for r in full.rows if "." in str(r.values["device"]))
    rows = _drill_rows(db_path, card.drill)
    assert [r.values["device"] for r in rows] == ["03", "03.0010", "03.0011"]
    same = {r.values["device"]: r.values for r in full.rows if r.end_us == card.end_us}
    for row in rows:
        assert row.values == same[row.values["device"]]  # the same numbers, shares included
        assert row.drill is None  # already drilled


def test_a_changed_setting_is_said(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, db_path: Path
) -> None:
    record(db_path, tmp_path / "root", change_poll_at=3)
    doc = json.loads(export(capsys, db_path, "--format", "json"))
    assert doc["header"]["poll_timeout_us"] == 250
    assert doc["header"]["settings_changed"] is True
    notes: list[str] = doc["notes"]
    assert notes[0].startswith("POLLING: ap_interrupts 0  poll_thread 0  poll_timeout 250 µs")
    assert "* AP bus settings changed in this range: poll_timeout 1500 -> 250 µs at 14:03:00" in (
        notes
    )
    # one 5-minute interval holds both settings: which one was last is not known
    doc = json.loads(export(capsys, db_path, "--format", "json", "--interval-len", "5m"))
    assert doc["header"]["poll_timeout_us"] is None
    assert doc["notes"][0].startswith("POLLING: ap_interrupts 0  poll_thread 0  poll_timeout ")
    assert "poll_timeout changed:" in doc["notes"][0]
    assert "poll_timeout within the interval ending 14:05:00" in doc["notes"][2]


def test_zcrypt_req_s_for_esassum(recorded: Recorded) -> None:
    db_path, guest = recorded
    with SqliteReader.open(db_path) as reader:
        node = reader.queries.node_id("LNXT01")
        assert node is not None
        slots = load_slots(reader, ("zcrypt_card",), (), None, None)
    script = guest.script
    for slot in slots:
        k = interval_of(guest, slot.end_us)
        cards = sum(n for (i, d), n in script.requests.items() if i == k and "." not in d)
        rate = zcrypt_req_s(slot)
        assert rate == pytest.approx(cards * 1_000_000 / script.duration_us(k), rel=1e-12)


def test_collect_on_a_fake_tree_through_the_cli(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, db_path: Path
) -> None:
    """Real time, so nothing that depends on timing: the counters stay, the depths stay."""
    guest = CryptoGuest.build(tmp_path / "root")
    guest.tree.set_depths(0x01, 0x10, requestq=2, pendingq=5)
    argv = ["collect", "--root", str(tmp_path / "root"), "--source", "zcrypt", "--db"]
    code = main([*argv, str(db_path), "--interval", "0.3", "--hf", "0.1", "--count", "2"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith("2 intervals recorded (sources: zcrypt, esatui)")
    doc: dict[str, Any] = json.loads(export(capsys, db_path, "--format", "json"))
    assert doc["header"]["poll_timeout_us"] == 1500
    rows = {(r["time"], r["device"]): r for r in doc["rows"]}
    assert len(rows) == 2 * 7
    for (_, device), r in rows.items():
        if device == "03.0011":
            assert r["req_s"] is None
        else:
            assert r["req_s"] == 0.0
        if device in ("01", "01.0010"):
            assert (r["pending_avg"], r["pending_max"]) == (7.0, 7.0)
    main(["screens"])
    assert "ESACRYQ" in capsys.readouterr().out


@pytest.mark.usefixtures("ui_never_reads")
async def test_enter_on_a_card_row_drills_in_the_monitor(recorded: Recorded) -> None:
    from esatui.tui.pilot import settle
    from tests.tui.test_keys import SIZE, app_for

    db_path, _ = recorded
    app = app_for(db_path, screen="ESACRYQ")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.model is not None and app.model.name == "ESACRYQ"
        assert app.header.text_lines[2].startswith("POLLING:")
        await pilot.press(*["down"] * 4)  # 01, its three APQNs, then card 03
        assert app.table.selected_row is not None
        assert app.table.selected_row.values["device"] == "03"
        await pilot.press("enter")
        await settle(pilot)
        assert [r.values["device"] for r in app.model.rows] == ["03", "03.0010", "03.0011"]
        await pilot.press("escape")
        await settle(pilot)
        assert len(app.model.rows) > 3


_SETTING = st.sampled_from([None, 0.0, 1.0, 250_000.0])


@st.composite
def _histories(draw: st.DrawFn) -> list[BusSettings]:
    """AP bus settings of consecutive slots, oldest first, few values so runs repeat."""
    history = []
    for n in range(draw(st.integers(0, 12))):
        values = {name: draw(_SETTING) for name in ("ap_interrupts", "poll_timeout_ns")}
        known = sorted(k for k, v in values.items() if v is not None)
        mixed = draw(st.sets(st.sampled_from(known))) if known else set()
        history.append(BusSettings(60_000_000 * (n + 1), values, frozenset(mixed)))
    return history


@given(_histories(), st.integers(0, 12))
def test_the_runs_kept_and_their_parts_show_the_same_changes(
    history: list[BusSettings], cut: int
) -> None:
    """ESACRYQ keeps a run of equal settings by its first, and a streamed export adds up the
    runs of each part (QueueFacts.then): the change note is the whole history's."""
    want = change_note(history)
    assert change_note(_runs(history)) == want
    older, newer = _runs(history[:cut]), _runs(history[cut:])
    assert change_note(_runs((*older, *newer))) == want
