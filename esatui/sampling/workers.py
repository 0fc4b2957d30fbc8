"""Each polled source in a thread of its own, so one that hangs holds only itself.

The recorder hands every idle source its call (a full sample or the gauges) at once and
takes the answers as they come, until the pass's deadline. A source still busy then is
left to finish on its own: it is not asked again until it answered, and its late answer
comes back with a later pass (the recorder then uses it, stamped with its own time). The
threads are daemons, so a source stuck in a system call never keeps the process alive.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from esatui.collectors.base import PolledSource
from esatui.collectors.model import Sample

Call = Callable[[], Sample | None]


@dataclass(frozen=True, slots=True)
class Answer:
    """What one call of a source gave: a sample (or ``None``), or what it raised."""

    worker: SourceWorker
    ticket: int  # the pass that asked
    full: bool
    sample: Sample | None
    error: BaseException | None
    cpu_ns: int  # the call's CPU, on its own thread's clock
    wall_ms: float


class SourceWorker:
    """One source's thread: runs the calls it is given, one at a time."""

    def __init__(
        self,
        source: PolledSource,
        answers: queue.SimpleQueue[Answer],
        cpu_clock: Callable[[], int],
    ) -> None:
        self.source = source
        self.busy = False  # set by the recorder when it asks, cleared here when answered
        self._answers = answers
        self._cpu_clock = cpu_clock
        self._calls: queue.SimpleQueue[tuple[int, bool, Call] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=f"esatui-{source.name}", daemon=True)
        self._thread.start()

    def ask(self, ticket: int, full: bool, call: Call) -> None:
        self.busy = True
        self._calls.put((ticket, full, call))

    def stop(self) -> None:
        """End the thread once its call (if any) returns."""
        self._calls.put(None)

    def _run(self) -> None:
        while (job := self._calls.get()) is not None:
            ticket, full, call = job
            cpu0, wall0 = self._cpu_clock(), time.perf_counter()
            sample: Sample | None = None
            error: BaseException | None = None
            try:
                sample = call()
            except BaseException as exc:  # noqa: BLE001 - the recorder decides what it means
                error = exc
            cpu = self._cpu_clock() - cpu0
            wall_ms = (time.perf_counter() - wall0) * 1000
            self.busy = False
            self._answers.put(Answer(self, ticket, full, sample, error, cpu, wall_ms))


class Workers:
    """The polled sources' threads and the one queue their answers come back on."""

    def __init__(self, sources: list[PolledSource], cpu_clock: Callable[[], int]) -> None:
        self.answers: queue.SimpleQueue[Answer] = queue.SimpleQueue()
        self.of = {s.name: SourceWorker(s, self.answers, cpu_clock) for s in sources}
        self._ticket = 0

    def next_ticket(self) -> int:
        self._ticket += 1
        return self._ticket

    def take(self, timeout: float) -> Answer | None:
        """The next answer, waiting at most ``timeout`` seconds."""
        try:
            if timeout <= 0:
                return self.answers.get_nowait()
            return self.answers.get(timeout=timeout)
        except queue.Empty:
            return None

    def stop(self) -> None:
        for worker in self.of.values():
            worker.stop()
