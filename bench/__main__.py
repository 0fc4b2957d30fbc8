"""``python -m bench [NAME ...]`` (``make bench ARGS=...``): run the benchmarks, print a
compact report, and regenerate the results in ``docs/BENCHMARKS.md``.

Every benchmark repeats its measurements and reports the median with the lowest and highest
run. The document's generated blocks are rewritten when every benchmark ran (not
``--quick``), or with ``--write-doc``; results are also kept in ``bench/out/results.json`` so
a later partial run regenerates the summary with the others' last figures.
"""

from __future__ import annotations

import argparse
import compileall
import importlib
import sys
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from bench.core import Options, Result
from bench.report import (
    CpuTimes,
    block,
    load_results,
    machine_facts,
    save_results,
    section,
    splice,
    summary_rows,
    targets_table,
    text_report,
)

# name -> module with NAME, TITLE and run(Options) -> Result, in report order
BENCHMARKS: dict[str, str] = {
    "host": "bench.bench_host",
    "scale": "bench.bench_scale",
    "zcrypt": "bench.bench_zcrypt",
    "store": "bench.bench_store",
    "export": "bench.bench_export",
    "tui": "bench.bench_tui",
    "graph": "bench.bench_graph",
    "smapi": "bench.bench_smapi",
    "monitor": "bench.monitor_import",
    "sim": "bench.sim_speed",
    "ovhd": "bench.bench_ovhd",
    "expose": "bench.bench_expose",
    "history": "bench.bench_history",
}
ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "BENCHMARKS.md"


def _runner(name: str) -> tuple[str, Callable[[Options], Result]]:
    module = importlib.import_module(BENCHMARKS[name])
    title: str = module.TITLE
    runner: Callable[[Options], Result] = module.run
    return title, runner


def compile_project() -> None:
    """Write the bytecode caches of esatui's own modules, as installing its wheel does (pip
    compiles at install time), so a command timed in a child pays no compilation even where
    ``PYTHONDONTWRITEBYTECODE`` keeps Python from writing the caches itself."""
    for package in ("esatui", "collectors", "db", "screens"):  # esatui's links are skipped
        compileall.compile_dir(ROOT / package, quiet=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"of {', '.join(BENCHMARKS)}")
    parser.add_argument("--quick", action="store_true", help="few repeats: a smoke run")
    parser.add_argument("--write-doc", action="store_true", help="rewrite docs/BENCHMARKS.md")
    parser.add_argument("--no-doc", action="store_true", help="leave docs/BENCHMARKS.md alone")
    parser.add_argument("--doc", type=Path, default=DOC, help="the document to regenerate")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out", help="cache dir")
    parser.add_argument("--list", action="store_true", help="list the benchmarks")
    args = parser.parse_args(argv)
    if args.list:
        for name in BENCHMARKS:
            print(f"{name:<8} {_runner(name)[0]}")
        return 0
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}")
    names = args.names or list(BENCHMARKS)
    opts = Options(quick=args.quick, out_dir=str(args.out))
    compile_project()
    start = CpuTimes.now()
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    results: dict[str, Result] = {}
    failed: list[str] = []
    for name in names:
        title, runner = _runner(name)
        print(f"== {name}: {title}", flush=True)
        t0 = time.perf_counter()
        try:
            result = runner(opts)
        except Exception:  # noqa: BLE001 - one broken benchmark must not lose the others
            traceback.print_exc()
            failed.append(name)
            continue
        result.seconds = time.perf_counter() - t0
        results[name] = result
        print("\n".join(text_report(result)), flush=True)
    end = CpuTimes.now()
    store = args.out / "results.json"
    kept = load_results(store)
    if not args.quick:
        kept.update({name: (when, r) for name, r in results.items()})
        save_results(store, kept)
    write = args.write_doc or (not args.no_doc and not args.quick and names == list(BENCHMARKS))
    if write and results:
        facts = machine_facts(start, end, when)
        update_doc(args.doc, results, kept if not args.quick else {}, facts, when)
        print(f"wrote {args.doc}")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def update_doc(
    doc: Path,
    results: dict[str, Result],
    kept: dict[str, tuple[str, Result]],
    facts: list[tuple[str, str]],
    when: str,
) -> None:
    merged = dict(kept)
    merged.update({name: (when, r) for name, r in results.items()})
    blocks = {
        "machine": block(
            "machine",
            ["| | |", "|---|---|", *(f"| {k} | {v} |" for k, v in facts)],
        )
    }
    text = doc.read_text() if doc.exists() else ""
    earlier = summary_rows(text)
    summary = targets_table([])  # its header
    for name in BENCHMARKS:
        if name in merged:
            summary += targets_table((name, t) for t in merged[name][1].targets)[2:]
        else:
            summary += earlier.get(name, [])
    blocks["summary"] = block("summary", summary)
    for name, result in sorted(results.items(), key=lambda kv: list(BENCHMARKS).index(kv[0])):
        blocks[name] = block(name, section(result, when))
    doc.write_text(splice(text, blocks))


if __name__ == "__main__":
    raise SystemExit(main())
