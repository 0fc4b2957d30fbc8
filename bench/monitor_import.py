"""Import speed of a MONWRITE file: ``python -m bench.monitor_import [SIZE_MB]``.

Writes a file of about SIZE_MB (default 100) in a temporary directory, streaming: every
sample interval carries what a mid-size z/VM system writes (D5R9, D5R10 for 16 APs in P-bit
records, D0R2 for 16 processors, D0R16 for 4 partitions) plus 1000 records of other domains
the import skips (user and I/O data dominate real files). Then imports it with the real
source and prints records per second, megabytes per second and the peak resident size.
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from esatui.collectors.base import SourceContext
from esatui.collectors.monitor import encode as E

T0 = 1_700_000_000_000_000


def intervals(n: int, other_records: int = 1000) -> Iterator[E.IntervalRecords]:
    other = [
        E.raw_record(4 if i % 3 else 6, 3, T0, bytes(180 + (i % 7) * 20))
        for i in range(other_records)
    ]
    for i in range(n):
        us = T0 + i * 60_000_000
        recs = [E.crypto_record(us, {"virt_nq": 1000 * i, "vserv_us": 3_000_000 * i})]
        cmbs = [E.CmbSpec(ap, ((i * 100, i),) * 6) for ap in range(16)]
        recs += E.cmb_records(us, cmbs, per_record=6)
        recs += [
            E.processor_record(us, cpu=c, cpu_type=3, emul_us=i, user_us=i, syst_us=i, wait_us=i)
            for c in range(16)
        ]
        recs += [
            E.lpar_record(
                us,
                lpar_name=f"LPAR{p}",
                data_us=us,
                cpus=[(c, i * 900, i, "IFL") for c in range(16)],
            )
            for p in range(4)
        ]
        recs += other
        yield E.IntervalRecords(us, recs)


def main(size_mb: float = 100.0, other_records: int = 1000) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "day.monwrite"
        written = 0
        n = 0
        with path.open("wb") as f:
            for block in E.monwrite_intervals(intervals(10**9, other_records)):
                f.write(block)
                written += len(block)
                n += 1
                if written >= size_mb * 1e6:
                    break
        from esatui.collectors.monitor.monwrite import MonwriteSource

        src = MonwriteSource(SourceContext(), path)
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t = time.perf_counter()
        cpu = time.process_time()
        samples = sum(1 for _ in src.samples())
        wall = time.perf_counter() - t
        cpu = time.process_time() - cpu
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(f"file: {written / 1e6:.1f} MB, {n} intervals, {src.records_read} records")
        print(f"imported: {samples} samples, {src.records_skipped} records skipped")
        print(
            f"time: {wall:.2f} s wall, {cpu:.2f} s CPU: {src.records_read / cpu:,.0f} records/s, "
            f"{written / 1e6 / cpu:.1f} MB/s"
        )
        print(f"peak RSS: {rss / 1024:.0f} MiB (before import {rss0 / 1024:.0f} MiB)")


if __name__ == "__main__":
    # python -m bench.monitor_import [SIZE_MB [OTHER_RECORDS_PER_INTERVAL]]
    main(
        float(sys.argv[1]) if len(sys.argv) > 1 else 100.0,
        int(sys.argv[2]) if len(sys.argv) > 2 else 1000,
    )
