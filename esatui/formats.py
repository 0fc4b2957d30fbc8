"""Screens as reports: text (what the screen shows), CSV, JSON and JSON lines.

Text keeps the screen's decimals. CSV and JSON carry every value to full precision, and
every row has the same keys (README, "Export formats"): each column id; ``<id>_mark``
(``warn``, ``crit`` or none) for each column with a threshold; ``row`` (``data``,
``subtotal``, ``total``); ``partial`` and ``covered_s`` (a bucket the recording covers only
in part, and how much of it it covers); ``flags`` (``gap``, ``reset``, ``new``, or none).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Sequence
from typing import Literal

from esatui.screens.model import Column, Level, Row, ScreenModel, Value
from esatui.screens.render import exact_value, flag_names, render_text
from esatui.timeparse import iso

Format = Literal["text", "csv", "json", "jsonl"]
FORMATS: tuple[Format, ...] = ("text", "csv", "json", "jsonl")

MARK_NAMES = {Level.NONE: None, Level.WARN: "warn", Level.CRIT: "crit"}
ROW_KEYS = ("row", "partial", "covered_s", "flags")  # after the columns and their marks


def mark_key(column: Column) -> str:
    return f"{column.id}_mark"


def record_keys(columns: Sequence[Column]) -> list[str]:
    """Every key of every row, in order."""
    marks = [mark_key(c) for c in columns if c.threshold]
    return [*(c.id for c in columns), *marks, *ROW_KEYS]


def row_record(columns: Sequence[Column], row: Row) -> dict[str, Value | bool]:
    """A row as data: every key of :func:`record_keys`, ``None`` where there is nothing."""
    record: dict[str, Value | bool] = {}
    for column in columns:
        if column.id == "time":
            record["time"] = iso(row.end_us)
        else:
            record[column.id] = exact_value(row.values.get(column.id))
    for column in columns:
        if column.threshold:
            record[mark_key(column)] = MARK_NAMES[row.levels.get(column.id, Level.NONE)]
    record["row"] = row.kind.value
    record["partial"] = row.partial
    record["covered_s"] = None if row.covered_us is None else row.covered_us / 1e6
    record["flags"] = flag_names(row.flags)
    return record


def _records(model: ScreenModel) -> Iterator[dict[str, Value | bool]]:
    for row in model.rows:
        yield row_record(model.columns, row)


def render_csv(model: ScreenModel) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    keys = record_keys(model.columns)
    writer.writerow(keys)
    for record in _records(model):
        writer.writerow(["" if record[k] is None else _csv(record[k]) for k in keys])
    return out.getvalue()


def _csv(value: Value | bool) -> Value:
    return ("true" if value else "false") if isinstance(value, bool) else value


def render_json(model: ScreenModel) -> str:
    document = {
        "screen": model.name,
        "title": model.title,
        "node": model.node,
        "from": None if model.from_us is None else iso(model.from_us),
        "to": None if model.to_us is None else iso(model.to_us),
        "interval_len_s": model.interval_len_s,
        "notes": list(model.notes),
        **({"header": dict(model.header)} if model.header else {}),
        "columns": [{"id": c.id, "header": _header(c), "unit": c.unit} for c in model.columns],
        "rows": list(_records(model)),
    }
    return json.dumps(document, indent=1, allow_nan=False) + "\n"


def render_jsonl(model: ScreenModel) -> str:
    return "".join(json.dumps(r, allow_nan=False) + "\n" for r in _records(model))


def _header(column: Column) -> str:
    return " ".join(part for part in column.header if part)


def render(model: ScreenModel, fmt: Format, width: int = 132) -> str:
    if fmt == "text":
        return render_text(model, width)
    if fmt == "csv":
        return render_csv(model)
    if fmt == "json":
        return render_json(model)
    return render_jsonl(model)
