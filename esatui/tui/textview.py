"""A screen of text over the monitor (a comparison, a distribution): Esc returns."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static


class TextView(Screen[None]):
    """Lines of text computed by a worker, shown as they are (never read as markup)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f3", "app.pop_screen", "Back"),
        Binding("q", "app.quit", "Quit"),
    ]
    DEFAULT_CSS = """
    TextView { layout: vertical; }
    TextView VerticalScroll { height: 1fr; }
    TextView #view-status { height: 1; background: $panel; }
    """

    def __init__(self, kind: str, lines: list[str]) -> None:
        super().__init__()
        self.kind = kind
        self.lines = lines

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text("\n".join(self.lines), no_wrap=True), id="view-body")
        yield Static(Text(f" {self.kind}  |  Esc back  q quit"), id="view-status")

    @property
    def text_lines(self) -> list[str]:
        return list(self.lines)
