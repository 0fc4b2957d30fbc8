"""Turns parameters into request bytes and output bytes into values, driven by layouts.py."""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from esatui.collectors.smapi.errors import SmapiConfigError, SmapiProtocolError
from esatui.collectors.smapi.layouts import REQUIRED, Decoded, Field, In, Out, lookup
from esatui.collectors.smapi.wire import ENCODING, Reader, lstring, text

_INT_RANGES = {
    In.INT1: (0, 0xFF, ">B"),
    In.INT4: (-(2**31), 2**32 - 1, ">i"),
    In.INT8: (-(2**63), 2**64 - 1, ">q"),
}


def _as_text(value: Any, name: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise SmapiConfigError(f"parameter {name} must be text, not {type(value).__name__}")


def _as_list(value: Any, name: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Iterable):
        return [_as_text(v, name) for v in value]
    raise SmapiConfigError(f"parameter {name} must be a list of strings")


def _int(kind: In, value: Any, name: str) -> bytes:
    low, high, fmt = _INT_RANGES[kind]
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise SmapiConfigError(f"parameter {name} must be an integer in {low}..{high}")
    if fmt != ">B" and value > high // 2:  # unsigned values above the signed range
        fmt = fmt.upper()
    return struct.pack(fmt, value)


def encode_params(function: str, params: Mapping[str, Any]) -> bytes:
    """The function-specific part of a request, from named parameters."""
    layout = lookup(function)
    known = {p.name for p in layout.params}
    unknown = sorted(set(params) - known)
    if unknown:
        raise SmapiConfigError(f"{function} has no parameter {unknown[0]}")
    out = bytearray()
    for p in layout.params:
        value = params.get(p.name, p.default)
        if value is REQUIRED:
            raise SmapiConfigError(f"{function} needs parameter {p.name}")
        if p.kind is In.STR:
            out += lstring(text(_as_text(value, p.name)))
        elif p.kind in _INT_RANGES:
            out += _int(p.kind, value, p.name)
        elif p.kind is In.KV:
            if value is not None and value != "":
                out += text(f"{p.name}={_as_text(value, p.name)}\0")
        elif p.kind is In.CSTR_BLOCK:
            out += lstring(b"".join(text(v) + b"\0" for v in _as_list(value, p.name)))
        elif p.kind is In.CSTR_BLOCK_BLANK:
            out += lstring(text(" ".join(_as_list(value, p.name))) + b"\0")
        elif p.kind is In.CSTRS:
            out += b"".join(text(v) + b"\0" for v in _as_list(value, p.name))
    return bytes(out)


@dataclass(frozen=True, slots=True)
class DecodedOutput:
    """The named values of one response's output, and how many bytes nothing explained."""

    values: Decoded
    trailing: int = 0  # non-NUL bytes after the layout (a newer level's additions)
    raw: bytes = field(default=b"", repr=False)

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)


def _strings(block: bytes) -> list[str]:
    parts = block.decode(ENCODING).split("\0")
    if parts and parts[-1] == "":
        parts.pop()
    return parts


def _read_field(reader: Reader, f: Field) -> Any:  # noqa: PLR0911 - a table of output field types, one return each
    kind = f.kind
    if kind is Out.INT1:
        return reader.u1()
    if kind is Out.INT4:
        return reader.u4()
    if kind is Out.INT8:
        return reader.u8()
    if kind is Out.STR:
        return reader.lstring().decode(ENCODING)
    if kind is Out.STR_Z:
        return reader.lstring().decode(ENCODING).rstrip("\0")
    if kind is Out.CSTR_LIST:
        return _strings(reader.lstring())
    if kind is Out.CSTR_REST:
        return _strings(reader.rest())
    if kind is Out.TEXT_REST:
        return reader.rest().decode(ENCODING).rstrip("\0")
    if kind is Out.RAW_REST:
        return reader.rest()
    return _read_array(reader, f)


def _read_array(reader: Reader, f: Field) -> list[Any]:
    count: int | None = None
    if f.kind is Out.ARRAY_BYTES:
        body = reader.sub(reader.u4(), f"{f.name} array")
    else:
        count = reader.u4()
        # every element takes at least 4 bytes: a count beyond that is a lie, not a loop
        if count * 4 > reader.remaining:
            raise SmapiProtocolError(
                f"{f.name} claims {count} entries but only {reader.remaining} bytes remain"
            )
        body = reader
    elements: list[Any] = []
    if f.framed and len(f.items) == 1 and f.items[0].kind is Out.RAW_REST:
        # records of opaque bytes (DIAG X'2FC'): hundreds per sample, so no per-field work
        name = f.items[0].name
        while body.remaining > 0 if count is None else len(elements) < count:
            elements.append({name: body.lstring()})
        return elements
    while body.remaining > 0 if count is None else len(elements) < count:
        before = body.remaining
        element = body.sub(body.u4(), f"{f.name} entry") if f.framed else body
        values = {item.name: _read_field(element, item) for item in f.items}
        elements.append(values)
        if body.remaining == before:  # an element that takes no bytes would never end
            raise SmapiProtocolError(f"{f.name} entry is empty")
    return elements


def _read_layout(reader: Reader, fields: tuple[Field, ...]) -> Decoded:
    return {f.name: _read_field(reader, f) for f in fields}


def decode_output(
    function: str, rc: int, data: bytes, params: Mapping[str, Any] | None = None
) -> DecodedOutput:
    """The values in ``data`` (the bytes after the reason code); ``SmapiProtocolError`` if
    they do not fit the function's layout. An empty output decodes to no values."""
    layout = lookup(function)
    if not data:
        return DecodedOutput({}, 0, data)
    fields = layout.output if rc in (0, 4) else layout.error
    reader = Reader(data)
    try:
        values = _read_layout(reader, fields)
        if layout.post is not None:
            values = layout.post(values, params or {})
    except (UnicodeError, ValueError, IndexError, KeyError, TypeError) as exc:
        raise SmapiProtocolError(f"{function} output does not fit its layout: {exc}") from None
    tail = reader.rest()
    trailing = len(tail.rstrip(b"\0"))
    return DecodedOutput(values, trailing, data)
