"""Kinds that more than one source fills, so that one screen reads them whatever the source.

``lcpu``: a logical processor as the hypervisor sees it (ESACPUU). The z/VM monitor (D0R2,
D0R16), hypfs (diag 204) and SMAPI (DETAILED_CPU) each fill the fields they have; a field a
source cannot give stays ``None`` and the screen shows ``.``.

``guest``: a z/VM virtual machine (ESAUSR2), from hypfs (diag 2fc) or SMAPI
(Image_Performance_Query, which returns the same DIAGNOSE X'2FC' data).

Sources may add fields to these kinds (additive only); renaming one breaks recorded data.
"""

from __future__ import annotations

from esatui.collectors.model import Kind, counter, gauge, unsigned

LCPU = Kind(
    name="lcpu",
    doc="logical processor of the LPAR, hypervisor view",
    # every source gives these as unsigned 64-bit times (monitor records, DIAGNOSE X'204')
    fields=unsigned(
        64,
        (
            counter("elapsed_us", "us", "time the processor was online (the base of every %)"),
            counter("busy_us", "us", "time dispatched (when the split below is unknown)"),
            counter("emul_us", "us", "guest emulation time"),
            counter("user_us", "us", "CP time on behalf of guests"),
            counter(
                "syst_us",
                "us",
                "CP time for itself (the z/VM monitor's PFXTMSYS: zpmd's offset alone)",
                provisional=True,
            ),
            counter(
                "idle_us",
                "us",
                "wait (voluntary) time (the z/VM monitor's PFXTOTWT: zpmd's offset alone)",
                provisional=True,
            ),
            counter(
                "steal_us",
                "us",
                "online but not dispatched by PR/SM: a shared processor's idle wait "
                "included, since PR/SM takes a processor that waits off its physical one",
            ),
            counter("mgmt_us", "us", "LPAR management time for this processor"),
            counter(
                "wait_us",
                "us",
                "DIAGNOSE X'204' wait time of the logical processor (hypfs debugfs only); "
                "meaning not publicly documented",
                provisional=True,
            ),
            gauge("busy_pct", "pct", "busy % over the source's own interval (SMAPI)"),
            gauge("overhead_pct", "pct", "LPAR overhead % over the source's own interval (SMAPI)"),
        ),
    ),
    attrs=("type", "lpar", "polarization", "type_source"),
)

GUEST = Kind(
    name="guest",
    doc="z/VM virtual machine (DIAGNOSE X'2FC' view)",
    fields=(
        counter("cpu_us", "us", "CPU time used, all virtual CPUs (DIAGNOSE X'2FC' cputime)"),
        counter("elapsed_us", "us", "elapsed time the guest was logged on"),
        counter("samp_total", "count", "high-frequency samples taken"),
        counter("samp_cpu", "count", "samples found using a real CPU"),
        counter("samp_delay", "count", "samples found waiting for a CPU"),
        counter("samp_page", "count", "samples found in page wait"),
        counter("samp_idle", "count", "samples found idle"),
        counter("samp_other", "count", "samples in any other state"),
        gauge("vcpus", "count", "virtual CPUs defined"),
        gauge("mem_used_kib", "KiB", "memory in use"),
        gauge("mem_max_kib", "KiB", "maximum memory"),
    ),
    attrs=("userid",),
    age="elapsed_us",  # the counters run from logon (DIAGNOSE X'2FC')
)
