"""``/proc/sysinfo``: the machine, the CEC's CPUs, the LPAR and each z/VM or KVM level.

The kernel renders STSI results as ``Key: value`` lines (values may carry trailing blanks).
Keys are grouped into blocks by their prefix: ``LPAR ...``, ``VMnn ...`` (``VM00`` is the
innermost level, the one this Linux runs in), the CEC's CPU counts and capability ratings,
and the machine identification. Capability ratings are inversely proportional to speed: a
sub-capacity CP with capability 3085 next to IFLs with secondary capability 416 runs at
416/3085 of a full-speed engine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_KEY_NORMAL = re.compile(r"[^a-z0-9]+")
_VM_KEY = re.compile(r"^VM(\d\d) (.*)$")
_ADJUST_KEY = re.compile(r"^Adjustment (\d+)-way$")
_CEC_PREFIXES = ("CPUs ", "CPU Topology", "Capability", "Nominal Capability", "Secondary Capa")


def normal_key(key: str) -> str:
    """``CPUs G-MTID`` -> ``cpus_g_mtid``: the key used in flat config maps."""
    return _KEY_NORMAL.sub("_", key.lower()).strip("_")


@dataclass(frozen=True, slots=True)
class VmLevel:
    level: int  # 0 is the innermost
    fields: dict[str, str]  # keys without the "VMnn " prefix

    @property
    def name(self) -> str:
        return self.fields.get("Extended Name") or self.fields.get("Name", "")

    @property
    def control_program(self) -> str:
        return " ".join(self.fields.get("Control Program", "").split())


@dataclass(frozen=True, slots=True)
class SysInfo:
    machine: dict[str, str] = field(default_factory=dict)
    cec: dict[str, str] = field(default_factory=dict)
    adjustments: dict[int, tuple[int, ...]] = field(default_factory=dict)
    lpar: dict[str, str] = field(default_factory=dict)  # keys without the "LPAR " prefix
    vm: tuple[VmLevel, ...] = ()  # innermost first

    @property
    def machine_type(self) -> str:
        return self.machine.get("Type", "")

    @property
    def lpar_name(self) -> str:
        return self.lpar.get("Name", "")

    @property
    def capability(self) -> int | None:
        """The primary (CP) capability rating; old kernels print two numbers."""
        return _first_int(self.cec.get("Capability", ""))

    @property
    def secondary_capability(self) -> int | None:
        return _first_int(self.cec.get("Secondary Capability", ""))

    @property
    def thread_id_bits(self) -> int:
        """How many low bits of a CPU address of this partition are the thread ID (0: no
        multithreading). ``LPAR CPUs G-MTID`` and ``S-MTID`` are the largest thread IDs the
        machine offers CPs and the other types, ``PS-MTID`` the one the program set (SIGP
        set multithreading), which bounds them, as IBM's qclib reads them (``qc_sysinfo.c``);
        the screens' ``esacpuu.thread_bits`` reads the recorded keys alike."""
        offered = max(_first_int(self.lpar.get(k, "")) or 0 for k in ("CPUs G-MTID", "CPUs S-MTID"))
        program = _first_int(self.lpar.get("CPUs PS-MTID", ""))
        return (offered if program is None else min(program, offered)).bit_length()

    def config(self) -> dict[str, str]:
        """A flat map (``machine.type``, ``lpar.name``, ``vm00.control_program`` ...)."""
        out = {f"machine.{normal_key(k)}": v for k, v in self.machine.items()}
        out.update({f"cec.{normal_key(k)}": v for k, v in self.cec.items()})
        out.update({f"lpar.{normal_key(k)}": v for k, v in self.lpar.items()})
        for vm in self.vm:
            prefix = f"vm{vm.level:02d}."
            out.update({prefix + normal_key(k): v for k, v in vm.fields.items()})
            out[prefix + "control_program"] = vm.control_program
        return out


def parse_sysinfo(text: str) -> SysInfo:
    machine: dict[str, str] = {}
    cec: dict[str, str] = {}
    adjustments: dict[int, tuple[int, ...]] = {}
    lpar: dict[str, str] = {}
    vms: dict[int, dict[str, str]] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if not key:
            continue
        if key.startswith("LPAR "):
            lpar[key[5:]] = value
        elif m := _VM_KEY.match(key):
            vms.setdefault(int(m.group(1)), {})[m.group(2)] = value
        elif m := _ADJUST_KEY.match(key):
            numbers = tuple(int(v) for v in value.split() if v.isdigit())
            adjustments[int(m.group(1))] = numbers
        elif key.startswith(_CEC_PREFIXES):
            cec[key] = value
        else:
            machine[key] = value
    levels = tuple(VmLevel(n, vms[n]) for n in sorted(vms))
    return SysInfo(machine, cec, adjustments, lpar, levels)


def _first_int(value: str) -> int | None:
    head = value.split()[:1]
    return int(head[0]) if head and head[0].isdigit() else None
