"""A guest of a snapshot in the record CP would return for it (what the SMAPI server serves)."""

from __future__ import annotations

from esatui.collectors.diag2fc import Diag2fcRecord
from esatui.sim.snapshot import GuestCounters, SystemSnapshot


def diag2fc_record(snapshot: SystemSnapshot, guest: GuestCounters) -> Diag2fcRecord:
    """The DIAGNOSE X'2FC' record CP would return for ``guest`` (hypfs, SMAPI)."""
    lcpus = len(snapshot.processors)
    return Diag2fcRecord(
        version=0,
        flags=0,
        used_cpu_us=guest.cpu_us,
        elapsed_us=guest.elapsed_us,
        mem_min_kib=0,
        mem_max_kib=guest.mem_max_kib,
        mem_share_kib=guest.mem_max_kib,
        mem_used_kib=guest.mem_used_kib,
        pcpus=lcpus,
        lcpus=lcpus,
        vcpus=guest.vcpus,
        ocpus=guest.vcpus,
        cpu_max=100 * guest.vcpus,
        cpu_shares=100,
        samp_cpu=guest.samp_cpu,
        samp_delay=guest.samp_delay,
        samp_page=guest.samp_page,
        samp_idle=guest.samp_idle,
        samp_other=guest.samp_other,
        samp_total=guest.samp_total,
        guest=guest.userid,
    )
