"""``esatui export`` a chunk at a time: the rows go to a spool file as they are built, the
header (which says things of the whole range: its notes, its first and last time) is
written when the last chunk is done, and the result is copied out. Memory holds one chunk
(``screens/stream.py``), whatever the range; the bytes are those of the whole-range model
rendered by ``esatui/formats.py`` (a test compares them screen by screen, format by format).

Every format streams: text (each horizontal page has its own spool: a page repeats every
row with its own columns), CSV and JSON lines (a record per row), and JSON, whose enclosing
object names the range and its notes before the ``rows`` array: the array is spooled and the
object written around it. Where the whole model would say something no chunk can know alone
(a screen that does not declare ``streams``, chunks whose builds disagree on the columns or
notes, no rows at all), :func:`export` returns ``False`` before writing anything and the
caller builds the whole model as before.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import IO, TextIO

from esatui.db.reader import Reader
from esatui.formats import Format, record_keys, row_record
from esatui.screens import stream
from esatui.screens.catalog import (
    SIMULATED_NOTE,
    HeaderFacts,
    Query,
    ScreenDef,
    clock_notes,
    partial_note,
)
from esatui.screens.common import type_notes
from esatui.screens.model import Column, Row, ScreenModel
from esatui.screens.render import (
    header_lines,
    line_text,
    local_time,
    pages,
    row_text,
    text_plan,
)


def ascending(rows: Sequence[Row]) -> tuple[Row, ...]:
    """Oldest interval first, keeping each interval's rows in their order."""
    groups: list[list[Row]] = []
    for row in rows:
        if groups and groups[-1][0].end_us == row.end_us and not row.first:
            groups[-1].append(row)
        else:
            groups.append([row])
    return tuple(r for group in reversed(groups) for r in group)


class _Page:
    """One horizontal page of the text: its columns and its spooled lines."""

    def __init__(self, columns: tuple[Column, ...], flags: bool) -> None:
        self.columns = columns
        self.plan = text_plan(columns)
        self.flags = flags
        self.previous: Row | None = None
        self.spool: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - close()

    def add(self, rows: Sequence[Row], dates: Mapping[int, str]) -> None:
        """Spools the rows' lines, each row's date line before it where ``dates`` has one
        (by the row's place)."""
        plan, flags, previous = self.plan, self.flags, self.previous
        lines: list[str] = []
        for at, row in enumerate(rows):
            if at in dates:
                lines.append(dates[at])
            lines.append(row_text(plan, row, previous, flags))
            previous = row
        self.previous = previous
        if lines:
            self.spool.write(("\n" + "\n".join(lines)).encode())


class _Writer:
    """The spooled body of one format."""

    def __init__(self, fmt: Format, columns: tuple[Column, ...], width: int, flags: bool):
        self.fmt = fmt
        self.columns = columns
        self.keys = record_keys(columns)
        self.pages = (
            [_Page(p, flags) for p in pages(_layout(columns, flags), width)]
            if fmt == "text"
            else []
        )
        self.spool: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - close()
        self.rows = 0
        self.last_day: tuple[int, int] | None = None
        self.first_day: tuple[int, int] | None = None
        self.date_bytes = 0  # the first date line's bytes in each page's spool

    def add(self, rows: Sequence[Row]) -> None:
        if self.fmt == "text":
            self._text(rows)
            return
        buf = io.StringIO()
        if self.fmt == "csv":
            writer = csv.writer(buf, lineterminator="\n")
            for row in rows:
                record = row_record(self.columns, row)
                writer.writerow(["" if record[k] is None else _csv(record[k]) for k in self.keys])
        elif self.fmt == "jsonl":
            for row in rows:
                buf.write(json.dumps(row_record(self.columns, row), allow_nan=False) + "\n")
        else:
            for n, row in enumerate(rows, self.rows):
                text = json.dumps(row_record(self.columns, row), indent=1, allow_nan=False)
                buf.write(",\n  " if n else "\n  ")
                buf.write(text.replace("\n", "\n  "))
        self.rows += len(rows)
        self.spool.write(buf.getvalue().encode())

    def _text(self, rows: Sequence[Row]) -> None:
        dates: dict[int, str] = {}  # a date line before the row at that place
        end_us: int | None = None
        for at, row in enumerate(rows):
            if row.end_us == end_us:
                continue  # an interval's rows share its time, and so its day
            end_us = row.end_us
            t = local_time(end_us)
            day = (t.tm_year, t.tm_yday)
            if day != self.last_day:
                date = time.strftime("%m/%d/%Y", t)
                if self.last_day is None:
                    self.first_day = day
                    self.date_bytes = len(("\n" + date).encode())
                dates[at] = date
                self.last_day = day
        self.rows += len(rows)
        for page in self.pages:
            page.add(rows, dates)

    def finish(self, model: ScreenModel, width: int, out: TextIO) -> None:
        if self.fmt == "text":
            multi_day = self.first_day != self.last_day
            for index, page in enumerate(self.pages):
                if index:
                    out.write("\n\n")
                lines = header_lines(model, page.columns, index, len(self.pages), width)
                out.write("\n".join(line_text(line) for line in lines))
                _copy(page.spool, 0 if multi_day else self.date_bytes, out)
            out.write("\n")
        elif self.fmt == "csv":
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerow(self.keys)
            out.write(buf.getvalue())
            _copy(self.spool, 0, out)
        elif self.fmt == "jsonl":
            _copy(self.spool, 0, out)
        else:
            from esatui.formats import render_json

            head = render_json(model)  # the document with no rows: "rows": [] at its end
            tail = '"rows": []\n}\n'
            assert head.endswith(tail)
            out.write(head[: -len(tail)] + '"rows": [')
            _copy(self.spool, 0, out)
            out.write("\n ]\n}\n")

    def close(self) -> None:
        self.spool.close()
        for page in self.pages:
            page.spool.close()


def _layout(columns: tuple[Column, ...], flags: bool) -> ScreenModel:
    """A model with only what the page layout reads."""
    return ScreenModel("", "", columns, (), flags_legend=flags)


def _csv(value: object) -> object:
    return ("true" if value else "false") if isinstance(value, bool) else value


def _copy(spool: IO[bytes], skip: int, out: TextIO) -> None:
    spool.seek(skip)
    decoder = codecs.getincrementaldecoder("utf-8")()
    while block := spool.read(1 << 20):
        out.write(decoder.decode(block))
    out.write(decoder.decode(b"", final=True))


def export(
    reader: Reader,
    screen: ScreenDef,
    query: Query,
    fmt: Format,
    width: int,
    ascending_order: bool,
    write: Callable[[Callable[[TextIO], None]], None],
    chunk: int = stream.CHUNK,
    length_s: float | None = None,
) -> bool:
    """Writes the export through ``write`` (given the function that writes it to a text
    stream) and says ``True``; ``False``, having written nothing, when it cannot stream.
    ``length_s``: the rows' nominal length, where the query does not aggregate them."""
    if not screen.streams or screen.fleet:
        return False
    found = stream.plan(reader, screen, query)
    if found is None or not found.window.spans:
        return False
    spans = found.window.spans
    marks_partial = any(s.partial for s in spans)
    parts = stream.Parts(oldest_first=ascending_order)
    writer: _Writer | None = None
    partial_firsts: list[Row] = []
    type_sources: set[str] = set()
    any_partial = False
    try:
        for _slots, built in stream.chunks(
            reader, screen, query, found, oldest_first=ascending_order, size=chunk
        ):
            if not parts.add(built):
                return False
            if writer is None:
                columns = built.columns
                if marks_partial:
                    columns = tuple(replace(c, marks_partial=c.id == "time") for c in columns)
                writer = _Writer(fmt, columns, width, built.flags_legend)
            type_sources |= built.type_sources
            rows = ascending(built.rows) if ascending_order else built.rows
            for row in rows:
                if row.partial:
                    any_partial = True
                    if row.first:
                        partial_firsts.append(row)
            assert writer is not None
            writer.add(rows)
        frame = parts.frame
        if writer is None or frame is None or writer.rows == 0 or any_partial != marks_partial:
            return False
        notes = (*frame.notes, *type_notes(frozenset(type_sources)))
        frame = replace(frame, notes=notes)
        model = _model(screen, found, query, frame, writer.columns, partial_firsts, length_s)
        done = writer
        write(lambda out: done.finish(model, width, out))
        return True
    finally:
        if writer is not None:
            writer.close()


def _model(
    screen: ScreenDef,
    found: stream.Plan,
    query: Query,
    frame: stream.Frame,
    columns: tuple[Column, ...],
    partial_firsts: list[Row],
    length_s: float | None,
) -> ScreenModel:
    """The whole model's header, as :func:`catalog.model_of` makes it, without its rows
    (``length_s``: their nominal length where the query does not aggregate them)."""
    notes = frame.notes
    partial_firsts.sort(key=lambda r: -r.end_us)
    partial = partial_note(partial_firsts, query.interval_len_us, query.after_us, query.until_us)
    if partial:
        notes = (*notes, partial)
    spans = found.window.spans
    notes = (*notes, *clock_notes(spans, query.interval_len_us))
    if found.config.get("simulated"):
        notes = (SIMULATED_NOTE, *notes)
    facts = HeaderFacts.of(found.config)
    return ScreenModel(
        name=screen.name,
        title=screen.title,
        columns=columns,
        rows=(),
        node=found.node,
        machine=facts.machine,
        system=" ".join(p for p in (facts.system, facts.level) if p),
        from_us=spans[0].start_us,
        to_us=spans[-1].end_us,
        interval_len_s=length_s if query.interval_len_us is None else query.interval_len_us / 1e6,
        notes=notes,
        flags_legend=frame.flags_legend,
        header=dict(frame.header),
        extent=found.extent,
        recorded=True,
    )
