"""Import speed of a MONWRITE file.

Writes a file of about SIZE_MB (default 100) in a temporary directory, streaming: every
sample interval carries what a mid-size z/VM system writes (D5R9, D5R10 for 16 APs in P-bit
records, D0R2 for 16 processors, D0R16 for 4 partitions) plus 1000 records of other domains
the import skips (user and I/O data dominate real files). Then imports it with the real
source, each run in a fresh process (so its peak resident size is the import's own), and
reports records per second, megabytes per second and the peak resident size.
Run: ``python -m bench monitor`` or ``python -m bench.monitor_import [--size MB]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bench.core import Options, Result, peak_rss_kib
from bench.report import text_report
from esatui.collectors.base import SourceContext
from esatui.collectors.monitor import encode as E

NAME = "monitor"
TITLE = "MONWRITE import: records and megabytes per second, peak memory"
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
                cpus=[(c, i * 901, i * 900, "IFL") for c in range(16)],
            )
            for p in range(4)
        ]
        recs += other
        yield E.IntervalRecords(us, recs)


def write_file(path: Path, size_mb: float, other_records: int = 1000) -> tuple[int, int]:
    """Bytes and intervals written."""
    written = n = 0
    with path.open("wb") as f:
        for block in E.monwrite_intervals(intervals(10**9, other_records)):
            f.write(block)
            written += len(block)
            n += 1
            if written >= size_mb * 1e6:
                break
    return written, n


def import_file(path: Path) -> dict[str, float]:
    from esatui.collectors.monitor.monwrite import MonwriteSource

    src = MonwriteSource(SourceContext(), path)
    rss0 = peak_rss_kib() or 0
    wall, cpu = time.perf_counter(), time.process_time()
    samples = sum(1 for _ in src.samples())
    wall = time.perf_counter() - wall
    cpu = time.process_time() - cpu
    return {
        "records": src.records_read,
        "skipped": src.records_skipped,
        "samples": samples,
        "wall_s": wall,
        "cpu_s": cpu,
        "rss_before_kib": rss0,
        "rss_peak_kib": peak_rss_kib() or 0,
    }


def run(opts: Options, size_mb: float | None = None) -> Result:
    size_mb = size_mb or (20.0 if opts.quick else 100.0)
    runs = opts.runs(5, 2)
    result = Result(NAME, TITLE)
    with tempfile.TemporaryDirectory(prefix="esatui-bench-monwrite-") as d:
        path = Path(d) / "day.monwrite"
        written, n = write_file(path, size_mb)
        found: list[dict[str, float]] = []
        for _ in range(runs):
            out = subprocess.run(
                [sys.executable, "-m", "bench.monitor_import", "--import-only", str(path)],
                capture_output=True,
                text=True,
                check=True,
            )
            found.append(json.loads(out.stdout))
    mb = written / 1e6
    result.add("records per second (CPU)", [f["records"] / f["cpu_s"] for f in found], "/s")
    result.add("megabytes per second (CPU)", [mb / f["cpu_s"] for f in found], "MB/s")
    result.add("import wall time", [f["wall_s"] for f in found], "s")
    result.add("peak resident size", [f["rss_peak_kib"] / 1024 for f in found], "MiB")
    result.add(
        "peak resident size before the import (interpreter and modules)",
        [f["rss_before_kib"] / 1024 for f in found],
        "MiB",
    )
    last = found[-1]
    result.notes.append(
        f"file: {mb:.1f} MB, {n} intervals, {int(last['records']):,} records "
        f"({int(last['skipped']):,} of other domains skipped), {int(last['samples'])} samples "
        "imported; each run in a fresh process (python -m bench.monitor_import --import-only)."
    )
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=float, default=100.0, help="file size in MB")
    parser.add_argument("--import-only", type=Path, metavar="FILE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.import_only is not None:
        print(json.dumps(import_file(args.import_only)))
        return 0
    print("\n".join(text_report(run(Options(), args.size))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
