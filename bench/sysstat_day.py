"""A day of sysstat's per-CPU data for 8 CPUs, the peer of the export benchmark's day.

``sadc`` reads the machine's own ``/proc/stat`` and ``/sys/devices/system/cpu`` and cannot
be told another root, so it runs in a private mount namespace (``unshare -m``, root only)
where the 8-CPU fixture tree of :func:`bench.fixtures.host_tree` is bind-mounted over both,
its counters moved on every second (in place: a bind mount keeps the file's inode). sadc
samples every second, 1,441 times: 1,440 records of every CPU, what a day of 1-minute
samples holds (the records' times are a second apart instead of a minute; ``sar`` and
``sadf`` read them alike). Built once (about 24 minutes) and kept under ``bench/out/``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.sysstat import ensure_sadc

SAMPLES = 1441  # 1,440 intervals
ROOT = Path(__file__).resolve().parent.parent

_SCRIPT = """
set -e
mount --bind "$ROOT/proc/stat" /proc/stat
mount --bind "$ROOT/sys/devices/system/cpu" /sys/devices/system/cpu
"$PYTHON" -c "$ADVANCE" &
ADVANCER=$!
"$SADC" -S INT 1 {samples} "$OUT"
kill $ADVANCER
"""

_ADVANCE = """
import time
from pathlib import Path
from bench.fixtures import _Files, advance_host
from esatui.sim.interfaces.procfs import ProcStat
stat = ProcStat(Path('{root}'), range(8))
files = _Files()
for step in range({steps}):
    advance_host(stat, step, 60.0, files)
    time.sleep(1.0)
"""


def sysstat_day(out_dir: Path) -> tuple[Path | None, str]:
    """``out_dir/sysstat-day.sa`` (built when missing), or ``None`` and why not."""
    path = out_dir / "sysstat-day.sa"
    if path.exists():
        return path, "cached"
    sadc, how = ensure_sadc()
    if sadc is None:
        return None, how
    unshare = shutil.which("unshare")
    if unshare is None or os.geteuid() != 0:
        return None, "building sysstat's day needs root and unshare (a private mount namespace)"
    from bench.fixtures import advance_host, host_tree

    with tempfile.TemporaryDirectory(prefix="esatui-bench-sa-") as tmp:
        root = Path(tmp) / "root"
        stat = host_tree(root, 8)
        advance_host(stat, 0, 60.0)
        building = out_dir / "sysstat-day.building.sa"
        building.unlink(missing_ok=True)
        print(f"  building {path} (sadc, {SAMPLES} samples a second apart: about 24 minutes)")
        env = dict(
            os.environ,
            ROOT=str(root),
            PYTHON=sys.executable,
            PYTHONPATH=str(ROOT),
            ADVANCE=_ADVANCE.format(root=root, steps=SAMPLES + 60),
            SADC=sadc,
            OUT=str(building),
        )
        script = _SCRIPT.format(samples=SAMPLES)
        done = subprocess.run(
            [unshare, "-m", "--propagation", "private", "sh", "-c", script],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0 or not building.exists():
            return None, f"sadc in a private mount namespace failed: {done.stderr.strip()[:200]}"
        building.replace(path)
    return path, "built by this benchmark"
