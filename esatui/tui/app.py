"""The Textual monitor: one screen model at a time, live or replayed, driven by keys.

The UI never waits on I/O: key handlers only change the view state or ask a worker. Loading
a model, and finding where a key leads in time (the next interval, the page after), run in
thread workers that read through the navigator and post the result; the recorder (live
mode) runs in another worker and posts each committed interval. Only those workers touch
the database (a test wraps the reader to fail on the UI thread).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Static
from textual.worker import get_current_worker

from esatui.db.database import StoreError
from esatui.db.navigator import Navigator
from esatui.db.reader import Reader, Span
from esatui.db.records import Interval
from esatui.db.sqlite_reader import SqliteReader
from esatui.screens import catalog
from esatui.screens.model import (
    DEFAULT_THRESHOLDS,
    Column,
    Drill,
    ScreenModel,
    Threshold,
    threshold_help,
)
from esatui.screens.render import body, header_lines, pages
from esatui.screens.views.table import IntervalTable, ScreenHeader
from esatui.timeparse import ParseError, format_duration, parse_time
from esatui.tui.state import ViewState, resolve_screen

HELP_KEYS = (
    ("Enter", "drill down (ESASSUM: into the screen of the column under the cursor)"),
    ("Esc, F3", "back"),
    ("Up, Down", "move the row cursor"),
    ("Tab, Shift+Tab", "move the column cursor"),
    ("PgUp/PgDn, F7/F8", "page (older/newer intervals at the ends)"),
    ("Left/Right, F10/F11", "horizontal pages"),
    (": or a screen name", "jump to a screen (ESALNXC, lnxc, ovhd ...)"),
    ("[ or t / ] or T", "previous / next interval"),
    ("j", "jump to a time (14:30 or -2h: from the day shown; 2026-11-21 14:30)"),
    ("space", "pause / resume the live view"),
    ("+ / -", "longer / shorter interval (aggregates recorded intervals)"),
    ("n", "toggle a screen's view option (ESACPUU: normalized to full-speed engines)"),
    ("s", "sort by the next column, worst first (ESANODE)"),
    ("?", "this help"),
    ("q", "quit"),
)


RecordFn = Callable[[threading.Event, Callable[[Interval], None], Callable[[str], None]], None]
"""A live recorder: runs until the event is set, reports each interval and each warning."""


def open_reader(path: Path) -> Reader:
    """The database the monitor reads (only ever called in a worker)."""
    return SqliteReader.open(path)


@dataclass(frozen=True)
class Later:
    """Forward in time from the newest interval shown, by ``count`` intervals."""

    newest_us: int
    count: int


@dataclass(frozen=True)
class Neighbour:
    """A drilled view's next (``direction`` > 0) or previous interval."""

    direction: int


Move = Later | Neighbour


class Loaded(Message):
    """A model finished loading for a view state, asked for by ``request``."""

    def __init__(self, request: object, state: ViewState, model: ScreenModel) -> None:
        super().__init__()
        self.request = request
        self.state = state
        self.model = model


class Recorded(Message):
    """The recorder committed an interval (an immutable snapshot of its end)."""

    def __init__(self, end_us: int) -> None:
        super().__init__()
        self.end_us = end_us


class Notice(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,f3", "dismiss", "Close")
    ]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Static { width: 100; max-height: 90%; border: round cyan; padding: 0 1;
                          background: $surface; overflow-y: auto; }
    """

    def __init__(self, text: Text) -> None:
        super().__init__()
        self._text = text

    def compose(self) -> ComposeResult:
        yield Static(self._text)


def help_text(
    screen_name: str,
    columns: tuple[Column, ...],
    thresholds: Mapping[str, Threshold] = DEFAULT_THRESHOLDS,
) -> Text:
    text = Text()
    text.append("Keys\n", style="bold")
    for key, what in HELP_KEYS:
        text.append(f"  {key:<22}{what}\n")
    text.append(f"\n{screen_name} columns\n", style="bold")
    for c in columns:
        provisional = "  (provisional: layout not publicly verified)" if c.provisional else ""
        unit = f" [{c.unit}]" if c.unit else ""
        text.append(f"  {c.id:<18}{c.doc}{unit}{provisional}\n")
    marks = threshold_help(columns, thresholds)
    if marks:
        text.append("\nHighlights (--threshold NAME=WARN,CRIT)\n", style="bold")
        for line in marks:
            text.append(f"  {line}\n")
    return text


LOAD_GROUP = "load"  # the workers that read the database and build screen models


class MonitorApp(App[int]):
    TITLE = "esatui"
    CSS = """
    Screen { layout: vertical; layers: base prompt; }
    #status { height: 1; background: $panel; }
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
        Binding("e,E", "prompt('screen', 'E')", show=False),
        Binding("left_square_bracket,t", "step(-1)", show=False),
        Binding("right_square_bracket,T", "step(1)", show=False),
        Binding("j", "prompt('time')", show=False),
        Binding("space", "pause", show=False),
        Binding("plus", "length(1)", show=False),
        Binding("minus", "length(-1)", show=False),
        Binding("n", "option('normalized')", show=False),
        Binding("s", "sort", show=False),
        Binding("question_mark", "help", show=False),
        Binding("q", "quit", show=False),
    ]

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
        open_with: Callable[[], Reader] | None = None,
        refresh_s: float | None = None,
    ) -> None:
        """``db_path``, or ``open_with`` for another backend (Prometheus); ``refresh_s``: a
        live view of data another program records, looked at that often."""
        super().__init__()
        self._db_path = db_path
        self._open_with = open_with
        self._refresh_s = refresh_s
        self._live = live
        self._node = node
        self._thresholds = dict(thresholds) if thresholds else dict(DEFAULT_THRESHOLDS)
        self._recorder = recorder
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
        self._pending: object = None  # the request whose model is awaited

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
        threading.Thread(target=self._close_reader, name="esatui-close").start()

    def _close_reader(self) -> None:
        with self._reader_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None

    # --- reading (in workers) ---------------------------------------------------------

    def reload(self, state: ViewState | None = None) -> None:
        if state is not None:
            self.state = state
        self._pending = self.state
        self._load(self.state, self._window())

    def _window(self) -> int:
        """How many intervals a load fetches: as many as the table has lines."""
        return max(8, self.table.size.height or self.size.height - 8)

    def _move(self, move: Move) -> None:
        """Go where ``move`` leads, once a worker has found it."""
        request = object()
        self._pending = request
        self._navigate(request, self.state, move, self._window())

    @work(thread=True, exclusive=True, group=LOAD_GROUP)
    def _load(self, state: ViewState, limit: int) -> None:
        self._read(state, state, None, limit)

    @work(thread=True, exclusive=True, group=LOAD_GROUP)
    def _navigate(self, request: object, state: ViewState, move: Move, limit: int) -> None:
        self._read(request, state, move, limit)

    def _read(self, request: object, state: ViewState, move: Move | None, limit: int) -> None:
        try:
            with self._reader_lock:
                if self._stop.is_set():
                    return
                if self._reader is None:
                    if self._open_with is not None:
                        self._reader = self._open_with()
                    else:
                        assert self._db_path is not None
                        self._reader = open_reader(self._db_path)
                target = state if move is None else self._target(self._reader, state, move)
                if target is None:
                    return
                model = catalog.build_model(self._reader, target.screen, self._query(target, limit))
        except (StoreError, OSError) as exc:
            self.post_message(Notice(str(exc)))
            return
        self.post_message(Loaded(request, target, model))

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
        )

    def _target(self, reader: Reader, state: ViewState, move: Move) -> ViewState | None:
        """The view state ``move`` leads to (``None``, and a notice, when there is none)."""
        screen = catalog.get(state.screen)
        timeline = catalog.screen_timeline(screen, state.node or self._node, state.interval_len_us)
        navigator = Navigator(reader, timeline)
        if isinstance(move, Later):
            found = navigator.after(move.newest_us, move.count, until_us=state.until_us)
            if found is not None:
                return state.at(found.end_us)
            if self._live:
                return state.at(None)
            self.post_message(Notice("newest interval"))
            return None
        span: Span | None = None
        if move.direction > 0 and state.until_us is not None:
            span = navigator.after(state.until_us)
        elif move.direction < 0:
            span = navigator.before(state.after_us or 0)
        if span is None:
            self.post_message(Notice("no further interval"))
            return None
        return replace(state, after_us=span.start_us, until_us=span.end_us)

    def on_loaded(self, message: Loaded) -> None:
        if message.request is not self._pending:
            return  # a newer request is under way
        self.state = message.state
        self.model = message.model
        if self._live and not message.model.rows and self._recorder is not None:
            self._message = "recording: the first interval is not over yet"
        elif self._message.startswith("recording:"):
            self._message = ""
        self._render()

    def on_notice(self, message: Notice) -> None:
        self._message = message.text
        self._render_status()

    def on_recorded(self, message: Recorded) -> None:
        if self.state.following and not self.state.drilled:
            self.reload()
        else:
            self._render_status()

    # --- drawing ----------------------------------------------------------------------

    def _render(self) -> None:
        model = self.model
        if model is None:
            return
        width = max(self.size.width, 40)
        all_pages = pages(model, width)
        hpage = min(self.state.hpage, len(all_pages) - 1)
        columns = all_pages[hpage]
        self.header.set_lines(header_lines(model, columns, hpage, len(all_pages), width))
        shown = body(model, columns)
        spans, x = [], 0
        for c in columns:
            spans.append((x, x + c.cell_width))
            x += c.cell_width + 1
        on_newest = self.table.at_top
        self.table.set_content(shown.lines, shown.rows, spans)
        if on_newest and self.state.following:
            self.table.move(-len(shown.lines))  # following live: stay on the newest interval
        self._columns = columns
        self._render_status()

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
        if self._message:
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
        thread.start()
        while thread.is_alive():
            if worker.is_cancelled:
                self._stop.set()
            thread.join(0.1)

    # --- actions ----------------------------------------------------------------------

    def action_column(self, delta: int) -> None:
        columns = self._columns
        if not columns:
            return
        current = self.table.column_cursor
        start = (-1 if delta > 0 else len(columns)) if current is None else current
        index = start + delta
        while 0 <= index < len(columns) and columns[index].key:
            index += delta
        self.table.column_cursor = index if 0 <= index < len(columns) else None
        self.table.refresh()

    def action_drill(self) -> None:
        row = self.table.selected_row
        if row is None:
            return
        target = row.drill
        columns = self._columns
        index = self.table.column_cursor
        if index is not None and index < len(columns) and columns[index].drill:
            node = row.drill.node if row.drill else None
            target = Drill(columns[index].drill or "", row.start_us, row.end_us, node=node)
        if target is None:
            self._say(f"{self.state.screen} has no drill-down")
            return
        try:
            self.reload(self.state.drill(target))
        except KeyError:
            self._say(f"{target.screen} is not available in this esatui")

    def action_go_back(self) -> None:
        back = self.state.go_back()
        if back is not None:
            self.reload(back)

    def action_page(self, direction: int) -> None:
        table = self.table
        height = max(1, table.size.height - 1)
        if direction > 0 and not table.at_bottom:
            table.move(height)
        elif direction < 0 and not table.at_top:
            table.move(-height)
        elif not self.state.drilled and direction > 0 and self.model and self.model.rows:
            # the page just before the oldest interval shown
            self.reload(self.state.at(min(r.end_us for r in self.model.rows) - 1))
        elif not self.state.drilled:
            self._shift_window(-self._window())

    def action_hpage(self, delta: int) -> None:
        model = self.model
        n = len(pages(model, max(self.size.width, 40))) if model else 1
        self.state = self.state.page(delta, n)
        self._pending = self.state
        self._render()

    def action_step(self, direction: int) -> None:
        if self.state.drilled:
            self._move(Neighbour(direction))
        else:
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
        state = self.state.longer() if direction > 0 else self.state.shorter()
        self.reload(state)

    def action_option(self, option: str) -> None:
        screen = catalog.get(self.state.screen)
        if option not in screen.options:
            self._say(f"{screen.name} has no {option} view")
            return
        self.reload(self.state.toggle(option))

    def action_sort(self) -> None:
        screen = catalog.get(self.state.screen)
        if not screen.sorts:
            self._say(f"{screen.name} has no sort")
            return
        self.reload(self.state.sort_next(screen.sorts))

    def action_help(self) -> None:
        columns = self.model.columns if self.model else catalog.get(self.state.screen).columns
        thresholds = self._thresholds or DEFAULT_THRESHOLDS
        self.push_screen(HelpScreen(help_text(self.state.screen, columns, thresholds)))

    def action_prompt(self, kind: str, initial: str = "") -> None:
        prompt = self.query_one("#prompt", Input)
        self._prompt_kind = kind
        prompt.placeholder = (
            "screen name (ESALNXC, lnxc ...)"
            if kind == "screen"
            else "time (14:30, -2h, 2026-11-21 14:30)"
        )
        prompt.value = initial
        prompt.cursor_position = len(initial)
        prompt.add_class("visible")
        prompt.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        prompt = self.query_one("#prompt", Input)
        prompt.remove_class("visible")
        self.table.focus()
        text = event.value.strip()
        if not text:
            return
        if self._prompt_kind == "screen":
            name = resolve_screen(text)
            if name is None:
                self._say(f"no screen {text!r}; screens are {', '.join(catalog.screens())}")
                return
            self.reload(self.state.go_screen(name))
        else:
            # "14:30" and "-2h" are read from the day being looked at, not from today
            newest = self._newest_shown()
            following = self._live and self.state.following
            seen = None if following or newest is None else newest / 1e6
            try:
                moment = parse_time(text, now=seen)
            except ParseError as exc:
                self._say(str(exc))
                return
            base = self.state.go_back() if self.state.drilled else self.state
            root = base or self.state
            self.reload(replace(root, anchor_us=moment))

    def on_key(self, event: events.Key) -> None:
        prompt = self.query_one("#prompt", Input)
        if event.key == "escape" and prompt.has_class("visible"):
            prompt.remove_class("visible")
            self.table.focus()

    # --- helpers ----------------------------------------------------------------------

    def _say(self, text: str) -> None:
        self._message = text
        self._render_status()

    def _newest_shown(self) -> int | None:
        rows = self.model.rows if self.model else ()
        return rows[0].end_us if rows else None

    def _shift_window(self, intervals: int) -> None:
        """Move the window ``intervals`` intervals back in time (negative: forward)."""
        rows = self.model.rows if self.model else ()
        if not rows:
            return
        self._message = ""
        if intervals > 0:
            ends = sorted({r.end_us for r in rows}, reverse=True)
            index = min(intervals, len(ends) - 1)
            if intervals >= len(ends):
                self.reload(self.state.at(min(ends) - 1))
            else:
                self.reload(self.state.at(ends[index]))
            return
        self._move(Later(rows[0].end_us, -intervals))
