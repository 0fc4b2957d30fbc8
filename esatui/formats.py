"""Screens as reports: text (what the screen shows), CSV, JSON and JSON lines."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Literal

from esatui.screens.model import Column, Row, RowKind, ScreenModel, Value
from esatui.screens.render import flag_names, render_text, round_value
from esatui.timeparse import iso

Format = Literal["text", "csv", "json", "jsonl"]
FORMATS: tuple[Format, ...] = ("text", "csv", "json", "jsonl")


def row_record(columns: tuple[Column, ...], row: Row, flags: bool = False) -> dict[str, Value]:
    """A row as data: every column id, ``None`` where the sources gave nothing; with
    ``flags``, the row's flags (``reset``, ``new`` ..., ``None`` when it has none)."""
    record: dict[str, Value] = {}
    for column in columns:
        if column.id == "time":
            record["time"] = iso(row.end_us)
        else:
            record[column.id] = round_value(column, row.values.get(column.id))
    if flags:
        record["flags"] = flag_names(row.flags)
    if row.kind is not RowKind.DATA:
        record["row"] = row.kind.value
    return record


def _records(model: ScreenModel) -> Iterator[dict[str, Value]]:
    for row in model.rows:
        yield row_record(model.columns, row, model.flags_legend)


def render_csv(model: ScreenModel) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    ids = [c.id for c in model.columns] + (["flags"] if model.flags_legend else [])
    has_kind = any(r.kind is not RowKind.DATA for r in model.rows)
    writer.writerow([*ids, "row"] if has_kind else ids)
    for record in _records(model):
        cells = ["" if record.get(i) is None else record[i] for i in ids]
        if has_kind:
            cells.append(record.get("row", "data"))
        writer.writerow(cells)
    return out.getvalue()


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
