"""Collector CPU per sample of the zcrypt source: 16 cards x 16 domains in a fixture tree.

CPU is measured with getrusage (user + system time of this thread) over batches of
samples; each batch is one run, and the median batch is reported, because the machines this
runs on are shared. Besides the steady full sample: the ``--hf`` gauges, a sample that reads
every queue state file too, one that keeps no file open, and the bare ``pread`` system calls
of the full sample (the floor any Python code has to add to).
Run: ``python -m bench zcrypt``, or ``python -m bench.bench_zcrypt`` (``--cards``,
``--domains``, ``--samples``).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from bench.core import Options, Result, cpu_ms_per_call, fmt
from bench.report import text_report
from esatui.collectors.base import SourceContext
from esatui.collectors.sysfsio import default_fd_budget
from esatui.collectors.zcrypt import ZcryptSource
from esatui.sim.interfaces.aptree import build

NAME = "zcrypt"
TITLE = "zcrypt collector CPU per sample, 16 cards x 16 domains (fixture tree)"
TARGET_MS = 5.0


def syscall_floor(src: ZcryptSource, calls: int, batches: int) -> tuple[list[float], int]:
    """The full sample's preads of kept descriptors, with no Python work around them."""
    fds = [fd for fd in src._plan if isinstance(fd, int)]

    def loop() -> None:
        pread = os.pread
        for fd in fds:
            pread(fd, 4096, 0)

    return (cpu_ms_per_call(loop, calls, batches) if fds else [0.0]), len(fds)


def measure(cards: int, domains: int, samples: int, batches: int) -> Result:
    result = Result(NAME, TITLE)
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
        reads_full = steady.sample().reads
        gauge_sample = steady.sample_gauges()
        reads_gauges = gauge_sample.reads if gauge_sample else 0
        full = result.add(
            "full sample",
            cpu_ms_per_call(steady.sample, samples, batches),
            "ms CPU",
            f"{reads_full} file reads",
        )
        result.add(
            "gauges only (--hf)",
            cpu_ms_per_call(steady.sample_gauges, samples * 2, batches),
            "ms CPU",
            f"{reads_gauges} file reads",
        )
        result.add(
            "full, state eager (queue config/chkstop/interrupt too)",
            cpu_ms_per_call(eager.sample, samples, batches),
            "ms CPU",
        )
        result.add(
            "full, no kept descriptors (open/read/close every file)",
            cpu_ms_per_call(unpinned.sample, samples, batches),
            "ms CPU",
        )
        floor_values, floor_reads = syscall_floor(steady, samples, batches)
        floor = result.add(
            "pread floor (the full sample's system calls alone)",
            floor_values,
            "ms CPU",
            f"{floor_reads} preads",
        )
        share = floor.median / full.median if full.median else 0.0
        result.target(
            f"zcrypt full sample, {cards} cards x {domains} domains ({n_dev} devices)",
            f"< {TARGET_MS:g} ms CPU (with the host sample: see host)",
            f"{fmt(full.median, 'ms')} median",
            full.median < TARGET_MS,
        )
        result.notes += [
            f"{n_dev} devices; descriptor budget {steady._reader.budget} (soft RLIMIT_NOFILE "
            f"/ 2 - 64), kept open {steady._reader.kept}.",
            f"The full sample is {share:.0%} system calls (the pread floor) and "
            f"{1 - share:.0%} Python: parsing, Readings, state checks.",
        ]
        for src in (steady, eager, unpinned):
            src.close()
    return result


def run(opts: Options) -> Result:
    return measure(16, 16, 40, opts.runs(11, 3))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=16)
    parser.add_argument("--domains", type=int, default=16)
    parser.add_argument("--samples", type=int, default=40, help="samples per timed batch")
    parser.add_argument("--batches", type=int, default=11, help="timed batches (runs)")
    args = parser.parse_args(argv)
    if default_fd_budget() < 3 * args.cards * (args.domains + 1):
        print("note: raise the open-file limit (ulimit -n) to keep every hot file open")
    print("\n".join(text_report(measure(args.cards, args.domains, args.samples, args.batches))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
