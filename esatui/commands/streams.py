"""The process's standard streams, made safe to write before a command runs.

* A stream that was closed (``>&-``) gets ``/dev/null`` on its descriptor, so no file the
  command opens (the database) takes descriptor 1 or 2 and receives text meant for the
  terminal; writing to a closed standard output is an :class:`StdoutError` that says so.
* Text the encoding of standard output cannot show (``µs`` in the C locale, or with
  ``PYTHONIOENCODING=ascii``) is replaced by ``?``: the report comes out, in the encoding
  asked for. Report files (``--output``) are always UTF-8.
* A failure to write standard output (``/dev/full``, a disk's error) is an
  :class:`StdoutError` naming standard output, so it is not taken for the database's.
  A broken pipe (the reader went away) stays a :class:`BrokenPipeError`.
"""

from __future__ import annotations

import io
import os
import sys

CLOSED = "standard output is closed: redirect it (> FILE, or > /dev/null)"


class StdoutError(Exception):
    """Standard output cannot be written, in one line."""


class StandardOutput(io.TextIOWrapper):
    """``sys.stdout``: replaces what its encoding cannot show; its failures name it."""

    closed_at_start = False

    def write(self, s: str) -> int:
        if self.closed_at_start:
            raise StdoutError(CLOSED)
        try:
            return super().write(s)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _failed(exc) from None

    def flush(self) -> None:
        try:
            super().flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _failed(exc) from None


def _failed(exc: OSError) -> StdoutError:
    return StdoutError(f"cannot write to standard output: {exc.strerror or exc}")


def take_standard_streams() -> None:
    """Standard input, output and error as the module's docstring says (the real process's
    only: a test's captured streams are left alone)."""
    for fd in (0, 1, 2):
        if not _is_open(fd):
            _null_on(fd)
    if sys.stdin is None:
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - the process's
    if sys.stderr is None:
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    closed = sys.stdout is None
    old = sys.stdout
    if old is not None and not isinstance(old, io.TextIOWrapper):
        return  # not a stream of this process's own (a test's)
    buffer = open(1, "wb", closefd=False) if old is None else old.buffer  # noqa: SIM115
    stdout = StandardOutput(
        buffer,
        encoding=None if old is None else old.encoding,
        errors="replace",
        line_buffering=old is not None and old.line_buffering,
    )
    stdout.closed_at_start = closed
    if old is not None:
        old.flush()
    sys.stdout = stdout


def drop_standard_output() -> None:
    """After a failure to write it: what is still buffered is thrown away (``/dev/null`` on
    its descriptor), so the interpreter's last flush cannot fail again at exit."""
    if isinstance(sys.stdout, StandardOutput):  # the process's own, not a test's
        _null_on(1)


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _null_on(fd: int) -> None:
    null = os.open(os.devnull, os.O_RDWR)
    if null != fd:
        os.dup2(null, fd)
        os.close(null)


def say_done(*lines: str) -> None:
    """Print the lines that say what a command did (its first: what it recorded). Standard
    output that cannot take them is an error that still says it was done: the work is kept
    and running the command again would record it twice."""
    try:
        for line in lines:
            print(line)
        sys.stdout.flush()
    except StdoutError as exc:
        raise StdoutError(f"{exc}; done all the same: {lines[0]}") from None
