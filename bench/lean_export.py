"""The lean streaming floor of an ESACPUU text export: ``python bench/lean_export.py DB OUT
[FROM_US UNTIL_US]``.

What the least a Python program can do to print the same rows: one SQL query over the
hypervisor's per-processor rows (``k_lcpu``) with their intervals, newest first, read as a
cursor (streaming), each processor's percentages of its elapsed time, a subtotal per type,
fixed-width lines written as they come. No screen model, no thresholds beyond the steal
marker, no pages, no header: a floor to measure ``esatui export`` against, not a product.
Imports only the standard library, so its start-up is the interpreter's.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from pathlib import Path

PARTS = ("emul_us", "user_us", "syst_us", "idle_us", "steal_us", "mgmt_us")

QUERY = """
SELECT i.end_us, i.duration_us, e.key, e.attrs, k.elapsed_us,
       k.emul_us, k.user_us, k.syst_us, k.idle_us, k.steal_us, k.mgmt_us
FROM interval AS i JOIN k_lcpu AS k ON k.interval_id = i.id JOIN entity AS e ON e.id = k.entity_id
WHERE i.source = 'monitor' AND i.end_us > ? AND i.end_us <= ?
ORDER BY i.end_us DESC, e.key
"""


def cell(value: float | None) -> str:
    if value is None:
        return "     ."
    return "     0" if value == 0 else f"{value:6.1f}"


def main(argv: list[str]) -> int:
    db, out = argv[0], argv[1]
    after = int(argv[2]) if len(argv) > 2 else -1
    until = int(argv[3]) if len(argv) > 3 else 1 << 62
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    types: dict[str, str] = {}
    with Path(out).open("w") as sink:
        lines: list[str] = []
        current = None
        sums: dict[str, list[float]] = {}

        def subtotals() -> None:
            for cpu_type, s in sums.items():
                lines.append(f"{'':8} {cpu_type:<4} {'Tot':>4} " + " ".join(map(cell, s)))

        for end_us, duration_us, key, attrs, elapsed, *parts in conn.execute(QUERY, (after, until)):
            if end_us != current:
                subtotals()
                if len(lines) > 4096:
                    sink.write("\n".join(lines) + "\n")
                    lines.clear()
                current, sums, first = end_us, {}, True
                shown = time.strftime("%H:%M:%S", time.localtime(end_us / 1e6))
            cpu_type = types.get(attrs)
            if cpu_type is None:
                cpu_type = types[attrs] = json.loads(attrs).get("type", "")
            total_us = elapsed or duration_us
            pct = [None if p is None else p * 100.0 / total_us for p in parts]
            emul, user, syst = pct[0], pct[1], pct[2]
            busy = None if emul is None or user is None or syst is None else emul + user + syst
            values = [busy, *pct]
            acc = sums.setdefault(cpu_type, [0.0] * len(values))
            for n, v in enumerate(values):
                if v is not None:
                    acc[n] += v
            steal = values[5]
            mark = "*" if steal is not None and steal >= 10 else " "
            lines.append(
                f"{shown if first else '':8} {cpu_type:<4} {key:>4} "
                + " ".join(map(cell, values))
                + mark
            )
            first = False
        subtotals()
        sink.write("\n".join(lines) + "\n")
    conn.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
