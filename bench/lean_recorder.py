"""The lean floor of a Python recorder: ``python bench/lean_recorder.py N DB [--no-store]``.

What the least a Python program does to record ``/proc/stat`` every second into SQLite, as
``esatui collect --source host`` does: wake on each whole second, read ``/proc/stat`` (kept
open), take each CPU's ten counters and their deltas, and commit one interval row and one
row per CPU in one transaction (WAL, ``synchronous=NORMAL``, as esatui's store). No interval
builder, no self-accounting, no rollups, no second thread: a floor to measure the recorder's
bar against (issue 16 target 1), not a product. ``--no-store`` drops the SQLite part, leaving
the interpreter's wake-up, the read and the parse. ``N`` passes, then it exits. Imports only
the standard library.
"""

from __future__ import annotations

import sqlite3
import sys
import time
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS interval (id INTEGER PRIMARY KEY, end_us INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS cpu (
    interval_id INTEGER NOT NULL, cpu INTEGER NOT NULL,
    user_t, nice_t, system_t, idle_t, iowait_t, irq_t, softirq_t, steal_t, guest_t, guest_nice_t,
    PRIMARY KEY (interval_id, cpu)
) WITHOUT ROWID;
"""
INSERT = "INSERT INTO cpu VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


def counters(stat: bytes) -> dict[bytes, list[int]]:
    """Each ``cpuN`` line's ten counters (ticks)."""
    return {
        line.split(None, 1)[0]: [int(v) for v in line.split()[1:11]]
        for line in stat.splitlines()
        if line.startswith(b"cpu") and line[3:4].isdigit()
    }


def main(argv: list[str]) -> int:
    passes, path = int(argv[0]), argv[1]
    store = "--no-store" not in argv
    conn = sqlite3.connect(path if store else ":memory:", isolation_level=None)
    if store:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript(SCHEMA)
    with Path("/proc/stat").open("rb") as stat:
        before = counters(stat.read())
        for _ in range(passes):
            time.sleep(1.0 - time.time() % 1.0)
            stat.seek(0)
            now = counters(stat.read())
            rows = [
                (cpu, [b - a for a, b in zip(before.get(name, values), values, strict=True)])
                for cpu, (name, values) in enumerate(now.items())
            ]
            before = now
            if store:
                conn.execute("BEGIN")
                interval = conn.execute(
                    "INSERT INTO interval (end_us) VALUES (?)", (time.time_ns() // 1000,)
                ).lastrowid
                conn.executemany(INSERT, [(interval, cpu, *deltas) for cpu, deltas in rows])
                conn.execute("COMMIT")
    conn.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
