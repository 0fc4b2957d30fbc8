"""The Textual monitor: one screen model at a time, live or replayed, driven by keys.

The UI never waits on I/O: key handlers only change the view state or ask a worker. Loading
a model, and finding where a key leads in time (the next interval, the page after, the
recorded interval nearest to a moment outside the recording), run in thread workers that
read through the navigator and post the result; the recorder (live mode) runs in another
worker and posts each committed interval. Only those workers touch the database (a test
wraps the reader to fail on the UI thread).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import events, work
from textual.app import App, ComposeResult, ScreenStackError, UnknownModeError
from textual.binding import Binding, BindingType
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, Static
from textual.worker import get_current_worker

from esatui.db.database import StoreError, damage_at, may_be_damage
from esatui.db.navigator import Navigator, shorter_than_recorded
from esatui.db.reader import Reader, Span
from esatui.db.reading import DamagedData
from esatui.db.records import Interval
from esatui.db.sqlite_reader import SqliteReader
from esatui.sampling.recorder import next_boundary
from esatui.screens import catalog
from esatui.screens.crypto_costs import CostTable
from esatui.screens.model import DEFAULT_THRESHOLDS, Column, Drill, Row, ScreenModel, Threshold
from esatui.screens.render import (
    MIN_WIDTH,
    body,
    date_range,
    format_duration,
    header_lines,
    hms,
    moment_text,
    pages,
    years_differ,
)
from esatui.screens.rowkey import entity_key, key_columns, names_entity
from esatui.screens.views.table import IntervalTable, ScreenHeader
from esatui.timeparse import ParseError, parse_time
from esatui.tui.compare import Marks, comparison_lines
from esatui.tui.distribution import distribution_lines
from esatui.tui.help import HelpScreen, help_content
from esatui.tui.preview import FirstSample, SampleChannel, first_slot, node_of
from esatui.tui.state import ViewState
from esatui.tui.textview import TextView

RecordFn = Callable[[threading.Event, Callable[[Interval], None], Callable[[str], None]], None]
"""A live recorder: runs until the event is set, reports each interval and each warning."""


def open_reader(path: Path) -> Reader:
    """The database the monitor reads (only ever called in a worker), keeping the buckets
    it reads for the keys that read them again."""
    return SqliteReader.open(path, keep_buckets=True)


@dataclass(frozen=True)
class Later:
    """Forward in time from the newest interval shown, by ``count`` intervals."""

    newest_us: int
    count: int


@dataclass(frozen=True)
class Neighbour:
    """A drilled view's next (``direction`` > 0) or previous interval."""

    direction: int


@dataclass(frozen=True)
class Length:
    """The next longer (``direction`` > 0) or shorter interval length that the recorded
    intervals can make (never shorter than they are)."""

    direction: int


Move = Later | Neighbour | Length


@dataclass(frozen=True)
class Layout:
    """What is drawn: a model's horizontal page ``page`` of ``pages`` at a width."""

    model: ScreenModel
    columns: tuple[Column, ...]
    page: int
    pages: int
    width: int


class Loaded(Message):
    """A model finished loading for a view state, asked for by ``request``; ``notice``: what
    the user should know of where it landed (a jump outside the recording)."""

    def __init__(
        self, request: object, state: ViewState, model: ScreenModel, notice: str = ""
    ) -> None:
        super().__init__()
        self.request = request
        self.state = state
        self.model = model
        self.notice = notice


class Recorded(Message):
    """The recorder committed an interval (an immutable snapshot of its end)."""

    def __init__(self, end_us: int) -> None:
        super().__init__()
        self.end_us = end_us


class Unmoved(Message):
    """A move found nowhere to go (its notice said why): ``request`` is over."""

    def __init__(self, request: object) -> None:
        super().__init__()
        self.request = request


class Notice(Message):
    def __init__(self, text: str, request: object = None) -> None:
        super().__init__()
        self.text = text
        self.request = request  # the load it ends, when it is one's failure


class Sampled(Message):
    """A live source's first sample (before the first interval)."""

    def __init__(self, first: FirstSample) -> None:
        super().__init__()
        self.first = first


class ViewReady(Message):
    """A worker computed a view's lines (a comparison, a distribution)."""

    def __init__(self, kind: str, lines: list[str]) -> None:
        super().__init__()
        self.kind = kind
        self.lines = lines


class MonitorCommands(Provider):
    """The command palette (Ctrl+P): every screen and every action of the monitor."""

    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        app = self.app
        return app.palette_commands() if isinstance(app, MonitorApp) else []

    async def discover(self) -> Hits:
        for name, what, run in self._commands():
            yield DiscoveryHit(name, run, help=what)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, what, run in self._commands():
            score = max(matcher.match(name), matcher.match(what) * 0.5)
            if score > 0:
                yield Hit(score, matcher.highlight(name), run, help=what)


# What reading a damaged database raises (SQLite's errors, and values of a type or size no
# recorder writes reaching the screens' arithmetic): said in the status, as the commands do.
_READING_ERRORS = (sqlite3.Error, DamagedData, TypeError, ValueError, ArithmeticError)
LOAD_GROUP = "load"  # the workers that read the database and build screen models
RECORDER_CLOSE_S = 10.0  # how long letting go of the database waits for the recorder
ROWS_BELOW_NOTES = 8  # a screen's notes give way to this many rows of its table (narrow windows)

# The actions the command palette offers: name, what it does (its key), the action.
ACTIONS = (
    ("Drill down", "the detail of the row under the cursor (Enter)", "drill"),
    ("Back", "the view before this one (Esc)", "go_back"),
    ("Jump to a time", "the intervals up to a time (j)", "prompt('time')"),
    ("Jump to a screen", "a screen by its name (:)", "prompt('screen')"),
    ("Previous interval", "one interval back ([)", "step(-1)"),
    ("Next interval", "one interval forward (])", "step(1)"),
    ("Longer interval", "aggregate into longer intervals (+)", "length(1)"),
    ("Shorter interval", "shorter intervals, down to as recorded (-)", "length(-1)"),
    ("Pause or resume", "stop or go on following the newest interval (space)", "pause"),
    ("Mark a range", "m at its start and end, then another: the two compared", "mark"),
    ("Distribution", "the intervals recorded inside each longer one (d)", "distribution"),
    ("Graph", "the column under the cursor over time, a line per entity (g)", "graph"),
    ("Normalized view", "ESACPUU's subtotals in full-speed engines (n)", "option('normalized')"),
    ("Help", "every key and column (?)", "help"),
    ("Quit", "leave esatui (q)", "quit"),
)


def sparkline_end(state: ViewState, model: ScreenModel) -> int:
    """Where ESASSUM's day at a glance ends: its newest row's end, but no later than the
    time jumped to or the range asked for, where the table's rows end too (a row of a longer
    interval ends where its bucket does: a day's at midnight, hours past that time)."""
    bounds = (state.anchor_us, state.until_us)
    return min([model.rows[0].end_us, *(b for b in bounds if b is not None)])


class MonitorApp(App[int]):
    TITLE = "esatui"
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {
        *App.COMMANDS,
        MonitorCommands,
    }
    CSS = """
    Screen { layout: vertical; layers: base prompt; }
    /* a long message wraps (at 80 columns a jump's "recorded ...; nothing at ..." does) */
    #status { height: auto; max-height: 3; background: $panel; }
    /* on a layer over the status line: showing it never resizes the table (Textual still
       lays out again: visibility is a layout property) */
    #prompt { dock: bottom; layer: prompt; height: 1; border: none; padding: 0 1;
              visibility: hidden; }
    #prompt.visible { visibility: visible; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "drill", "Drill", show=False),
        Binding("escape,f3", "go_back", "Back"),
        Binding("f7", "page(-1)", show=False),
        Binding("f8", "page(1)", show=False),
        Binding("tab", "column(1)", show=False, priority=True),
        Binding("shift+tab", "column(-1)", show=False, priority=True),
        Binding("f10", "hpage(-1)", show=False),
        Binding("f11", "hpage(1)", show=False),
        Binding("colon", "prompt('screen')", show=False),
        Binding("left_square_bracket,t", "step(-1)", show=False),
        Binding("right_square_bracket,T", "step(1)", show=False),
        Binding("j", "prompt('time')", show=False),
        Binding("space", "pause", show=False),
        Binding("plus", "length(1)", show=False),
        Binding("minus", "length(-1)", show=False),
        Binding("n", "option('normalized')", show=False),
        Binding("s", "sort", show=False),
        Binding("m", "mark", show=False),
        Binding("d", "distribution", show=False),
        Binding("g", "graph", show=False),
        Binding("question_mark", "help", show=False),
        Binding("q", "quit", show=False),
    ]
    # letters that start no binding start a screen's name (usr2, lnxc, ovhd ...); s sorts
    # where a screen sorts (ESANODE) and starts a name elsewhere
    NAME_KEYS = frozenset("abcefhiklopruvwxyzABCDEFGHIKLMOPRSUVWXYZ")

    def __init__(
        self,
        db_path: Path | None,
        *,
        live: bool,
        screen: str = "ESASSUM",
        after_us: int | None = None,
        until_us: int | None = None,
        node: str | None = None,
        thresholds: Mapping[str, Threshold] | None = None,
        recorder: RecordFn | None = None,
        samples: SampleChannel | None = None,
        interval_s: float | None = None,
        crypto_costs: CostTable | None = None,
        open_with: Callable[[], Reader] | None = None,
        refresh_s: float | None = None,
    ) -> None:
        """``db_path``, or ``open_with`` for another backend (Prometheus); ``refresh_s``: a
        live view of data another program records, looked at that often."""
        super().__init__()
        self._crypto_costs = crypto_costs
        self._db_path = db_path
        self._open_with = open_with
        self._refresh_s = refresh_s
        self._live = live
        self._node = node
        self._thresholds = dict(thresholds) if thresholds else dict(DEFAULT_THRESHOLDS)
        self._recorder = recorder
        self._samples = samples
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._reader: Reader | None = None  # opened, used and closed by workers only
        self._reader_lock = threading.Lock()
        self.state = ViewState(
            screen=catalog.get(screen).name, after_us=after_us, until_us=until_us
        )
        self.model: ScreenModel | None = None
        self._columns: tuple[Column, ...] = ()  # the columns of the horizontal page shown
        self._message = ""
        self._prompt_kind = ""
        # the prompt's text whose screen is awaited: the prompt closes with that screen
        self._submitted: str | None = None
        self._pending: object = None  # the request whose model is awaited
        self._fetched = 0  # how many intervals the newest request asked for
        self._select: Row | None = None  # the row the next render puts the cursor on
        self._select_column: str | None = None  # and the column (by id)
        self._to_newest = False  # the next render shows the window's newest lines ([ ])
        self._queued: list[Callable[[], None]] = []  # keys waiting for the load under way
        self._recorder_thread: threading.Thread | None = None
        self._firsts: dict[str, FirstSample] = {}  # live: first samples, by source
        self._first_boundary_us: int | None = None
        self._countdown: Timer | None = None
        self._layout: Layout | None = None  # what the screen shows now
        self._marks = Marks()  # ranges marked with m, to compare
        self._graph_open = False  # the graph view (g) is shown over the table
        # ESASSUM's sparklines, for (node, the newest row's hour): read in the loading worker
        self._sparklines: tuple[object, tuple[str, ...]] = (None, ())

    # --- layout -----------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical():
            yield ScreenHeader(id="header")
            yield IntervalTable(id="table")
            yield Input(id="prompt", select_on_focus=False)
            yield Static(id="status")

    @property
    def table(self) -> IntervalTable:
        return self.query_one(IntervalTable)

    @property
    def header(self) -> ScreenHeader:
        return self.query_one(ScreenHeader)

    def on_mount(self) -> None:
        self.table.focus()
        if self._recorder is not None:
            if self._samples is not None:
                self._samples.connect(self._sampled)
            self._run_recorder()
        if self._refresh_s is not None:
            self.set_interval(self._refresh_s, self._refresh)
        self.reload()

    def _refresh(self) -> None:
        if self.state.following and not self.state.drilled:
            self.reload()

    def on_unmount(self) -> None:
        self._stop.set()
        # closed once a load under way has let go of it, never on the UI thread
        threading.Thread(target=self.close_reader, name="esatui-close").start()

    def close_reader(self) -> None:
        """Let go of the database (once a load under way has, and the recorder's thread,
        which may still be closing its store after the app has stopped it): at exit, or by
        the command that ran the app, which then leaves the database at rest."""
        recorder = self._recorder_thread
        if recorder is not None:
            recorder.join(RECORDER_CLOSE_S)
        with self._reader_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None

    # --- reading (in workers) ---------------------------------------------------------

    def reload(self, state: ViewState | None = None) -> None:
        if state is not None:  # the user went somewhere: what was said before is past
            self.state = state
            self._forget_said()
        # a request of its own: two reloads of one state (two intervals recorded in a row)
        # are two requests, and only the newer one's model is taken
        request = object()
        self._pending = request
        self._fetched = self._window()
        self._load(request, self.state, self._fetched)

    def _window(self) -> int:
        """How many intervals a load fetches: as many as the table has lines."""
        return max(8, self.table.size.height or self.size.height - 8)

    def _move(self, move: Move) -> None:
        """Go where ``move`` leads, once a worker has found it."""
        request = object()
        self._pending = request
        self._forget_said()
        self._fetched = self._window()
        self._navigate(request, self.state, move, self._fetched)

    @work(thread=True, exclusive=True, group=LOAD_GROUP)
    def _load(self, request: object, state: ViewState, limit: int) -> None:
        self._read(request, state, None, limit)

    @work(thread=True, exclusive=True, group=LOAD_GROUP)
    def _navigate(self, request: object, state: ViewState, move: Move, limit: int) -> None:
        self._read(request, state, move, limit)

    def _read(self, request: object, state: ViewState, move: Move | None, limit: int) -> None:
        try:
            with self._reader_lock:
                if self._stop.is_set():
                    return
                reader = self._open_reader()
                target = state if move is None else self._target(reader, state, move)
                if target is None:
                    self.post_message(Unmoved(request))
                    return
                model = catalog.build_model(reader, target.screen, self._query(target, limit))
                target, model, notice = self._landing(reader, target, model, limit)
                model = self._with_sparklines(reader, target, model)
        except (StoreError, OSError) as exc:
            self.post_message(Notice(str(exc), request))
            return
        except _READING_ERRORS as exc:
            self.post_message(Notice(self._damage(exc), request))
            return
        self.post_message(Loaded(request, target, model, notice))

    def _damage(self, exc: Exception, *, keep: bool = False) -> str:
        """(In a worker.) The status line for an error of reading: the database's damage
        when that explains it (one line, as the commands say it, never a traceback over the
        screen); otherwise the error is raised again, unless ``keep`` (an error the view
        says as it is)."""
        path = self._db_path
        found = damage_at(path) if path is not None and may_be_damage(exc) else None
        if found is None and not keep and not isinstance(exc, DamagedData):
            raise exc
        return found or str(exc)

    def _open_reader(self) -> Reader:
        """The reader, opened the first time (in a worker, holding the reader lock)."""
        if self._reader is None:
            if self._open_with is not None:
                self._reader = self._open_with()
            else:
                assert self._db_path is not None
                self._reader = open_reader(self._db_path)
        return self._reader

    def _with_sparklines(self, reader: Reader, state: ViewState, model: ScreenModel) -> ScreenModel:
        """ESASSUM with the day at a glance: its busiest columns as sparklines in the header,
        over the 24 hours up to the time looked at (:func:`sparkline_end`); read again when
        that time moves (a new interval moves the current hour's bar and the day's
        min-max), not when only the interval length does."""
        if model.name != "ESASSUM" or state.drilled or not model.rows:
            return model
        from esatui.screens.graph import day_sparklines

        key = (state.node or self._node, sparkline_end(state, model))
        if self._sparklines[0] != key:
            lines = day_sparklines(reader, key[0], key[1], self._thresholds)
            self._sparklines = (key, lines)
        return replace(model, notes=(*model.notes, *self._sparklines[1]))

    def _query(self, state: ViewState, limit: int) -> catalog.Query:
        after, until, n = state.query_window(limit)
        return catalog.Query(
            node=state.node or self._node,
            after_us=after,
            until_us=until,
            interval_len_us=state.interval_len_us,
            limit=n,
            entity=state.entity,
            options=state.options,
            snap=state.drilled,
            thresholds=self._thresholds,
            crypto_costs=self._crypto_costs,
        )

    def _navigator(self, reader: Reader, state: ViewState) -> Navigator:
        screen = catalog.get(state.screen)
        node = state.node or self._node
        return Navigator(reader, catalog.screen_timeline(screen, node, state.interval_len_us))

    def _landing(
        self, reader: Reader, state: ViewState, model: ScreenModel, limit: int
    ) -> tuple[ViewState, ScreenModel, str]:
        """Where a view outside the recording lands: the recorded interval nearest to the
        moment asked for, with a notice saying what the recording covers."""
        extent = model.extent
        if extent is None or state.drilled:
            return state, model, ""
        moment = state.anchor_us if state.anchor_us is not None else state.until_us
        year = years_differ(extent.start_us, extent.end_us, moment, state.after_us, state.until_us)
        covered = f"recorded {date_range(extent.start_us, extent.end_us, year=year)}"
        if model.rows:
            if moment is not None and moment > extent.end_us and not state.following:
                at = moment_text(moment, year=year)
                return state, model, f"{covered}; nothing at {at}: showing the newest"
            return state, model, ""
        moment = moment if moment is not None else state.after_us
        if moment is None:
            return state, model, ""
        span = self._navigator(reader, state).nearest(moment)
        if span is None:
            return state, model, ""
        asked = catalog.range_words(state.after_us, state.until_us, year=year)
        if state.anchor_us is not None:
            asked = f"at {moment_text(state.anchor_us, year=year)}"
        landed = replace(state, after_us=None, until_us=None, anchor_us=span.end_us)
        model = catalog.build_model(reader, landed.screen, self._query(landed, limit))
        # the interval holding the moment (in the first one, ending after it) is no "nothing"
        holds = state.anchor_us is not None and span.start_us <= state.anchor_us <= span.end_us
        said = "" if holds else f"{covered}; nothing {asked}: showing the nearest"
        return landed, model, said

    def _later(self, navigator: Navigator, state: ViewState, move: Later) -> ViewState | None:
        if state.anchor_us is not None and state.anchor_us < move.newest_us:
            # the newest bucket was cut at the moment jumped to: first show it whole
            return state.at(move.newest_us)
        found = navigator.after(move.newest_us, move.count, until_us=state.until_us)
        if found is not None:
            return state.at(found.end_us)
        if self._live:
            return state.at(None)
        self.post_message(Notice("newest interval"))
        return None

    def _target(self, reader: Reader, state: ViewState, move: Move) -> ViewState | None:
        """The view state ``move`` leads to (``None``, and a notice, when there is none)."""
        navigator = self._navigator(reader, state)
        if isinstance(move, Length):
            return self._length(reader, state, move.direction)
        if isinstance(move, Later):
            return self._later(navigator, state, move)
        span: Span | None = None
        if move.direction > 0 and state.until_us is not None:
            span = navigator.after(state.until_us)
        elif move.direction < 0:
            span = navigator.before(state.after_us or 0)
        if span is None:
            self.post_message(Notice("no further interval"))
            return None
        return replace(state, after_us=span.start_us, until_us=span.end_us)

    def _length(self, reader: Reader, state: ViewState, direction: int) -> ViewState:
        """The next interval length in ``direction``, skipping those shorter than the
        recorded intervals (they cannot be made from them: as recorded instead)."""
        screen = catalog.get(state.screen)
        recorded = catalog.recorded_length_us(reader, screen, state.node or self._node)
        moved = state.longer() if direction > 0 else state.shorter()
        while (
            recorded is not None
            and moved.interval_len_us is not None
            and shorter_than_recorded(moved.interval_len_us, recorded)
        ):
            if direction < 0:
                return replace(moved, interval_len_us=None)
            longer = moved.longer()
            if longer.interval_len_us == moved.interval_len_us:
                break
            moved = longer
        length = moved.interval_len_us
        if length == state.interval_len_us:  # at an end of the ladder: said
            ends = "the longest interval length" if direction > 0 else "as recorded: the shortest"
            self.post_message(Notice(ends))
        elif length is not None and recorded is not None and round(length / recorded) == 1:
            # the rows look as recorded: say why, lest the key seem to have done nothing
            said = format_duration(length / 1e6)
            self.post_message(Notice(f"{said}: the recorded intervals' length, one a row"))
        return moved

    def _gone(self) -> bool:
        """The screen's widgets are gone (the app is closing) while a message from a worker
        or the recorder was on its way: there is nothing to draw it on."""
        screen = self._on_view()
        return screen is None or not screen.query(IntervalTable)

    def _on_view(self) -> Screen[object] | None:
        """The screen on view; none once the app has closed its screens (a recorder's
        message may still be on its way)."""
        try:
            return self.screen
        except (ScreenStackError, UnknownModeError):
            return None

    def on_loaded(self, message: Loaded) -> None:
        if self._gone():
            self._submitted = None  # its screen is lost: Enter in the prompt sends it again
            return
        if message.request is not self._pending:
            return  # a newer request is under way
        self._pending = None
        state = message.state
        if state.screen == self.state.screen:
            state = replace(state, hpage=self.state.hpage)  # paged (F10/F11) while it loaded
        self._select = state.selected  # back from a drill: the row it was drilled from
        self._select_column = state.column  # and its column
        self.state = replace(state, selected=None, column=None)
        self.model = message.model
        if message.notice:
            self._message = message.notice
        elif self._message.startswith("recording:") and message.model.recorded:
            self._message = ""
        if self._live and self._recorder is not None and not message.model.recorded:
            self._start_countdown()
        elif self._countdown is not None:
            self._countdown.stop()
            self._countdown = None
        self._close_answered_prompt()  # in this frame, with the screen it led to
        self._render()
        if self._to_newest:
            self._to_newest = False
            self.table.show_newest()
            self._render_header()  # the range of the rows now on view
        if self._queued:
            self._queued.pop(0)()  # the next key of a burst, from where this one led

    def on_unmoved(self, message: Unmoved) -> None:
        if message.request is self._pending:
            self._pending = None
            self._queued.clear()  # the keys after it would find nowhere either

    def on_notice(self, message: Notice) -> None:
        self._to_newest = False  # a step in time that found nothing
        graph = getattr(self._on_view(), "notice", None)  # the graph view (g) says it
        if graph is not None:
            graph(message.text)
            return
        if self._gone():
            return
        if message.request is not None and message.request is self._pending:
            self._close_answered_prompt()  # what it asked for could not be read
            self._pending = None
            self._queued.clear()
        self._message = message.text
        self._render_status()

    def on_recorded(self, message: Recorded) -> None:
        graph = getattr(self._on_view(), "recorded", None)  # the graph view (g) follows too
        if graph is not None:
            graph()
            return
        if self._gone():
            return
        if self.state.following and not self.state.drilled:
            self.reload()
        else:
            self._render_status()

    # --- before the first interval (live) ---------------------------------------------

    def _sampled(self, first: FirstSample) -> None:
        """A first sample, from the recorder's thread."""
        self.post_message(Sampled(first))

    def on_sampled(self, message: Sampled) -> None:
        if self._gone():
            return
        first = message.first
        self._firsts[first.sample.source] = first
        if self._first_boundary_us is None and self._interval_s:
            boundary = next_boundary(first.sample.time_us / 1e6, self._interval_s)
            self._first_boundary_us = round(boundary * 1e6)
        if self.model is None or not self.model.recorded:
            self._render()

    def _preview(self) -> ScreenModel | None:
        """The screen as the first samples show it, while nothing is recorded yet."""
        if not self._firsts:
            return None
        slot, config = first_slot(list(self._firsts.values()))
        screen = catalog.get(self.state.screen)
        note = f"First sample at {hms(slot.end_us)}: rates and percentages come with the " + (
            f"first interval, at {hms(self._first_boundary_us)}."
            if self._first_boundary_us
            else "first interval."
        )
        query = self._query(self.state, self._window())
        model = catalog.model_of(
            screen, [slot], config, query, node_of(config), None, recorded=False, notes=(note,)
        )
        if model.rows:
            return model
        sources = ", ".join(sorted(self._firsts))
        missing = f"{screen.name} needs {screen.needs}: the first samples ({sources}) hold none."
        return replace(model, notes=(missing, *model.notes))

    def _start_countdown(self) -> None:
        if self._countdown is None:
            self._countdown = self.set_interval(1.0, self._render_status)

    def _waiting(self) -> str:
        """The status while the first interval is not over yet."""
        if self._first_boundary_us is None:
            return "recording: waiting for the first sample"
        left = max(0, round(self._first_boundary_us / 1e6 - time.time()))
        at = hms(self._first_boundary_us)
        return f"recording: the first interval ends at {at} (in {format_duration(left)})"

    # --- drawing ----------------------------------------------------------------------

    def _content_width(self) -> int:
        """The table's width less its vertical scrollbar: a page never runs under it."""
        table = self.table
        bar = table.styles.scrollbar_size_vertical
        return max((table.size.width or self.size.width) - bar, MIN_WIDTH)

    def _shown_model(self) -> ScreenModel | None:
        model = self.model
        if self._live and self._recorder is not None and (model is None or not model.recorded):
            return self._preview() or model
        return model

    def _render(self) -> None:
        model = self._shown_model()
        if model is None:
            return
        width = self._content_width()
        all_pages = pages(model, width)
        hpage = min(self.state.hpage, len(all_pages) - 1)
        columns = all_pages[hpage]
        shown = body(model, columns)
        spans, x = [], 0
        for c in columns:
            spans.append((x, x + c.cell_width))
            x += c.cell_width + 1
        self._layout = Layout(model, columns, hpage, len(all_pages), width)
        # (of the table before: back from a drill, its cursor says nothing of this view)
        on_newest = self.table.at_top and self._select is None
        kept = self._select_column or self._column_id()
        self._select_column = None
        self.table.set_content(shown, spans, self._select)
        self._select = None
        if on_newest and self.state.following:
            self.table.move(-len(shown.lines))  # following live: stay on the newest interval
        self._columns = columns
        # the column cursor stays on its column by id (another screen, page or layout: on
        # none where it has no such column), never on whatever sits at its old place
        ids = [c.id for c in columns]
        self.table.column_cursor = ids.index(kept) if kept in ids else None
        self._render_header()
        self._render_status()

    def _render_header(self) -> None:
        """The header of the layout shown, its time range that of the rows on view."""
        layout = self._layout
        if layout is None:
            return
        visible = self.table.visible_rows
        shown = (
            (min(r.start_us for r in visible), max(r.end_us for r in visible)) if visible else None
        )
        status = self.query_one("#status", Static).outer_size.height
        room = self.size.height - status - ROWS_BELOW_NOTES
        self.header.set_lines(
            header_lines(
                layout.model, layout.columns, layout.page, layout.pages, layout.width, shown, room
            )
        )

    def on_interval_table_viewed(self, message: IntervalTable.Viewed) -> None:
        if not self._gone():  # the table's message may come as the app closes its screens
            self._render_header()

    def on_interval_table_moved(self, message: IntervalTable.Moved) -> None:
        """A message about an earlier key is past once the user moves on."""
        if self._message and not self._gone():
            self._forget_said()
            self._render_status()

    def on_interval_table_resized(self, message: IntervalTable.Resized) -> None:
        if self._gone():
            return
        idle = self._pending is None and self.model is not None  # else a request will fill it
        if idle and not self.state.drilled and self._window() > self._fetched:  # taller
            self.reload()
            return
        self._render()

    def _render_status(self) -> None:
        state = self.state
        if state.drilled:
            mode = "DRILLED"
        elif not self._live:
            mode = "REPLAY"
        else:
            mode = "LIVE" if state.following else "PAUSED"
        length = (
            "as recorded"
            if state.interval_len_us is None
            else format_duration(state.interval_len_us / 1e6)
        )
        parts = [f" {mode}", f"interval {length}"]
        if "normalized" in state.options:
            parts.append("normalized")
        waiting = self._live and self._recorder is not None
        if waiting and (self.model is None or not self.model.recorded):
            parts.append(self._waiting())
        elif self._message:
            parts.append(self._message)
        parts.append("? help  q quit")
        self.query_one("#status", Static).update(Text("  |  ".join(parts)))

    # --- recorder ---------------------------------------------------------------------

    @work(thread=True, group="recorder")
    def _run_recorder(self) -> None:
        assert self._recorder is not None

        def recorded(interval: Interval) -> None:
            self.post_message(Recorded(interval.end_us))

        def warn(text: str) -> None:
            self.post_message(Notice(text))

        # The recorder runs in a thread of its own; this worker ends it when Textual cancels
        # the worker at exit (a thread worker cannot be interrupted otherwise).
        worker = get_current_worker()
        thread = threading.Thread(
            target=self._recorder,
            args=(self._stop, recorded, warn),
            name="esatui-recorder",
            daemon=True,
        )
        self._recorder_thread = thread
        thread.start()
        while thread.is_alive():
            if worker.is_cancelled:
                self._stop.set()
            thread.join(0.1)

    # --- actions ----------------------------------------------------------------------

    def _column_id(self) -> str | None:
        """The id of the column under the column cursor, if any."""
        index = self.table.column_cursor
        return self._columns[index].id if index is not None and index < len(self._columns) else None

    def action_column(self, delta: int) -> None:
        columns = self._columns
        if not columns:
            return
        current = self.table.column_cursor
        start = (-1 if delta > 0 else len(columns)) if current is None else current
        index = start + delta
        # Tab stops on measurements, Util% among ESACRYPA's keys too (g and d read it)
        while 0 <= index < len(columns) and (
            columns[index].id == "time" or names_entity(columns[index])
        ):
            index += delta
        self.table.column_cursor = index if 0 <= index < len(columns) else None
        self.table.refresh()

    def action_drill(self) -> None:
        row = self.table.selected_row
        if row is None or self.model is None or not self.model.recorded:
            return
        target = row.drill
        columns = self._columns
        index = self.table.column_cursor
        if index is not None and index < len(columns) and columns[index].drill:
            node = row.drill.node if row.drill else None
            target = Drill(columns[index].drill or "", row.start_us, row.end_us, node=node)
        if target is None:
            self._say(f"{self.state.screen} has no drill-down here")
            return
        try:
            self.reload(replace(self.state, selected=row, column=self._column_id()).drill(target))
        except KeyError:
            self._say(f"{target.screen} is not available in this esatui")

    def action_go_back(self) -> None:
        if self._marks.started:  # a comparison half marked: Esc drops it, the view stays
            self._marks = Marks()
            self._say("range marks cleared")
            return
        back = self.state.go_back()
        if back is None:
            self._say("nothing to go back to")
            return
        self.reload(back)

    def action_page(self, direction: int) -> None:
        table = self.table
        seen = table.intervals_seen() if direction > 0 and not self.state.drilled else None
        if seen is not None and not table.at_bottom and not self._holds_oldest():
            # fewer lines below the view than a page: the next begins with its first
            # interval not shown whole (a page of its few lines is no page)
            self._shift_window(seen)
        elif (direction > 0 and not table.at_bottom) or (direction < 0 and not table.at_top):
            self._forget_said()
            table.page(direction)
            self._render_status()
        elif not self.state.drilled and direction > 0 and self.model and self.model.rows:
            # the page just before the oldest interval shown (or "oldest interval")
            self._shift_window(len({r.end_us for r in self.model.rows}))
        elif not self.state.drilled:  # a page newer: as many intervals as one shows whole
            self._shift_window(-(table.intervals_seen() or self._window()))
        else:  # the drilled interval's end: say why nothing moved
            self._say("one interval drilled into: [ and ] step to its neighbours")

    def _holds_oldest(self) -> bool:
        """Whether the rows loaded reach back to the recording's oldest interval."""
        model = self.model
        if model is None or not model.rows or model.extent is None:
            return False
        return min(r.start_us for r in model.rows) <= model.extent.start_us

    def action_hpage(self, delta: int) -> None:
        model = self._shown_model()
        n = len(pages(model, self._content_width())) if model else 1
        moved = self.state.page(delta, n)
        if moved.hpage == min(self.state.hpage, n - 1):
            end = "first" if delta < 0 else "last"
            self._say("the only horizontal page" if n == 1 else f"{end} horizontal page of {n}")
            return
        self._forget_said()
        self.state = moved
        self._render()  # a load under way keeps this page (on_loaded)

    def _after_load(self, action: Callable[[], None]) -> bool:
        """Whether ``action`` waits for the load under way: keys typed in a burst each
        move on from where the one before led (``+ +`` is two steps, not one twice)."""
        if self._pending is None:
            return False
        self._queued.append(action)
        return True

    def action_step(self, direction: int) -> None:
        if self._after_load(partial(self.action_step, direction)):
            return
        if self.state.drilled:
            self._move(Neighbour(direction))
        else:
            self._to_newest = True  # the rows on view are the window moved to
            self._shift_window(-direction)

    def action_pause(self) -> None:
        if not self._live or self.state.drilled:
            return
        if self.state.following:
            newest = self._newest_shown()
            self.reload(self.state.at(newest))
        else:
            self.reload(self.state.at(None))

    def action_length(self, direction: int) -> None:
        if self._after_load(partial(self.action_length, direction)):
            return
        self._move(Length(direction))

    def action_option(self, option: str) -> None:
        screen = catalog.get(self.state.screen)
        if option not in screen.options:
            self._say(f"{screen.name} has no {option} view")
            return
        self.reload(self.state.toggle(option))

    def action_sort(self) -> None:
        screen = catalog.get(self.state.screen)
        if not screen.sorts:  # no sort here: the s of a screen's name (ssum)
            self.action_prompt("screen", "s")
            return
        self.reload(self.state.sort_next(screen.sorts))

    # --- graphs (g: esatui/tui/graph.py) -----------------------------------------------

    @property
    def thresholds(self) -> dict[str, Threshold]:
        return self._thresholds

    def action_graph(self) -> None:
        from esatui.screens.graph import numeric_columns
        from esatui.tui.graph import GraphScreen, choice_for

        model = self.model
        if model is None or not model.rows or not model.recorded:
            self._say(f"{self.state.screen}: no interval to graph")
            return
        numeric = numeric_columns(model)
        if not numeric:
            self._say(f"{model.name} has no column to graph")
            return
        index = self.table.column_cursor
        shown = self._columns
        column = shown[index].id if index is not None and index < len(shown) else None
        choice = choice_for(model, column, self.table.selected_row, lambda: numeric[0].id)
        state = self.state.jump(self.state.until_us or 0) if self.state.drilled else self.state
        self._graph_open = True
        self.push_screen(GraphScreen(self, state, model, choice), self._graph_closed)

    def _graph_closed(self, state: ViewState | None) -> None:
        """Back from the graph: at the interval chosen (Enter), else as it was (reloaded:
        what came while the graph was shown was not drawn)."""
        self._graph_open = False
        self.reload(state)

    VIEW_ACTIONS = frozenset({"help", "quit", "pop_screen"})
    """The app's actions a view over the table (graph, comparison, distribution) allows:
    its own keys are its screen's; the table's would act on the hidden table."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While a view is shown over the table, the table's keys are the view's (or
        nothing); the command palette over the table is not such a view."""
        from textual.command import CommandPalette

        over = [s for s in self.screen_stack[1:] if not isinstance(s, CommandPalette)]
        return not (self._graph_open or over) or action in self.VIEW_ACTIONS

    def graph_read(
        self, state: ViewState, later: tuple[int, int] | None, length: int, limit: int
    ) -> tuple[ViewState, ScreenModel] | None:
        """(The graph view's worker.) Where ``later`` or ``length`` leads from ``state``, and
        the screen model of ``limit`` intervals up to there."""
        move: Move | None = Later(*later) if later else Length(length) if length else None
        try:
            with self._reader_lock:
                if self._stop.is_set():
                    return None
                reader = self._open_reader()
                target = state if move is None else self._target(reader, state, move)
                if target is None:
                    return None
                model = catalog.build_model(reader, target.screen, self._query(target, limit))
        except (StoreError, OSError) as exc:
            self.post_message(Notice(str(exc)))
            return None
        except _READING_ERRORS as exc:
            self.post_message(Notice(self._damage(exc)))
            return None
        return target, model

    def action_help(self) -> None:
        model = self._shown_model()
        columns = model.columns if model else catalog.get(self.state.screen).columns
        thresholds = self._thresholds or DEFAULT_THRESHOLDS
        content = help_content(self.state.screen, columns, thresholds, graph=self._graph_open)
        self.push_screen(HelpScreen(content))

    def action_prompt(self, kind: str, initial: str = "") -> None:
        prompt = self.query_one("#prompt", Input)
        self._prompt_kind = kind
        prompt.placeholder = (
            "screen name (ESALNXC, lnxc, usr2 ...)"
            if kind == "screen"
            else "time (14:30, -2h, 2026-11-21 14:30)"
        )
        prompt.value = initial
        prompt.cursor_position = len(initial)
        prompt.add_class("visible")
        prompt.focus()
        self._submitted = None

    def _close_prompt(self) -> None:
        self._submitted = None
        self.query_one("#prompt", Input).remove_class("visible")
        self.table.focus()

    def _close_answered_prompt(self) -> None:
        """Close the prompt whose screen arrived (or failed to), unless something was typed
        into it since: that stays, to be sent or dismissed."""
        submitted, self._submitted = self._submitted, None
        if submitted is not None and self.query_one("#prompt", Input).value == submitted:
            self._close_prompt()

    def _screen_state(self, name: str) -> ViewState | None:
        """Where showing screen ``name`` leads; ``None``, said why, if there is no such
        screen."""
        try:
            screen = catalog.get(name)
        except KeyError as exc:
            self._say(str(exc.args[0]))
            return None
        return self.state.go_screen(screen.name)

    def go_screen(self, name: str) -> None:
        """Show screen ``name`` (Esc comes back to the one shown now)."""
        state = self._screen_state(name)
        if state is not None:
            self.reload(state)

    def _time_state(self, text: str) -> ViewState | None:
        """Where jumping to the time ``text`` leads; ``None``, said why, if it is no time."""
        # "14:30" and "-2h" are read from the day being looked at, not from today
        newest = self._newest_shown()
        following = self._live and self.state.following
        seen = None if following or newest is None else newest / 1e6
        # "14:30" on the day the newest interval lies in: one ending at midnight is the
        # day before's
        day = None if seen is None else seen - 1e-6
        try:
            moment = parse_time(text, now=seen, day=day)
        except ParseError as exc:
            self._say(str(exc))
            return None
        return self.state.jump(moment)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.value == self._submitted:
            return  # Enter again: what it asks for is already on its way
        text = event.value.strip()
        state = None
        if text:
            state = (
                self._screen_state(text)
                if self._prompt_kind == "screen"
                else self._time_state(text)
            )
        if state is None:
            self._close_prompt()  # at once: a message goes on the line the prompt covers
            return
        # The prompt stays, showing what was asked, until the screen it leads to arrives
        # and closes with that screen's frame: giving the focus back to the table first
        # restyled and repainted the old screen under the load (a jump 10 to 25 ms slower).
        self._submitted = event.value
        self.reload(state)

    def on_key(self, event: events.Key) -> None:
        prompt = self.query_one("#prompt", Input)
        if prompt.has_class("visible"):
            if event.key == "escape":
                self._close_prompt()
                event.stop()
            elif not prompt.has_focus and event.is_printable and event.character:
                # typed in one burst with the key that opened the prompt (a paste, a slow
                # link): delivered before the prompt took the focus, it goes into the prompt
                prompt.insert_text_at_cursor(event.character)
                event.stop()
                event.prevent_default()
            return
        if (
            event.character
            and event.character in self.NAME_KEYS
            and self.screen is self.screen_stack[0]
        ):
            event.stop()
            self.action_prompt("screen", event.character)

    def palette_commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        """The command palette's entries: each screen, then each action."""
        out: list[tuple[str, str, Callable[[], object]]] = [
            (f"{s.name}  {s.title}", f"show {s.doc}", partial(self.go_screen, s.name))
            for s in catalog.screens().values()
        ]
        out += [(name, what, partial(self.run_action, action)) for name, what, action in ACTIONS]
        return out

    # --- comparisons and distributions (issue 17) --------------------------------------

    def action_mark(self) -> None:
        row = self.table.selected_row
        if row is None or self.model is None or not self.model.recorded:
            self._say(f"{self.state.screen}: no interval to mark")
            return
        start, end = row.start_us, row.end_us
        after, until, _ = self.state.query_window(0)  # a partial bucket's part on view
        start = start if after is None else max(start, after)
        end = end if until is None else min(end, until)
        self._marks, said = self._marks.mark(start, end)
        self._say(said)
        pair = self._marks.pair
        if pair is not None:
            self._marks = Marks()
            whole = replace(self._query(self.state, 0), interval_len_us=None, limit=None)
            query = replace(whole, snap=False)
            screen = self.state.screen
            self._open_view("compare", lambda r: comparison_lines(r, screen, query, pair))

    def action_distribution(self) -> None:
        row, model, index = self.table.selected_row, self.model, self.table.column_cursor
        if row is None or model is None or not model.recorded:
            self._say(f"{self.state.screen}: no interval to read")
            return
        if index is None or index >= len(self._columns):
            self._say("d: Tab to a column first")
            return
        column = self._columns[index]
        if column.id == "time" or names_entity(column):
            self._say("d: Tab to a column first")
            return
        if self.state.interval_len_us is None:
            self._say("d shows the intervals recorded inside each longer one: + first")
            return
        if column.is_text:
            self._say(f"d: {column.id} is text")
            return
        entity = entity_key(key_columns(model.columns), row)
        query = self._query(self.state, len(model.rows))
        width = self._content_width()
        self._say(f"d: reading the intervals recorded inside the {len(model.rows)} rows shown")
        self._open_view(
            "distribution",
            lambda r: distribution_lines(r, model, query, column.id, entity, width),
        )

    @work(thread=True, exclusive=True, group="view")
    def _open_view(self, kind: str, make: Callable[[Reader], list[str]]) -> None:
        try:
            with self._reader_lock:
                if self._stop.is_set():
                    return
                lines = make(self._open_reader())
        except (StoreError, OSError, RuntimeError) as exc:
            self.post_message(Notice(str(exc)))
            return
        except _READING_ERRORS as exc:
            self.post_message(Notice(self._damage(exc, keep=isinstance(exc, ValueError))))
            return
        self.post_message(ViewReady(kind, lines))

    def on_view_ready(self, message: ViewReady) -> None:
        if not self._gone():
            self._forget_said()  # "reading ...", "comparing ...": done, and under the view
            self._render_status()
            self.push_screen(TextView(message.kind, message.lines))

    # --- helpers ----------------------------------------------------------------------

    def _say(self, text: str) -> None:
        self._message = text
        self._render_status()

    def _forget_said(self) -> None:
        """Drop a message about an earlier key; the recorder's own line stays."""
        if not self._message.startswith("recording:"):
            self._message = ""

    def _newest_shown(self) -> int | None:
        rows = self.model.rows if self.model else ()
        return rows[0].end_us if rows else None

    def _shift_window(self, intervals: int) -> None:
        """Move the window ``intervals`` intervals back in time (negative: forward)."""
        rows = self.model.rows if self.model else ()
        if not rows:
            self._say(f"{self.state.screen}: no interval to move from")
            return
        self._message = ""
        if intervals > 0:
            ends = sorted({r.end_us for r in rows}, reverse=True)
            index = min(intervals, len(ends) - 1)
            if intervals >= len(ends):
                oldest = min(r.start_us for r in rows)
                extent = self.model.extent if self.model else None
                if extent is not None and oldest <= extent.start_us:
                    self._say("oldest interval")
                    return
                # the one before the oldest shown ends where it starts (a bucket is not cut)
                self.reload(self.state.at(oldest))
            else:
                self.reload(self.state.at(ends[index]))
            return
        self._move(Later(rows[0].end_us, -intervals))
