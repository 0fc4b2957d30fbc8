"""What the AP bus and zcrypt sysfs attributes look like, and how to read them strictly.

Formats as the kernel prints them (drivers/s390/crypto/ap_bus.c, ap_card.c, ap_queue.c,
zcrypt_card.c, zcrypt_queue.c, vfio_ap_ops.c):

- numbers: ``%d`` / ``%u`` / ``%llu`` / ``%lu`` and a newline;
- ``request_count`` of a queue reads ``-`` while the queue is not initialised (for example
  bound to vfio_ap);
- ``ap_functions``: ``0x%08X``;
- a queue's ``interrupt``: ``Interrupts enabled.``, ``Interrupts disabled.`` or
  ``Enable Interrupt pending.``;
- the QCI masks ``ap_adapter_mask`` and friends: ``0x`` and 64 hex digits, or
  ``not supported``; ``apmask``/``aqmask``: ``0x`` and 64 hex digits;
- ``bindings``: ``n/m`` or ``n/m (complete)``; ``features``: blank-separated names, ``-``,
  or nothing at all (:func:`features`).

A value that does not have its format is garbage: :class:`Garbage` carries why, and the
source skips the value with a warning.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")
Parser = Callable[[bytes], T]

U64_MAX = (1 << 64) - 1
U32_WRAP = 1 << 32  # where a counter of kernels before 5.6 starts again (old_request_count)

# ap_functions bits, from the most significant (s390-tools lszcrypt's table).
FUNCTION_LETTERS = (
    (0x80000000, "S"),  # special command facility (APSC)
    (0x40000000, "M"),  # RSA modular exponentiation up to 4K
    (0x20000000, "C"),  # RSA CRT up to 4K
    (0x10000000, "D"),  # CCA coprocessor
    (0x08000000, "A"),  # accelerator
    (0x04000000, "X"),  # EP11 coprocessor
    (0x02000000, "N"),  # APXA (extended addressing)
    (0x01000000, "H"),  # stateless filtering by hardware
    (0x00800000, "F"),  # full function set
    (0x00400000, "R"),  # restricted (stateless) function set
)
FUNC_COPRO = 0x10000000
FUNC_ACCEL = 0x08000000
FUNC_EP11 = 0x04000000

MODES = {"A": "ACCEL", "C": "CCA", "P": "EP11"}

# hwtype -> the generation name the zcrypt driver would give (CEX4 and later: 10 + n - 4).
_HWTYPE_NAMES = {6: "CEX2", 7: "CEX2", 8: "CEX3", 9: "CEX3"} | {
    10 + n: f"CEX{4 + n}" for n in range(8)
}
_OLD_HWTYPE_MODE = {6: "A", 7: "C", 8: "A", 9: "C"}


class Garbage(ValueError):
    """A file whose content is not in its documented format."""


def unsigned(raw: bytes) -> int:
    """A non-negative decimal integer that fits in 64 bits."""
    text = raw.strip()
    if not text.isdigit():
        raise Garbage(f"not a non-negative integer: {_show(raw)}")
    value = int(text)
    if value > U64_MAX:
        raise Garbage(f"larger than 64 bits: {_show(raw)}")
    return value


def signed(raw: bytes) -> int:
    """A decimal integer that may be negative (``ap_domain`` reads -1 when none is set)."""
    text = raw.strip()
    body = text[1:] if text.startswith(b"-") else text
    if not body.isdigit():
        raise Garbage(f"not an integer: {_show(raw)}")
    return int(text)


def request_count(raw: bytes) -> int | None:
    """``request_count``: ``None`` for ``-`` (queue not initialised), else the counter (a
    negative one as kernels before 5.6 print it: :func:`old_request_count`)."""
    if raw.strip() == b"-":
        return None
    wrapped = old_request_count(raw)
    return unsigned(raw) if wrapped is None else wrapped


def old_request_count(raw: bytes) -> int | None:
    """A ``request_count`` as kernels before 5.6 print it past 2**31 (``%d`` of a 32-bit
    counter, until upstream fcd98d4002539 "s390/zcrypt: fix card and queue total counter
    wrap", in 4.19.108, 5.4.24 and 5.5.8 stable, March 2020): the counter it is, -2**31 to -1;
    ``None`` for anything else."""
    text = raw.strip()
    if not (text[:1] == b"-" and text[1:].isdigit()):
        return None
    value = int(text)
    return value + U32_WRAP if -U32_WRAP // 2 <= value < 0 else None


def flag(raw: bytes) -> str:
    """A 0/1 attribute (online, config, chkstop, ap_interrupts, poll_thread)."""
    text = raw.strip()
    if text not in (b"0", b"1"):
        raise Garbage(f"not 0 or 1: {_show(raw)}")
    return text.decode()


def interrupt(raw: bytes) -> str:
    """A queue's ``interrupt`` as ``1``, ``0`` or ``pending``."""
    text = raw.strip().lower()
    if text.startswith(b"interrupts enabled"):
        return "1"
    if text.startswith(b"interrupts disabled"):
        return "0"
    if b"pending" in text:
        return "pending"
    raise Garbage(f"unknown interrupt state: {_show(raw)}")


def functions(raw: bytes) -> int:
    """``ap_functions``: ``0x%08X``."""
    text = raw.strip()
    if not text.lower().startswith(b"0x") or not _is_hex(text[2:]) or len(text) > 10:
        raise Garbage(f"not a 32-bit hex value: {_show(raw)}")
    return int(text, 16)


def function_letters(value: int) -> str:
    """lszcrypt's FUNCTIONS column, e.g. ``-MC-A--F-`` for a CEX5A."""
    return "".join(letter if value & bit else "-" for bit, letter in FUNCTION_LETTERS)


def text_value(raw: bytes, limit: int = 200) -> str:
    """A free-text attribute (type, status, features, masks): printable ASCII, one line."""
    try:
        text = raw.decode("ascii").strip()
    except UnicodeDecodeError as exc:
        raise Garbage(f"not ASCII text: {_show(raw)}") from exc
    if not text or len(text) > limit or not text.isprintable():
        raise Garbage(f"not a one-line text value: {_show(raw)}")
    return text


def features(raw: bytes) -> str:
    """The bus's ``features``: blank-separated names, ``-`` without QCI, or empty: with QCI
    but none of the features it names, the kernel's ``features_show`` returns 0 bytes (its
    newline is written past the length it returns)."""
    return "" if not raw.strip() else text_value(raw)


def mask(raw: bytes) -> str:
    """A 256-bit mask as ``0x`` and hex digits, or ``not supported`` (no QCI)."""
    text = text_value(raw)
    if text == "not supported":
        return text
    if not text.lower().startswith("0x") or not _is_hex(text[2:].encode()):
        raise Garbage(f"not a hex mask: {_show(raw)}")
    return text.lower()


@dataclass(frozen=True, slots=True)
class Bindings:
    bound: int
    total: int
    complete: bool


def bindings(raw: bytes) -> Bindings:
    """``bindings``: ``n/m`` or ``n/m (complete)``."""
    text = text_value(raw)
    head, _, tail = text.partition(" ")
    left, slash, right = head.partition("/")
    if not slash or not left.isdigit() or not right.isdigit() or tail not in ("", "(complete)"):
        raise Garbage(f"not n/m: {_show(raw)}")
    return Bindings(int(left), int(right), tail == "(complete)")


def mode_of(card_type: str | None, funcs: int | None) -> str | None:
    """The mode from the type's last letter (CEX7A -> ACCEL), else from the function bits."""
    if card_type and card_type[-1] in MODES:
        return MODES[card_type[-1]]
    if funcs is not None:
        if funcs & FUNC_COPRO:
            return "CCA"
        if funcs & FUNC_ACCEL:
            return "ACCEL"
        if funcs & FUNC_EP11:
            return "EP11"
    return None


def type_from_hwtype(hwtype: int, funcs: int | None) -> str | None:
    """A type name for a card without zcrypt's ``type`` attribute (no zcrypt driver bound)."""
    gen = _HWTYPE_NAMES.get(hwtype)
    if gen is None:
        return None
    letter = _OLD_HWTYPE_MODE.get(hwtype)
    if letter is None:
        mode = mode_of(None, funcs)
        letter = {v: k for k, v in MODES.items()}.get(mode or "")
    return gen + letter if letter else gen


def card_state(config: str | None, chkstop: str | None, online: str | None) -> str:
    """lszcrypt's STATUS: deconfig, checkstop, online, offline, or ``-``."""
    if config == "0":
        return "deconfig"
    if chkstop == "1":
        return "checkstop"
    if online == "1":
        return "online"
    if online == "0":
        return "offline"
    return "-"


def _is_hex(text: bytes) -> bool:
    return bool(text) and all(c in b"0123456789abcdefABCDEF" for c in text)


def _show(raw: bytes) -> str:
    shown = raw[:40].decode("ascii", errors="backslashreplace").strip()
    return repr(shown + ("..." if len(raw) > 40 else ""))
