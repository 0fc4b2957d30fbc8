"""What dominates a measured call: cProfile's own time per function, summarised in a line.

The profile's clock is each thread's CPU clock (``time.thread_time``), never the wall
clock: on a shared machine a wall clock charges whatever function was running when the
machine was busy elsewhere (a system call, most often) with the time it waited. Threads the
call starts (the recorder's source workers) are profiled too, each on its own CPU clock,
and their functions are added in; a thread waiting (on a queue, a lock) costs nothing.
"""

from __future__ import annotations

import cProfile
import pstats
import threading
import time
from collections.abc import Callable

# Built-ins that are system calls (the kernel's work, and the fixture's file system's)
_SYSCALLS = ("posix.", "io.open", "method 'read'", "method 'readinto'", "scandir", "listdir")


def _label(func: tuple[str, int, str]) -> str:
    filename, line, name = func
    if filename == "~":  # a built-in: name is "<built-in method posix.pread>" or similar
        return name.strip("<>").replace("built-in method ", "").replace("method ", "")
    if filename == "<string>":
        return f"generated {name} (dataclasses)"
    parts = filename.replace("\\", "/").split("/")
    short = "/".join(parts[-2:]) if len(parts) > 1 else filename
    return f"{short}:{line} {name}"


def cpu_profiles(fn: Callable[[], object], calls: int) -> list[cProfile.Profile]:
    """``fn`` called ``calls`` times under cProfile on CPU clocks: the calling thread's
    profile, then one per thread started meanwhile."""
    started: list[tuple[cProfile.Profile, threading.Thread]] = []

    def in_new_thread(*_: object) -> None:  # threading.setprofile: once, as a thread starts
        prof = cProfile.Profile(time.thread_time)
        started.append((prof, threading.current_thread()))
        prof.enable()  # replaces this hook in that thread

    main = cProfile.Profile(time.thread_time)
    threading.setprofile(in_new_thread)
    main.enable()
    try:
        for _ in range(calls):
            fn()
    finally:
        main.disable()
        threading.setprofile(None)
    # A thread's profile is read once the thread has ended: reading it closes the calls
    # still open on the reading thread's CPU clock (a worker still waiting for its stop
    # would be charged this thread's CPU). One still running after a while is left out.
    ended = []
    for prof, thread in started:
        thread.join(timeout=5)
        if not thread.is_alive():
            ended.append(prof)
    return [main, *ended]


def profile(fn: Callable[[], object], calls: int) -> list[tuple[str, float, bool]]:
    """(function, share of the total own time, is a system call), largest first."""
    stats = pstats.Stats(*cpu_profiles(fn, calls))
    table: dict[tuple[str, int, str], tuple[int, int, float, float, object]] = getattr(
        stats, "stats", {}
    )
    total = sum(row[2] for row in table.values()) or 1.0
    rows = []
    for func, row in table.items():
        label = _label(func)
        rows.append((label, row[2] / total, func[0] == "~" and label.startswith(_SYSCALLS)))
    rows.sort(key=lambda r: r[1], reverse=True)
    return rows


def dominant(fn: Callable[[], object], calls: int, top: int = 6) -> str:
    """One line: the share of system calls, then the ``top`` functions by own time."""
    rows = profile(fn, calls)
    syscalls = sum(share for _, share, is_sys in rows if is_sys)
    head = ", ".join(f"{label} {share:.0%}" for label, share, _ in rows[:top])
    return (
        f"under cProfile on CPU clocks ({calls} calls, every thread), Python's system-call "
        f"functions (os.pread, open, read ...) take {syscalls:.0%} of the CPU time; largest "
        f"own CPU times: {head}"
    )
