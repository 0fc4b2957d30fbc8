"""The help screen (``?``): every key, every column of the screen shown, its highlights.

Two columns, the name and its meaning: a meaning too long for the line wraps under itself,
so it stays readable at 80 columns; the whole scrolls (arrows, PgUp/PgDn, Home/End).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from esatui.screens.model import DEFAULT_THRESHOLDS, Column, Threshold, threshold_help

HELP_KEYS = (
    (
        "Enter",
        "drill down (on a column that leads somewhere, ESASSUM's, ESACPUU's Syst, ESAPOLL's "
        "CP cost: into that column's screen)",
    ),
    ("Esc, F3", "back (from a drill-down, and from a screen jumped to), to the row left"),
    ("Up, Down", "move the row cursor"),
    ("Tab, Shift+Tab", "move the column cursor"),
    (
        "PgUp/PgDn, F7/F8",
        "page up / down (at the top, PgUp goes on to newer intervals; near the "
        "bottom, PgDn to older ones, from the interval the screen cut; a drilled "
        "interval: [ and ] step)",
    ),
    ("Left/Right, F10/F11", "horizontal pages"),
    (": or a screen name", "jump to a screen: type its name (usr2, lnxc, ESACPUU ...)"),
    ("Ctrl+P", "the command palette: every screen and action, by name"),
    ("[ or t / ] or T", "previous / next interval"),
    ("j", "jump to a time (14:30 or -2h: from the day shown; 2026-11-21 14:30)"),
    ("space", "pause / resume the live view"),
    ("+ / -", "longer / shorter interval (aggregates recorded intervals)"),
    (
        "g",
        "graph of the column under the cursor over time, a line per entity (its own keys: "
        "? while it is shown)",
    ),
    ("n", "toggle a screen's view option (ESACPUU: normalized to full-speed engines)"),
    ("s", "sort by the next column, worst first (ESANODE)"),
    (
        "m",
        "mark a range: m on its first and on its last row, then on another's: the two "
        "compared side by side, with the delta in % (Esc returns; Esc before that drops "
        "the marks)",
    ),
    (
        "d",
        "aggregated (+): the distribution of the column under the cursor: per interval "
        "shown, mean, p50, p95, p99, max of the intervals recorded inside it, and a "
        "histogram (statistics of interval values, not of operations; Esc returns; while "
        "a graph, comparison or distribution is shown, the table's keys wait: its own "
        "keys, ? and q (quit) work)",
    ),
    ("?", "this help (arrows, PgUp/PgDn scroll it)"),
    ("q", "quit"),
)


# the graph view's own keys (g); the help shows them first while a graph is open
GRAPH_KEYS = (
    ("g, Esc", "back to the table"),
    ("Left, Right", "move the point cursor"),
    ("Enter", "the table at the interval under the point cursor"),
    ("Up, Down", "emphasise the previous / next entity (its line drawn over the others)"),
    ("o / O", "overlay the next / previous column on its own (right) axis, or none"),
    ("[ or t / ] or T", "one interval earlier / later"),
    ("PgUp/PgDn, F7/F8", "a graph's width earlier / later"),
    ("j", "jump to a time"),
    ("+ / -", "longer / shorter intervals"),
)


def _entries(rows: list[tuple[str, str]], name_width: int) -> Table:
    table = Table.grid(padding=(0, 2), expand=True)
    table.add_column(width=name_width, no_wrap=True)
    table.add_column(ratio=1, overflow="fold")
    for name, meaning in rows:
        table.add_row(Text(name), Text(meaning))
    return table


def help_content(
    screen_name: str,
    columns: tuple[Column, ...],
    thresholds: Mapping[str, Threshold] = DEFAULT_THRESHOLDS,
    *,
    graph: bool = False,
) -> RenderableType:
    """What ``?`` shows for a screen of these columns (collected text is never markup);
    with ``graph``, the graph view's keys first."""
    parts: list[RenderableType] = []
    if graph:
        parts += [Text("Graph keys", style="bold"), _entries(list(GRAPH_KEYS), 20), Text("")]
    parts += [Text("Keys", style="bold"), _entries(list(HELP_KEYS), 20)]
    described = []
    for c in columns:
        unit = f" [{c.unit_text}]" if c.unit else ""
        provisional = " (provisional: layout not publicly verified)" if c.provisional else ""
        described.append((c.id, f"{c.doc}{unit}{provisional}"))
    parts += [Text(f"\n{screen_name} columns", style="bold"), _entries(described, 18)]
    marks = threshold_help(columns, thresholds)
    if marks:
        parts.append(Text("\nHighlights (--threshold NAME=WARN,CRIT)", style="bold"))
        parts.append(_entries([("", line) for line in marks], 0))
    return Group(*parts)


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,f3", "dismiss", "Close"),
        Binding("q", "app.quit", "Quit"),  # q quits wherever it is pressed, as the help says
    ]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 100; max-width: 100%; height: auto; max-height: 100%;
                                  border: round cyan; padding: 0 1; background: $surface; }
    HelpScreen Static { width: 100%; }
    """

    def __init__(self, content: RenderableType) -> None:
        super().__init__()
        self.content = content

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(self.content)

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()
