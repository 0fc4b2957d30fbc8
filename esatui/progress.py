"""A progress bar for long imports, drawn only when a person is watching a terminal."""

from __future__ import annotations

from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TaskID, TimeRemainingColumn


class ImportProgress:
    """``update(done, total)`` from any thread; silent unless ``stream`` is a terminal."""

    def __init__(self, stream: TextIO) -> None:
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        if stream.isatty():
            self._progress = Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                DownloadColumn(),
                TimeRemainingColumn(),
                console=Console(file=stream),
                transient=True,
            )

    def update(self, done: int, total: int) -> None:
        if self._progress is None:
            return
        if self._task is None:
            self._task = self._progress.add_task("importing", total=total)
        self._progress.update(self._task, completed=done, total=total)

    def __enter__(self) -> ImportProgress:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()
