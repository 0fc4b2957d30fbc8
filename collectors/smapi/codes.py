"""SMAPI return and reason codes and what they mean.

Meanings follow IBM's "z/VM Systems Management Application Programming" return code
tables as reproduced by the public clients that use them (zthin/smcli in
openmainframeproject/feilong, lllucius/pysmapi, PigIron); the wording here is ours.
Codes the public material does not explain are described as such (see docs/SMAPI.md).
"""

from __future__ import annotations

from dataclasses import dataclass

RC_OK = 0
RC_WARNING = 4
RC_SYNTAX = 24
RC_AUTH = 100
RC_USER_PW_BAD = 120
RC_PW_EXPIRED = 128
RC_ESM = 188
RC_PW_CHECK = 192
RC_IMAGEOP = 200
RC_INTERNAL = 396
RC_ASYNC = 592
RC_SERVER = 900

RS_FUNCTION_NOT_SUPPORTED = 12  # with RC_SERVER
RS_LENGTH_MISMATCH = 20  # with RC_SERVER
RS_REISSUE = 99  # with RC_SERVER

AUTH_RCS = frozenset({RC_AUTH, RC_USER_PW_BAD, RC_PW_EXPIRED, RC_ESM, RC_PW_CHECK})

# (rc, rs) -> meaning, valid for every function unless _BY_FUNCTION says otherwise.
_PAIRS: dict[tuple[int, int], str] = {
    (0, 0): "request successful",
    (0, 4): "request successful with a note from the function",
    (0, 8): "request successful; object directory offline",
    (0, 12): "image not active",
    (0, 28): "no matching entries found; the output is empty",
    (0, 100): "asynchronous operation succeeded",
    (0, 104): "asynchronous operation in progress",
    (0, 108): "asynchronous operation failed",
    (4, 4): "warning: the request was only partly satisfied (object not found)",
    (4, 28): "warning: no matching entries found; the output is empty",
    (28, 0): "namelist file not found",
    (100, 0): "request is authorized",
    (100, 4): "authorization deferred to the directory manager",
    (100, 8): "not authorized by the external security manager",
    (100, 12): "not authorized by the directory manager",
    (100, 16): "not authorized by the SMAPI server",
    (100, 20): "target image not authorized for this function",
    (104, 0): "authorization file not found",
    (120, 0): "authentication failed: userid or password not valid",
    (128, 0): "authentication failed: password expired",
    (200, 0): "image operation error",
    (200, 4): "image not found",
    (200, 8): "image already active",
    (200, 12): "image not active",
    (200, 16): "image being deactivated",
    (200, 24): "list not found",
    (216, 4): "virtual CPU not found",
    (216, 12): "image not active",
    (396, 0): "internal system error",
    (452, 4): "task not found",
    (592, 0): "asynchronous operation started (operation id in the output)",
    (900, 4): "custom exec not found",
    (900, 8): "worker server not found",
    (900, 12): "function not supported at this z/VM level",
    (900, 16): "internal server error: function table entry not valid",
    (900, 20): "total length does not match the input data (length mismatch)",
    (900, 24): "error accessing the SFS directory",
    (900, 28): "internal server error in the format of the function output",
    (900, 32): "internal server error: worker server response not valid",
    (900, 36): "a specified length is outside the server's valid range",
    (900, 40): "internal server socket error",
    (900, 99): "server busy or restarting: reissue the request",
}

# Return codes whose reason code is a number to show rather than look up.
_RC_ONLY: dict[int, str] = {
    4: "warning",
    8: "function-specific error",
    24: "syntax error in a function parameter",
    100: "not authorized",
    188: "internal server error: external security manager failure, product code",
    192: "internal server error: cannot authenticate userid/password, product code",
    200: "image operation error",
    212: "active image connectivity error",
    396: "internal system error, product-specific code",
    500: "directory manager request could not be completed",
    592: "asynchronous operation started, operation id",
    596: "internal directory manager error, product code",
    900: "SMAPI server error",
}

# Function-specific readings, where the generic one would mislead.
_BY_FUNCTION: dict[tuple[str, int, int], str] = {
    ("Response_Recovery", 4, 4): "no saved response for that request id",
    (
        "Image_Performance_Query",
        4,
        4,
    ): "some of the images asked for were not found or not logged on",
    ("System_Image_Performance_Query", 4, 4): "some images in the namelist were not found",
    ("System_EQID_Query", 8, 3003): "unknown parameter operand",
    ("System_EQID_Query", 8, 3002): "unknown parameter",
}

# Reason rr of return code 24 (the reason code is pprr: parameter number pp, reason rr).
_SYNTAX: dict[int, str] = {
    1: "first character of a list name is a colon",
    10: "characters not in 0-9",
    11: "unsupported function",
    13: "length greater than the maximum or beyond the total length",
    14: "length less than the minimum",
    15: "numeric value less than the minimum or missing",
    16: "characters not in 0-9A-F",
    17: "characters not in 0-9A-F-",
    18: "numeric value greater than the maximum",
    19: "value not recognized",
    23: "conflicting parameter",
    24: "required parameter not specified",
    25: "extraneous parameter",
    26: "characters not in A-Z",
    36: "characters not in A-Z0-9",
    37: "characters not in A-Z0-9-",
    42: "characters not in A-Z0-9@#$+-:",
    43: "characters not in A-Z0-9@#$+-:_",
    44: "characters not in A-Z0-9@#$+-:_=",
    45: "directory or SFS name not valid",
    88: "unexpected end of data",
    99: "non-breaking characters expected",
}


@dataclass(frozen=True, slots=True)
class Outcome:
    """A return/reason code pair read in context."""

    rc: int
    rs: int
    meaning: str

    @property
    def ok(self) -> bool:
        return self.rc == RC_OK

    @property
    def auth_failure(self) -> bool:
        return self.rc in AUTH_RCS and not (self.rc == RC_AUTH and self.rs == 0)

    @property
    def reissue(self) -> bool:
        return self.rc == RC_SERVER and self.rs == RS_REISSUE

    @property
    def not_supported(self) -> bool:
        return self.rc == RC_SERVER and self.rs == RS_FUNCTION_NOT_SUPPORTED


def describe(rc: int, rs: int, function: str = "") -> str:
    """IBM's meaning of ``rc``/``rs`` in one short phrase (never empty)."""
    specific = _BY_FUNCTION.get((function, rc, rs))
    if specific is not None:
        return specific
    if rc == RC_SYNTAX:
        param, reason = divmod(rs, 100)
        what = _SYNTAX.get(reason, f"syntax reason {reason}")
        return f"syntax error in parameter {param}: {what}"
    pair = _PAIRS.get((rc, rs))
    if pair is not None:
        return pair
    generic = _RC_ONLY.get(rc)
    if generic is not None:
        return f"{generic} ({rs})"
    return "return code not described in the public SMAPI tables"


def outcome(rc: int, rs: int, function: str = "") -> Outcome:
    return Outcome(rc, rs, describe(rc, rs, function))
