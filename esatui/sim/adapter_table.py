"""Crypto Express service times by card type, operation and key size.

Accelerators (CEXnA): the CMB functions of accelerator mode (SPEC section 3, D5R10), RSA ME
(public key, verify) and RSA CRT (private key, sign) for 1024, 2048 and 4096-bit keys.
Times are engine busy times per operation on an otherwise idle engine. Anchors: CEX7A
RSA-1024 fitted to seed 002's RSERV with interrupts; CEX4A RSA-2048 CRT = 2.16 ms measured
by the card (seed 000, ESACRYPA). The rest scales with key size and by generation
(provisional; see docs/MODEL.md).

Coprocessors (CEXnC, CCA mode): seed 004's RMF EXEC TIME of a Crypto Express 8S
coprocessor for the TLS handshake's RSA private-key operation, 226, 631 and 3,761 µs for
1024, 2048 and 4096-bit keys, one request at a time per coprocessor (seed 004: "5 requests
are made when there are only 2 co-processors available"). Those three times follow a fixed
overhead plus a cubic term (166 µs + 60 µs x (bits/1024)^2.95, within 1%): the overhead is
the coprocessor's firmware path, the cubic the modular exponentiation. The public-key
operation (ME) is that overhead plus a quadratic term of 40% of the private key's at 1024
bits, as for accelerators (provisional). CEX7C = CEX8C x 1.25 (the accelerators' ratio,
provisional).
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

# CEX8C (CCA coprocessor) time in µs: seed 004 for CRT; ME provisional (module docstring).
_CCA_OVERHEAD_US = 166.0
_CEX8C_US: dict[tuple[Method, int], float] = {
    ("CRT", 1024): 226.0,
    ("CRT", 2048): 631.0,
    ("CRT", 4096): 3761.0,
    ("ME", 1024): _CCA_OVERHEAD_US + 0.4 * 60.0,
    ("ME", 2048): _CCA_OVERHEAD_US + 0.4 * 60.0 * 4,
    ("ME", 4096): _CCA_OVERHEAD_US + 0.4 * 60.0 * 16,
}

# Time relative to the mode's reference card (CEX7A, CEX8C), and parallel engines per card.
_GENERATION: dict[str, tuple[float, int]] = {
    "CEX4A": (12.56, 4),
    "CEX5A": (5.5, 6),
    "CEX6A": (2.4, 8),
    "CEX7A": (1.0, 8),
    "CEX8A": (0.8, 8),
    "CEX7C": (1.25, 1),
    "CEX8C": (1.0, 1),
}

CARD_HWTYPE: dict[str, int] = {
    "CEX4A": 10,
    "CEX5A": 11,
    "CEX6A": 12,
    "CEX7A": 13,
    "CEX8A": 14,
    "CEX7C": 13,
    "CEX8C": 14,
}


def mode_of(card_type: str) -> str:
    """``accelerator`` or ``cca`` (coprocessor), from the type's last letter."""
    return "cca" if card_type.endswith("C") else "accelerator"


def method_of(op: str) -> Method:
    """``rsa_sign`` uses the private key in CRT form; ``rsa_verify`` the public exponent."""
    return "CRT" if op == "rsa_sign" else "ME"


def function_index(method: Method, bits: int) -> int:
    return FUNCTIONS.index((method, bits))


def service_us(card_type: str, method: Method, bits: int) -> float:
    factor, _ = _GENERATION[card_type]
    base = _CEX8C_US if mode_of(card_type) == "cca" else _CEX7A_US
    return base[(method, bits)] * factor


def engines(card_type: str) -> int:
    return _GENERATION[card_type][1]
