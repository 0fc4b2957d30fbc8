"""A SMAPI server on loopback answering from a small z/VM system.

The simulated z/VM system (``esatui sim``) serves its guests and LPAR through it, replacing
them as its clock advances; the tests build on it (``tests/fakes/smapi_server.py`` adds
recorded exchanges and misbehaviour). It answers one request per connection like the real
server: the request id at once, then the output length, request id, return and reason codes
and output, from its z/VM system (guests that give DIAGNOSE X'2FC' records, LPARs with
logical CPUs). Its encoders are written here with ``struct`` on purpose, independently of
the client's layout tables.
"""

from __future__ import annotations

import contextlib
import socket
import socketserver
import struct
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol, Self


class ServedGuest(Protocol):
    """What the server needs of a guest: its name, state and DIAGNOSE X'2FC' record."""

    name: str
    logged_on: bool
    vcpus: int

    def record(self) -> bytes:
        """The guest's DIAGNOSE X'2FC' record now."""
        ...

    def advance(self) -> None:
        """Called after each record served."""
        ...


@dataclass
class SimCpu:
    cpu_type: str = "IFL"
    busy_pct: float = 50.0
    lp_overhead_pct: float = 0.1


@dataclass
class SimLpar:
    name: str
    number: int
    cpus: list[SimCpu] = field(default_factory=lambda: [SimCpu()])


def _i4(value: int) -> bytes:
    return struct.pack(">i", value)


def _lstr(value: bytes) -> bytes:
    return struct.pack(">I", len(value)) + value


def _cstr_block(lines: Iterable[str]) -> bytes:
    return _lstr(b"".join(line.encode() + b"\0" for line in lines))


class _Server(socketserver.TCPServer):
    allow_reuse_address = True


class _ThreadingServer(socketserver.ThreadingMixIn, _Server):
    daemon_threads = True


class SmapiServer:
    """Start with ``with SmapiServer(...) as srv:``; connect to ``srv.port``."""

    def __init__(
        self,
        *,
        userid: str = "MAINT",
        password: bytes = b"secret",
        port: int = 0,
        guests: Iterable[ServedGuest] = (),
        lpars: Iterable[SimLpar] = (SimLpar("LP1", 1, [SimCpu("CP"), SimCpu("IFL")]),),
        my_lpar: str = "LP1",
        namelists: dict[str, list[str]] | None = None,
        cp_version: str = "7.1.0",
        timezone: str = "EDT",
        history: int | None = None,
        threaded: bool = True,
    ) -> None:
        self.userid = userid.upper()
        self._password = password
        self.guests: dict[str, ServedGuest] = {g.name.upper(): g for g in guests}
        self.lpars = list(lpars)
        self.my_lpar = my_lpar
        self.namelists = namelists or {}
        # answers kept for Response_Recovery; ``history`` bounds them for long runs
        self._history = history
        # one thread per connection (a client that stalls one must not stop the others); the
        # simulator's single client is served faster in the server's own thread
        self._threaded = threaded
        self.cpu_id = "FF01917729640000"
        self.cp_version = cp_version
        self.timezone = timezone
        self._saved: dict[int, bytes] = {}
        self._next_id = 1000
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._port = port
        self._server: socketserver.TCPServer | None = None
        self._thread: threading.Thread | None = None

    # --- life cycle --------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._server is not None
        port: int = self._server.server_address[1]
        return port

    def start(self) -> Self:
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                outer._serve(self.request)

        kind = _ThreadingServer if self._threaded else _Server
        server = kind(("127.0.0.1", self._port), Handler)
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def saved_ids(self) -> list[int]:
        return list(self._saved)

    # --- serving ------------------------------------------------------------------------------

    def _serve(self, sock: socket.socket) -> None:
        sock.settimeout(5.0)
        connected = self._accept(sock)
        if connected is None:
            return
        try:
            request = self._read_request(connected)
        except (OSError, struct.error):
            return
        if request is None:
            return
        with self._lock:
            self._next_id += 1
            request_id = self._next_id
        self._respond(connected, request, request_id)

    def _accept(self, sock: socket.socket) -> socket.socket | None:
        """The connection to talk on (``None``: drop it)."""
        return sock

    def _respond(self, sock: socket.socket, request: bytes, request_id: int) -> None:
        rc, rs, output = self._answer(request)
        self._reply(sock, request_id, rc, rs, output)

    def _reply(self, sock: socket.socket, request_id: int, rc: int, rs: int, output: bytes) -> None:
        body = self._body(request_id, rc, rs, output)
        self._save(request_id, body)
        self._send(sock, _i4(request_id) + body)

    def _read_request(self, sock: socket.socket) -> bytes | None:
        head = self._recv(sock, 4)
        if head is None:
            return None
        (length,) = struct.unpack(">I", head)
        return self._recv(sock, length)

    @staticmethod
    def _recv(sock: socket.socket, n: int) -> bytes | None:
        buf = b""
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    @staticmethod
    def _send(sock: socket.socket, data: bytes) -> None:
        with contextlib.suppress(OSError):
            sock.sendall(data)

    def _save(self, request_id: int, body: bytes) -> None:
        """Keep an answer for Response_Recovery (the oldest go beyond ``history``)."""
        with self._lock:
            self._saved[request_id] = body
            if self._history is not None:
                while len(self._saved) > self._history:
                    del self._saved[next(iter(self._saved))]

    @staticmethod
    def _body(request_id: int, rc: int, rs: int, output: bytes) -> bytes:
        return struct.pack(">Iiii", 12 + len(output), request_id, rc, rs) + output

    # --- the simulated system ------------------------------------------------------------------

    def _answer(self, request: bytes) -> tuple[int, int, bytes]:
        fields, params = self._parse(request)
        function, userid, password, target = fields
        if not self._authorized(userid, password):
            return 120, 0, b""
        handler: Callable[[str, bytes], tuple[int, int, bytes]] | None = getattr(
            self, f"_f_{function}", None
        )
        if handler is None:
            return 900, 12, b""
        return handler(target, params)

    def _authorized(self, userid: str, password: bytes) -> bool:
        return userid.upper() == self.userid and password == self._password

    @staticmethod
    def _parse(request: bytes) -> tuple[tuple[str, str, bytes, str], bytes]:
        pos, out = 0, []
        for _ in range(4):
            (n,) = struct.unpack_from(">I", request, pos)
            out.append(request[pos + 4 : pos + 4 + n])
            pos += 4 + n
        return (out[0].decode(), out[1].decode(), out[2], out[3].decode()), request[pos:]

    def _f_System_Information_Query(self, target: str, params: bytes) -> tuple[int, int, bytes]:
        lines = [
            "CMS_LEVEL=LEVEL=29 SERVICE_LEVEL=0000 LANGUAGE=AMENG",
            f"CPUID=ID={self.cpu_id}",
            f"CP_LEVEL=VERSION={self.cp_version} SERVICE_LEVEL=1801 GENERATION_TIME=02:44:15 "
            f"GENERATION_DATE=2019-02-22 GENERATION_TIME_ZONE={self.timezone} "
            f"IPL_TIME=13:39:31 IPL_DATE=2019-04-28 IPL_TIME_ZONE={self.timezone} "
            "LANGUAGE=AMENG",
            "STORAGE=ONLINE=4G CONFIGURED=4G INCREMENT=1M STANDBY=0 RESERVED=0",
            f"TIME=TIMEZONE={self.timezone} TIME=13:42:29 DATE=2019-04-28 CONNECT=00:02:13",
        ]
        return 0, 0, _cstr_block(lines)

    def _f_System_Performance_Information_Query(
        self, target: str, params: bytes
    ) -> tuple[int, int, bytes]:
        if b"DETAILED_CPU=SHOW=YES" not in params:
            return 24, 119, b""
        n = sum(len(lpar.cpus) for lpar in self.lpars)
        lines = [
            "CPU_COUNT=0004",
            "CPU_AVERAGE_USE=0%",
            "MONITOR_RATE=2.00 SECONDS ",
            f"MY_LPAR_NAME={self.my_lpar}",
            f"DETAILED_CPU_COUNT={n}",
        ]
        for lpar in self.lpars:
            for i, cpu in enumerate(lpar.cpus):
                lines.append(
                    f"DETAILED_CPU=LPAR_NAME={lpar.name:<8} LPAR_NUMBER={lpar.number} "
                    f"LPAR_ID= ... LPAR_CPU_COUNT={len(lpar.cpus)} LPAR_OVERHEAD=1.00% "
                    f"CPU_TYPE={cpu.cpu_type} CPU_ID={i} CPU_SUSPEND_TIME=0.00% "
                    f"CPU_LP_OVERHEAD_TIME={cpu.lp_overhead_pct:.2f}% "
                    f"CPU_BUSY_TIME={cpu.busy_pct:.2f}% PHYSICAL_CPU_BUSY=97.00%"
                )
        return 0, 0, _cstr_block(lines)

    def _f_System_Performance_Info_Query(
        self, target: str, params: bytes
    ) -> tuple[int, int, bytes]:
        cpus = next((lp.cpus for lp in self.lpars if lp.name == self.my_lpar), [])
        lines = [f"{len(cpus):04d}", "40", "61", "1048576", "464777"]
        lines += [
            f"PROC {i:04X}-{int(c.busy_pct):03d}% {c.cpu_type:<4} VM" for i, c in enumerate(cpus)
        ]
        return 0, 0, b"".join(line.encode() + b"\0" for line in lines)

    def _f_Image_Status_Query(self, target: str, params: bytes) -> tuple[int, int, bytes]:
        names = [g.name for g in self.guests.values() if g.logged_on]
        if target != "*":
            names = [n for n in names if n == target.upper()]
        if not names:
            return 200, 12, b""
        array = b"".join(_lstr(n.encode()) for n in names)
        return 0, 0, _lstr(array)

    def _records(self, names: Iterable[str]) -> tuple[int, int, bytes]:
        records, missing = [], False
        for name in names:
            guest = self.guests.get(name.upper())
            if guest is None or not guest.logged_on:
                missing = True
                continue
            records.append(_lstr(guest.record()))
            guest.advance()
        rc, rs = (4, 4) if missing else (0, 0)
        return rc, rs, struct.pack(">I", len(records)) + b"".join(records)

    def _f_Image_Performance_Query(self, target: str, params: bytes) -> tuple[int, int, bytes]:
        names = [n.decode() for n in params.split(b"\0") if n]
        return self._records(names)

    def _f_System_Image_Performance_Query(
        self, target: str, params: bytes
    ) -> tuple[int, int, bytes]:
        if target not in self.namelists:
            return 28, 0, b""
        return self._records(self.namelists[target])

    def _f_Image_CPU_Query(self, target: str, params: bytes) -> tuple[int, int, bytes]:
        guest = self.guests.get(target.upper())
        if guest is None or not guest.logged_on:
            return 200, 12, b""
        entries = b""
        for i in range(guest.vcpus):
            cpu_id = self.cpu_id.encode()
            entry = _i4(i) + _lstr(cpu_id) + bytes([1 if i == 0 else 0, 3, 2])
            entries += _lstr(entry)
        return 0, 0, _i4(guest.vcpus) + _lstr(entries)

    def _f_System_Processor_Query(self, target: str, params: bytes) -> tuple[int, int, bytes]:
        cpus = next((lp.cpus for lp in self.lpars if lp.name == self.my_lpar), [])
        lines = [
            f"PROCESSOR {i:02X} {'MASTER' if i == 0 else 'ALTERNATE'} {c.cpu_type}"
            for i, c in enumerate(cpus)
        ]
        return 0, 0, _lstr(b"LPAR") + _lstr(b"".join(_lstr(line.encode()) for line in lines))

    def _f_Response_Recovery(self, target: str, params: bytes) -> tuple[int, int, bytes]:
        (failed,) = struct.unpack(">i", params[:4])
        saved = self._saved.get(failed)
        if saved is None:
            return 4, 4, b""
        return 0, 0, saved  # the lost answer whole, its header included
