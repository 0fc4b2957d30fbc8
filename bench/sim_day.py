"""A simulated day through the real collectors: ``python -m bench.sim_day [SCENARIO]``.

Issue 6's bar: ``esatui sim --scenario mode-vm-day --duration 1d --interval 60 --db X``
under a minute. Runs exactly that command (in a fresh process, so the model's window
cache starts cold) into a temporary database, then every export of every screen in every
format, and prints wall and CPU seconds and the database's size.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FORMATS = ("text", "csv", "json", "jsonl")


def _esatui(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "esatui", *args], capture_output=True, text=True, check=True
    )


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    scenario = sys.argv[1] if len(sys.argv) > 1 else "mode-vm-day"
    with tempfile.TemporaryDirectory(prefix="esatui-bench-") as tmp:
        db = Path(tmp) / "day.sqlite"
        cpu0, wall0 = _children_cpu(), time.perf_counter()
        done = _esatui(
            "sim", "--scenario", scenario, "--duration", "1d", "--interval", "60", "--db", str(db)
        )
        wall, cpu = time.perf_counter() - wall0, _children_cpu() - cpu0
        print(done.stdout.strip())
        print(
            f"esatui sim, 1 day of 60 s intervals: wall {wall:.1f} s, cpu {cpu:.1f} s (bar: 60 s)"
        )
        print(f"database: {db.stat().st_size / 1e6:.1f} MB")
        screens = [s["name"] for s in json.loads(_esatui("screens", "--format", "json").stdout)]
        wall0 = time.perf_counter()
        for screen in screens:
            for fmt in FORMATS:
                _esatui("export", screen, "--db", str(db), "--format", fmt)
        took = time.perf_counter() - wall0
        print(f"every export ({len(screens)} screens x {len(FORMATS)} formats): {took:.1f} s")


if __name__ == "__main__":
    main()
