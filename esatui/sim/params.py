"""The simulated system's parameters (SPEC section 7), typed, validated and parsed.

Every parameter can be given as ``KEY=VALUE`` (``esatui sim --set``). Errors are one line and
list the valid names or values. The SPEC's parameters come first; the ones after
``vcpus`` are additions this model needs to express seed 000's "Mode VM" LPAR (see
docs/MODEL.md).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from esatui.sim.locks import HOLD_US
from esatui.sim.paging import PAGING_CIPHERS

Op = Literal["rsa_sign", "rsa_verify", "rsa_sign_verify"]
CpCryptoMode = Literal["baseline", "polling", "interrupts"]
Profile = Literal["flat", "day"]
PollTimeout = float | Literal["irq"]

OPS: tuple[Op, ...] = ("rsa_sign", "rsa_verify", "rsa_sign_verify")
CP_CRYPTO_MODES: tuple[CpCryptoMode, ...] = ("baseline", "polling", "interrupts")
PROFILES: tuple[Profile, ...] = ("flat", "day")
KEY_BITS: tuple[int, ...] = (1024, 2048, 4096)
CARD_TYPES: tuple[str, ...] = ("CEX4A", "CEX5A", "CEX6A", "CEX7A", "CEX8A", "CEX7C", "CEX8C")
PROCESSOR_TYPES: tuple[str, ...] = ("CP", "IFL", "ZIIP", "ICF")

MAX_THREADS = 20_000
"""Crypto threads in the whole LPAR: each one is simulated."""

# The Linux AP bus default under z/VM (ap_bus.c: "if (MACHINE_IS_VM) poll_timeout = 1500000").
ZVM_DEFAULT_POLL_TIMEOUT_US = 1500.0


_TYPES: dict[str, tuple[type, ...]] = {
    "int": (int,),
    "float": (float,),
    "bool": (bool,),
    "PollTimeout": (float,),
}


class ParamError(ValueError):
    """A parameter that cannot be accepted; the message is one line."""


@dataclass(frozen=True, slots=True)
class SimParams:
    """One configuration of the simulated LPAR and its workload."""

    guests: int = 10
    """Linux guests using the APVIRT shared crypto pool."""
    threads: int = 1
    """Threads per guest running crypto operations in a loop (``openssl speed -multi``)."""
    op: Op = "rsa_sign"
    """``rsa_sign`` (private key, CRT), ``rsa_verify`` (public key, ME) or
    ``rsa_sign_verify`` (each thread alternates, as ``openssl speed rsa`` does both)."""
    key_bits: int = 2048
    cards: int = 2
    """Crypto Express adapters in the APVIRT pool."""
    card_type: str = "CEX7A"
    poll_timeout_us: PollTimeout = ZVM_DEFAULT_POLL_TIMEOUT_US
    """Guest AP bus poll timer in µs, or ``irq`` for adapter interrupts in the guest."""
    cp_crypto_mode: CpCryptoMode = "polling"
    """``baseline`` (pre-PTF polling NQ and DQ tasks), ``polling`` (on-demand NQ, polling
    DQ: the PTF's default) or ``interrupts`` (SET CRYPTO POLLING OFF)."""
    smt: bool = False
    """SMT-2 on the IFL cores."""
    lpar_cpus: str = "8IFL"
    """Logical processors by type, e.g. ``1CP+2IFL``."""
    cpu_load: float = 0.0
    """Background load on each Linux virtual CPU, 0..1."""
    vcpus: int = 2
    """Virtual CPUs per Linux guest."""
    domains: int = 1
    """Domains of each card in the pool (APQNs = cards × domains)."""
    rate: float = 0.0
    """Open workload: crypto operations per second for the LPAR (0 = closed loops of
    ``threads`` per guest)."""
    foreign_rate: float = 0.0
    """Operations per second other LPARs run on the same cards (seen only by the cards)."""
    cp_speed: float = 1.0
    """Capacity of a CP relative to an IFL (sub-capacity CPs, seed 000: about 1/21)."""
    dedicated: bool = True
    """Dedicated logical processors (no steal) or shared with other LPARs."""
    profile: Profile = "flat"
    """``flat`` or ``day`` (morning peak, batch night) modulation of the loads."""
    vse_guests: int = 0
    """z/VSE guests with one CP virtual CPU each (batch)."""
    vse_load: float = 0.0
    """Peak CPU load of each z/VSE guest, 0..1."""
    paging_cipher: str = "off"
    """Encrypted paging (z/VM 6.4 and later): ``off``, ``aes128``, ``aes192``, ``aes256``."""
    paging_out_s: float = 0.0
    """Pages CP writes to paging DASD a second (encrypted when ``paging_cipher`` is on)."""
    paging_in_s: float = 0.0
    """Pages CP reads back a second (decrypted when ``paging_cipher`` is on)."""
    lock_hold_us: float = HOLD_US
    """µs CP holds the scheduler lock per dispatch on one processor (grows with more): 0.211
    for z/VM 4.4.0's improved lock and later (the default), 0.72 plays z/VM 4.3.0's (seed
    001's 16-way at 33%), 0 turns contention off."""

    def __post_init__(self) -> None:
        # Integers given for float parameters (poll_timeout_us=50) are normalised.
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.type in ("float", "PollTimeout") and type(value) is int:
                object.__setattr__(self, f.name, float(value))
                value = float(value)
            expected = _TYPES.get(str(f.type), (str,))
            if type(value) not in expected and value != "irq":
                raise ParamError(f"{f.name} must be {expected[0].__name__}, not {value!r}")
        _validate(self)

    @property
    def guest_irq(self) -> bool:
        return self.poll_timeout_us == "irq"

    @property
    def closed_loop(self) -> bool:
        return self.rate <= 0

    def replace(self, **changes: object) -> SimParams:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def as_settings(self) -> dict[str, str]:
        """Every parameter as the ``KEY=VALUE`` text that would reproduce it."""
        return {f.name: format_value(getattr(self, f.name)) for f in dataclasses.fields(self)}


PARAM_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(SimParams))


def format_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        text = repr(value)  # the shortest text that reads back as the same float
        return text.removesuffix(".0")
    return str(value)


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ParamError(message)


def _validate(p: SimParams) -> None:
    _check(1 <= p.guests <= 1000, f"guests must be 1..1000, not {p.guests}")
    _check(1 <= p.threads <= 1000, f"threads must be 1..1000, not {p.threads}")
    _check(
        p.guests * p.threads <= MAX_THREADS,
        f"guests x threads must be at most {MAX_THREADS} (every thread is simulated), "
        f"not {p.guests * p.threads}",
    )
    _check(p.op in OPS, f"op must be one of {', '.join(OPS)}, not {p.op!r}")
    _check(p.key_bits in KEY_BITS, f"key_bits must be one of 1024, 2048, 4096, not {p.key_bits}")
    _check(1 <= p.cards <= 64, f"cards must be 1..64, not {p.cards}")
    _check(
        p.card_type in CARD_TYPES,
        f"card_type must be one of {', '.join(CARD_TYPES)}, not {p.card_type!r}",
    )
    if p.poll_timeout_us != "irq":
        _check(
            isinstance(p.poll_timeout_us, float) and 1.0 <= p.poll_timeout_us <= 1e6,
            "poll_timeout_us must be 1..1000000 or irq, not "
            + (
                f"{p.poll_timeout_us:.15g}"
                if isinstance(p.poll_timeout_us, float)
                else repr(p.poll_timeout_us)
            ),
        )
    _check(
        p.cp_crypto_mode in CP_CRYPTO_MODES,
        f"cp_crypto_mode must be one of {', '.join(CP_CRYPTO_MODES)}, not {p.cp_crypto_mode!r}",
    )
    parse_lpar_cpus(p.lpar_cpus)
    # SPEC section 7's 0..1; the model runs a guest's background at 95% at most, leaving
    # its crypto threads room to run
    _check(0.0 <= p.cpu_load <= 1.0, f"cpu_load must be 0..1, not {p.cpu_load}")
    _check(1 <= p.vcpus <= 64, f"vcpus must be 1..64, not {p.vcpus}")
    _check(1 <= p.domains <= 85, f"domains must be 1..85, not {p.domains}")
    _check(0.0 <= p.rate <= 1e6, f"rate must be 0..1000000, not {p.rate}")
    _check(0.0 <= p.foreign_rate <= 1e6, f"foreign_rate must be 0..1000000, not {p.foreign_rate}")
    _check(0.01 <= p.cp_speed <= 1.0, f"cp_speed must be 0.01..1, not {p.cp_speed}")
    _check(
        p.profile in PROFILES, f"profile must be one of {', '.join(PROFILES)}, not {p.profile!r}"
    )
    _check(0 <= p.vse_guests <= 100, f"vse_guests must be 0..100, not {p.vse_guests}")
    _check(0.0 <= p.vse_load <= 1.0, f"vse_load must be 0..1, not {p.vse_load}")
    _check(
        p.paging_cipher in PAGING_CIPHERS,
        f"paging_cipher must be one of {', '.join(PAGING_CIPHERS)}, not {p.paging_cipher!r}",
    )
    _check(0.0 <= p.paging_out_s <= 1e7, f"paging_out_s must be 0..10000000, not {p.paging_out_s}")
    _check(0.0 <= p.paging_in_s <= 1e7, f"paging_in_s must be 0..10000000, not {p.paging_in_s}")
    _check(0.0 <= p.lock_hold_us <= 100.0, f"lock_hold_us must be 0..100, not {p.lock_hold_us}")
    counts = parse_lpar_cpus(p.lpar_cpus)
    if p.vse_guests:
        _check("CP" in counts, "vse_guests need a CP in lpar_cpus")


_LPAR_TERM = re.compile(r"^(\d+)([A-Za-z]+)$")


def parse_lpar_cpus(text: str) -> dict[str, int]:
    """``1CP+2IFL`` -> ``{"CP": 1, "IFL": 2}`` (processor type order kept)."""
    counts: dict[str, int] = {}
    for term in text.replace(" ", "").split("+"):
        m = _LPAR_TERM.match(term)
        if not m:
            raise ParamError(f"lpar_cpus term {term!r} is not COUNT+TYPE like 2IFL")
        n, kind = int(m.group(1)), m.group(2).upper()
        if kind not in PROCESSOR_TYPES:
            raise ParamError(f"lpar_cpus type {kind!r} is not one of {', '.join(PROCESSOR_TYPES)}")
        if not 1 <= n <= 128:
            raise ParamError(f"lpar_cpus count for {kind} must be 1..128, not {n}")
        if kind in counts:
            raise ParamError(f"lpar_cpus names {kind} twice")
        counts[kind] = n
    if "CP" not in counts and "IFL" not in counts:
        raise ParamError("lpar_cpus needs a CP or an IFL to run z/VM")
    return counts


_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def _convert(name: str, raw: str, current: object) -> object:  # noqa: PLR0911 - one conversion per parameter type
    text = raw.strip()
    if name == "poll_timeout_us":
        if text.lower() == "irq":
            return "irq"
        try:
            return float(text)
        except ValueError:
            raise ParamError(
                f"bad value for {name}: {raw!r} (expected microseconds or irq)"
            ) from None
    if isinstance(current, bool):
        low = text.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise ParamError(f"bad value for {name}: {raw!r} (expected true or false)")
    if isinstance(current, int):
        try:
            return int(text)
        except ValueError:
            raise ParamError(f"bad value for {name}: {raw!r} (expected an integer)") from None
    if isinstance(current, float):
        return _number(name, text)
    if name == "card_type":
        return text.upper()
    if name == "lpar_cpus":
        return text.upper()
    return text


def _number(name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ParamError(f"bad value for {name}: {text!r} (expected a number)") from None
    if not math.isfinite(value):
        raise ParamError(f"bad value for {name}: {text!r} (expected a finite number)")
    return value


def apply_settings(base: SimParams, settings: Mapping[str, str]) -> SimParams:
    """``base`` with ``settings`` (name -> text) applied and the result validated."""
    changes: dict[str, object] = {}
    for name, raw in settings.items():
        if name not in PARAM_NAMES:
            raise ParamError(f"unknown parameter {name!r}; valid: {', '.join(PARAM_NAMES)}")
        changes[name] = _convert(name, raw, getattr(base, name))
    return base.replace(**changes)


def parse_assignments(items: Iterable[str]) -> dict[str, str]:
    """``["guests=4", "smt=true"]`` -> ``{"guests": "4", "smt": "true"}``."""
    settings: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ParamError(
                f"expected KEY=VALUE, not {item!r}; valid keys: {', '.join(PARAM_NAMES)}"
            )
        settings[name] = value
    return settings


def parse_params(items: Iterable[str], base: SimParams | None = None) -> SimParams:
    """Parameters from ``KEY=VALUE`` strings on top of ``base`` (the defaults if None)."""
    return apply_settings(base or SimParams(), parse_assignments(items))
