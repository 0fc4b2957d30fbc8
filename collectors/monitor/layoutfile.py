"""The layout file format (``--monitor-layout FILE``) and the built-in table written in it.

A layout file is JSON::

    {"format": "esatui-monitor-layout", "version": 1,
     "records": [{"domain": 5, "record": 9, "name": "MRPRCAPC", "level": "z/VM 7.2+",
                  "length": 360,
                  "fields": [{"name": "cryvserv", "offset": 24, "type": "u64", "unit": "us",
                              "status": "verified", "source": "...", "doc": "..."}],
                  "entries": {...}}]}

Each record given replaces the built-in layout of the same domain, record and length, or adds
a new length. Field names are the ones the decoders look for (see ``docs/MONITOR.md``).
Errors are one line: the file, where in it, and what is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from esatui.collectors.monitor.layout import (
    ALL_TYPES,
    FIXED_TYPES,
    INT_TYPES,
    STATUSES,
    EntrySpec,
    FieldSpec,
    LayoutTable,
    RecordLayout,
)
from esatui.smallfile import KIB, SmallFileError, read_small

FORMAT = "esatui-monitor-layout"
VERSION = 1
MAX_FILE_BYTES = 16 * 1024 * KIB  # the built-in table, every record esatui reads, is 36 KB

_RECORD_KEYS = {"domain", "record", "name", "level", "length", "fields", "entries", "source", "doc"}
_FIELD_KEYS = {"name", "offset", "type", "unit", "status", "size", "mask", "source", "doc"}
_ENTRY_KEYS = {"start", "count", "length", "length_if_zero", "end", "fields"}


class LayoutError(ValueError):
    """A layout file that cannot be used; the message is one line."""


def load_layout_file(path: Path) -> LayoutTable:
    """The layouts of ``path`` (not merged with the built-in table)."""
    try:
        text = read_small(path, MAX_FILE_BYTES).decode("utf-8")
    except SmallFileError as exc:
        raise LayoutError(f"{path} {exc}: give a JSON layout file") from None
    except OSError as exc:
        raise LayoutError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise LayoutError(f"{path}: not UTF-8 text") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LayoutError(f"{path}: not JSON: {exc.msg} at line {exc.lineno}") from None
    return parse_layouts(doc, str(path))


@cache
def builtin_layouts() -> LayoutTable:
    """The layouts esatui ships (``layouts.json`` next to this module)."""
    text = resources.files(__package__).joinpath("layouts.json").read_text(encoding="utf-8")
    return parse_layouts(json.loads(text), "built-in layouts.json")


def effective_layouts(path: Path | None = None) -> LayoutTable:
    """The built-in table, with the layouts of ``path`` over it when given."""
    base = builtin_layouts()
    return base if path is None else base.merged(load_layout_file(path))


def parse_layouts(doc: object, where: str) -> LayoutTable:
    if not isinstance(doc, dict):
        raise LayoutError(f"{where}: the top level must be an object")
    fmt = doc.get("format", FORMAT)
    if fmt != FORMAT:
        raise LayoutError(f"{where}: format is {fmt!r}, expected {FORMAT!r}")
    version = doc.get("version", VERSION)
    if version != VERSION:
        raise LayoutError(f"{where}: version {version!r} is not supported (only {VERSION})")
    unknown = set(doc) - {"format", "version", "records", "doc"}
    if unknown:
        raise LayoutError(f"{where}: unknown key {sorted(unknown)[0]!r} at the top level")
    records = doc.get("records")
    if not isinstance(records, list):
        raise LayoutError(f"{where}: 'records' must be a list")
    table = LayoutTable()
    seen: set[tuple[int, int, int]] = set()
    for i, rec in enumerate(records):
        lay = _record(rec, f"{where}: records[{i}]")
        key = (lay.domain, lay.record, lay.length)
        if key in seen:
            raise LayoutError(f"{where}: records[{i}]: {lay.id} is given twice")
        seen.add(key)
        table.add(lay)
    return table


def _record(rec: object, at: str) -> RecordLayout:
    obj = _object(rec, at, _RECORD_KEYS)
    domain = _int(obj, "domain", at, 0, 255)
    record = _int(obj, "record", at, 0, 0xFFFF)
    length = _int(obj, "length", at, 20, 0xFFFF)
    at = f"{at} (D{domain}R{record}/{length})"
    name = _str(obj, "name", at, required=False) or f"D{domain}R{record}"
    level = _str(obj, "level", at, required=False)
    fields_raw = obj.get("fields")
    if not isinstance(fields_raw, list):
        raise LayoutError(f"{at}: 'fields' must be a list")
    fields = tuple(_field(f, f"{at}.fields[{j}]", 20, length) for j, f in enumerate(fields_raw))
    entries = None
    if "entries" in obj:
        entries = _entries(obj["entries"], f"{at}.entries", fields, length)
    names = [f.name for f in fields] + ([f.name for f in entries.fields] if entries else [])
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise LayoutError(f"{at}: field {sorted(dupes)[0]!r} is defined twice")
    return RecordLayout(
        domain,
        record,
        name,
        level,
        length,
        fields,
        entries,
        _str(obj, "source", at, required=False),
    )


def _field(raw: object, at: str, min_offset: int, length: int | None) -> FieldSpec:
    obj = _object(raw, at, _FIELD_KEYS)
    name = _str(obj, "name", at)
    if not name.replace("_", "").isalnum() or not name.isascii():
        raise LayoutError(f"{at}: field name {name!r} must be letters, digits and '_'")
    at = f"{at} ({name})"
    offset = _int(obj, "offset", at, min_offset, 0xFFFF)
    ftype = _str(obj, "type", at)
    if ftype not in ALL_TYPES:
        raise LayoutError(f"{at}: unknown type {ftype!r} (one of {', '.join(ALL_TYPES)})")
    status = _str(obj, "status", at, required=False) or "verified"
    if status not in STATUSES:
        raise LayoutError(f"{at}: status must be 'verified' or 'provisional', not {status!r}")
    size = _int(obj, "size", at, 1, 0xFFFF) if "size" in obj else 0
    if ftype == "ebcdic" and not size:
        raise LayoutError(f"{at}: an ebcdic field needs a 'size'")
    if ftype != "ebcdic" and size:
        raise LayoutError(f"{at}: 'size' is only for ebcdic fields")
    mask = _int(obj, "mask", at, 1, 2**64 - 1) if "mask" in obj else 0
    if mask and ftype not in INT_TYPES:
        raise LayoutError(f"{at}: 'mask' is only for integer fields")
    if ftype == "pairs" and length is not None:
        raise LayoutError(f"{at}: 'pairs' fields belong to entries")
    spec = FieldSpec(
        name,
        offset,
        ftype,
        _str(obj, "unit", at, required=False),
        status,
        size,
        mask,
        _str(obj, "source", at, required=False),
        _str(obj, "doc", at, required=False),
    )
    if length is not None and spec.end > length:
        raise LayoutError(f"{at}: ends at {spec.end}, beyond the record length {length}")
    return spec


def _entries(raw: object, at: str, record_fields: tuple[FieldSpec, ...], length: int) -> EntrySpec:  # noqa: PLR0912, PLR0915 - one check per key of a layout file entry, each with its own message
    obj = _object(raw, at, _ENTRY_KEYS)
    fields_raw = obj.get("fields")
    if not isinstance(fields_raw, list) or not fields_raw:
        raise LayoutError(f"{at}: 'fields' must be a non-empty list")
    fields = tuple(_field(f, f"{at}.fields[{j}]", 0, None) for j, f in enumerate(fields_raw))
    rec_ints = {f.name for f in record_fields if f.type in INT_TYPES and not f.mask}
    ent_ints = {f.name for f in fields if f.type in INT_TYPES and not f.mask}

    start = obj.get("start")
    if isinstance(start, bool) or not isinstance(start, int | str):
        raise LayoutError(f"{at}: 'start' must be an offset or a record field name")
    if isinstance(start, int) and not 20 <= start <= length:
        raise LayoutError(f"{at}: 'start' {start} must lie between 20 and the length {length}")
    if isinstance(start, str) and start not in rec_ints:
        raise LayoutError(f"{at}: 'start' names {start!r}, not an integer field of the record")

    count = obj.get("count")
    if count is not None and (not isinstance(count, str) or count not in rec_ints):
        raise LayoutError(f"{at}: 'count' must be null or the name of an integer record field")

    elen = obj.get("length")
    if isinstance(elen, bool) or not isinstance(elen, int | str):
        raise LayoutError(f"{at}: 'length' must be a number or a field name")
    if isinstance(elen, int) and elen < 1:
        raise LayoutError(f"{at}: 'length' must be at least 1")
    if isinstance(elen, str):
        if elen.startswith("entry."):
            if elen[6:] not in ent_ints:
                raise LayoutError(f"{at}: 'length' names {elen!r}, not an integer entry field")
        elif elen not in rec_ints:
            raise LayoutError(f"{at}: 'length' names {elen!r}, not an integer record field")

    if_zero = None
    if "length_if_zero" in obj:
        if not (isinstance(elen, str) and elen.startswith("entry.")):
            raise LayoutError(f"{at}: 'length_if_zero' needs 'length' of the form 'entry.NAME'")
        lz = _object(obj["length_if_zero"], f"{at}.length_if_zero", {"by", "values"})
        by = lz.get("by")
        if not isinstance(by, str) or by not in ent_ints:
            raise LayoutError(f"{at}.length_if_zero: 'by' must name an integer entry field")
        values = lz.get("values")
        if not isinstance(values, dict) or not values:
            raise LayoutError(f"{at}.length_if_zero: 'values' must be a non-empty object")
        table: dict[int, int] = {}
        for k, v in values.items():
            if not (isinstance(k, str) and k.isdigit()):
                raise LayoutError(f"{at}.length_if_zero: key {k!r} must be a decimal number")
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise LayoutError(f"{at}.length_if_zero: length for {k} must be a positive number")
            table[int(k)] = v
        if_zero = (by, table)
    end = None
    if "end" in obj:
        e = _object(obj["end"], f"{at}.end", {"field", "plus"})
        name = e.get("field")
        if not isinstance(name, str) or name not in rec_ints:
            raise LayoutError(f"{at}.end: 'field' must name an integer record field")
        end = (name, _int(e, "plus", f"{at}.end", 0, 0xFFFF) if "plus" in e else 0)
    return EntrySpec(start, count, elen, fields, if_zero, end)


def _object(raw: object, at: str, allowed: set[str]) -> Mapping[str, Any]:
    if not isinstance(raw, dict):
        raise LayoutError(f"{at}: must be an object")
    unknown = set(raw) - allowed
    if unknown:
        raise LayoutError(f"{at}: unknown key {sorted(unknown)[0]!r}")
    return raw


def _int(obj: Mapping[str, Any], key: str, at: str, lo: int, hi: int) -> int:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise LayoutError(f"{at}: {key!r} must be a whole number")
    if not lo <= v <= hi:
        raise LayoutError(f"{at}: {key!r} must be between {lo} and {hi}, not {v}")
    return v


def _str(obj: Mapping[str, Any], key: str, at: str, *, required: bool = True) -> str:
    v = obj.get(key)
    if v is None and not required:
        return ""
    if not isinstance(v, str) or (required and not v):
        raise LayoutError(f"{at}: {key!r} must be a non-empty string")
    return v


__all__ = [
    "FIXED_TYPES",
    "LayoutError",
    "builtin_layouts",
    "effective_layouts",
    "load_layout_file",
    "parse_layouts",
]
