"""The kinds the monitor sources fill (besides the shared ``lcpu``), and the config keys.

``crypto`` (one entity, key ``system``): the z/VM-wide crypto counters of D5R9 MRPRCAPC, as
the records carry them (cumulative). ``crypto_ap`` (one entity per card, and one per APQN
should a record carry an APQN's block, another CHSC command's answer; keyed as zcrypt names
them: ``0a`` for card 10, ``0a.0011`` for its domain 17): the adapter's own measurement
blocks from D5R10 MRPRCAPM, a time (raw hardware units; seconds = time × the ``scale``
attribute) and a count per function. ``paging_enc`` (one entity per logical processor, keyed
by its address): encrypted paging from D3R2 MRSTORSP.
``spin_lock`` (one entity per formal spin lock, keyed by its name, e.g. ``SRMSLOCK``): CP's
spin lock collisions and spin time from D0R23 MRSYTLCK. ``spin_cpu`` (one entity per logical
processor): the same, per processor, from D0R2 MRSYTPRP (PFXSPINT, PFXSPINC).
"""

from __future__ import annotations

from esatui.collectors.model import Kind, counter, gauge, unsigned

U64 = 64  # the records' counters are unsigned 64-bit (MONITOR.md): they wrap there

CRYPTO_KEY = "system"

CRYPTO = Kind(
    name="crypto",
    doc="z/VM crypto counters (D5R9 MRPRCAPC), hypervisor view",
    fields=unsigned(
        U64,
        (
            counter("virt_nq", "count", "guest NQ operations (CRYNOVNQ)"),
            counter("real_nq", "count", "CP NQ operations to the adapters (CRYNOFNQ)"),
            counter("virt_dq", "count", "guest DQ operations (CRYNOVPR)", provisional=True),
            counter("real_dq", "count", "CP DQ operations from the adapters (CRYNOFDQ)"),
            counter(
                "virt_done", "count", "guest operations completed (CRYNOVPC)", provisional=True
            ),
            counter("real_done", "count", "CP operations completed (CRYNORPR)", provisional=True),
            counter("virt_rej", "count", "rejected guest NQ operations (CRYNOXVN)"),
            counter("real_rej", "count", "rejected CP NQ operations (CRYNOXRN)"),
            counter("vserv_us", "us", "guest NQ to guest DQ, accumulated (CRYVSERV)"),
            counter("rserv_us", "us", "CP NQ to CP DQ, accumulated (CRYRSERV)"),
            counter(
                "hserv_us", "us", "guest NQ to CP holding the reply (CRYHSERV)", provisional=True
            ),
            counter(
                "nserv_us", "us", "guest NQ to CP NQ, accumulated (CRYNSERV)", provisional=True
            ),
            counter(
                "dserv_us", "us", "CP holding the reply to guest DQ (CRYDSERV)", provisional=True
            ),
            gauge(
                "nq_waiting",
                "count",
                "messages waiting for NQ at the sample (CRYNOWNQ; read as a current count)",
                provisional=True,
            ),
        ),
    ),
    attrs=("layout", "record_length"),
)

# (time, count) pair order of the hardware's measurement blocks, by mode
MODE_ACCEL = 8
MODE_CCA = 9
MODE_EP11 = 10
FUNCTIONS: dict[int, tuple[str, ...]] = {
    MODE_ACCEL: (
        "rsa1024_me",
        "rsa2048_me",
        "rsa1024_crt",
        "rsa2048_crt",
        "rsa4096_me",
        "rsa4096_crt",
    ),
    MODE_CCA: ("cca_all", "cca_rsa_keygen"),
    MODE_EP11: (
        "ep11_asym_slow",
        "ep11_asym_fast",
        "ep11_sym_partial",
        "ep11_sym_complete",
        "ep11_asym_keygen",
    ),
}
MODE_NAMES = {MODE_ACCEL: "accel", MODE_CCA: "cca", MODE_EP11: "ep11"}

# Crypto types of the measurement blocks (zcryptstats' CRYPTO_TYPE_*, the kernel's
# AP_DEVICE_TYPE_CEX4..CEX8). From CEX4 on the mode byte says what the card is configured as;
# before, the type does (coprocessors count "all operations" and "RSA key generation";
# CEX2A/CEX3A the four RSA pairs of an accelerator; PCICA the same four for each of its five
# engines).
TYPE_NAMES = {
    3: "PCICC",
    4: "PCICA",
    5: "PCIXCC",
    6: "CEX2A",
    7: "CEX2C",
    8: "CEX3A",
    9: "CEX3C",
    10: "CEX4",
    11: "CEX5",
    12: "CEX6",
    13: "CEX7",
    14: "CEX8",
}
FIRST_MODED_TYPE = 10  # CEX4: from here on, and for any later type, the mode byte counts
_MODE_OF_TYPE = {
    3: MODE_CCA,
    5: MODE_CCA,
    7: MODE_CCA,
    9: MODE_CCA,
    4: MODE_ACCEL,
    6: MODE_ACCEL,
    8: MODE_ACCEL,
}
PCICA = 4
PCICA_ENGINES = 5


def effective_mode(ap_type: int | None, mode: int | None) -> int | None:
    """What the block measures: the mode byte from CEX4 on, else the crypto type's mode."""
    if ap_type is not None and ap_type < FIRST_MODED_TYPE:
        return _MODE_OF_TYPE.get(ap_type)
    return mode


def function_pairs(ap_type: int | None, mode: int | None) -> dict[str, tuple[int, ...]] | None:
    """Each function of a block and the (time, count) pairs that add up to it, or None when
    the type and mode are unknown. One pair per function, except PCICA's five engines."""
    eff = effective_mode(ap_type, mode)
    fns = FUNCTIONS.get(eff) if eff is not None else None
    if fns is None:
        return None
    if ap_type == PCICA:
        return {
            fn: tuple(engine * 4 + i for engine in range(PCICA_ENGINES))
            for i, fn in enumerate(fns[:4])
        }
    return {fn: (i,) for i, fn in enumerate(fns)}


def ap_key(ap: int, domain: int | None = None) -> str:
    """A ``crypto_ap`` entity key, as zcrypt names the device: ``0a`` or ``0a.0011``."""
    return f"{ap:02x}" if domain is None else f"{ap:02x}.{domain:04x}"


FUNCTION_TITLES: dict[str, str] = {
    "rsa1024_me": "RSA 1024 ME",
    "rsa2048_me": "RSA 2048 ME",
    "rsa1024_crt": "RSA 1024 CRT",
    "rsa2048_crt": "RSA 2048 CRT",
    "rsa4096_me": "RSA 4096 ME",
    "rsa4096_crt": "RSA 4096 CRT",
    "cca_all": "CCA all operations",
    "cca_rsa_keygen": "CCA RSA key generation",
    "ep11_asym_slow": "EP11 asymmetric slow",
    "ep11_asym_fast": "EP11 asymmetric fast",
    "ep11_sym_partial": "EP11 symmetric partial",
    "ep11_sym_complete": "EP11 symmetric complete",
    "ep11_asym_keygen": "EP11 asymmetric key generation",
}
ALL_FUNCTIONS: tuple[str, ...] = tuple(fn for fns in FUNCTIONS.values() for fn in fns)

CRYPTO_AP = Kind(
    name="crypto_ap",
    doc="crypto adapter measurement blocks per AP (D5R10 MRPRCAPM), hypervisor view",
    fields=unsigned(
        U64,
        tuple(
            f
            for fn in ALL_FUNCTIONS
            for f in (
                counter(f"{fn}_count", "count", f"{FUNCTION_TITLES[fn]} operations"),
                counter(
                    f"{fn}_time",
                    "cmb",
                    f"{FUNCTION_TITLES[fn]} time in raw units (seconds = time × scale)",
                ),
            )
        ),
    ),
    attrs=("type", "mode", "scale", "valid", "layout"),
)

U32 = 32
PAGING = Kind(
    name="paging_enc",
    doc="encrypted paging per logical processor (D3R2 MRSTORSP, z/VM 6.4 APAR VM65993 and "
    "later): 4 KB pages encrypted and decrypted and the CPU spent on each; offsets provisional",
    fields=(
        counter("enc_pages", "count", "pages encrypted", provisional=True, wrap_bits=U32),
        counter("dec_pages", "count", "pages decrypted", provisional=True, wrap_bits=U32),
        counter("enc_us", "us", "CPU time encrypting pages", provisional=True),
        counter("dec_us", "us", "CPU time decrypting pages", provisional=True),
    ),
    attrs=("layout",),
)

SPIN_LOCK = Kind(
    name="spin_lock",
    doc="CP's formal spin locks (D0R23 MRSYTLCK, one record per interval): requests that had "
    "to spin and the time spent spinning, exclusive and shared, per lock; offsets provisional",
    fields=(
        counter(
            "excl_spins", "count", "exclusive requests that spun", provisional=True, wrap_bits=U32
        ),
        counter("excl_us", "us", "time spinning on exclusive requests", provisional=True),
        counter(
            "shared_spins", "count", "share requests that spun", provisional=True, wrap_bits=U32
        ),
        counter("shared_us", "us", "time spinning on share requests", provisional=True),
    ),
    attrs=("layout",),
)

SPIN_CPU = Kind(
    name="spin_cpu",
    doc="formal spin lock spinning per logical processor (D0R2 MRSYTPRP PFXSPINT, PFXSPINC); "
    "offsets and unit provisional",
    fields=(
        counter("spins", "count", "spins on this processor", provisional=True, wrap_bits=U32),
        counter("spin_us", "us", "time this processor spent spinning", provisional=True),
    ),
    attrs=("layout",),
)

# Sample.config keys (all text)
CFG_MACHINE_TYPE = "machine_type"  # e.g. "2827"
CFG_MACHINE_MODEL = "machine_model"
CFG_MACHINE_SERIAL = "machine_serial"  # the sequence code
CFG_SYSTEM_NAME = "system_name"  # z/VM system identifier
CFG_LPAR_NAME = "lpar_name"
CFG_LPAR_NUMBER = "lpar_number"
CFG_ZVM_LEVEL = "zvm_level"  # "7.3.0"
CFG_TZ_OFFSET = "tz_offset_s"  # seconds east of UTC
CFG_INTERVAL = "sample_interval_s"
CFG_HF_RATE = "hf_rate"
CFG_CPU_TYPES = "cpu_types"  # "0:CP 1:IFL ..." from D1R5
CFG_SOURCE = "monitor_source"  # "monreader" or "monwrite"
CONFIG_KEYS = (
    CFG_MACHINE_TYPE,
    CFG_MACHINE_MODEL,
    CFG_MACHINE_SERIAL,
    CFG_SYSTEM_NAME,
    CFG_LPAR_NAME,
    CFG_LPAR_NUMBER,
    CFG_ZVM_LEVEL,
    CFG_TZ_OFFSET,
    CFG_INTERVAL,
    CFG_HF_RATE,
    CFG_CPU_TYPES,
    CFG_SOURCE,
)

# Processor type codes of D0R2 and D1R5 (PFXCPUTY); provisional
CPU_TYPES = {0: "CP", 2: "ZAAP", 3: "IFL", 4: "ICF", 5: "ZIIP"}


def cpu_type_name(code: int) -> str:
    return CPU_TYPES.get(code, f"T{code}")
