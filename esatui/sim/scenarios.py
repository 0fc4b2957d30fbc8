"""Named scenarios: presets of the parameters (``esatui sim --scenario NAME``).

``seed002-tN-MODE`` reproduce the nine runs of seed 002 Tables 1-3: ten SLES 12 guests under
z/VM on a z15 LPAR of eight dedicated IFLs, ``openssl speed`` driving RSA-1024 sign and
verify through the APVIRT pool of two CEX7A domains on separate cards. Table 1: ten
threads per guest, no SMT; Table 2: the same with SMT-2 (its title says "1 Thread", its text
and its ETR say ten); Table 3: one thread, no SMT. The guests' poll timeout is the kernel's
z/VM default of 1.5 ms: the report says 250 µs, but its single-thread ETR of 6666 = 10
guests / 1.5 ms and VSERV of 1494 µs show 1.5 ms. The system is z/VM 7.2 (PTF UM35974's
level): the polling and interrupts runs write the 360-byte D5R9 of the PTF; the baseline runs
write it too, because seed 002's baseline CP was "a pre-PTF development CP module enhanced to
produce monitor records containing" the three new accumulators (a production pre-PTF CP
writes the 128-byte record: that is what ``--set cp_crypto_mode=baseline`` gives elsewhere).

``seed003-t1-CIPHER`` and ``seed003-t3-LOAD`` reproduce seed 003's encrypted paging (Tables
1 and 3): a z14 LPAR of eight logical processors under z/VM 6.4 paging with AES128, AES192 or
AES256 at a constant rate, and with AES256 at light, medium and heavy rates; a light crypto
load only keeps the other records going.

``mode-vm-day`` is seed 000's "Mode VM" LPAR: one sub-capacity CP (1/21 of an IFL) and two
IFLs, shared with a second LPAR; z/VSE batch on the CP at night; Linux guests doing SSL
handshakes, about 5 per second, with RSA-2048 CRT on four CEX4A cards that the other LPAR
uses as much; pre-PTF CP polling on z/VM 6.3, whose D5R9 is the 112-byte record (no NSERV,
HSERV, DSERV; no SET CRYPTO POLLING).

Every scenario's records are those of the level it claims: :func:`identity` makes a custom
run consistent (a pre-PTF CP mode on a level that has the PTF runs as z/VM 7.2 before the
PTF) and refuses what no level has (CP interrupts on a level without the PTF).
"""

from __future__ import annotations

import dataclasses

from esatui.sim.params import CpCryptoMode, SimParams
from esatui.sim.snapshot import Identity

_SEED002 = SimParams(
    guests=10,
    op="rsa_sign_verify",
    key_bits=1024,
    cards=2,
    card_type="CEX7A",
    poll_timeout_us=1500.0,
    lpar_cpus="8IFL",
    vcpus=4,
)

_MODES: tuple[CpCryptoMode, ...] = ("baseline", "polling", "interrupts")
_TABLES = {"t1": (10, False), "t2": (10, True), "t3": (1, False)}

SCENARIOS: dict[str, SimParams] = {
    f"seed002-{table}-{mode}": _SEED002.replace(threads=threads, smt=smt, cp_crypto_mode=mode)
    for table, (threads, smt) in _TABLES.items()
    for mode in _MODES
}
SCENARIOS["mode-vm-day"] = SimParams(
    guests=4,
    threads=1,
    op="rsa_sign",
    key_bits=2048,
    cards=4,
    card_type="CEX4A",
    poll_timeout_us=1500.0,
    cp_crypto_mode="baseline",
    smt=False,
    lpar_cpus="1CP+2IFL",
    cpu_load=0.06,
    vcpus=2,
    rate=5.0,
    foreign_rate=4.6,
    cp_speed=1.0 / 21.0,
    dedicated=False,
    profile="day",
    vse_guests=2,
    vse_load=0.38,
)

# seed 003 (IBM, Encrypted Paging, z/VM 6.4 APAR VM65993): z14 3906-M05, 8 logical
# processors. Only the paging is modelled (an Apache workload is not): Table 1 pages at a
# constant rate with each cipher, Table 3 with AES256 at three rates. Table 1 gives the sum of
# the encryption and decryption rates only: split as in its AES256 run (Table 3's heavy run).
_SEED003 = SimParams(
    guests=4, threads=1, rate=10.0, lpar_cpus="8IFL", cp_crypto_mode="baseline", cards=1
)
_T3_RATES = {
    "light": (252.09, 57.68),
    "medium": (45384.10, 35607.98),
    "heavy": (74807.41, 70065.89),
}
_HEAVY_OUT = _T3_RATES["heavy"][0] / sum(_T3_RATES["heavy"])
_T1_RATES = {"aes128": 146163.09, "aes192": 145960.17, "aes256": 144873.30}
for _cipher, _total in _T1_RATES.items():
    SCENARIOS[f"seed003-t1-{_cipher}"] = _SEED003.replace(
        paging_cipher=_cipher,
        paging_out_s=_total * _HEAVY_OUT,
        paging_in_s=_total * (1 - _HEAVY_OUT),
    )
for _load, (_out, _in) in _T3_RATES.items():
    SCENARIOS[f"seed003-t3-{_load}"] = _SEED003.replace(
        paging_cipher="aes256", paging_out_s=_out, paging_in_s=_in
    )
SEED003_IDENTITY = Identity(node="SIMVM64", lpar="Z14LP1", machine_type="3906", zvm_level="6.4.0")

IDENTITIES: dict[str, Identity] = {
    "mode-vm-day": Identity(
        node="VMMODEVM",
        lpar="MODEVM1",
        machine_type="2828",
        zvm_level="6.3.0",
        linux_kernel="3.0.101",
    ),
}
SEED002_IDENTITY = Identity(node="SIMVM", lpar="ZVMLP1", machine_type="8561", zvm_level="7.2.0")
# seed 002's baseline: a pre-PTF development CP that wrote the PTF's accumulators
SEED002_LAB_IDENTITY = dataclasses.replace(SEED002_IDENTITY, d5r9_length=360)
IDENTITIES.update({f"seed002-{table}-baseline": SEED002_LAB_IDENTITY for table in _TABLES})
IDENTITIES.update({name: SEED003_IDENTITY for name in SCENARIOS if name.startswith("seed003")})

PTF_LEVEL = (7, 2)  # PTF UM35974 (APAR VM66534): on-demand NQ, SET CRYPTO POLLING
PRE_PTF_D5R9 = 128  # MRPRCAPC of z/VM 7.1 and of 7.2 before the PTF


def scenario(name: str) -> SimParams:
    """The preset ``name``; ``KeyError`` lists the valid names."""
    try:
        return SCENARIOS[name]
    except KeyError:
        raise KeyError(f"unknown scenario {name!r}; valid: {', '.join(SCENARIOS)}") from None


def identity(name: str, params: SimParams | None = None) -> Identity:
    """The simulated system of scenario ``name`` (a custom one for ``""``), at a level whose
    records and commands agree with ``params`` (the scenario's own by default): a pre-PTF CP
    mode where the level has the PTF runs as z/VM 7.2 before the PTF (128-byte D5R9); CP's
    on-demand NQ or crypto interrupts where the level lacks the PTF is a ``ValueError``."""
    ident = IDENTITIES.get(name, SEED002_IDENTITY if name.startswith("seed002") else Identity())
    params = params if params is not None else SCENARIOS.get(name)
    if params is None or ident.d5r9_length is not None:
        return ident
    has_ptf = ident.level[:2] >= PTF_LEVEL
    if params.cp_crypto_mode == "baseline" and has_ptf:
        return dataclasses.replace(ident, zvm_level="7.2.0", d5r9_length=PRE_PTF_D5R9)
    if params.cp_crypto_mode != "baseline" and not has_ptf:
        where = f"scenario {name}" if name else "this system"
        raise ValueError(
            f"cp_crypto_mode={params.cp_crypto_mode} needs PTF UM35974 (z/VM 7.2 or later); "
            f"{where} is z/VM {ident.zvm_level}"
        )
    return ident
