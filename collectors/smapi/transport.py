"""How a connection to the SMAPI server is made: TCP (optionally TLS) or AF_IUCV.

Each SMAPI request uses its own connection, so a transport is a factory of connected
sockets. Errors become typed exceptions with one line naming the endpoint.

AF_IUCV: Python's socket module creates the socket (any address family number is
accepted) but cannot encode ``struct sockaddr_iucv``, so ``connect`` goes through libc
with ctypes. The connect wait is bounded by SO_SNDTIMEO, which af_iucv uses for it.
"""

from __future__ import annotations

import ctypes
import errno
import socket
import ssl
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from esatui.collectors.smapi.errors import (
    SmapiConfigError,
    SmapiConnectionRefused,
    SmapiTimeout,
    SmapiTransportError,
    SmapiUnsupportedTransport,
)

DEFAULT_PORT = 44444
AF_IUCV = 32  # linux/socket.h
IUCV_SERVER = "VSMREQIU"  # the SMAPI request server's virtual machine
IUCV_APPLICATION = "DMSRSRQU"  # its IUCV application name
_SOCKADDR_IUCV = struct.Struct("=HHI8s8s8s")  # family, port, addr, nodeid, user_id, name


class Transport(Protocol):
    def connect(self, timeout: float) -> socket.socket:
        """A socket connected to the SMAPI server (blocking; caller sets I/O timeouts)."""
        ...

    def describe(self) -> str: ...


def make_tls_context(ca_file: Path | None = None, *, verify: bool = True) -> ssl.SSLContext:
    """A client context; certificates and host names are checked unless ``verify`` is off."""
    try:
        ctx = ssl.create_default_context(cafile=str(ca_file) if ca_file else None)
    except (OSError, ssl.SSLError) as exc:
        raise SmapiConfigError(f"cannot load TLS CA file {ca_file}: {exc}") from None
    if not verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


@dataclass(frozen=True)
class TcpTransport:
    host: str
    port: int = DEFAULT_PORT
    tls: ssl.SSLContext | None = None
    server_hostname: str | None = None  # for certificate checks; the host by default

    def describe(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}{' (TLS)' if self.tls else ''}"

    def connect(self, timeout: float) -> socket.socket:
        where = self.describe()
        try:
            sock = socket.create_connection((self.host, self.port), timeout=timeout)
        except ConnectionRefusedError:
            raise SmapiConnectionRefused(f"SMAPI server {where} refused the connection") from None
        except TimeoutError:
            raise SmapiTimeout(
                f"no connection to SMAPI server {where} within {timeout:g} s"
            ) from None
        except OSError as exc:
            raise SmapiTransportError(
                f"cannot connect to SMAPI server {where}: {exc.strerror or exc}"
            ) from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.tls is None:
            return sock
        try:
            return self.tls.wrap_socket(sock, server_hostname=self.server_hostname or self.host)
        except ssl.SSLCertVerificationError as exc:
            sock.close()
            raise SmapiTransportError(
                f"TLS certificate of {where} not accepted: {exc.verify_message}"
            ) from None
        except (ssl.SSLError, OSError) as exc:
            sock.close()
            raise SmapiTransportError(f"TLS handshake with {where} failed: {exc}") from None


def sockaddr_iucv(userid: str, application: str) -> bytes:
    """``struct sockaddr_iucv`` for the peer: family, reserved port/addr/node, user, name."""
    fields = []
    for value, what in ((userid, "userid"), (application, "application name")):
        raw = value.upper().encode("ascii", errors="strict") if value.isascii() else b""
        if not 1 <= len(raw) <= 8:
            raise SmapiConfigError(f"IUCV {what} {value!r} must be 1 to 8 ASCII characters")
        fields.append(raw.ljust(8))
    return _SOCKADDR_IUCV.pack(AF_IUCV, 0, 0, b" " * 8, fields[0], fields[1])


LibcConnect = Callable[[int, bytes], int]  # fd, sockaddr -> 0 or an errno value


def _libc_connect(fd: int, address: bytes) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(address, len(address))
    if libc.connect(ctypes.c_int(fd), buf, ctypes.c_uint(len(address))) == 0:
        return 0
    return ctypes.get_errno() or errno.EIO


def _iucv_socket() -> socket.socket:
    return socket.socket(AF_IUCV, socket.SOCK_STREAM, 0)


@dataclass(frozen=True)
class IucvTransport:
    """AF_IUCV to the SMAPI request server; SMAPI authenticates the calling guest itself,
    so requests carry an empty userid and password."""

    userid: str = IUCV_SERVER
    application: str = IUCV_APPLICATION
    make_socket: Callable[[], socket.socket] = _iucv_socket
    libc_connect: LibcConnect = _libc_connect

    def describe(self) -> str:
        return f"IUCV {self.userid.upper()}/{self.application.upper()}"

    def connect(self, timeout: float) -> socket.socket:
        address = sockaddr_iucv(self.userid, self.application)
        try:
            sock = self.make_socket()
        except OSError as exc:
            if exc.errno in (errno.EAFNOSUPPORT, errno.EPROTONOSUPPORT, errno.EINVAL):
                raise SmapiUnsupportedTransport(
                    "AF_IUCV sockets are not supported here: they need Linux on IBM Z "
                    "running under z/VM with the af_iucv module loaded"
                ) from None
            raise SmapiTransportError(f"cannot create an AF_IUCV socket: {exc.strerror}") from None
        try:
            seconds = max(1, int(timeout + 0.999))
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", seconds, 0))
            code = self.libc_connect(sock.fileno(), address)
        except OSError as exc:
            sock.close()
            raise SmapiTransportError(f"cannot connect to {self.describe()}: {exc}") from None
        if code == 0:
            return sock
        sock.close()
        where = self.describe()
        if code == errno.ECONNREFUSED:
            raise SmapiConnectionRefused(f"SMAPI server {where} refused the connection")
        if code in (errno.EAGAIN, errno.ETIMEDOUT):
            raise SmapiTimeout(f"no connection to SMAPI server {where} within {timeout:g} s")
        raise SmapiTransportError(
            f"cannot connect to SMAPI server {where}: {errno.errorcode.get(code, code)}"
        )
