"""The garbage collector as the long commands set it (``esatui.garbage``): start-up's
objects set aside while the monitor runs, and given back after."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from textual.app import App

from esatui.commands.common import run_monitor
from esatui.garbage import collecting_rarely, start_up_set_aside


@pytest.fixture(autouse=True)
def _no_freeze_left() -> Iterator[None]:
    assert gc.get_freeze_count() == 0, "a test before this one left objects frozen"
    yield
    assert gc.get_freeze_count() == 0, "this test left objects frozen"


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
