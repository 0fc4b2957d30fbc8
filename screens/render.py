"""Fixed-layout text rendering of a screen model, shared by the TUI and the text report.

Lines are sequences of (text, style) segments: the report joins the text, the Textual view
maps the style names to colours. Both therefore show the same characters.
"""

from __future__ import annotations

import functools
import math
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from esatui import __version__
from esatui.db.records import Flag
from esatui.screens.model import (
    MARKERS,
    PARTIAL_MARK,
    Column,
    Level,
    Row,
    RowKind,
    ScreenModel,
    Value,
)

Segment = tuple[str, str]  # (text, style name)
Line = tuple[Segment, ...]

STYLE_TITLE = "title"
STYLE_GROUP = "group"
STYLE_HEAD = "colhead"
STYLE_RULE = "rule"
STYLE_NOTE = "note"
STYLE_VALUE = "value"
STYLE_SUBTOTAL = "subtotal"
STYLE_DATE = "date"
LEVEL_STYLE = {Level.NONE: STYLE_VALUE, Level.WARN: "warn", Level.CRIT: "crit"}

_INF = math.inf
_SCALES = (("K", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12))

# The narrowest terminal (and --width) screens are laid out for: the key columns and a
# column group fit, and the header's facts stay readable.
MIN_WIDTH = 40

# Row flags, for screens that show them (ScreenModel.flags_legend): a letter after the row
# in text, the name in CSV and JSON. The screen's notes explain what they mean there.
FLAG_MARKS: tuple[tuple[Flag, str, str], ...] = (
    (Flag.GAP, "G", "gap"),
    (Flag.RESET, "R", "reset"),
    (Flag.NEW, "N", "new"),
)
FLAG_WIDTH = 1 + len(FLAG_MARKS)  # a blank, then at most one letter per flag


# Every combination's letters and names, by the flags' value: a text export looks one up
# per row (``IntFlag``'s ``&`` is a Python call, three a row cost more than the row's cells).
_FLAG_COMBINATIONS = range(1 << len(FLAG_MARKS))
_FLAG_MASK = len(_FLAG_COMBINATIONS) - 1  # bits no mark shows (a damaged row's) are ignored
_LETTERS = tuple(
    "".join(letter for flag, letter, _ in FLAG_MARKS if flags & flag)
    for flags in _FLAG_COMBINATIONS
)
_NAMES = tuple(
    " ".join(name for flag, _, name in FLAG_MARKS if flags & flag) or None
    for flags in _FLAG_COMBINATIONS
)


def flag_letters(flags: int) -> str:
    return _LETTERS[flags & _FLAG_MASK]


def flag_names(flags: int) -> str | None:
    """``reset``, ``gap reset`` ...; ``None`` when the row has no flag."""
    return _NAMES[flags & _FLAG_MASK]


def note_style(note: str) -> str:
    """A note starting with a level marker (``! ``, ``* ``) is highlighted at that level; the
    marker stays in the text, so the highlight survives without colour."""
    for level in (Level.CRIT, Level.WARN):
        if note.startswith(MARKERS[level] + " "):
            return LEVEL_STYLE[level]
    return STYLE_NOTE


# --- values ----------------------------------------------------------------------------


def format_number(value: float, width: int, decimals: int) -> str:
    """Fixed decimals, right-aligned; fewer decimals, then K/M/G, when it does not fit. An
    exact zero is ``0``, as ESAMON shows it (seed 000: an idle of 0, a steal of 0.0); a
    value that only rounds to zero keeps its decimals."""
    if not math.isfinite(value):
        return "*" * width
    if value == 0:
        return "0".rjust(width)
    for d in range(decimals, -1, -1):
        text = _fixed(value, d)
        if len(text) <= width:
            return text.rjust(width)
    for suffix, scale in _SCALES:
        text = _fixed(value / scale, 0) + suffix
        if len(text) <= width:
            return text.rjust(width)
    return "*" * width


def _fixed(value: float, decimals: int) -> str:
    text = f"{value:.{decimals}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def exact_value(value: Value) -> Value:
    """The value as recorded and computed, to full precision (CSV and JSON): ``None`` for
    what no number can say (infinite, not a number)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


Formatter = Callable[[Value], str]


@functools.lru_cache(maxsize=4096)
def formatter(column: Column) -> Formatter:
    """The function that renders this column's values (made once per column: an export
    formats hundreds of thousands of cells)."""
    width = column.width
    dot = ".".rjust(width)
    decimals = column.decimals
    if decimals is None:
        pad = str.ljust if column.is_text else str.rjust

        def text(value: Value) -> str:
            return dot if value is None else pad(str(value)[:width], width)

        return text
    spec = f">{width}.{decimals}f"
    fixed = f"%{width}.{decimals}f"  # as ``spec``, for a float; % is the quicker
    zero = "0".rjust(width)

    def number(value: Value) -> str:
        kind = value.__class__
        if (kind is float or kind is int) and 0 < value < _INF:  # type: ignore[operator]
            text = fixed % value  # the common case: a positive finite number that fits
            if len(text) <= width:
                return text
        if value is None:
            return dot
        if isinstance(value, str):
            return value[:width].rjust(width)
        if value == 0:
            return zero  # an exact zero, as ESAMON shows it (see format_number)
        text = format(value, spec)
        # the common case is done; too wide, inf/nan ("inf", "nan") or "-0.0" take the long way
        if len(text) > width or text[-1] in "fn" or (value < 0 and float(text) == 0):
            return format_number(float(value), width, decimals)
        return text

    return number


def format_value(column: Column, value: Value) -> str:
    return formatter(column)(value)


def format_cell(column: Column, value: Value, level: Level = Level.NONE) -> str:
    text = formatter(column)(value)
    return text + MARKERS[level] if column.threshold else text


# --- time ------------------------------------------------------------------------------


def local_time(time_us: int) -> time.struct_time:
    return time.localtime(time_us / 1_000_000)


def hms(time_us: int) -> str:
    return time.strftime("%H:%M:%S", local_time(time_us))


def moment_text(time_us: int, *, year: bool = False) -> str:
    """``01/05 10:00``: a moment as the header shows times (seconds when it has them);
    ``01/05/2025 10:00`` with its ``year``."""
    t = local_time(time_us)
    day = "%m/%d/%Y" if year else "%m/%d"
    return time.strftime(f"{day} %H:%M:%S" if t.tm_sec else f"{day} %H:%M", t)


def years_differ(*times_us: int | None) -> bool:
    """Whether these moments (``None`` left out) are not all in one year: a message that
    sets them side by side then gives their years (``recorded 11/22-11/23; nothing after
    11/22`` reads as a contradiction when the two 11/22 are a year apart)."""
    return len({local_time(t).tm_year for t in times_us if t is not None}) > 1


def format_duration(seconds: float) -> str:
    """60 -> ``1m``, 5400 -> ``90m``, 0.5 -> ``0.5s``: the shortest exact unit."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def date_range(from_us: int | None, to_us: int | None, *, year: bool = False) -> str:
    """``11/22 00:00-11/23 00:00``; ``11/22/2025 00:00-11/23/2025 00:00`` with the ``year``."""
    if from_us is None or to_us is None:
        return ""
    start, end = local_time(from_us), local_time(to_us)
    day = "%m/%d/%Y" if year else "%m/%d"
    text = time.strftime(f"{day} %H:%M", start) + "-"
    if (start.tm_year, start.tm_yday) != (end.tm_year, end.tm_yday):
        text += time.strftime(f"{day} ", end)
    return text + time.strftime("%H:%M", end)


# --- layout ----------------------------------------------------------------------------


def pages(model: ScreenModel, width: int) -> list[tuple[Column, ...]]:
    """Horizontal pages: the key columns on each, then as many others as fit.

    Columns under the same outermost group label stay on one page (ESACRYPA's RSA 2048 ME
    and CRT, say) unless the group alone is wider than a page."""
    keys = [c for c in model.columns if c.key]
    rest = [c for c in model.columns if not c.key]
    if model.flags_legend:
        width -= FLAG_WIDTH
    base = sum(c.cell_width + 1 for c in keys)
    result: list[tuple[Column, ...]] = []
    current: list[Column] = []
    used = base
    for unit in _group_units(rest):
        need = sum(c.cell_width + 1 for c in unit)
        if current and used + need > width and base + need <= width:
            result.append((*keys, *current))
            current, used = [], base
        for column in unit:
            need = column.cell_width + 1
            if current and used + need > width:
                result.append((*keys, *current))
                current, used = [], base
            current.append(column)
            used += need
    if current or not result:
        result.append((*keys, *current))
    return result


def _group_units(columns: Sequence[Column]) -> list[list[Column]]:
    """Runs of adjacent columns sharing their outermost group label; ungrouped ones alone."""
    units: list[list[Column]] = []
    for column in columns:
        label = column.groups[0] if column.groups else ""
        if units and label and units[-1][-1].groups[:1] == (label,):
            units[-1].append(column)
        else:
            units.append([column])
    return units


def content_width(columns: Sequence[Column]) -> int:
    return sum(c.cell_width + 1 for c in columns) - 1 if columns else 0


def _cells(columns: Sequence[Column], texts: Sequence[str]) -> str:
    return " ".join(
        t.ljust(c.cell_width)[: c.cell_width] for c, t in zip(columns, texts, strict=True)
    )


def _group_line(columns: Sequence[Column], level: int) -> str:
    out: list[str] = []
    i = 0
    while i < len(columns):
        label = columns[i].groups[level] if len(columns[i].groups) > level else ""
        j = i
        while (
            j + 1 < len(columns)
            and label
            and len(columns[j + 1].groups) > level
            and columns[j + 1].groups[level] == label
            and columns[j + 1].groups[:level] == columns[i].groups[:level]
        ):
            j += 1
        span = sum(c.cell_width for c in columns[i : j + 1]) + (j - i)
        out.append(_span_label(label, span) if label else " " * span)
        i = j + 1
    return " ".join(out)


def _span_label(label: str, span: int) -> str:
    if span < 2:
        return " " * span
    inner = span - 2
    label = label[:inner]
    dashes = inner - len(label)
    left = dashes // 2
    return "<" + "-" * left + label + "-" * (dashes - left) + ">"


def _overlay(a: str, b: str) -> str | None:
    """Merge two header lines when no character positions collide."""
    n = max(len(a), len(b))
    a, b = a.ljust(n), b.ljust(n)
    if any(x != " " and y != " " for x, y in zip(a, b, strict=True)):
        return None
    return "".join(y if x == " " else x for x, y in zip(a, b, strict=True)).rstrip()


NODE_SHOWN = 32  # a node name longer than this is shortened on screen (kept whole in data)


def short_name(name: str, room: int) -> str:
    """``name`` in at most ``room`` characters: its start and its end around an ellipsis
    (a KVM guest's 79-character extended name stays recognisable)."""
    if len(name) <= room:
        return name
    if room < 3:
        return name[:room]
    tail = (room - 1) // 2  # a host name's domain says as much as its first label
    return name[: room - 1 - tail] + "…" + (name[-tail:] if tail else "")


def header_lines(
    model: ScreenModel,
    columns: Sequence[Column],
    page: int,
    n_pages: int,
    width: int,
    shown: tuple[int, int] | None = None,
    height: int | None = None,
) -> list[Line]:
    """The two-line screen header, notes, group headers, column headers and the rule.
    ``shown``: the (start, end) of the rows on view, when not all of them are (the TUI);
    ``height``: the most lines the header may take (the TUI's room above the rows it keeps),
    its notes cut to fit with a line saying how many more there are."""
    name = model.name + (f" {page + 1}/{n_pages}" if n_pages > 1 else "")
    left1 = f"Screen: {name} esatui {__version__}  "
    right1 = date_range(*shown) if shown else date_range(model.from_us, model.to_us)
    room = width - len(left1) - len(right1) - 2
    left1 += short_name(model.node, max(8, min(NODE_SHOWN, room)))
    left2 = f"{page + 1} of {n_pages}  {model.title}"
    right2 = " ".join(p for p in (model.machine, model.system) if p)
    lines: list[Line] = [
        ((text, STYLE_TITLE),)
        for left, right in ((left1, right1), (left2, right2))
        for text in _title_lines(left, right, width)
    ]
    notes: list[Line] = [
        ((part, style),)
        for note in model.notes
        for style in (note_style(note),)
        for part in wrap_note(note, width)
    ]
    depth = max((len(c.groups) for c in columns), default=0)
    heads = [_group_line(columns, level).rstrip() for level in range(depth)]
    top = _cells(columns, [_align(c, c.header[0]) for c in columns]).rstrip()
    bottom = _cells(columns, [_align(c, c.header[1]) for c in columns]).rstrip()
    if top:
        merged = _overlay(heads[-1], top) if heads else None
        if merged is not None:
            heads[-1] = merged
        else:
            heads.append(top)
    if height is None:
        lines += notes
    else:
        lines += _notes_in(notes, height - len(lines) - len(heads) - 2, width)
    lines += [((h, STYLE_GROUP),) for h in heads]
    lines.append(((bottom, STYLE_HEAD),))
    rule = " ".join("-" * c.cell_width for c in columns)
    lines.append(((rule, STYLE_RULE),))
    return lines


def _notes_in(notes: list[Line], room: int, width: int) -> list[Line]:
    """``notes`` in at most ``room`` lines (one at least): the first ones, then a line
    saying how many more there are and where they are read whole."""
    if len(notes) <= max(room, 1):
        return notes
    kept = notes[: max(room - 1, 0)]
    more = len(notes) - len(kept)
    said = f"… {more} more lines of notes: a wider window or the export shows them"
    if len(said) > width:
        said = f"… {more} more note lines: widen or export"[:width]
    return [*kept, ((said, STYLE_NOTE),)]


def wrap_note(note: str, width: int) -> list[str]:
    """A note in lines of at most ``width``, continued two spaces in (under the text after a
    level marker), never cut."""
    return textwrap.wrap(note, max(width, 20), subsequent_indent="  ", break_on_hyphens=False) or [
        ""
    ]


def _align(column: Column, text: str) -> str:
    return text.ljust(column.cell_width) if column.is_text else text.rjust(column.width)


def _justify(left: str, right: str, width: int) -> str:
    gap = width - len(left) - len(right)
    return left + " " * max(gap, 2) + right if right else left


def _title_lines(left: str, right: str, width: int) -> list[str]:
    """A title line, ``left`` and ``right`` justified to ``width``: one line where both fit,
    else ``left`` folded to the width and ``right`` on a line of its own, right-aligned."""
    if len(left) + 2 + len(right) <= width or (not right and len(left) <= width):
        return [_justify(left, right, width)]
    lines = textwrap.wrap(left, width, subsequent_indent="  ", break_on_hyphens=False)
    return [*lines, right.rjust(width)] if right else lines


CellPlan = tuple[tuple[Column, Formatter, str], ...]


def cell_plan(columns: Sequence[Column]) -> CellPlan:
    """Per column: its formatter and its blank cell (made once for all the rows)."""
    return tuple((c, formatter(c), " " * c.width) for c in columns)


def row_line(
    columns: Sequence[Column],
    row: Row,
    previous: Row | None,
    flags: bool = False,
    plan: CellPlan | None = None,
) -> Line:
    """One row; the time shows on an interval's first row, and non-repeating key columns
    only when they change. With ``flags``, the row's flag letters follow the last column.
    Cells of the row's own style share one segment; a highlighted cell has its own."""
    same_interval = previous is not None and previous.end_us == row.end_us and not row.first
    segments: list[Segment] = []
    run: list[str] = []
    base = STYLE_SUBTOTAL if row.kind is not RowKind.DATA else STYLE_VALUE
    values, levels = row.values, row.levels
    for i, (column, fmt, blank) in enumerate(plan or cell_plan(columns)):
        if i:
            run.append(" ")
        cid = column.id
        if cid == "time":
            text = hms(row.end_us).ljust(column.width) if row.first else blank
            if column.marks_partial:
                text += PARTIAL_MARK if row.partial and row.first else " "
        elif (
            not column.repeat
            and same_interval
            and previous is not None
            and previous.values.get(cid) == values.get(cid)
        ):
            text = blank
        else:
            text = fmt(values.get(cid))
        level = levels.get(cid, Level.NONE) if levels else Level.NONE
        if column.threshold:
            text += MARKERS[level]
        if level:
            if run:
                segments.append(("".join(run), base))
                run = []
            segments.append((text, LEVEL_STYLE[level]))
        else:
            run.append(text)
    if run:
        segments.append(("".join(run), base))
    letters = flag_letters(row.flags) if flags else ""
    if letters:
        segments.append((" " + letters, LEVEL_STYLE[Level.WARN]))
    return tuple(segments)


@dataclass(frozen=True, slots=True)
class TextPlan:
    """What :func:`row_text` needs of a page's columns, made once for all the rows: each
    cell's column id and formatter, and where the cells that are not a plain value are."""

    cells: tuple[tuple[str, Formatter], ...]  # every other column's id and formatter, in order
    time_at: int | None  # the time column's place (its cell is made from the row's end)
    time_width: int
    time_partial: bool  # the time column has a slot for the partial mark
    time_blank: str
    once: tuple[tuple[int, str, str], ...]  # (place, id, blank) of non-repeating columns
    marked: tuple[tuple[int, str], ...]  # (place, id) of columns with a threshold marker


def text_plan(columns: Sequence[Column]) -> TextPlan:
    """The plan of :func:`row_text` for ``columns``."""
    time_at = next((i for i, c in enumerate(columns) if c.id == "time"), None)
    time_column = None if time_at is None else columns[time_at]
    return TextPlan(
        cells=tuple((c.id, formatter(c)) for i, c in enumerate(columns) if i != time_at),
        time_at=time_at,
        time_width=0 if time_column is None else time_column.width,
        time_partial=time_column is not None and time_column.marks_partial,
        time_blank="" if time_column is None else " " * time_column.width,
        once=tuple(
            (i, c.id, " " * c.width)
            for i, c in enumerate(columns)
            if not c.repeat and c.id != "time"
        ),
        marked=tuple((i, c.id) for i, c in enumerate(columns) if c.threshold is not None),
    )


def row_text(plan: TextPlan, row: Row, previous: Row | None, flags: bool = False) -> str:
    """``line_text(row_line(...))`` without the styles: one row as the text report prints
    it (an export streams hundreds of thousands of them; a test holds the two equal). Every
    value's cell is formatted from the row's values in one pass, the time's put in its place,
    then the few that are not a plain value made over: a key equal to the row above's, a
    threshold's marker."""
    get = row.values.get
    cells = [fmt(get(cid)) for cid, fmt in plan.cells]
    first = row.first
    if plan.time_at is not None:
        text = hms(row.end_us).ljust(plan.time_width) if first else plan.time_blank
        if plan.time_partial:
            text += PARTIAL_MARK if row.partial and first else " "
        cells.insert(plan.time_at, text)
    if plan.once and previous is not None and previous.end_us == row.end_us and not first:
        before = previous.values.get
        for i, cid, blank in plan.once:
            if before(cid) == get(cid):
                cells[i] = blank
    if plan.marked:
        levels = row.levels
        for i, cid in plan.marked:
            cells[i] += MARKERS[levels.get(cid, Level.NONE)] if levels else " "
    line = " ".join(cells)
    letters = flag_letters(row.flags) if flags else ""
    if letters:
        line += " " + letters
    return line.rstrip()


@dataclass(frozen=True)
class Body:
    """A screen's body: its lines, and the row each line shows (``None``: a date line)."""

    lines: list[Line]
    rows: list[Row | None]
    columns: tuple[Column, ...] = ()
    flags: bool = False

    def lead(self, index: int) -> Line:
        """Line ``index`` as the first of a page: a later row of an interval (a ``Tot``)
        shows the interval's time and key columns, which the page before holds."""
        row = self.rows[index]
        if row is None or row.first:
            return self.lines[index]
        return row_line(self.columns, replace(row, first=True), None, self.flags)


def body(model: ScreenModel, columns: Sequence[Column]) -> Body:
    """Every row, with a date line wherever the local date changes between rows."""
    lines: list[Line] = []
    rows: list[Row | None] = []
    previous: Row | None = None
    plan = cell_plan(columns)
    multi_day = _spans_days(model.rows)
    last_day: tuple[int, int] | None = None
    for row in model.rows:
        if multi_day:
            t = local_time(row.end_us)
            day = (t.tm_year, t.tm_yday)
            if day != last_day:
                lines.append(((time.strftime("%m/%d/%Y", t), STYLE_DATE),))
                rows.append(None)
                last_day = day
        lines.append(row_line(columns, row, previous, model.flags_legend, plan))
        rows.append(row)
        previous = row
    return Body(lines, rows, tuple(columns), model.flags_legend)


def body_lines(model: ScreenModel, columns: Sequence[Column]) -> list[Line]:
    return body(model, columns).lines


def _spans_days(rows: Sequence[Row]) -> bool:
    if not rows:
        return False
    first, last = local_time(rows[0].end_us), local_time(rows[-1].end_us)
    return (first.tm_year, first.tm_yday) != (last.tm_year, last.tm_yday)


def line_text(line: Line) -> str:
    return "".join(text for text, _ in line).rstrip()


def render_text(model: ScreenModel, width: int = 132) -> str:
    """The screen as a terminal of ``width`` columns shows it, every horizontal page in turn."""
    all_pages = pages(model, width)
    blocks: list[str] = []
    for index, columns in enumerate(all_pages):
        lines = header_lines(model, columns, index, len(all_pages), width)
        lines += body_lines(model, columns)
        if not model.rows:
            lines.append((("No intervals recorded in this range.", STYLE_NOTE),))
        blocks.append("\n".join(line_text(line) for line in lines))
    return "\n\n".join(blocks) + "\n"
