"""Issue 15, the monitor as a newcomer meets it: each test failed before its fix."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from rich.console import Console

from esatui.collectors.kinds import GUEST
from esatui.commands.common import registry
from esatui.db.records import Interval
from esatui.db.store import Store
from esatui.registry import SourceOptions
from esatui.sampling.session import Recording, WarnChannel
from esatui.screens import catalog
from esatui.screens.model import RowKind
from esatui.tui.app import MonitorApp
from esatui.tui.help import HelpScreen
from esatui.tui.pilot import settle
from esatui.tui.preview import SampleChannel, tapped
from tests.fixtures.hypervisor import guests_recording, hypervisor_samples
from tests.fixtures.recording import CONFIG, START_US, host_recording, write

MINUTE = 60_000_000
LATE = START_US + (3 * 60 + 28) * MINUTE  # 17:28 on 2026-11-21 (UTC)
SnapCompare = Callable[..., bool]


def late_recording(db_path: Path) -> Path:
    """17:28 to 18:01: the recording of the issue's demo."""
    return host_recording(db_path, n_intervals=33, start_us=LATE)


def status(app: MonitorApp) -> str:
    return str(app.query_one("#status").render())


def newest(app: MonitorApp) -> int:
    assert app.model is not None and app.model.rows
    return app.model.rows[0].end_us


def shown_lines(app: MonitorApp) -> list[str]:
    """What the table draws, line by line, as wide as it is on the terminal."""
    table = app.table
    return [table.render_line(y).text for y in range(table.size.height)]


# --- 1. partial intervals ---------------------------------------------------------------


async def test_a_bucket_still_being_filled_is_marked_with_the_time_it_holds(
    db_path: Path,
) -> None:
    late_recording(db_path)
    app = MonitorApp(db_path, live=False, screen="ESALNXC")
    async with app.run_test(size=(132, 43)) as pilot:
        await settle(pilot)
        await pilot.press("plus", "plus", "plus")  # 15 minutes
        await settle(pilot)
        assert app.model is not None and app.state.interval_len_us == 15 * MINUTE
        top = app.model.rows[0]
        assert top.end_us == LATE + 47 * MINUTE  # 18:15, holding 18:00-18:01
        assert top.partial and top.covered_us == MINUTE
        assert app.table.text_lines[0].startswith("18:15:00~")
        oldest = app.model.rows[-1]  # 17:15-17:30 holds 17:28-17:30
        assert oldest.partial and oldest.covered_us == 2 * MINUTE
        full = [r for r in app.model.rows if r.end_us == LATE + 32 * MINUTE]  # 18:00
        assert full and not any(r.partial for r in full)
        notes = " ".join(app.header.text_lines)
        assert "~ partial: the recording covers only part of the 15m: 18:15:00 holds 1m" in notes
        await pilot.press("plus")  # one hour: 19:00 holds 18:00-18:01
        await settle(pilot)
        assert app.table.text_lines[0].startswith("19:00:00~")


def test_every_export_marks_the_partial_bucket(
    db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from esatui.cli import main

    late_recording(db_path)
    base = ["export", "ESALNXC", "--db", str(db_path), "--interval-len", "15m"]
    assert main([*base, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    top = [r for r in rows if r["time"] == "2026-11-21T18:15:00+00:00"]
    assert top and all(r["partial"] is True and r["covered_s"] == 60 for r in top)
    assert all(r["partial"] is False for r in rows if r["time"] == "2026-11-21T18:00:00+00:00")
    assert main([*base, "--format", "text"]) == 0
    text = capsys.readouterr().out
    assert "18:15:00~" in text and "~ partial:" in text
    assert main([*base, "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = lines[0].split(",")
    partial = head.index("partial")
    assert {ln.split(",")[partial] for ln in lines[1:] if ln.startswith("2026-11-21T18:15")} == {
        "true"
    }


def test_partial_bucket_snapshot_at_80x24(snap_compare: SnapCompare, db_path: Path) -> None:
    late_recording(db_path)
    app = MonitorApp(db_path, live=False, screen="ESASSUM")

    async def fifteen_minutes(pilot: object) -> None:
        await settle(pilot)  # type: ignore[arg-type]
        await pilot.press("plus", "plus", "plus")  # type: ignore[attr-defined]
        await settle(pilot)  # type: ignore[arg-type]

    assert snap_compare(app, terminal_size=(80, 24), run_before=fifteen_minutes)


# --- 2. jumps outside the recording -----------------------------------------------------


async def test_a_jump_before_the_recording_lands_on_its_first_interval(db_path: Path) -> None:
    late_recording(db_path)
    app = MonitorApp(db_path, live=False, screen="ESACPUU")  # nothing of it: ESALNXC then
    async with app.run_test(size=(132, 43)) as pilot:
        await settle(pilot)
        await pilot.press(":", *"lnxc", "enter")
        await settle(pilot)
        await pilot.press("j", *"2026-11-21 10:00", "enter")
        await settle(pilot)
        assert newest(app) == LATE + MINUTE  # the first interval, 17:29
        assert "recorded 11/21 17:28-18:01; nothing at 11/21 10:00: showing the nearest" in (
            status(app)
        )
        await pilot.press("T")  # every key goes on working
        await settle(pilot)
        assert newest(app) == LATE + 2 * MINUTE
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert newest(app) == LATE + 3 * MINUTE
        await pilot.press("pageup", "pageup")  # to the top, then newer intervals
        await settle(pilot)
        assert newest(app) > LATE + 3 * MINUTE
        await pilot.press("j", *"23:00", "enter")  # after the end: the newest, said so
        await settle(pilot)
        assert newest(app) == LATE + 33 * MINUTE
        assert "nothing at 11/21 23:00: showing the newest" in status(app)
        await pilot.press("j", *"17:28:30", "enter")  # inside the first interval: no "nothing"
        await settle(pilot)
        assert newest(app) == LATE + MINUTE
        assert "nothing" not in status(app)


async def test_a_replay_range_outside_the_recording_shows_the_nearest(db_path: Path) -> None:
    late_recording(db_path)
    app = MonitorApp(
        db_path,
        live=False,
        screen="ESALNXC",
        after_us=START_US - 4 * 60 * MINUTE,  # 10:00 to 11:00
        until_us=START_US - 3 * 60 * MINUTE,
    )
    async with app.run_test(size=(132, 43)) as pilot:
        await settle(pilot)
        assert newest(app) == LATE + MINUTE
        assert "nothing from 11/21 10:00 to 11/21 11:00: showing the nearest" in status(app)
        await pilot.press("T")
        await settle(pilot)
        assert newest(app) == LATE + 2 * MINUTE


def export_error(db_path: Path, capsys: pytest.CaptureFixture[str], *asked: str) -> str:
    """What `export ESALNXC` of the late recording over the range ``asked`` says, failing."""
    from esatui.cli import main

    late_recording(db_path)
    assert main(["export", "ESALNXC", "--db", str(db_path), *asked]) == 1
    return capsys.readouterr().err


def test_export_outside_the_recording_says_what_it_covers(
    db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = export_error(db_path, capsys, "--from", "2026-11-21 10:00", "--to", "2026-11-21 11:00")
    assert err == (
        "esatui: error: ESALNXC: recorded 11/21 17:28-18:01; nothing from 11/21 10:00 to "
        "11/21 11:00.\n"
    )


def test_export_of_a_range_inside_one_interval_says_none_ends_in_it(
    db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Inside the recording, but no interval's end in it: not a contradiction to read."""
    asked = ("--from", "2026-11-21 17:40:10", "--to", "2026-11-21 17:40:20")
    assert export_error(db_path, capsys, *asked) == (
        "esatui: error: ESALNXC: recorded 11/21 17:28-18:01; nothing from 11/21 17:40:10 to "
        "11/21 17:40:20: no recorded interval ends in it (rows are at their interval's end).\n"
    )


def test_export_a_year_off_names_the_years(
    db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same day of another year: without the years the message contradicts itself."""
    assert export_error(db_path, capsys, "--to", "2025-11-21 18:00") == (
        "esatui: error: ESALNXC: recorded 11/21/2026 17:28-18:01; nothing up to 11/21/2025 18:00.\n"
    )


# --- 4. interval lengths the recording can make -----------------------------------------


async def test_plus_skips_lengths_shorter_than_the_recorded_intervals(db_path: Path) -> None:
    host_recording(db_path, n_intervals=30, interval_s=300)  # 5-minute intervals
    app = MonitorApp(db_path, live=False, screen="ESALNXC")
    async with app.run_test(size=(132, 43)) as pilot:
        await settle(pilot)
        await pilot.press("plus")  # not 1m: 5m
        await settle(pilot)
        assert app.state.interval_len_us == 5 * MINUTE
        ends = sorted({r.end_us for r in app.model.rows} if app.model else set())
        assert ends[1] - ends[0] == 5 * MINUTE
        await pilot.press("minus")  # not 1m: as recorded
        await settle(pilot)
        assert app.state.interval_len_us is None


# --- 5. live, before the first interval --------------------------------------------------


async def test_live_shows_the_first_sample_and_counts_down(db_path: Path) -> None:
    """This machine's own sources, a minute apart: at once the configuration, the CPUs and
    the time the first interval ends, never a placeholder header."""
    Store.open(db_path).close()
    channel = WarnChannel(lambda _: None)
    made = registry().make_sources([], SourceOptions(warn=channel))
    samples = SampleChannel()
    recording = Recording(db_path, tapped(made, samples), interval_s=60, hf_s=2, channel=channel)
    app = MonitorApp(
        db_path,
        live=True,
        recorder=recording,
        samples=samples,
        interval_s=60,
        screen="ESALNXC",
    )
    async with app.run_test(size=(132, 43)) as pilot:
        deadline = time.monotonic() + 20
        while not app.table.text_lines and time.monotonic() < deadline:
            await settle(pilot)
            await asyncio.sleep(0.05)
        header = "\n".join(app.header.text_lines)
        assert "<typ" not in header and "First sample at" in header
        lines = app.table.text_lines
        assert lines and lines[0][8] == "~"  # the sample's row, marked: no interval yet
        assert "all" in "\n".join(lines)
        assert "recording: the first interval ends at" in status(app)
        await pilot.press(":", *"cryp", "t", "enter")
        await settle(pilot)
        assert "ESACRYPT needs the z/VM monitor" in "\n".join(app.header.text_lines)


def one_interval_recorder(path: Path) -> Callable[..., None]:
    def record(
        stop: threading.Event, on_interval: Callable[[Interval], None], warn: Callable[[str], None]
    ) -> None:
        host_recording(path, n_intervals=1)
        on_interval(Interval("host", "LNXT01", START_US, START_US + MINUTE, MINUTE, ()))
        stop.wait()

    return record


async def test_once_recorded_a_screen_without_its_source_says_so(db_path: Path) -> None:
    Store.open(db_path).close()
    app = MonitorApp(db_path, live=True, screen="ESACRYPT", recorder=one_interval_recorder(db_path))
    async with app.run_test(size=(132, 43)) as pilot:
        deadline = time.monotonic() + 20
        while not (app.model and app.model.recorded) and time.monotonic() < deadline:
            await settle(pilot)
        assert app.model is not None and app.model.recorded
        assert "recording:" not in status(app)
        assert app.header.text_lines[2].startswith("ESACRYPT needs the z/VM monitor")


def test_an_empty_database_shows_no_placeholder_columns(db_path: Path) -> None:
    from esatui.db.sqlite_reader import SqliteReader

    Store.open(db_path).close()
    with SqliteReader.open(db_path) as reader:
        model = catalog.build_model(reader, "ESASSUM", catalog.Query())
    assert not any("<" in c.id for c in model.columns)


# --- 6. one rule for screen names; Esc goes back; the command palette --------------------


async def test_typing_a_screen_name_opens_it_and_escape_comes_back(db_path: Path) -> None:
    guests_recording(db_path)
    app = MonitorApp(db_path, live=False)
    async with app.run_test(size=(132, 43)) as pilot:
        await settle(pilot)
        await pilot.press(*"usr2", "enter")
        await settle(pilot)
        assert app.model is not None and app.model.name == "ESAUSR2"
        await pilot.press(":", *"cpuu", "enter")
        await settle(pilot)
        assert app.model.name == "ESACPUU"
        await pilot.press(*"ssum", "enter")  # s sorts only where a screen sorts (ESANODE)
        await settle(pilot)
        assert app.model.name == "ESASSUM"
        await pilot.press("escape")
        await settle(pilot)
        assert app.model.name == "ESACPUU"
        await pilot.press("escape")
        await settle(pilot)
        assert app.model.name == "ESAUSR2"
        await pilot.press("escape")
        await settle(pilot)
        assert app.model.name == "ESASSUM"
        await pilot.press(":", *"cry", "enter")
        await settle(pilot)
        assert "'cry' could be ESACRYPT, ESACRYPA, ESACRYQ" in status(app)


async def test_the_command_palette_offers_screens_and_actions(db_path: Path) -> None:
    guests_recording(db_path)
    app = MonitorApp(db_path, live=False)
    async with app.run_test(size=(132, 43)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await settle(pilot)
        await pilot.press(*"ESAUSR2")
        await asyncio.sleep(0.5)  # the palette searches in the background
        await pilot.press("enter")
        await settle(pilot)
        assert app.model is not None and app.model.name == "ESAUSR2"
        await pilot.press("ctrl+p")
        await settle(pilot)
        await pilot.press(*"longer interval")
        await asyncio.sleep(0.5)
        await pilot.press("enter")
        await settle(pilot)
        assert app.state.interval_len_us == MINUTE
    names = [name for name, _, _ in app.palette_commands()]
    screens = list(catalog.screens())
    assert [n.split()[0] for n in names[: len(screens)]] == screens
    assert "Jump to a time" in names and "Back" in names and "Help" in names


# --- 7. ESAUSR2 drills into ESALNXC for the guest this Linux is ------------------------


async def test_usr2_drills_to_lnxc_for_the_guest_named_in_sysinfo(db_path: Path) -> None:
    config = {**CONFIG, "node": "lnxt01.example.com", "vm00.name": "LNXT01"}
    host_recording(db_path, n_intervals=5, config=config)
    _, guests = hypervisor_samples()
    with Store.open(db_path) as store:
        write(store, "hypfs", (GUEST,), guests, node="lnxt01.example.com")
    app = MonitorApp(db_path, live=False, screen="ESAUSR2")
    async with app.run_test(size=(132, 43)) as pilot:
        await settle(pilot)
        assert app.model is not None
        rows = [r for r in app.model.rows if r.end_us == newest(app)]
        ours = [r for r in rows if r.drill is not None]
        assert [r.values["userid"] for r in ours] == ["LNXT01"]
        while app.table.selected_row is not ours[0]:
            await pilot.press("down")
        await pilot.press("enter")
        await settle(pilot)
        assert app.model.name == "ESALNXC" and app.model.rows


# --- 8. help ------------------------------------------------------------------------------


def help_lines(app: MonitorApp) -> list[str]:
    screen = app.screen
    assert isinstance(screen, HelpScreen)
    static = screen.query_one("Static")
    console = Console(width=static.size.width, color_system=None)
    with console.capture() as captured:
        console.print(screen.content)
    return captured.get().splitlines()


async def test_help_scrolls_to_its_last_column_and_keeps_its_indent(db_path: Path) -> None:
    from tests.screens import crypto_data as D
    from tests.tui.test_snapshots import imported

    db = imported(db_path.parent, D.seed000_file)
    app = MonitorApp(db, live=False, screen="ESACRYPT")
    async with app.run_test(size=(132, 43)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        scroll = app.screen.query_one("#help")
        assert scroll.max_scroll_y > 0  # more than the screen holds
        await pilot.press("end")
        await settle(pilot)
        assert scroll.scroll_y == scroll.max_scroll_y
        text = "\n".join(help_lines(app))
        assert "dq_per_op_real" in text and "poll_ms" in text
    app = MonitorApp(db, live=False, screen="ESACRYPT")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert app.screen.query_one("#help").region.right <= 80  # not cut on the right
        lines = help_lines(app)
        start = lines.index(next(ln for ln in lines if ln.startswith("ms_op_virt")))
        meaning_at = lines[start].index("guest NQ")
        # a meaning too long for its line goes on under itself
        assert lines[start + 1][:meaning_at].strip() == ""


def test_help_snapshot_at_80x24_scrolled(snap_compare: SnapCompare, tmp_path: Path) -> None:
    from tests.screens import crypto_data as D
    from tests.tui.test_snapshots import imported

    app = MonitorApp(imported(tmp_path, D.seed000_file), live=False, screen="ESACRYPT")

    async def help_at_its_end(pilot: object) -> None:
        await settle(pilot)  # type: ignore[arg-type]
        await pilot.press("question_mark", "end")  # type: ignore[attr-defined]
        await settle(pilot)  # type: ignore[arg-type]

    assert snap_compare(app, terminal_size=(80, 24), run_before=help_at_its_end)


# --- 9, 10. nothing cut at 80 columns -----------------------------------------------------


async def test_at_80_columns_no_value_is_cut(tmp_path: Path) -> None:
    from tests.screens import crypto_data as D
    from tests.tui.test_snapshots import imported

    app = MonitorApp(imported(tmp_path, D.seed000_file), live=False, screen="ESACRYPA")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("right")  # RSA 2048
        await settle(pilot)
        assert "ESACRYPA 2/3" in app.header.text_lines[0]
        drawn = shown_lines(app)
        assert any(line.rstrip().endswith("2.4  2.16") for line in drawn)
        for line, full in zip(drawn, app.table.text_lines, strict=False):
            assert line.rstrip() == full.rstrip()  # all of it on the screen
        assert all(len(line.rstrip()) <= 80 for line in app.header.text_lines)


async def test_the_esapoll_note_wraps_at_80_columns(tmp_path: Path) -> None:
    from tests.screens import crypto_data as D
    from tests.tui.test_snapshots import imported

    db = imported(tmp_path, D.seed002_file)
    D.add_guest_poll(db, D.SEED002_START_US, [250, 250, 250])
    app = MonitorApp(db, live=False, screen="ESAPOLL")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        lines = app.header.text_lines
        assert all(len(line) <= 80 for line in lines)
        assert "SET CRYPTO POLLING ON or OFF, not known." in " ".join(
            line.strip() for line in lines
        )


def test_esapoll_snapshot_at_80x24(snap_compare: SnapCompare, tmp_path: Path) -> None:
    from tests.screens import crypto_data as D
    from tests.tui.test_snapshots import imported

    db = imported(tmp_path, D.seed002_file)
    D.add_guest_poll(db, D.SEED002_START_US, [250, 250, 250])
    app = MonitorApp(db, live=False, screen="ESAPOLL")
    assert snap_compare(app, terminal_size=(80, 24), run_before=settle)


# --- 11. the header follows the terminal and the rows on view ---------------------------


async def test_the_header_follows_a_resize_and_the_rows_on_view(db_path: Path) -> None:
    host_recording(db_path, n_intervals=100)
    app = MonitorApp(db_path, live=False, screen="ESACPUU")
    async with app.run_test(size=(132, 43)) as pilot:
        await settle(pilot)
        await pilot.press(":", *"lnxc", "enter")
        await settle(pilot)
        await pilot.resize_terminal(90, 30)
        await settle(pilot)
        assert len(app.header.text_lines[0]) == 90  # the date range at the new right edge
        visible = app.table.visible_rows
        first, last = visible[-1], visible[0]
        assert app.header.text_lines[0].endswith(
            f"11/21 {time.strftime('%H:%M', time.gmtime(first.start_us / 1e6))}-"
            f"{time.strftime('%H:%M', time.gmtime(last.end_us / 1e6))}"
        )
        before = app.header.text_lines[0]
        await pilot.press("pagedown")
        await settle(pilot)
        assert app.header.text_lines[0] != before  # the rows on view moved on


async def test_a_page_never_starts_with_a_row_whose_time_is_on_the_page_before(
    db_path: Path,
) -> None:
    host_recording(db_path, n_intervals=60)
    app = MonitorApp(db_path, live=False, screen="ESALNXC")
    async with app.run_test(size=(132, 25)) as pilot:
        await settle(pilot)
        for _ in range(6):
            await pilot.press("pagedown")
            await settle(pilot)
            top = shown_lines(app)[0]
            assert top[:8].strip(), top  # the time of its interval
            row = app.table.visible_rows[0]
            if not row.first:
                break
        else:
            pytest.fail("no page started inside an interval")
        assert row.kind in (RowKind.DATA, RowKind.TOTAL, RowKind.SUBTOTAL)


# --- 12. header facts -------------------------------------------------------------------


def kvm_recording(db_path: Path, name: str) -> Path:
    config = {k: v for k, v in CONFIG.items() if not k.startswith("vm00")}
    config.update({"node": name, "vm00.extended_name": name, "vm00.control_program": "KVM/Linux"})
    return host_recording(db_path, n_intervals=3, config=config)


async def test_a_long_node_name_is_shortened_on_screen_only(
    db_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "kvm-guest-" + "x" * 57 + ".example.com"
    assert len(name) == 79  # a KVM guest's VM00 Extended Name
    kvm_recording(db_path, name)
    app = MonitorApp(db_path, live=False, screen="ESALNXC")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        first = app.header.text_lines[0]
        assert len(first) <= 80 and first.endswith("11/21 14:00-14:03")
        words = first.split()
        shown = words[words.index("0.1.0") + 1]
        assert shown.startswith("kvm-guest-x") and shown.endswith("x.example.com")
        assert "…" in shown and len(shown) <= 32
    from esatui.cli import main

    assert main(["export", "ESALNXC", "--db", str(db_path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["node"] == name  # the data keeps it whole


@pytest.mark.parametrize(
    ("screen", "data"),
    [
        ("ESASSUM", "guests"),
        ("ESALNXC", "guests"),
        ("ESACPUU", "guests"),
        ("ESAUSR2", "guests"),
        ("ESAOVHD", "guests"),
        ("ESACRYPT", "seed000"),
        ("ESACRYPA", "seed000"),
        ("ESAPOLL", "seed002"),
    ],
)
async def test_at_80x24_every_page_of_every_screen_shows_all_of_its_rows(
    tmp_path: Path, screen: str, data: str
) -> None:
    """No value is cut by the scrollbar or the right edge: the rows are paged horizontally,
    and each page's lines are drawn whole (before: ESACRYPA's 2.16 read 2.0)."""
    from tests.screens import crypto_data as D
    from tests.tui.test_snapshots import imported

    if data == "guests":
        db = guests_recording(tmp_path / "g.sqlite")
    else:
        db = imported(tmp_path, D.seed000_file if data == "seed000" else D.seed002_file)
    app = MonitorApp(db, live=False, screen=screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        seen = set()
        while app.header.text_lines[0] not in seen:
            seen.add(app.header.text_lines[0])
            assert app.table.text_lines, screen
            for line, full in zip(shown_lines(app), app.table.text_lines, strict=False):
                assert line.rstrip() == full.rstrip(), (screen, full)
            assert all(len(line.rstrip()) <= 80 for line in app.header.text_lines)
            await pilot.press("right")
            await settle(pilot)


async def test_the_demo_header_never_shows_a_range_other_than_the_rows_on_view(
    tmp_path: Path,
) -> None:
    """Before: the demo's first frame showed a stale range, and the header the loaded
    window's range rather than the rows shown. Every header drawn, from the first frame on,
    is checked against the rows on view at that moment."""
    from esatui.commands.demo import Demo
    from esatui.screens.render import Line, date_range
    from esatui.sim.run import resolve

    demo = Demo(resolve("mode-vm-day", [], 0), db_path=tmp_path / "d.sqlite", speed=20,
                backlog_s=120)  # fmt: skip
    app = demo.app
    drawn: list[tuple[str, str | None]] = []
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            set_lines = app.header.set_lines

            def checked(lines: Sequence[Line], scroll_x: int = 0) -> None:
                rows = app.table.visible_rows
                shown = (
                    date_range(min(r.start_us for r in rows), max(r.end_us for r in rows))
                    if rows
                    else None
                )
                drawn.append((lines[0][0][0], shown))
                set_lines(lines, scroll_x)

            app.header.set_lines = checked  # type: ignore[method-assign]
            for _ in range(20):
                await settle(pilot)
                await asyncio.sleep(0.05)
    finally:
        demo.close()
    ranged = [(head, shown) for head, shown in drawn if shown is not None]
    assert ranged, drawn
    for head, shown in drawn:
        if shown is None:
            assert not re.search(r"\d\d/\d\d \d\d:\d\d-", head), head  # no range of nothing
        else:
            assert head.endswith(shown), (head, shown)


async def test_a_message_arriving_as_the_app_closes_is_dropped(db_path: Path) -> None:
    """Before: the recorder's Recorded message, and the table's own Viewed (a CI run of
    2026-11-27), handled after the screen's widgets were removed at shutdown, raised
    NoMatches (the demo test above failed so, now and then)."""
    from esatui.screens.views.table import IntervalTable
    from esatui.tui.app import Recorded

    host_recording(db_path, n_intervals=3)
    app = MonitorApp(db_path, live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await app.table.remove()
        app.post_message(Recorded(START_US))
        app.post_message(IntervalTable.Viewed())
        app.post_message(IntervalTable.Resized())
        await settle(pilot)
    assert not app.return_code


# --- snapshots at 132x43 ------------------------------------------------------------------


def test_jump_before_the_recording_snapshot_at_132x43(
    snap_compare: SnapCompare, db_path: Path
) -> None:
    """ESALNXC at 15 minutes after ``j 10:00``: the first buckets, the partial one marked,
    the status line saying what is recorded."""
    late_recording(db_path)
    app = MonitorApp(db_path, live=False, screen="ESALNXC")

    async def jump_early(pilot: object) -> None:
        await settle(pilot)  # type: ignore[arg-type]
        await pilot.press("plus", "plus", "plus")  # type: ignore[attr-defined]
        await pilot.press("j", *"2026-11-21 10:00", "enter")  # type: ignore[attr-defined]
        await settle(pilot)  # type: ignore[arg-type]

    assert snap_compare(app, terminal_size=(132, 43), run_before=jump_early)


def test_help_snapshot_at_132x43_scrolled(snap_compare: SnapCompare, tmp_path: Path) -> None:
    from tests.screens import crypto_data as D
    from tests.tui.test_snapshots import imported

    app = MonitorApp(imported(tmp_path, D.seed000_file), live=False, screen="ESACRYPT")

    async def help_at_its_end(pilot: object) -> None:
        await settle(pilot)  # type: ignore[arg-type]
        await pilot.press("question_mark", "end")  # type: ignore[attr-defined]
        await settle(pilot)  # type: ignore[arg-type]

    assert snap_compare(app, terminal_size=(132, 43), run_before=help_at_its_end)


async def test_a_message_about_one_key_goes_with_the_next_move(db_path: Path) -> None:
    host_recording(db_path, n_intervals=30)
    app = MonitorApp(db_path, live=False, screen="ESALNXC")
    async with app.run_test(size=(132, 43)) as pilot:
        await settle(pilot)
        await pilot.press(":", *"sumi", "enter")
        await settle(pilot)
        assert "no screen 'sumi'" in status(app)
        await pilot.press("plus")
        await settle(pilot)
        assert "no screen" not in status(app) and "interval 1m" in status(app)


async def test_at_80_columns_a_long_message_is_shown_whole(db_path: Path) -> None:
    """Before: the status line was one line: at 80 columns "... showing the nearest" was cut."""
    late_recording(db_path)
    app = MonitorApp(db_path, live=False, screen="ESALNXC")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("j", *"2026-11-21 10:00", "enter")
        await settle(pilot)
        bar = app.query_one("#status")
        drawn = " ".join(bar.render_line(y).text.strip() for y in range(bar.size.height))
        assert "nothing at 11/21 10:00: showing the nearest" in " ".join(drawn.split())
        assert "q quit" in drawn
        assert bar.region.bottom == 24 and app.table.region.bottom == bar.region.y
