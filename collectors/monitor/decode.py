"""From decoded records to readings and config facts (one small function per record)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from esatui.collectors.model import Number, Reading
from esatui.collectors.monitor import kinds as K
from esatui.collectors.monitor.layout import Decoded, Value

# crypto kind field <- MRPRCAPC layout field
CRYPTO_FIELDS: Mapping[str, str] = {
    "virt_nq": "crynovnq",
    "real_nq": "crynofnq",
    "virt_dq": "crynovpr",
    "real_dq": "crynofdq",
    "virt_done": "crynovpc",
    "real_done": "crynorpr",
    "virt_rej": "crynoxvn",
    "real_rej": "crynoxrn",
    "vserv_us": "cryvserv",
    "rserv_us": "cryrserv",
    "hserv_us": "cryhserv",
    "nserv_us": "crynserv",
    "dserv_us": "crydserv",
    "nq_waiting": "crynownq",
}


def _int(v: Value | None) -> int | None:
    return v if isinstance(v, int) else None


def layout_label(d: Decoded) -> str:
    return d.layout.id


def crypto_reading(d: Decoded) -> Reading:
    """D5R9: the z/VM-wide crypto counters, as carried (cumulative)."""
    values: dict[str, Number | None] = {
        kf: _int(d.values.get(lf)) for kf, lf in CRYPTO_FIELDS.items()
    }
    attrs = {"layout": layout_label(d), "record_length": str(d.length)}
    return Reading(K.CRYPTO.name, K.CRYPTO_KEY, values, attrs)


def paging_reading(d: Decoded) -> Reading | None:
    """D3R2: one processor's encrypted paging counters (cumulative), or None without its
    address or any of the counters (a record of a level before encrypted paging)."""
    cpu = _int(d.values.get("cpu_addr"))
    values: dict[str, Number | None] = {
        "enc_pages": _int(d.values.get("enc_pages")),
        "dec_pages": _int(d.values.get("dec_pages")),
        "enc_us": _int(d.values.get("enc_time")),
        "dec_us": _int(d.values.get("dec_time")),
    }
    if cpu is None or all(v is None for v in values.values()):
        return None
    return Reading(K.PAGING.name, str(cpu), values, {"layout": layout_label(d)})


def spin_lock_readings(d: Decoded) -> list[Reading]:
    """D0R23: one reading per named lock entry (cumulative spins and spin times). An entry
    without a printable name is skipped; a name given twice keeps its first entry."""
    out: dict[str, Reading] = {}
    label = layout_label(d)
    for e in d.entries:
        name = e.get("lock_id")
        if not isinstance(name, str) or not name or not name.isprintable() or name in out:
            continue
        values: dict[str, Number | None] = {
            "excl_spins": _int(e.get("excl_spins")),
            "excl_us": _int(e.get("excl_time")),
            "shared_spins": _int(e.get("shared_spins")),
            "shared_us": _int(e.get("shared_time")),
        }
        out[name] = Reading(K.SPIN_LOCK.name, name, values, {"layout": label})
    return list(out.values())


def spin_cpu_reading(d: Decoded) -> Reading | None:
    """D0R2: one processor's spinning (PFXSPINT, PFXSPINC), or None when the record (or
    its layout) does not carry them."""
    cpu = _int(d.values.get("cpu_addr"))
    spins, spin_us = _int(d.values.get("spin_count")), _int(d.values.get("spin_time"))
    if cpu is None or spins is None or spin_us is None:
        return None
    values: dict[str, Number | None] = {"spins": spins, "spin_us": spin_us}
    return Reading(K.SPIN_CPU.name, str(cpu), values, {"layout": layout_label(d)})


RC_SUCCESS = 0x0001  # a CHSC command's "successful completion" (zcryptstats)
RC_NOT_SET = 0x0000  # no CHSC response code: taken as "not filled in", the blocks used
FORMAT_CARD = 0
FORMAT_APQN = 1


def response_problem(d: Decoded) -> str | None:
    """Why a D5R10 record's blocks cannot be used (a response code other than success)."""
    rc = _int(d.values.get("rc"))
    if rc is None or rc in (RC_SUCCESS, RC_NOT_SET):
        return None
    return f"D5R10: crypto measurement response code X'{rc:04X}': its blocks are not used"


@dataclass(frozen=True, slots=True)
class Cmb:
    """One crypto measurement block of D5R10: a card's, or one APQN's (``domain`` set)."""

    ap: int
    domain: int | None
    ap_type: int | None
    mode: int | None
    scale: float | None
    valid: int | None
    pairs: tuple[tuple[int, int], ...]
    format: int | None = FORMAT_CARD

    @property
    def key(self) -> str:
        return K.ap_key(self.ap, self.domain)


def cmbs(d: Decoded) -> list[Cmb]:
    out: list[Cmb] = []
    for e in d.entries:
        ap = _int(e.get("ap"))
        if ap is None:
            continue
        fmt = _int(e.get("format"))
        domain = _int(e.get("domain")) if fmt == FORMAT_APQN else None
        scale = e.get("scale")
        pairs = e.get("pairs")
        out.append(
            Cmb(
                ap,
                domain,
                _int(e.get("ap_type")),
                _int(e.get("mode")),
                float(scale) if isinstance(scale, float) else None,
                _int(e.get("valid")),
                pairs if isinstance(pairs, tuple) else (),
                fmt,
            )
        )
    return out


def ap_reading(cmb: Cmb, layout: str) -> tuple[Reading, str | None]:
    """A ``crypto_ap`` reading for one CMB, and a warning if something was unusable."""
    warning = None
    name = f"AP {cmb.key}"
    if cmb.format not in (None, FORMAT_CARD, FORMAT_APQN):
        warning = f"{name}: unknown block format {cmb.format}; taken as the card's"
    funcs = K.function_pairs(cmb.ap_type, cmb.mode)
    values: dict[str, Number | None] = {}
    if funcs is None:
        warning = (
            f"{name}: unknown crypto type {cmb.ap_type} / mode {cmb.mode}; "
            "its counters are not used"
        )
        funcs = {}
    valid = cmb.valid if cmb.valid is not None else 0
    for fn, idxs in funcs.items():
        ok = all(i < len(cmb.pairs) and valid & (0x80000000 >> i) for i in idxs)
        # a sum over some engines only would be a partial figure shown as whole
        values[f"{fn}_time"] = sum(cmb.pairs[i][0] for i in idxs) if ok else None
        values[f"{fn}_count"] = sum(cmb.pairs[i][1] for i in idxs) if ok else None
    scale = ""
    if cmb.scale is not None and math.isfinite(cmb.scale) and cmb.scale > 0:
        scale = repr(cmb.scale)  # exact: the float32 widened to a double
    elif funcs:
        warning = f"{name}: scale factor {cmb.scale!r} unusable; its times cannot be converted"
    mode = K.effective_mode(cmb.ap_type, cmb.mode)
    attrs = {
        "type": "" if cmb.ap_type is None else str(cmb.ap_type),
        "mode": K.MODE_NAMES.get(mode, str(mode)) if mode is not None else "",
        "scale": scale,
        "valid": f"{valid:08x}",
        "layout": layout,
    }
    return Reading(K.CRYPTO_AP.name, cmb.key, values, attrs), warning


@dataclass(frozen=True, slots=True)
class ProcessorTimes:
    """D0R2: one processor's cumulative times (µs) as z/VM accounts them.

    ``user_us`` is CP's time on behalf of the guests: PFXUTIME (time charged to users, which
    includes the guests' own run time) less PFXPRBTM (emulation). Both are cumulative, so
    their difference is too; an unknown start of the count-down timer shifts it by a
    constant, which no delta sees."""

    cpu: int
    cpu_type: int | None
    emul_us: int | None
    user_us: int | None
    syst_us: int | None
    wait_us: int | None


def processor_times(d: Decoded) -> ProcessorTimes | None:
    cpu = _int(d.values.get("cpu_addr"))
    if cpu is None:
        return None
    emul = _int(d.values.get("emul_time"))
    charged = _int(d.values.get("charged_time"))
    return ProcessorTimes(
        cpu,
        _int(d.values.get("cpu_type")),
        emul,
        None if emul is None or charged is None else charged - emul,
        _int(d.values.get("syst_time")),
        _int(d.values.get("wait_time")),
    )


@dataclass(frozen=True, slots=True)
class LparCpu:
    """D0R16: one logical CPU of a partition as PR/SM accounts it, in DIAGNOSE X'204''s
    two times (the hypfs source's ``LparCpu`` reads the same pair)."""

    cpu: int
    acc_us: int | None  # dispatched, LPAR management included
    lp_us: int | None  # dispatched for the partition's own work
    type_name: str

    @property
    def mgmt_us(self) -> int | None:
        """LPAR management time: what the accumulated time holds beyond the partition's."""
        if self.acc_us is None or self.lp_us is None:
            return None
        return max(0, self.acc_us - self.lp_us)


def lpar_cpus(d: Decoded) -> tuple[str, int | None, list[LparCpu]]:
    """(partition name, data TOD in Unix µs, CPUs)."""
    name = d.values.get("lpar_name")
    tod = _int(d.values.get("data_tod"))
    cpus = []
    for e in d.entries:
        cpu = _int(e.get("cpu_addr"))
        if cpu is None:
            continue
        tn = e.get("cpu_type_name")
        cpus.append(
            LparCpu(
                cpu,
                _int(e.get("acc_time")),
                _int(e.get("lp_time")),
                tn if isinstance(tn, str) else "",
            )
        )
    return (name if isinstance(name, str) else ""), tod, cpus


def system_config(d: Decoded) -> dict[str, str]:
    """D1R4: machine, system and partition facts (only those that look sane)."""
    v = d.values
    out: dict[str, str] = {}
    for key, name in (
        (K.CFG_MACHINE_TYPE, "machine_type"),
        (K.CFG_MACHINE_MODEL, "machine_model"),
        (K.CFG_MACHINE_SERIAL, "machine_serial"),
        (K.CFG_SYSTEM_NAME, "system_name"),
        (K.CFG_LPAR_NAME, "lpar_name"),
    ):
        s = v.get(name)
        if isinstance(s, str) and s and s.isprintable():
            out[key] = s
    num = _int(v.get("lpar_number"))
    if num is not None:
        out[K.CFG_LPAR_NUMBER] = str(num)
    ver, rel, mod = (_int(v.get(n)) for n in ("cp_version", "cp_release", "cp_mod"))
    if ver is not None and rel is not None and mod is not None and 3 <= ver <= 9 and rel <= 9:
        out[K.CFG_ZVM_LEVEL] = f"{ver}.{rel}.{mod}"
    tz = _int(v.get("tz_offset"))
    if tz is not None and abs(tz) <= 14 * 3600:
        out[K.CFG_TZ_OFFSET] = str(tz)
    return out


def processor_config(d: Decoded) -> tuple[int, int] | None:
    """D1R5: (processor address, type code)."""
    cpu, typ = _int(d.values.get("cpu_addr")), _int(d.values.get("cpu_type"))
    return None if cpu is None or typ is None else (cpu, typ)


def sample_config(d: Decoded) -> dict[str, str]:
    """D1R9: the sample interval (seconds) and the high-frequency rate."""
    out: dict[str, str] = {}
    iv = _int(d.values.get("interval"))
    if iv is not None and 0 < iv <= 24 * 3600:
        out[K.CFG_INTERVAL] = str(iv)
    hf = _int(d.values.get("hf_rate"))
    if hf is not None and hf > 0:
        out[K.CFG_HF_RATE] = str(hf)
    return out
