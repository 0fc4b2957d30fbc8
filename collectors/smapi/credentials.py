"""The SMAPI password: where it comes from and how it is kept out of every output.

The password lives in a :class:`Secret` whose ``repr``/``str`` never show it; only the
request encoder calls :meth:`Secret.reveal`. It is read from ``ESATUI_SMAPI_PASSWORD`` or
from a password file that only its owner may read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from esatui.collectors.smapi.errors import SmapiConfigError

PASSWORD_ENV = "ESATUI_SMAPI_PASSWORD"
_MAX_FILE = 4096


class Secret:
    """Bytes that are never printed, logged, compared or pickled by accident."""

    __slots__ = ("_value",)

    def __init__(self, value: bytes) -> None:
        self._value = value

    def reveal(self) -> bytes:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __repr__(self) -> str:
        return "Secret(***)" if self._value else "Secret(empty)"

    __str__ = __repr__

    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("a Secret cannot be pickled")


EMPTY = Secret(b"")


def read_password_file(path: Path) -> Secret:
    """The first line of ``path``; refused if group or others may read it."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise SmapiConfigError(
            f"cannot open SMAPI password file {path}: {exc.strerror or exc}"
        ) from None
    mode = os.fstat(fd).st_mode  # of the file opened, not of the name
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise SmapiConfigError(f"SMAPI password file {path} is not a regular file")
    with os.fdopen(fd, "rb") as f:
        if mode & (stat.S_IRGRP | stat.S_IROTH):
            raise SmapiConfigError(
                f"SMAPI password file {path} is readable by group or others "
                f"(mode {stat.S_IMODE(mode):04o}); run chmod 600 on it"
            )
        data = f.read(_MAX_FILE + 1)
    if len(data) > _MAX_FILE:
        raise SmapiConfigError(f"SMAPI password file {path} is longer than {_MAX_FILE} bytes")
    line = data.split(b"\n", 1)[0].rstrip(b"\r")
    if not line:
        raise SmapiConfigError(f"SMAPI password file {path} is empty")
    return Secret(line)


def load_password(password_file: Path | None, environ: Mapping[str, str] | None = None) -> Secret:
    """The password from ``password_file`` if given, else from ``ESATUI_SMAPI_PASSWORD``."""
    if password_file is not None:
        return read_password_file(password_file)
    env = os.environ if environ is None else environ
    value = env.get(PASSWORD_ENV, "")
    if not value:
        raise SmapiConfigError(
            f"no SMAPI password: set {PASSWORD_ENV} or give a password file readable only by you"
        )
    return Secret(os.fsencode(value))  # the bytes as set, whatever the locale
