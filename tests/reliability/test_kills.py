"""Fault injection: a recorder killed (SIGKILL) at random moments, again and again, on one
database. Each recorder is a real process running the real recorder and store; it prints
every interval once its transaction has committed. After each kill: the database is
intact, every interval a recorder reported is there with all its rows, and the next
recorder opens it at once (the writer's lock died with the process that held it)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from esatui.db.sqlite_reader import SqliteReader
from tests.fixtures.reading import sql
from tests.reliability.figures import record_figure

KILLS = int(os.environ.get("ESATUI_KILLS", "24"))
ENTITIES = 20

RECORDER = textwrap.dedent(
    f"""
    import sys, threading
    from esatui.sampling.session import Recording
    from esatui.sim.clock import SimClock
    from tests.fakes.sources import CountingSource

    clock = SimClock(int(sys.argv[2]))
    source = CountingSource("good", clock, entities={ENTITIES})

    def committed(interval):
        print(interval.source, interval.end_us, len(interval.rows), flush=True)

    Recording(sys.argv[1], [source], interval_s=1.0, hf_s=None, clock=clock).run(
        threading.Event(), warn=lambda m: print("warn", m, file=sys.stderr, flush=True),
        on_interval=committed,
    )
    """
)


@pytest.mark.slow
def test_killed_recorders_lose_no_committed_interval(tmp_path: Path, db_path: Path) -> None:
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    rng = random.Random(13)
    reported: list[tuple[str, int, int]] = []
    for kill in range(KILLS):
        start_us = 1_790_000_040_000_000 + kill * 10**10  # each run in an hour of its own
        proc = subprocess.Popen(
            [sys.executable, str(script), str(db_path), str(start_us)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert proc.stdout is not None
        first = proc.stdout.readline()  # the recorder has opened the database and written
        assert first, f"recorder {kill} wrote nothing: {proc.stderr.read() if proc.stderr else ''}"
        time.sleep(rng.uniform(0.0, 0.25))  # then a random moment of its work
        os.kill(proc.pid, signal.SIGKILL)
        # the rest through the same reader: readline may have read ahead of its line
        # (communicate would read the pipe under it and lose that)
        rest = proc.stdout.read()
        proc.communicate()
        *lines, _partial = (first + rest).split("\n")  # a line cut by the kill is no report
        for line in lines:
            source, end, rows = line.split()
            reported.append((source, int(end), int(rows)))
        assert sql(db_path, "PRAGMA integrity_check") == [("ok",)]
    stored = {
        (source, end): rows
        for source, end, rows in sql(
            db_path,
            "SELECT i.source, i.end_us, (SELECT COUNT(*) FROM k_thing k WHERE k.interval_id ="
            " i.id) + (SELECT COUNT(*) FROM k_esatui k WHERE k.interval_id = i.id)"
            " + (SELECT COUNT(*) FROM k_collector k WHERE k.interval_id = i.id)"
            " FROM interval i",
        )
    }
    lost = [r for r in reported if stored.get((r[0], r[1])) != r[2]]
    assert not lost
    assert len({r for r in reported if r[0] == "good"}) > KILLS  # every run wrote
    with SqliteReader.open(db_path) as reader:
        assert reader.queries.interval_count() >= len(reported)
    record_figure(
        "killed recorders",
        f"{KILLS} kills survived, {len(reported)} committed intervals reported, {len(lost)} lost",
    )
