"""SMAPI framing: the request envelope, the response header, and a bounds-checked reader.

Request: int4 length of what follows, then int4-length-prefixed function name,
authenticated userid, password and target identifier, then the function's parameters.
Response: an int4 request id sent as soon as the request is accepted, then int4 output
length (bytes after this field), int4 request id again, int4 return code, int4 reason code,
and ``output length - 12`` bytes of function output. Big-endian throughout.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from esatui.collectors.smapi.errors import SmapiProtocolError

ENCODING = "latin-1"  # SMAPI speaks ASCII; latin-1 decodes any byte without failing

_I4 = struct.Struct(">I")
_HEADER = struct.Struct(">Iiii")  # output length, request id, rc, rs (ids and codes signed)
HEADER_LEN = _HEADER.size  # 16
MIN_OUTPUT_LEN = 12  # request id + rc + rs


def text(value: str) -> bytes:
    return value.encode(ENCODING)


def lstring(value: bytes) -> bytes:
    """An int4 length, then the bytes."""
    return _I4.pack(len(value)) + value


def encode_request(
    function: str, userid: bytes, password: bytes, target: str, params: bytes
) -> bytes:
    """The complete request as sent on the wire."""
    body = (
        lstring(text(function)) + lstring(userid) + lstring(password) + lstring(text(target))
    ) + params
    return _I4.pack(len(body)) + body


@dataclass(frozen=True, slots=True)
class ParsedRequest:
    """A request taken apart (used by the test server and by request checks)."""

    function: str
    userid: str
    password: bytes
    target: str
    params: bytes

    def __repr__(self) -> str:  # never show the password
        return f"ParsedRequest({self.function!r}, userid={self.userid!r}, target={self.target!r})"


def decode_request(data: bytes) -> ParsedRequest:
    """The inverse of :func:`encode_request`; ``SmapiProtocolError`` if malformed."""
    reader = Reader(data)
    total = reader.u4()
    if total != reader.remaining:
        raise SmapiProtocolError(f"request length {total} but {reader.remaining} bytes follow")
    function = reader.lstring().decode(ENCODING)
    userid = reader.lstring().decode(ENCODING)
    password = reader.lstring()
    target = reader.lstring().decode(ENCODING)
    return ParsedRequest(function, userid, password, target, reader.rest())


@dataclass(frozen=True, slots=True)
class ResponseHeader:
    output_length: int
    request_id: int
    rc: int
    rs: int

    @property
    def data_length(self) -> int:
        return self.output_length - MIN_OUTPUT_LEN


def decode_header(data: bytes, immediate_id: int, max_output: int) -> ResponseHeader:
    """The 16 bytes after the immediate request id, checked for consistency."""
    length, request_id, rc, rs = _HEADER.unpack(data)
    if length < MIN_OUTPUT_LEN:
        raise SmapiProtocolError(f"output length {length} is shorter than the 12-byte minimum")
    if length > max_output:
        raise SmapiProtocolError(f"output length {length} exceeds the {max_output}-byte limit")
    if request_id != immediate_id:
        raise SmapiProtocolError(
            f"request id {request_id} in the response differs from the immediate id {immediate_id}"
        )
    return ResponseHeader(length, request_id, rc, rs)


def encode_response(request_id: int, rc: int, rs: int, output: bytes) -> bytes:
    """A complete response, immediate request id included (for servers and fixtures)."""
    return (
        struct.pack(">i", request_id) + _HEADER.pack(12 + len(output), request_id, rc, rs) + output
    )


def unpack_id(data: bytes) -> int:
    value: int = struct.unpack(">i", data)[0]
    return value


class Reader:
    """Sequential big-endian reads that never run past the end of the buffer."""

    __slots__ = ("_data", "_end", "pos")

    def __init__(self, data: bytes, start: int = 0, end: int | None = None) -> None:
        self._data = data
        self.pos = start
        self._end = len(data) if end is None else end

    @property
    def remaining(self) -> int:
        return self._end - self.pos

    def _need(self, n: int, what: str) -> int:
        if n < 0 or n > self._end - self.pos:
            raise SmapiProtocolError(
                f"{what} needs {n} bytes at offset {self.pos} but {self.remaining} remain"
            )
        start = self.pos
        self.pos += n
        return start

    def take(self, n: int, what: str = "field") -> bytes:
        start = self._need(n, what)
        return self._data[start : self.pos]

    def sub(self, n: int, what: str = "structure") -> Reader:
        """A reader over the next ``n`` bytes; this reader moves past them."""
        start = self._need(n, what)
        return Reader(self._data, start, self.pos)

    def u1(self) -> int:
        return self._data[self._need(1, "int1")]

    def u4(self) -> int:
        value: int = _I4.unpack_from(self._data, self._need(4, "int4"))[0]
        return value

    def s4(self) -> int:
        value: int = struct.unpack_from(">i", self._data, self._need(4, "int4"))[0]
        return value

    def u8(self) -> int:
        value: int = struct.unpack_from(">Q", self._data, self._need(8, "int8"))[0]
        return value

    def lstring(self) -> bytes:
        return self.take(self.u4(), "string")

    def rest(self) -> bytes:
        return self.take(self.remaining)
