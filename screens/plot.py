"""A graph drawn by plotext: on the monitor's plot widget, as text, or as an SVG image.

One function draws a :class:`~esatui.screens.graph.Graph` on a plotext figure: the
monitor's (textual-plotext's widget holds one) or a figure of its own for
``esatui export --format plot|svg``. The SVG is that text with its colours, rendered by
Rich's own terminal export (``Console(record=True).export_svg``): the picture is the graph
the terminal shows, with no second plotting stack to keep in step. Plain text draws each
line with its own character (a mail has no colours); colour draws braille lines.

Entity names reach plotext as plain strings and come back inside ANSI text, which
``Text.from_ansi`` reads without markup: a guest called ``[red]X`` is shown as typed.
"""

from __future__ import annotations

import io
import time
from collections.abc import Sequence
from typing import Any

from plotext._figure import _figure_class
from plotext._utility import uncolorize
from rich.console import Console
from rich.text import Text

from esatui.screens.graph import Graph, Plotted, Series
from esatui.screens.model import RowKind
from esatui.screens.render import format_duration

# colours of the lines (threshold lines are orange and red; the emphasised line white)
PALETTE = ("cyan", "green", "blue", "magenta", "yellow", "gray", "cyan+", "green+", "blue+")
EMPHASIS_COLOUR = "white"
OVERLAY_COLOUR = "magenta+"
WARN_COLOUR, CRIT_COLOUR = "orange", "red"
CURSOR_COLOUR = "yellow+"
# plain text: one character per line, the emphasised one the boldest
MARKS = ("+", "x", "o", "*", "%", "=", "~", "^", "&", "$")
EMPHASIS_MARK = "#"
OVERLAY_MARK = "@"
X_TICKS = 6


def new_figure() -> Any:
    """A plotext figure of its own (not the module's global one)."""
    return _figure_class()


def tick_labels(graph: Graph, count: int = X_TICKS) -> tuple[list[int], list[str]]:
    """Up to ``count`` x positions and their times (with the date when the graph spans
    days)."""
    n = graph.points
    if n == 0:
        return [], []
    spans_days = (
        time.localtime(graph.ends_us[0] / 1e6)[:3] != time.localtime(graph.ends_us[-1] / 1e6)[:3]
    )
    form = "%m/%d %H:%M" if spans_days else "%H:%M"
    step = max(1, round((n - 1) / max(count - 1, 1)))
    ticks = list(range(0, n, step))
    return ticks, [time.strftime(form, time.localtime(graph.ends_us[i] / 1e6)) for i in ticks]


def heading(graph: Graph) -> str:
    """The graph's title: screen, column (and overlay), node, interval length, and how
    many lines were left out."""
    length = (
        "as recorded" if graph.interval_len_s is None else format_duration(graph.interval_len_s)
    )
    what = _name(graph.primary)
    if graph.overlay is not None:
        what += f" and {_name(graph.overlay)} (right axis)"
    parts = [f"{graph.screen} {what}", graph.node, f"intervals {length}"]
    if graph.primary.omitted:
        parts.append(f"{graph.primary.omitted} more lines not drawn")
    for plotted in (graph.primary, graph.overlay):
        if plotted is not None and not any(v is not None for s in plotted.series for v in s.values):
            parts.append(f"{plotted.column.id}: no values in this range")
    return "  ".join(p for p in parts if p)


def _name(plotted: Plotted) -> str:
    unit = f" [{plotted.column.unit_text}]" if plotted.column.unit else ""
    return f"{plotted.column.id}{unit}"


def draw(
    fig: Any,
    graph: Graph,
    width: int,
    height: int,
    *,
    colour: bool = True,
    cursor: int | None = None,
    marker: str = "braille",
) -> None:
    """Draw ``graph`` on plotext figure ``fig``, ``width`` x ``height`` characters; a
    vertical line at point ``cursor``. ``marker``: plotext's for coloured lines (braille,
    2 x 4 dots a character; ``hd``, 2 x 2, takes plotext half the time)."""
    fig.clear_figure()
    fig._limit_size(False, False)  # the size asked for, whatever the terminal's (or none)
    fig.plotsize(width, height)
    fig.theme("pro" if colour else "clear")
    ticks, labels = tick_labels(graph, max(2, min(X_TICKS, width // 14)))
    if not ticks:
        return
    fig.xticks(ticks, labels)
    fig.ylabel(_name(graph.primary))
    drawn = list(graph.primary.series)
    # the emphasised line last, over the others
    drawn.sort(key=lambda s: s.label == graph.emphasis)
    for n, series in enumerate(drawn):
        emphasised = series.label == graph.emphasis and len(drawn) > 1
        label = series.label or graph.primary.column.id
        label = f"> {label}" if emphasised else label
        if series.kind is not RowKind.DATA and series.label != series.kind.value:
            label += f" ({series.kind.value})"
        if colour:
            style = {"marker": marker, "color": EMPHASIS_COLOUR if emphasised else _cycle(n)}
        else:
            style = {"marker": EMPHASIS_MARK if emphasised else MARKS[n % len(MARKS)]}
        _line(fig, series.values, label, style, "left")
    if graph.overlay is not None and graph.overlay.series:
        series = graph.overlay.series[0]
        label = graph.overlay.column.id + (f": {series.label}" if series.label else "")
        style = {"marker": "dot", "color": OVERLAY_COLOUR} if colour else {"marker": OVERLAY_MARK}
        _line(fig, series.values, label, style, "right")
        fig.ylabel(_name(graph.overlay), yside="right")
    legend = len(drawn) + (1 if graph.overlay is not None and graph.overlay.series else 0)
    _room_for_legend(fig, drawn, legend, height, "left")
    if graph.overlay is not None and graph.overlay.series:
        _room_for_legend(fig, graph.overlay.series[:1], legend, height, "right")
    threshold = graph.primary.threshold
    if threshold is not None:
        fig.hline(threshold.warn, WARN_COLOUR if colour else None)
        fig.hline(threshold.crit, CRIT_COLOUR if colour else None)
    if cursor is not None and 0 <= cursor < graph.points:
        fig.vline(cursor, CURSOR_COLOUR if colour else None)


LEGEND_FRAME_ROWS = 4
"""Rows of a plotext figure that are no canvas: its frame, the x ticks and their labels."""


def _room_for_legend(
    fig: Any, series: Sequence[Series], legend: int, height: int, side: str
) -> None:
    """An axis' top raised so that no value lies under the legend, which plotext writes over
    the canvas's top rows (``legend`` of them) at the left: the values keep the rows below.
    A legend of more than half the canvas is left over the values, which keep their rows."""
    values = [v for s in series for v in s.values if v is not None]
    rows = height - LEGEND_FRAME_ROWS  # the canvas
    if not values or not 0 < legend <= rows // 2:
        return
    low, high = min(values), max(values)
    span = high - low or abs(high) or 1.0
    fig.ylim(low, high + span * (legend + 1) / (rows - legend - 1), yside=side)


def _cycle(n: int) -> str:
    return PALETTE[n % len(PALETTE)]


def _line(
    fig: Any, values: tuple[float | None, ...], label: str, style: dict[str, str], side: str
) -> None:
    """One series; intervals without a value are left out (the line joins its
    neighbours)."""
    xs = [i for i, v in enumerate(values) if v is not None]
    ys = [v for v in values if v is not None]
    if xs:
        fig.plot(xs, ys, label=label, yside=side, **style)


def plot_text(graph: Graph, width: int = 132, height: int = 30, *, colour: bool = False) -> str:
    """The graph as terminal text under its heading: plain (``colour`` False: a character
    per line) or with ANSI colours."""
    fig = new_figure()
    draw(fig, graph, width, height - 1, colour=colour)
    text: str = fig.build()
    if not colour:
        text = uncolorize(text)
    lines = [heading(graph), *(line.rstrip() for line in text.splitlines())]
    return "\n".join(lines) + "\n"


def plot_svg(graph: Graph, width: int = 132, height: int = 30) -> str:
    """The graph as an SVG image: the coloured text, rendered by Rich."""
    console = Console(record=True, width=width, file=io.StringIO(), color_system="truecolor")
    console.print(Text.from_ansi(plot_text(graph, width, height, colour=True)))
    return console.export_svg(title=f"esatui {graph.screen} {graph.node}".strip())
