"""The /dev/vmcp character device, behind a small interface that tests can script.

Protocol (kernel drivers/s390/char/vmcp.c, uapi asm/vmcp.h):

- ``open`` needs CAP_SYS_ADMIN (``EPERM`` otherwise); a session starts with a one-page
  response buffer;
- ``ioctl(VMCP_SETBUF, int)`` sets the response buffer size for the next command (it frees
  the current response); sizes above 2^8 pages (1 MiB) are refused with ``EINVAL``;
- ``write(command)`` runs the CP command through DIAGNOSE X'08' (at most 240 bytes,
  ``EINVAL`` beyond);
- ``ioctl(VMCP_GETCODE, int*)`` gives CP's return code, ``ioctl(VMCP_GETSIZE, int*)`` the size
  of the whole response, which may exceed the buffer: then the response was truncated;
- ``read`` returns up to min(response size, buffer size) bytes.
"""

from __future__ import annotations

import array
import fcntl
import os
from typing import Protocol

VMCP_GETCODE = 0x80041001  # _IOR(0x10, 1, int)
VMCP_SETBUF = 0x40041002  # _IOW(0x10, 2, int)
VMCP_GETSIZE = 0x80041003  # _IOR(0x10, 3, int)
MAX_COMMAND = 240
MAX_BUFFER = 1 << 20  # get_order(size) <= 8 with 4 KiB pages
PAGE = 4096


class VmcpSession(Protocol):
    """One open /dev/vmcp (or a scripted stand-in)."""

    def set_buffer(self, size: int) -> None: ...

    def write(self, command: bytes) -> None: ...

    def get_code(self) -> int: ...

    def get_size(self) -> int: ...

    def read(self, size: int) -> bytes: ...

    def close(self) -> None: ...


class LinuxVmcpSession:
    """The real device. ``OSError`` from ``open`` tells why it cannot be used."""

    def __init__(self, path: str = "/dev/vmcp") -> None:
        self._fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)

    def set_buffer(self, size: int) -> None:
        fcntl.ioctl(self._fd, VMCP_SETBUF, array.array("i", [size]))

    def write(self, command: bytes) -> None:
        os.write(self._fd, command)

    def get_code(self) -> int:
        return self._get(VMCP_GETCODE)

    def get_size(self) -> int:
        return self._get(VMCP_GETSIZE)

    def read(self, size: int) -> bytes:
        chunks: list[bytes] = []
        left = size
        while left > 0:
            chunk = os.read(self._fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        os.close(self._fd)

    def _get(self, request: int) -> int:
        buf = array.array("i", [0])
        fcntl.ioctl(self._fd, request, buf, True)
        return int(buf[0])
