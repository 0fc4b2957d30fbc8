"""The SMAPI server as the tests use it: recorded exchanges, misbehaviour, TLS.

:class:`SmapiTestServer` is the product's loopback server
(:class:`~esatui.sim.interfaces.smapi_server.SmapiServer`) plus what exists only to test
the client: responses come from (in this order) a queued one-shot misbehaviour or answer,
the recorded exchanges loaded with :meth:`SmapiTestServer.load_recordings`, or its z/VM
system; it can refuse functions (900/12), accept empty credentials (IUCV), answer
Response_Recovery without the lost answer's header, speak TLS, and keeps what it was asked.
"""

from __future__ import annotations

import json
import random
import socket
import ssl
import struct
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from esatui.collectors.diag2fc import Diag2fcRecord, encode_record
from esatui.sim.interfaces.smapi_server import SmapiServer, _i4


class Misbehave(Enum):
    CLOSE_BEFORE_ID = "read the request, close without a word"
    CLOSE_AFTER_ID = "send the request id, close"
    CLOSE_MID_OUTPUT = "send id, header and half the output, close"
    LONG_LENGTH = "claim 100 more output bytes than sent, close"
    SHORT_LENGTH = "claim 4 fewer output bytes than sent"
    HUGE_LENGTH = "claim a 2 GiB output"
    ID_MISMATCH = "repeat a different request id in the header"
    STALL = "read the request, never answer"
    STALL_AFTER_ID = "send the request id, never answer"
    GARBAGE = "send random bytes, close"
    REISSUE = "answer 900/99 (reissue)"


@dataclass
class SimGuest:
    """A guest whose counters advance by ``step_*`` after every record served."""

    name: str
    cpu_us: int = 1_000_000
    elapsed_us: int = 60_000_000
    vcpus: int = 2
    mem_used_kib: int = 1_048_576
    mem_max_kib: int = 4_194_304
    samp_cpu: int = 10
    samp_delay: int = 2
    samp_page: int = 1
    samp_idle: int = 80
    samp_other: int = 7
    step_cpu_us: int = 0
    step_elapsed_us: int = 0
    step_samples: int = 0
    logged_on: bool = True

    def record(self) -> bytes:
        total = self.samp_cpu + self.samp_delay + self.samp_page + self.samp_idle + self.samp_other
        return encode_record(
            Diag2fcRecord(
                version=1,
                flags=0,
                used_cpu_us=self.cpu_us,
                elapsed_us=self.elapsed_us,
                mem_min_kib=0,
                mem_max_kib=self.mem_max_kib,
                mem_share_kib=0,
                mem_used_kib=self.mem_used_kib,
                pcpus=8,
                lcpus=4,
                vcpus=self.vcpus,
                ocpus=0,
                cpu_max=100,
                cpu_shares=100,
                samp_cpu=self.samp_cpu,
                samp_delay=self.samp_delay,
                samp_page=self.samp_page,
                samp_idle=self.samp_idle,
                samp_other=self.samp_other,
                samp_total=total,
                guest=self.name,
            )
        )

    def advance(self) -> None:
        self.cpu_us += self.step_cpu_us
        self.elapsed_us += self.step_elapsed_us
        self.samp_cpu += self.step_samples


@dataclass(frozen=True)
class Received:
    """A request as the server saw it (the password is never kept)."""

    function: str
    userid: str
    target: str
    params: bytes
    password_matched: bool


class SmapiTestServer(SmapiServer):
    """Start with ``with SmapiTestServer(...) as srv:``; connect to ``srv.port``."""

    def __init__(
        self,
        *,
        tls: ssl.SSLContext | None = None,
        allow_empty_credentials: bool = False,
        recovery_with_header: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.tls = tls
        self.allow_empty_credentials = allow_empty_credentials
        self.recovery_with_header = recovery_with_header
        self.received: deque[Received] = deque(maxlen=self._history)  # what was asked
        self.unsupported: set[str] = set()  # functions answered 900/12
        self._script: deque[Misbehave | tuple[int, int, bytes]] = deque()
        self._recorded: dict[bytes, bytes] = {}
        self._rng = random.Random(5)

    # --- what the next connections get --------------------------------------------------

    def misbehave(self, *how: Misbehave) -> None:
        """The next ``len(how)`` connections misbehave in these ways, in order."""
        self._script.extend(how)

    def answer_next(self, rc: int, rs: int, output: bytes = b"") -> None:
        """The next connection gets this return code, reason code and output."""
        self._script.append((rc, rs, output))

    def load_recordings(self, files: Iterable[Path]) -> None:
        """Answer requests byte-identical to a recorded one with the recorded response."""
        for path in files:
            data = json.loads(path.read_text())
            self._recorded[bytes.fromhex(data["request_hex"])] = bytes.fromhex(
                data["response_hex"]
            )[4:]

    # --- serving ------------------------------------------------------------------------

    def _accept(self, sock: socket.socket) -> socket.socket | None:
        if self.tls is None:
            return sock
        try:
            return self.tls.wrap_socket(sock, server_side=True)
        except (ssl.SSLError, OSError):
            return None

    def _respond(self, sock: socket.socket, request: bytes, request_id: int) -> None:
        with self._lock:
            step = self._script.popleft() if self._script else None
        if isinstance(step, Misbehave):
            self._misbehave(sock, step, request, request_id)
        elif step is not None:
            self._reply(sock, request_id, *step)
        else:
            super()._respond(sock, request, request_id)

    def _misbehave(self, sock: socket.socket, how: Misbehave, request: bytes, rid: int) -> None:
        if how is Misbehave.REISSUE:
            self._send(sock, _i4(rid) + self._body(rid, 900, 99, b""))
            return
        if how in (Misbehave.STALL, Misbehave.STALL_AFTER_ID):
            if how is Misbehave.STALL_AFTER_ID:
                self._send(sock, _i4(rid))
            self._stop.wait(30)
            return
        if how is Misbehave.CLOSE_BEFORE_ID:
            return
        if how is Misbehave.CLOSE_AFTER_ID:
            self._send(sock, _i4(rid))
            return
        if how is Misbehave.GARBAGE:
            self._send(sock, bytes(self._rng.randrange(256) for _ in range(37)))
            return
        rc, rs, output = self._answer(request)
        body = self._body(rid, rc, rs, output)
        self._save(rid, body)
        if how is Misbehave.CLOSE_MID_OUTPUT:
            self._send(sock, _i4(rid) + body[: 16 + len(output) // 2])
        elif how is Misbehave.LONG_LENGTH:
            self._send(sock, _i4(rid) + struct.pack(">I", 12 + len(output) + 100) + body[4:])
        elif how is Misbehave.SHORT_LENGTH:
            self._send(sock, _i4(rid) + struct.pack(">I", 12 + len(output) - 4) + body[4:])
        elif how is Misbehave.HUGE_LENGTH:
            self._send(sock, _i4(rid) + struct.pack(">I", 0x7FFFFFFF) + body[4:])
        elif how is Misbehave.ID_MISMATCH:
            self._send(sock, _i4(rid) + body[:4] + _i4(rid + 1) + body[8:])

    def _answer(self, request: bytes) -> tuple[int, int, bytes]:
        full = struct.pack(">I", len(request)) + request
        if full in self._recorded:
            recorded = self._recorded[full]
            _, _, rc, rs = struct.unpack(">Iiii", recorded[:16])
            return rc, rs, recorded[16:]
        (function, userid, password, target), params = self._parse(request)
        matched = self._authorized(userid, password)
        self.received.append(Received(function, userid, target, params, matched))
        if matched and function in self.unsupported:
            return 900, 12, b""
        return super()._answer(request)

    def _authorized(self, userid: str, password: bytes) -> bool:
        empty = not userid and not password
        return (empty and self.allow_empty_credentials) or super()._authorized(userid, password)

    def _f_Response_Recovery(self, target: str, params: bytes) -> tuple[int, int, bytes]:
        rc, rs, saved = super()._f_Response_Recovery(target, params)
        if rc or self.recovery_with_header:
            return rc, rs, saved
        _, _, rc, rs = struct.unpack(">Iiii", saved[:16])
        return rc, rs, saved[16:]
