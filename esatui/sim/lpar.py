"""The LPAR's logical processors: types, cores, SMT threads, and their z/VM addresses."""

from __future__ import annotations

from dataclasses import dataclass

from esatui.sim.params import SimParams, parse_lpar_cpus

# Types whose cores run two threads with SMT-2 under z/VM (IFL; zIIPs are not used by z/VM).
SMT_TYPES = frozenset({"IFL"})


@dataclass(frozen=True, slots=True)
class LogicalProcessor:
    address: int
    """z/VM processor address (ESACPUU ``id``), in the order the LPAR lists them."""
    ptype: str
    core: int
    thread: int
    speed: float
    """Capacity relative to an IFL (sub-capacity CPs)."""


def logical_processors(params: SimParams) -> tuple[LogicalProcessor, ...]:
    """CPs first, then IFLs, zIIPs, ICFs; with SMT every IFL core gives two threads, and a
    CPU address is the core ID followed by a thread-ID bit (the architecture's rule, as
    z/VM's monitor records describe it), so a core of one thread leaves a gap."""
    counts = parse_lpar_cpus(params.lpar_cpus)
    order = ("CP", "IFL", "ZIIP", "ICF")
    out: list[LogicalProcessor] = []
    core = 0
    for ptype in order:
        for _ in range(counts.get(ptype, 0)):
            threads = 2 if params.smt and ptype in SMT_TYPES else 1
            speed = params.cp_speed if ptype == "CP" else 1.0
            for t in range(threads):
                address = core << 1 | t if params.smt else core
                out.append(LogicalProcessor(address, ptype, core, t, speed))
            core += 1
    return tuple(out)


def guest_cpu_type(params: SimParams) -> str:
    """Linux guests run on IFLs when the LPAR has them (Mode VM), else on CPs."""
    return "IFL" if "IFL" in parse_lpar_cpus(params.lpar_cpus) else "CP"
