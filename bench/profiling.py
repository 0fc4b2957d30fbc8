"""What dominates a measured call: cProfile's own time per function, summarised in a line."""

from __future__ import annotations

import cProfile
import pstats
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


def profile(fn: Callable[[], object], calls: int) -> list[tuple[str, float, bool]]:
    """(function, share of the total own time, is a system call), largest first."""
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        fn()
    prof.disable()
    stats = pstats.Stats(prof)
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
        f"under cProfile ({calls} calls), Python's system-call functions (os.pread, open, "
        f"read ...) take {syscalls:.0%} of the time; largest own times: {head}"
    )
