"""The bench's profiles are of CPU time: waiting costs nothing, work in the threads a call
starts is seen."""

from __future__ import annotations

import threading
import time

from bench.profiling import profile


def waits() -> None:
    time.sleep(0.05)  # 50 ms of wall time, next to no CPU


def works() -> int:
    return sum(i * i for i in range(60_000))  # a few ms of CPU


def in_a_thread() -> None:
    worker = threading.Thread(target=works)
    worker.start()
    worker.join()


def call() -> None:
    waits()
    works()


def test_waiting_is_not_blamed() -> None:
    rows = {label: share for label, share, _ in profile(call, 3)}
    slept = sum(share for label, share in rows.items() if "sleep" in label)
    assert slept < 0.1  # on a wall clock it would be most of the time


def test_threads_started_by_the_call_are_profiled() -> None:
    labels = [label for label, _, _ in profile(in_a_thread, 2)]
    assert any(label.endswith(" works") or "<genexpr>" in label for label in labels[:3])


def leaves_a_thread_waiting() -> None:
    """As the recorder ends: its worker is told to stop but not waited for, and is still
    waiting when the call returns."""
    told = threading.Event()

    def worker() -> None:
        told.wait()
        time.sleep(0.2)  # still waiting when the profile is read

    threading.Thread(target=worker).start()
    works()
    told.set()


def test_a_thread_still_waiting_is_not_charged_the_callers_cpu() -> None:
    rows = {label: share for label, share, _ in profile(leaves_a_thread_waiting, 1)}
    waiting = ("sleep", "wait", "acquire")
    waited = sum(share for label, share in rows.items() if any(w in label for w in waiting))
    assert waited < 0.1  # read at once, its open calls were closed on the caller's CPU clock
