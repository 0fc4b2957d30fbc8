"""Collector CPU per sample of the zcrypt source: 16 cards x 16 domains in a fixture tree.

CPU is measured with getrusage (user + system time of this process) over batches of
samples; the median batch is reported, because the machines this runs on are shared.
Run: ``python -m bench.bench_zcrypt`` (``--cards``, ``--domains``, ``--samples``).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path

from esatui.collectors.base import SourceContext
from esatui.collectors.sysfsio import default_fd_budget
from esatui.collectors.zcrypt import ZcryptSource
from esatui.fakesys.aptree import build

TARGET_MS = 5.0


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def per_call_ms(fn: Callable[[], object], calls: int, batches: int = 7) -> float:
    """Median over ``batches`` of the CPU milliseconds per call."""
    fn()  # warm up (first sample opens and pins the files)
    results = []
    for _ in range(batches):
        start = cpu_s()
        for _ in range(calls):
            fn()
        results.append((cpu_s() - start) / calls * 1000)
    return statistics.median(results)


def syscall_floor_ms(src: ZcryptSource, calls: int) -> tuple[float, int]:
    """The full sample's preads of kept descriptors, with no Python work around them."""
    fds = [fd for fd in src._plan if isinstance(fd, int)]
    reads = len(fds)

    def loop() -> None:
        pread = os.pread
        for fd in fds:
            pread(fd, 4096, 0)

    return (per_call_ms(loop, calls) if reads else 0.0), reads


def run(cards: int, domains: int, samples: int) -> list[str]:
    out: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-zcrypt-") as tmp:
        root = Path(tmp)
        tree = build(root, cards=cards, domains=domains)
        for card, domain in tree.apqns:
            tree.advance(card, domain, 1_382_729)  # the real lab capture's magnitude
        ctx = SourceContext(root=root)
        steady = ZcryptSource(ctx)
        eager = ZcryptSource(ctx, state_refresh_s=0)  # every queue state file every sample
        unpinned = ZcryptSource(ctx, fd_budget=0)
        first = steady.sample()
        n_dev = len(first.readings) - 1
        full = per_call_ms(steady.sample, samples)
        gauges = per_call_ms(steady.sample_gauges, samples * 2)
        worst = per_call_ms(eager.sample, samples)
        cold = per_call_ms(unpinned.sample, samples)
        reads_full = steady.sample().reads
        gauge_sample = steady.sample_gauges()
        reads_gauges = gauge_sample.reads if gauge_sample else 0
        floor, floor_reads = syscall_floor_ms(steady, samples)
        kept = steady._reader.kept
        out.append(f"zcrypt fixture: {cards} cards x {domains} domains = {n_dev} devices")
        out.append(
            f"descriptor budget {steady._reader.budget} (soft RLIMIT_NOFILE / 2 - 64), "
            f"kept open {kept}"
        )
        out.append(
            f"full sample        {full:7.3f} ms CPU  ({reads_full} file reads)"
            f"  {'OK' if full < TARGET_MS else 'OVER'} target {TARGET_MS} ms"
        )
        out.append(f"gauges (--hf)      {gauges:7.3f} ms CPU  ({reads_gauges} file reads)")
        out.append(f"full, state eager  {worst:7.3f} ms CPU  (queue config/chkstop/interrupt too)")
        out.append(f"full, no kept fds  {cold:7.3f} ms CPU  (open/read/close every file)")
        out.append(
            f"pread floor        {floor:7.3f} ms CPU  ({floor_reads} preads of the full sample "
            "alone: syscalls and the kernel's show functions)"
        )
        out.append(
            f"=> the full sample is {floor / full:.0%} system calls, "
            f"{1 - floor / full:.0%} Python (parsing, Readings, state checks)"
        )
        for src in (steady, eager, unpinned):
            src.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=16)
    parser.add_argument("--domains", type=int, default=16)
    parser.add_argument("--samples", type=int, default=40, help="samples per timed batch")
    args = parser.parse_args(argv)
    if default_fd_budget() < 3 * args.cards * (args.domains + 1):
        print("note: raise the open-file limit (ulimit -n) to keep every hot file open")
    for line in run(args.cards, args.domains, args.samples):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
