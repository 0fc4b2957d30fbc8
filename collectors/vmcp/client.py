"""Running CP commands through /dev/vmcp, with the buffer grown when a response is cut."""

from __future__ import annotations

import errno
from collections.abc import Callable
from dataclasses import dataclass

from esatui.collectors.vmcp.device import MAX_BUFFER, MAX_COMMAND, PAGE, VmcpSession

Opener = Callable[[], VmcpSession]


class VmcpError(Exception):
    """/dev/vmcp cannot be used: one clear line."""


class VmcpPermissionError(VmcpError):
    pass


class VmcpUnavailable(VmcpError):
    pass


@dataclass(frozen=True, slots=True)
class CpResponse:
    command: str
    rc: int  # CP's return code (0 = done; 1 = unknown command ...)
    text: str
    truncated: bool = False  # still cut at the largest buffer the kernel allows

    @property
    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.text.splitlines()]


def explain_open_error(path: str, exc: OSError) -> VmcpError:
    if exc.errno in (errno.EPERM, errno.EACCES):
        return VmcpPermissionError(
            f"{path} refused: CP commands need CAP_SYS_ADMIN (run esatui as root)"
        )
    if exc.errno in (errno.ENOENT, errno.ENODEV, errno.ENXIO):
        return VmcpUnavailable(
            f"{path} is absent: not a z/VM guest, or the vmcp module is not loaded"
        )
    return VmcpError(f"{path}: {exc.strerror or exc}")


class VmcpClient:
    """``run("QUERY VIRTUAL CPUS")`` -> :class:`CpResponse`."""

    def __init__(self, opener: Opener, *, path: str = "/dev/vmcp", buffer: int = 8192) -> None:
        self._opener = opener
        self._path = path
        self._buffer = max(PAGE, min(buffer, MAX_BUFFER))

    def run(self, command: str, *, keep_case: bool = False) -> CpResponse:
        """Run one CP command. Upper-cased like the ``vmcp`` tool unless ``keep_case``."""
        text = command if keep_case else command.upper()
        try:
            raw = text.encode("ascii")
        except UnicodeEncodeError as exc:
            raise ValueError(f"CP command is not ASCII: {command!r}") from exc
        if not raw or len(raw) > MAX_COMMAND:
            raise ValueError(f"CP commands are 1 to {MAX_COMMAND} bytes, not {len(raw)}")
        while True:
            rc, size, data = self._once(raw, self._buffer)
            if size <= self._buffer:
                return CpResponse(text, rc, _decode(data))
            if self._buffer >= MAX_BUFFER:
                return CpResponse(text, rc, _decode(data), truncated=True)
            # the response did not fit: grow to the whole response (whole pages) and rerun
            self._buffer = min(MAX_BUFFER, -(-size // PAGE) * PAGE)

    def _once(self, raw: bytes, buffer: int) -> tuple[int, int, bytes]:
        try:
            session = self._opener()
        except OSError as exc:
            raise explain_open_error(self._path, exc) from exc
        try:
            session.set_buffer(buffer)
            session.write(raw)
            rc = session.get_code()
            size = session.get_size()
            data = session.read(max(0, min(size, buffer)))
        except OSError as exc:
            raise VmcpError(f"{self._path}: {raw.decode()}: {exc.strerror or exc}") from exc
        finally:
            session.close()
        return rc, size, data


def _decode(data: bytes) -> str:
    # the kernel hands back CP's response converted to ASCII; NULs pad some responses
    return data.replace(b"\x00", b"").decode("ascii", errors="replace")
