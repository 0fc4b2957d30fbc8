"""Crypto Express service times by card type, operation and key size (provisional).

The CMB functions of an accelerator (SPEC section 3, D5R10): RSA ME (public key, verify) and
RSA CRT (private key, sign) for 1024, 2048 and 4096-bit keys. Times are engine busy times
per operation on an otherwise idle engine. Anchors: CEX7A RSA-1024 fitted to seed 002's
RSERV with interrupts; CEX4A RSA-2048 CRT = 2.16 ms measured by the card (seed 000,
ESACRYPA). The rest scales with key size (CRT cost about x5.4 per doubling, ME about x2 plus
a fixed overhead) and by generation; see docs/MODEL.md.
"""

from __future__ import annotations

from typing import Literal

Method = Literal["ME", "CRT"]

# (method, bits) in the order of the accelerator CMB pairs.
FUNCTIONS: tuple[tuple[Method, int], ...] = (
    ("ME", 1024),
    ("ME", 2048),
    ("CRT", 1024),
    ("CRT", 2048),
    ("ME", 4096),
    ("CRT", 4096),
)
FUNCTION_NAMES: tuple[str, ...] = tuple(f"rsa{bits}_{m.lower()}" for m, bits in FUNCTIONS)

# CEX7A engine time in µs.
_CEX7A_US: dict[tuple[Method, int], float] = {
    ("ME", 1024): 16.0,
    ("ME", 2048): 28.0,
    ("ME", 4096): 76.0,
    ("CRT", 1024): 40.0,
    ("CRT", 2048): 172.0,
    ("CRT", 4096): 922.0,
}

# Time relative to a CEX7A, and parallel engines per card.
_GENERATION: dict[str, tuple[float, int]] = {
    "CEX4A": (12.56, 4),
    "CEX5A": (5.5, 6),
    "CEX6A": (2.4, 8),
    "CEX7A": (1.0, 8),
    "CEX8A": (0.8, 8),
}

CARD_HWTYPE: dict[str, int] = {"CEX4A": 10, "CEX5A": 11, "CEX6A": 12, "CEX7A": 13, "CEX8A": 14}


def method_of(op: str) -> Method:
    """``rsa_sign`` uses the private key in CRT form; ``rsa_verify`` the public exponent."""
    return "CRT" if op == "rsa_sign" else "ME"


def function_index(method: Method, bits: int) -> int:
    return FUNCTIONS.index((method, bits))


def service_us(card_type: str, method: Method, bits: int) -> float:
    factor, _ = _GENERATION[card_type]
    return _CEX7A_US[(method, bits)] * factor


def engines(card_type: str) -> int:
    return _GENERATION[card_type][1]
