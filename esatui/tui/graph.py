"""The graph view (``g``): a column of the screen over time, one line per entity.

It draws the same model the table shows (``screens/graph.py`` takes the series from it,
``screens/plot.py`` draws them on textual-plotext's widget), over as many intervals as the
plot is wide, ending where the table's newest row is. Time moves with the table's keys
(``[ ]``, PgUp/PgDn, ``j``, ``+``/``-``); Left/Right move a point cursor and Enter opens the
table at that interval, on the emphasised entity's row; Up/Down emphasise another entity;
``o`` overlays a second column on its own axis (the emphasised entity's line). Reading
happens in a thread worker through the monitor (:class:`GraphHost`), never on the UI thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import ClassVar, Protocol

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Input, Static
from textual_plotext import PlotextPlot

from esatui.screens.graph import (
    Graph,
    Plotted,
    entity_columns,
    entity_label,
    graph_of,
    numeric_columns,
)
from esatui.screens.model import Row, ScreenModel, Threshold
from esatui.screens.plot import draw, heading
from esatui.screens.render import moment_text
from esatui.timeparse import ParseError, parse_time
from esatui.tui.state import ViewState

AXES_WIDTH = 16
"""Characters of the plot that are not points (the y axes' labels and the frame)."""


class GraphHost(Protocol):
    """What the graph asks of the monitor (in its worker thread)."""

    def graph_read(
        self, state: ViewState, later: tuple[int, int] | None, length: int, limit: int
    ) -> tuple[ViewState, ScreenModel] | None:
        """The state ``later`` = (newest end, count) or ``length`` (+1/-1) leads to, and the
        screen model of its ``limit`` newest intervals; ``None`` when there is no such
        place (the monitor says why)."""
        ...

    @property
    def thresholds(self) -> dict[str, Threshold]: ...


@dataclass(frozen=True)
class GraphChoice:
    """What the graph shows of a model: which column, overlay and entity, the cursor."""

    column: str
    overlay: str | None = None
    emphasis: str | None = None
    cursor: int | None = None  # point index; None: the newest


class GraphScreen(Screen[ViewState | None]):
    """Dismissed with the table's view state for Enter (``None``: back as it was)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,g,f3", "close", "Table"),
        Binding("enter", "open_point", "Open", show=False),
        Binding("left", "cursor(-1)", show=False),
        Binding("right", "cursor(1)", show=False),
        Binding("up", "emphasis(-1)", show=False),
        Binding("down", "emphasis(1)", show=False),
        Binding("o", "overlay(1)", show=False),
        Binding("O", "overlay(-1)", show=False),
        Binding("left_square_bracket,t", "step(-1)", show=False),
        Binding("right_square_bracket,T", "step(1)", show=False),
        Binding("pageup,f7", "page(-1)", show=False),
        Binding("pagedown,f8", "page(1)", show=False),
        Binding("plus", "length(1)", show=False),
        Binding("minus", "length(-1)", show=False),
        Binding("j", "jump", show=False),
    ]
    DEFAULT_CSS = """
    GraphScreen { layout: vertical; }
    GraphScreen #graph-title { height: 1; }
    GraphScreen PlotextPlot { height: 1fr; }
    GraphScreen #graph-status { height: auto; max-height: 3; background: $panel; }
    GraphScreen #graph-prompt { dock: bottom; height: 1; border: none; padding: 0 1;
                                display: none; }
    GraphScreen #graph-prompt.visible { display: block; }
    """

    def __init__(self, host: GraphHost, state: ViewState, model: ScreenModel, choice: GraphChoice):
        super().__init__()
        self.host = host
        self.state = state
        self.model = model
        self.choice = choice
        self.graph: Graph | None = None
        self._message = ""
        self._pending: object = None
        self._limit = 0  # the intervals asked for by the last reading
        self._keep_us: int | None = None  # the point the cursor stays on after a refit

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(id="graph-title")
            plot = PlotextPlot(id="graph-plot")
            plot.display = False  # until there is a graph: no empty plot drawn first
            # no colours of its own behind the lines (the screen's background shows): half
            # the escape codes for Rich to read back on every render
            plot.theme = "clear"
            yield plot
            # disabled while hidden, so it never takes the keys meant for the graph
            yield Input(
                id="graph-prompt", placeholder="time (14:30, -2h, 2026-11-21 14:30)", disabled=True
            )
            yield Static(id="graph-status")

    @property
    def points(self) -> int:
        """As many intervals as the plot has columns for."""
        return max(8, (self.size.width or self.app.size.width) - AXES_WIDTH)

    def on_mount(self) -> None:
        self._fetch(self.state)

    # --- reading (in a worker) ----------------------------------------------------------

    def _fetch(
        self, state: ViewState, later: tuple[int, int] | None = None, length: int = 0
    ) -> None:
        request = object()
        self._pending = request
        self._limit = self.points
        self._read(request, state, later, length, self._limit)

    @work(thread=True, exclusive=True, group="graph")
    def _read(
        self,
        request: object,
        state: ViewState,
        later: tuple[int, int] | None,
        length: int,
        limit: int,
    ) -> None:
        found = self.host.graph_read(state, later, length, limit)
        if found is None:  # no such place (the monitor said why): the reading is over
            self.app.call_from_thread(self._answered, request)
        else:
            self.app.call_from_thread(self._loaded, request, *found)

    def _answered(self, request: object) -> bool:
        """Whether ``request`` is the reading awaited (it is over then)."""
        if request is not self._pending or not self.is_attached:
            return False
        self._pending = None
        return True

    def _loaded(self, request: object, state: ViewState, model: ScreenModel) -> None:
        if not self._answered(request):
            return
        self.state, self.model = state, model
        keep, self._keep_us = self._keep_us, None
        ends = sorted({row.end_us for row in model.rows})
        cursor = ends.index(keep) if keep in ends else None
        self.choice = replace(self.choice, cursor=cursor)
        self._draw()
        self._refit()  # resized while it was read

    # --- drawing ------------------------------------------------------------------------

    def _draw(self) -> None:
        choice = self.choice
        try:
            graph = graph_of(
                self.model, choice.column, choice.overlay, choice.emphasis, self.host.thresholds
            )
        except KeyError as exc:  # the column is not in this model (a screen option changed it)
            self._say(str(exc.args[0]))
            return
        self.graph = graph
        self.choice = replace(choice, emphasis=graph.emphasis)
        plot = self.query_one(PlotextPlot)
        cursor = self._cursor()
        # half blocks, not braille: plotext draws them in half the time, and a key redraws
        draw(
            plot.plt,
            graph,
            plot.size.width or 80,
            plot.size.height or 20,
            cursor=cursor,
            marker="hd",
        )
        plot.display = True
        plot.refresh()
        self.query_one("#graph-title", Static).update(Text(heading(graph)))
        self._render_status()

    def on_resize(self) -> None:
        if self.graph is not None:
            self._draw()
        self._refit()

    def _refit(self) -> None:
        """As many intervals as the width has columns, the cursor's point kept: read again
        where the width changed since the last reading, once no reading is under way (a
        time key's stays the one awaited)."""
        if self.graph is None or self._pending is not None or self.points == self._limit:
            return
        cursor = self._cursor()
        self._keep_us = None if self.choice.cursor is None else self.graph.ends_us[cursor or 0]
        self._fetch(self.state)

    def _cursor(self) -> int | None:
        if self.graph is None or not self.graph.points:
            return None
        if self.choice.cursor is None:
            return self.graph.points - 1
        return max(0, min(self.graph.points - 1, self.choice.cursor))

    def _render_status(self) -> None:
        parts = [" GRAPH"]
        graph, cursor = self.graph, self._cursor()
        if graph is not None and cursor is not None:
            parts.append(f"point {moment_text(graph.ends_us[cursor])}")
            value = self._value_at(graph, cursor)
            if value:
                parts.append(value)
        if self._message:
            parts.append(self._message)
        parts.append("Enter table at point  g/Esc table  ? help")
        self.query_one("#graph-status", Static).update(Text("  |  ".join(parts)))

    def _value_at(self, graph: Graph, cursor: int) -> str:
        """The emphasised (or only) line's value at the cursor, as text, and the overlay's
        beside it."""
        texts = [
            _point_text(graph.primary, graph.emphasis, cursor),
            "" if graph.overlay is None else _point_text(graph.overlay, graph.emphasis, cursor),
        ]
        return "  ".join(text for text in texts if text)

    def _say(self, text: str) -> None:
        self._message = text
        self._render_status()

    # --- actions ------------------------------------------------------------------------

    def action_close(self) -> None:
        self.dismiss(None)

    def action_open_point(self) -> None:
        cursor = self._cursor()
        if self.graph is None or cursor is None:
            return
        point = self.graph.ends_us[cursor]
        self.dismiss(replace(self.state, anchor_us=point, selected=self._emphasised(point)))

    def _emphasised(self, end_us: int) -> Row | None:
        """The emphasised line's row of the interval ending at ``end_us`` (the table's
        cursor goes there), if it has one."""
        keys = entity_columns(self.model)
        emphasis = self.graph.emphasis if self.graph is not None else None
        for row in self.model.rows:
            if row.end_us == end_us and entity_label(keys, row) == emphasis:
                return row
        return None

    def action_cursor(self, delta: int) -> None:
        cursor = self._cursor()
        if cursor is None:
            return
        self.choice = replace(self.choice, cursor=cursor + delta)
        self._draw()

    def action_emphasis(self, delta: int) -> None:
        if self.graph is None:
            return
        labels = [s.label for s in self.graph.primary.series]
        if len(labels) < 2:
            return
        index = labels.index(self.graph.emphasis) if self.graph.emphasis in labels else -1
        chosen = labels[(index + delta) % len(labels)]
        self.choice = replace(self.choice, emphasis=chosen)
        self._draw()

    def action_overlay(self, delta: int) -> None:
        ids: list[str | None] = [None]
        ids += [c.id for c in numeric_columns(self.model) if c.id != self.choice.column]
        index = ids.index(self.choice.overlay) if self.choice.overlay in ids else 0
        self.choice = replace(self.choice, overlay=ids[(index + delta) % len(ids)])
        self._draw()

    def action_step(self, direction: int) -> None:
        self._shift(direction)

    def action_page(self, direction: int) -> None:
        self._shift(direction * self.points)  # a graph's width, however many it shows now

    def _shift(self, count: int) -> None:
        """``count`` intervals later (negative: earlier)."""
        graph = self.graph
        if graph is None or not graph.points:
            return
        self._message = ""
        ends = graph.ends_us
        if count > 0:
            self._fetch(self.state, later=(ends[-1], count))
        elif -count < len(ends):
            self._fetch(self.state.at(ends[-1 + count]))
        else:
            extent = self.model.extent
            if extent is not None and graph.starts_us[0] <= extent.start_us:
                self._say("oldest interval")  # nothing before it to show
                return
            # the one before the oldest shown ends where it starts (a bucket is not cut)
            self._fetch(self.state.at(graph.starts_us[0]))

    def action_length(self, direction: int) -> None:
        self._fetch(self.state, length=direction)

    def action_jump(self) -> None:
        prompt = self.query_one("#graph-prompt", Input)
        prompt.value = ""
        prompt.disabled = False
        prompt.add_class("visible")
        prompt.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._hide_prompt()
        text = event.value.strip()
        if not text:
            return
        seen = self.graph.ends_us[-1] / 1e6 if self.graph and self.graph.points else None
        day = None if seen is None else seen - 1e-6  # as the table's j: a midnight end's day
        try:
            moment = parse_time(text, now=seen, day=day)
        except ParseError as exc:
            self._say(str(exc))
            return
        self._fetch(self.state.jump(moment))

    def _hide_prompt(self) -> None:
        prompt = self.query_one("#graph-prompt", Input)
        prompt.remove_class("visible")
        prompt.disabled = True
        self.set_focus(None)

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape" and self.query_one("#graph-prompt", Input).has_class("visible"):
            event.stop()
            self._hide_prompt()

    def recorded(self) -> None:
        """The live recorder committed an interval: a graph that follows the newest
        reloads."""
        if self.state.following and not self.state.drilled:
            self._fetch(self.state)

    def notice(self, text: str) -> None:
        """A message from the monitor (no interval further on, say)."""
        self._say(text)


def choice_for(
    model: ScreenModel, column_id: str | None, row: Row | None, default: Callable[[], str]
) -> GraphChoice:
    """The graph ``g`` opens: the column under the cursor (else ``default()``), the entity
    of the row under the cursor emphasised."""
    emphasis = entity_label(entity_columns(model), row) if row is not None else None
    numeric = {c.id for c in numeric_columns(model)}
    return GraphChoice(column_id if column_id in numeric else default(), emphasis=emphasis)


def _point_text(plotted: Plotted, emphasis: str | None, cursor: int) -> str:
    """``IFL 2 busy 41.3``: the emphasised (or only) line of ``plotted`` at the cursor."""
    column = plotted.column
    for series in plotted.series:
        if series.label == emphasis or len(plotted.series) == 1:
            value = series.values[cursor]
            decimals = 1 if column.decimals is None else column.decimals
            shown = "." if value is None else f"{value:,.{decimals}f}"
            return " ".join(part for part in (series.label, column.id, shown) if part)
    return ""
