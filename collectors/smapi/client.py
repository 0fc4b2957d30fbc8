"""The SMAPI client: one request per connection, checked framing, bounded retries.

A call sends the request, reads the immediate request id, then the header and exactly
``output length - 12`` bytes of output, within one read deadline. It retries (a bounded
number of times, with increasing delays) when the connection is refused or the server
answers 900/99 "reissue". When the read breaks after the request id arrived, it asks for
the answer again with ``Response_Recovery`` on a new connection. It never returns part
of a response: either all of it decoded, or a typed error with a one-line message.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from esatui.collectors.smapi.codec import DecodedOutput, decode_output, encode_params
from esatui.collectors.smapi.codes import Outcome, outcome
from esatui.collectors.smapi.credentials import EMPTY, Secret
from esatui.collectors.smapi.errors import (
    SmapiAuthError,
    SmapiCallError,
    SmapiConnectionRefused,
    SmapiError,
    SmapiProtocolError,
    SmapiTimeout,
    SmapiTransportError,
)
from esatui.collectors.smapi.transport import Transport
from esatui.collectors.smapi.wire import (
    HEADER_LEN,
    decode_header,
    encode_request,
    text,
    unpack_id,
)

MAX_OUTPUT = 16 * 1024 * 1024  # far above 10 000 guests x 116 bytes; a bigger length lies


@dataclass(frozen=True, slots=True)
class SmapiResponse:
    function: str
    request_id: int
    outcome: Outcome
    output: DecodedOutput
    recovered: bool = False  # obtained through Response_Recovery

    @property
    def rc(self) -> int:
        return self.outcome.rc

    @property
    def rs(self) -> int:
        return self.outcome.rs

    def check(self, accept: Sequence[tuple[int, int]] = ((0, 0),)) -> SmapiResponse:
        """This response if its rc/rs is in ``accept``; otherwise the matching error."""
        if (self.rc, self.rs) in accept:
            return self
        error = SmapiAuthError if self.outcome.auth_failure else SmapiCallError
        raise error(self.function, self.rc, self.rs, self.outcome.meaning)


class _BrokenRead(Exception):
    def __init__(self, request_id: int, cause: SmapiTransportError) -> None:
        super().__init__(str(cause))
        self.request_id = request_id
        self.cause = cause


class SmapiClient:
    """Calls SMAPI functions through ``transport`` as ``userid``."""

    def __init__(
        self,
        transport: Transport,
        userid: str = "",
        password: Secret = EMPTY,
        *,
        connect_timeout: float = 5.0,
        read_timeout: float = 30.0,
        retries: int = 3,
        retry_delays: Sequence[float] = (0.5, 1.0, 2.0),
        max_output: int = MAX_OUTPUT,
        sleep: Callable[[float], None] = time.sleep,
        on_retry: Callable[[str], None] | None = None,
    ) -> None:
        self.transport = transport
        self.userid = userid
        self._password = password
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.retries = max(0, retries)
        self.retry_delays = tuple(retry_delays) or (0.0,)
        self.max_output = max_output
        self._sleep = sleep
        self.on_retry = on_retry  # told why, before each wait to try again
        self.calls = 0  # connections made, for the source's ``reads``

    def __repr__(self) -> str:
        return f"SmapiClient({self.transport.describe()}, userid={self.userid!r})"

    def call(self, function: str, target: str, **params: Any) -> SmapiResponse:
        """Call ``function`` on ``target``; any return code comes back (see ``check``)."""
        body = encode_params(function, params)  # parameter errors before any connection
        attempt = 0
        while True:
            try:
                response = self._call_once(function, target, body, params)
            except SmapiConnectionRefused as refused:
                if attempt >= self.retries:
                    raise
                reason = str(refused)
            else:
                if not response.outcome.reissue or attempt >= self.retries:
                    return response
                reason = f"{function} answered rc {response.rc} rs {response.rs} "
                reason += f"({response.outcome.meaning})"
            delay = self.retry_delays[min(attempt, len(self.retry_delays) - 1)]
            if self.on_retry is not None:
                left = self.retries - attempt
                self.on_retry(f"{reason}: trying again in {delay:g} s ({left} more at most)")
            self._sleep(delay)
            attempt += 1

    def _call_once(
        self, function: str, target: str, body: bytes, params: Mapping[str, Any]
    ) -> SmapiResponse:
        try:
            request_id, rc, rs, data = self._roundtrip(function, target, body)
            recovered = False
        except _BrokenRead as broken:
            if function == "Response_Recovery":
                raise broken.cause from None
            request_id = broken.request_id
            rc, rs, data = self._recover(function, target, broken)
            recovered = True
        output = decode_output(function, rc, data, params)
        return SmapiResponse(function, request_id, outcome(rc, rs, function), output, recovered)

    def _recover(self, function: str, target: str, broken: _BrokenRead) -> tuple[int, int, bytes]:
        """The failed call's answer through Response_Recovery (layout provisional)."""
        body = encode_params("Response_Recovery", {"failed_request_id": broken.request_id})
        try:
            _, rc, rs, data = self._roundtrip("Response_Recovery", target, body)
        except _BrokenRead as again:
            raise SmapiTransportError(
                f"{function}: {broken.cause}; Response_Recovery broke too: {again.cause}"
            ) from None
        except SmapiError as exc:
            raise SmapiTransportError(
                f"{function}: {broken.cause}; Response_Recovery failed: {exc}"
            ) from None
        if rc != 0:
            meaning = outcome(rc, rs, "Response_Recovery").meaning
            raise SmapiTransportError(
                f"{function}: {broken.cause}; "
                f"Response_Recovery returned rc {rc} rs {rs} ({meaning})"
            )
        if len(data) >= HEADER_LEN:  # the saved answer may come with its own header
            length, saved_id, saved_rc, saved_rs = struct.unpack_from(">Iiii", data)
            if saved_id == broken.request_id and length == len(data) - 4:
                return saved_rc, saved_rs, data[HEADER_LEN:]
        return rc, rs, data

    def _roundtrip(self, function: str, target: str, body: bytes) -> tuple[int, int, int, bytes]:
        userid = b"" if not self.userid else text(self.userid)
        request = encode_request(function, userid, self._password.reveal(), target, body)
        where = self.transport.describe()
        self.calls += 1
        sock = self.transport.connect(self.connect_timeout)
        try:
            deadline = time.monotonic() + self.read_timeout
            _send(sock, request, deadline, where)
            request_id = unpack_id(_recv(sock, 4, deadline, f"{function} request id", where))
            try:
                head = _recv(sock, HEADER_LEN, deadline, f"{function} response header", where)
                header = decode_header(head, request_id, self.max_output)
                data = _recv(sock, header.data_length, deadline, f"{function} output", where)
            except SmapiTransportError as exc:
                raise _BrokenRead(request_id, exc) from None
            _check_no_excess(sock, function)
            return request_id, header.rc, header.rs, data
        finally:
            _close(sock)


def _remaining(deadline: float, what: str, where: str) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise SmapiTimeout(f"no complete {what} from {where} within the read timeout")
    return left


def _send(sock: socket.socket, data: bytes, deadline: float, where: str) -> None:
    try:
        sock.settimeout(_remaining(deadline, "send", where))
        sock.sendall(data)
    except TimeoutError:
        raise SmapiTimeout(f"SMAPI server {where} did not take the request in time") from None
    except OSError as exc:
        raise SmapiTransportError(
            f"sending to SMAPI server {where} failed: {exc.strerror or exc}"
        ) from None


def _recv(sock: socket.socket, n: int, deadline: float, what: str, where: str) -> bytes:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        try:
            sock.settimeout(_remaining(deadline, what, where))
            count = sock.recv_into(view[got:], n - got)
        except TimeoutError:
            raise SmapiTimeout(
                f"no complete {what} from {where} within the read timeout ({got} of {n} bytes)"
            ) from None
        except OSError as exc:
            raise SmapiTransportError(
                f"reading the {what} from {where} failed after {got} of {n} bytes: "
                f"{exc.strerror or exc}"
            ) from None
        if count == 0:
            raise SmapiTransportError(
                f"SMAPI server {where} closed the connection after {got} of {n} bytes of the {what}"
            )
        got += count
    return bytes(buf)


def _check_no_excess(sock: socket.socket, function: str) -> None:
    """Bytes already waiting past the declared length mean the length lied."""
    try:
        sock.setblocking(False)
        extra = sock.recv(1)
    except OSError:  # nothing waiting (or the peer is gone): fine
        return
    if extra:
        raise SmapiProtocolError(f"{function}: the server sent more bytes than its output length")


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.close()
