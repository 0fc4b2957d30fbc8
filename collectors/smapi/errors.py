"""What can go wrong talking to SMAPI, as typed exceptions with one-line messages.

No message ever contains the password or request bytes: exceptions are built from the
function name, the target, numbers and short descriptions only.
"""

from __future__ import annotations


class SmapiError(Exception):
    """Base of every SMAPI client error; ``str(err)`` is one line."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))


class SmapiConfigError(SmapiError, ValueError):
    """Bad client or source configuration (spec string, credentials, options)."""


class SmapiTransportError(SmapiError):
    """The connection could not be made or broke (refused, reset, closed early)."""


class SmapiConnectionRefused(SmapiTransportError):
    """Nothing accepted the connection (the server may be restarting: worth a retry)."""


class SmapiUnsupportedTransport(SmapiTransportError):
    """The transport cannot work on this system (AF_IUCV outside Linux on IBM Z)."""


class SmapiTimeout(SmapiTransportError):
    """The server did not answer within the connect or read timeout."""


class SmapiProtocolError(SmapiError):
    """The bytes received do not follow the SMAPI framing or the function's layout."""


class SmapiCallError(SmapiError):
    """The server answered with a return code the caller does not accept."""

    def __init__(self, function: str, rc: int, rs: int, meaning: str) -> None:
        self.function = function
        self.rc = rc
        self.rs = rs
        self.meaning = meaning
        super().__init__(f"{function}: SMAPI return code {rc} reason {rs}: {meaning}")


class SmapiAuthError(SmapiCallError):
    """Authentication or authorization refused (return codes 100, 120, 128, 188, 192)."""
