"""The garbage collector as the long commands set it (``esatui.garbage``): start-up's
objects set aside while the monitor runs, and given back after."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest
from textual.app import App

from esatui.commands.common import run_monitor
from esatui.garbage import collecting_rarely, reading_in_bulk, start_up_set_aside


@pytest.fixture(autouse=True)
def _no_freeze_left() -> Iterator[None]:
    assert gc.get_freeze_count() == 0, "a test before this one left objects frozen"
    assert gc.isenabled(), "a test before this one left the collector paused"
    yield
    assert gc.get_freeze_count() == 0, "this test left objects frozen"
    assert gc.isenabled(), "this test left the collector paused"


def test_start_up_is_set_aside_while_the_block_runs_and_given_back() -> None:
    made_before = [1, 2]  # a list: tracked by the collector

    def walked() -> bool:
        return any(o is made_before for o in gc.get_objects())

    with start_up_set_aside():
        assert gc.get_freeze_count() > 0 and not walked()
        made_during = [3]
        assert any(o is made_during for o in gc.get_objects())  # collected as before
    assert gc.get_freeze_count() == 0 and walked()


def test_a_callers_own_freeze_is_left_to_it() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with start_up_set_aside():
            pass
        assert gc.get_freeze_count() == frozen  # not undone here
    finally:
        gc.unfreeze()


def test_given_back_when_the_block_raises() -> None:
    with pytest.raises(RuntimeError), start_up_set_aside():
        raise RuntimeError("the app failed")
    assert gc.get_freeze_count() == 0


def test_collecting_rarely_restores_the_thresholds() -> None:
    before = gc.get_threshold()
    with collecting_rarely():
        assert gc.get_threshold()[0] == 100_000 and gc.get_freeze_count() > 0
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_the_monitor_runs_with_start_up_set_aside(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []

    def run(self: App[int]) -> None:
        seen.append(gc.get_freeze_count())

    monkeypatch.setattr(App, "run", run)
    monkeypatch.setattr("esatui.commands.common.on_a_terminal", lambda: True)
    assert run_monitor(App(), "live") == 0  # no return code: exit status 0
    assert seen and seen[0] > 0
    assert gc.get_freeze_count() == 0


def test_reading_in_bulk_pauses_the_collector_until_the_last_reader_is_done() -> None:
    with reading_in_bulk():
        assert not gc.isenabled()
        with reading_in_bulk():  # nested: the inner end does not resume it
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), reading_in_bulk():
        raise RuntimeError("the view failed")
    assert gc.isenabled()


def test_reading_in_bulk_across_threads_resumes_when_the_last_one_ends() -> None:
    """Two workers whose reads overlap without nesting: the first to end leaves the
    collector paused for the other (a save-and-restore per block would resume it, or
    leave it paused for good when the second one ends)."""
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def second() -> None:
        first_in.wait(5)
        with reading_in_bulk():
            second_in.set()
            first_out.wait(5)
            seen.append(gc.isenabled())

    worker = threading.Thread(target=second)
    worker.start()
    with reading_in_bulk():
        first_in.set()
        second_in.wait(5)
    first_out.set()
    worker.join(5)
    assert seen == [False]
    assert gc.isenabled()


def test_reading_in_bulk_leaves_a_paused_collector_paused() -> None:
    gc.disable()
    try:
        with reading_in_bulk():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_monitors_range_views_read_with_the_collector_paused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``d`` and the comparison of two marked ranges read their whole range in a worker."""
    from esatui.screens import catalog
    from esatui.screens.model import ScreenModel
    from esatui.tui import compare, distribution

    seen: list[bool] = []

    def recorded_values(*args: object) -> list[tuple[int, float]]:
        seen.append(gc.isenabled())
        return []

    def range_model(*args: object) -> object:
        seen.append(gc.isenabled())
        raise ValueError("stop here")

    monkeypatch.setattr(distribution, "recorded_values", recorded_values)
    monkeypatch.setattr(distribution, "distribution", lambda *a: None)
    monkeypatch.setattr(distribution, "render_lines", lambda *a: [])
    monkeypatch.setattr(catalog, "recorded_length_us", lambda *a: None)
    monkeypatch.setattr(compare, "range_model", range_model)
    model = ScreenModel("ESACPUU", "", (), ())
    query = catalog.Query(interval_len_us=60_000_000)
    assert distribution.distribution_lines(None, model, query, "total", (), 80) == []  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="stop here"):
        compare.comparison_lines(None, "ESACPUU", query, ((0, 1), (1, 2)))  # type: ignore[arg-type]
    assert seen == [False, False]
    assert gc.isenabled()
