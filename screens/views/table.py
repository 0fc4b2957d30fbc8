"""Line-API widgets for the fixed-layout screens: the header block and the interval table.

Both draw the lines the text renderer produced (``screens.render``), so what the TUI shows
is what ``esatui export --format text`` prints. Collected strings arrive as plain segments
and are never parsed as markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

from esatui.screens.model import Column, Row
from esatui.screens.render import Body, Line
from esatui.screens.rowkey import entity_key, key_columns

STYLES: dict[str, Style] = {
    "title": Style(bold=True, color="bright_white"),
    "group": Style(color="cyan"),
    "colhead": Style(bold=True, color="cyan"),
    "rule": Style(color="bright_black"),
    "note": Style(color="yellow", italic=True),
    "value": Style(color="green"),
    "subtotal": Style(color="bright_green", bold=True),
    "warn": Style(color="black", bgcolor="yellow", bold=True),
    "crit": Style(color="bright_white", bgcolor="red", bold=True),
    "date": Style(color="magenta", bold=True),
}
CURSOR = Style(reverse=True)
COLUMN_CURSOR = Style(underline=True, bold=True)


def to_strip(line: Line, extra: Style | None = None) -> Strip:
    segments = [Segment(text, STYLES.get(style)) for text, style in line]
    strip = Strip(segments)
    return strip.apply_style(extra) if extra is not None else strip


class ScreenHeader(Widget):
    """The two-line ESAMON header, notes, group and column headers, and the rule."""

    DEFAULT_CSS = "ScreenHeader { height: auto; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._lines: list[Line] = []
        self._scroll_x = 0

    def set_lines(self, lines: Sequence[Line], scroll_x: int = 0) -> None:
        self._lines = list(lines)
        self._scroll_x = scroll_x
        self.refresh(layout=True)

    @property
    def text_lines(self) -> list[str]:
        return ["".join(t for t, _ in line) for line in self._lines]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if y >= len(self._lines):
            return Strip.blank(width)
        return to_strip(self._lines[y]).crop_extend(self._scroll_x, self._scroll_x + width, None)


class IntervalTable(ScrollView, can_focus=True):
    """The rows of a screen, newest interval first, with a row cursor and a column cursor."""

    # No scrollbars: as on ESAMON's screens, every column belongs to the screen (a wide
    # screen pages horizontally); the header's time range says which rows are on view.
    DEFAULT_CSS = (
        "IntervalTable { height: 1fr; scrollbar-size-horizontal: 0; scrollbar-size-vertical: 0; }"
    )
    # The screen's own keys replace the scrolling ones a ScrollView has: the arrows move the
    # row cursor and the horizontal page, the page keys page (and move in time at the ends).
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", show=False),
        Binding("down", "move(1)", show=False),
        Binding("left", "app.hpage(-1)", show=False),
        Binding("right", "app.hpage(1)", show=False),
        Binding("pageup", "app.page(-1)", show=False),
        Binding("pagedown", "app.page(1)", show=False),
    ]

    cursor: reactive[int] = reactive(0, always_update=True)

    class Viewed(Message):
        """The rows on view changed (scrolled, or new content)."""

    class Resized(Message):
        """The table's size changed: its pages and header are laid out again."""

    class Moved(Message):
        """The user moved the cursor (a key, a click), not the table's new content."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._body = Body([], [])
        self._lines: list[Line] = []
        self._rows: list[Row | None] = []
        self._spans: list[tuple[int, int]] = []
        self.column_cursor: int | None = None

    # --- content ----------------------------------------------------------------------

    def set_content(
        self, body: Body, spans: Sequence[tuple[int, int]], select: Row | None = None
    ) -> None:
        """Replace the lines; the cursor goes to ``select``'s interval and entity, else stays
        on the same ones, if it can."""
        previous = select or self.selected_row
        self._body = body
        self._lines, self._rows, self._spans = body.lines, body.rows, list(spans)
        width = max((sum(len(t) for t, _ in line) for line in self._lines), default=0)
        self.virtual_size = Size(width, len(self._lines))
        target = self._find(previous) if previous is not None else None
        self.cursor = target if target is not None else self._first_row()
        if self.column_cursor is not None and self.column_cursor >= len(self._spans):
            self.column_cursor = None
        self.refresh()
        self.post_message(self.Viewed())

    @property
    def visible_rows(self) -> list[Row]:
        """The rows on the lines the table shows now."""
        top = int(self.scroll_offset.y)
        height = self.scrollable_content_region.height or self.size.height
        return [r for r in self._rows[top : top + height] if r is not None]

    def _find(self, row: Row) -> int | None:
        """The line of ``row``'s interval and entity, else of its interval's first row (a
        screen of other entities: the cursor keeps its time)."""
        keys = key_columns(self._body.columns)
        first = None
        for i, candidate in enumerate(self._rows):
            if candidate is None or candidate.end_us != row.end_us:
                continue
            if _same(keys, candidate, row):
                return i
            first = i if first is None else first
        return first

    def _first_row(self) -> int:
        for i, row in enumerate(self._rows):
            if row is not None:
                return i
        return 0

    @property
    def selected_row(self) -> Row | None:
        if 0 <= self.cursor < len(self._rows):
            return self._rows[self.cursor]
        return None

    @property
    def line_count(self) -> int:
        return len(self._lines)

    @property
    def text_lines(self) -> list[str]:
        return ["".join(t for t, _ in line) for line in self._lines]

    # --- movement ---------------------------------------------------------------------

    def move(self, delta: int) -> None:
        """Move the cursor by ``delta`` rows, skipping date lines."""
        i = self.cursor
        step = 1 if delta > 0 else -1
        for _ in range(abs(delta)):
            j = i + step
            while 0 <= j < len(self._rows) and self._rows[j] is None:
                j += step
            if not 0 <= j < len(self._rows):
                break
            i = j
        self.cursor = i

    def show_newest(self) -> None:
        """The window's newest lines on view, after a step in time: the cursor keeps its
        entity, in the oldest interval on view where its own row has left the screen
        (else the last row on view), so the rows on view are the window's."""
        height = max(1, self.size.height)
        row = self.selected_row
        if self.cursor >= height and row is not None:
            on_view = [i for i in range(min(height, len(self._rows))) if self._rows[i]]
            keys = key_columns(self._body.columns)
            same = [i for i in on_view if _same(keys, self._rows[i], row)]
            found = same or on_view
            if found:
                self.cursor = found[-1]
        self.scroll_to(y=0, animate=False, force=True)

    def page(self, direction: int) -> None:
        """Scroll a page (the height less one line of overlap) older or newer; the cursor
        moves as far and keeps its place on the screen."""
        height = max(1, self.size.height - 1)
        on_screen = self.cursor - int(self.scroll_offset.y)
        self.move(height if direction > 0 else -height)
        self.scroll_to(y=max(0, self.cursor - on_screen), animate=False, force=True)

    def intervals_seen(self) -> int | None:
        """How many intervals the lines from the top to the bottom of the view show whole,
        when the lines below it are fewer than a page (``page`` would scroll by them alone);
        ``None`` where a page scrolls on."""
        bottom = int(self.scroll_offset.y) + max(1, self.size.height)
        below = [r for r in self._rows[bottom:] if r is not None]
        if len(below) >= max(1, self.size.height - 1):
            return None
        cut = {r.end_us for r in below}
        return len({r.end_us for r in self._rows[:bottom] if r is not None} - cut) or None

    def action_move(self, delta: int) -> None:
        before = self.cursor
        self.move(delta)
        if self.cursor != before:
            self.post_message(self.Moved())

    def watch_cursor(self, old: int, new: int) -> None:
        self.scroll_to_region(Region(0, new, 1, 1), animate=False, force=True)
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        self.post_message(self.Resized())

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if round(old_value) != round(new_value):
            self.post_message(self.Viewed())

    @property
    def at_top(self) -> bool:
        return self.cursor <= self._first_row()

    @property
    def at_bottom(self) -> bool:
        return all(r is None for r in self._rows[self.cursor + 1 :])

    def on_click(self, event: events.Click) -> None:
        line = int(self.scroll_offset.y) + event.y
        if 0 <= line < len(self._rows) and self._rows[line] is not None:
            self.cursor = line
            self.post_message(self.Moved())
        x = int(self.scroll_offset.x) + event.x
        for i, (start, end) in enumerate(self._spans):
            if start <= x < end:
                self.column_cursor = i
                self.refresh()
                break

    # --- drawing ----------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = int(self.scroll_offset.x), int(self.scroll_offset.y)
        index = scroll_y + y
        width = self.size.width
        if index >= len(self._lines):
            return Strip.blank(width)
        # the top line of a page shows its interval's time even on the interval's later rows
        line = self._body.lead(index) if y == 0 else self._lines[index]
        if index == self.cursor and self.has_focus_within_app:
            strip = self._cursor_strip(line)
        else:
            strip = to_strip(line)
        return strip.crop_extend(scroll_x, scroll_x + width, None)

    @property
    def has_focus_within_app(self) -> bool:
        return self.has_focus or self.app.focused is None

    def _cursor_strip(self, line: Line) -> Strip:
        strip = to_strip(line, CURSOR)
        if self.column_cursor is None or not self._spans:
            return strip
        start, end = self._spans[self.column_cursor]
        middle = strip.crop(start, end).apply_style(COLUMN_CURSOR)
        return Strip.join([strip.crop(0, start), middle, strip.crop(end)])


def _same(keys: Sequence[Column], candidate: Row | None, row: Row) -> bool:
    """Whether two rows are of one entity (in any interval): ``keys``, the screen's columns
    that name it."""
    return candidate is not None and entity_key(keys, candidate) == entity_key(keys, row)
