"""The observed guest's ``/dev/vmcp``: CP's answers about its virtual CPUs and the LPAR.

The ``vmcp`` source reads it through :class:`~esatui.sim.interfaces.vmcp.ScriptedVmcp` (an opener
with the kernel driver's semantics): QUERY VIRTUAL CPUS names the guest's virtual CPU type
(IFL on Mode VM's IFLs), INDICATE LOAD the LPAR's logical processors with the busy
percentage the simulated CP last measured. QUERY VIRTUAL CRYPTO and QUERY CRYPTO AP answer
with nothing listed: their formats are not publicly captured, and guessed lines would show
invented text as facts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from esatui.sim.guest_tree import cpu_serial
from esatui.sim.interfaces.vmcp import Answer, Response, ScriptedVmcp, zvm_guest
from esatui.sim.snapshot import SystemSnapshot


def guest_vmcp(
    snap: SystemSnapshot, userid: str, busy: Callable[[], Mapping[int, float]]
) -> ScriptedVmcp:
    """The vmcp device of guest ``userid``; ``busy`` gives the processors' busy % now."""
    ident = snap.identity
    guest = snap.guest(userid)
    version, release, mod = [*ident.zvm_level.split("."), "0", "0"][:3]
    level = f"z/VM Version {version} Release {release}.{mod}, service level 1801 (64-bit)"

    def answers(now: Mapping[int, float]) -> dict[str, Answer]:
        return zvm_guest(
            dict.fromkeys(range(guest.vcpus), guest.vcpu_type),
            cpuid=f"FF{cpu_serial(ident)}{ident.machine_type}8000",
            real={p.address: (p.ptype, "HZ") for p in snap.processors},
            userid=userid,
            level=level,
            crypto="",
            busy=now,
        )

    def indicate_load() -> Response:
        answer = answers(busy())["INDICATE LOAD"]
        return answer() if callable(answer) else answer

    table = answers({})
    table["INDICATE LOAD"] = indicate_load
    table["QUERY CRYPTO AP"] = (0, "")
    return ScriptedVmcp(table)
