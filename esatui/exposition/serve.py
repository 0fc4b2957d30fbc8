"""Where the exposition goes: an HTTP endpoint (``--listen``) and node_exporter's textfile
collector (``--textfile DIR``).

The endpoint is prometheus_client's own server in a daemon thread: it answers ``/metrics`` in
the OpenMetrics format when the scraper asks for it (Prometheus does), else in the text
format. A thread of its own wakes after each of the recorder's passes (its own interval, the
last of a pass), adds the queued intervals to the series and writes the textfile, through
prometheus_client's ``write_to_textfile``:
a temporary file renamed over ``esatui.prom``, so node_exporter never reads half a file and
the recorder never waits for the disk.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from prometheus_client import CollectorRegistry, start_http_server, write_to_textfile

from esatui.db.records import Interval
from esatui.exposition.exporter import Exporter

TEXTFILE_NAME = "esatui.prom"
PASS_SOURCE = "esatui"  # the recorder's own interval: written last in every pass


@dataclass(frozen=True)
class Listen:
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


class Exposition:
    """An exporter and where it is shown; :meth:`interval` is the recorder's hook."""

    def __init__(
        self,
        listen: Listen | None = None,
        textfile_dir: Path | None = None,
        warn: Callable[[str], None] = print,
        interval_s: float | None = None,
    ) -> None:
        self.exporter = Exporter(interval_s)
        self.registry: CollectorRegistry = CollectorRegistry(auto_describe=False)
        self.registry.register(self.exporter)
        self._server = None
        if listen is not None:
            try:
                self._server, _ = start_http_server(
                    listen.port, addr=listen.host, registry=self.registry
                )
            except OSError as exc:
                raise RuntimeError(f"cannot listen on {listen}: {exc.strerror or exc}") from None
        path = None
        if textfile_dir is not None:
            if not textfile_dir.is_dir():
                raise RuntimeError(f"--textfile {textfile_dir}: not a directory")
            path = textfile_dir / TEXTFILE_NAME
        self._worker = _Worker(self.exporter, self.registry, path, warn)

    def interval(self, interval: Interval) -> None:
        """The recorder's hook: queue the interval; after a pass, wake the worker."""
        self.exporter.interval(interval)
        if interval.source == PASS_SOURCE:
            self._worker.due.set()

    def close(self) -> None:
        self._worker.stop()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


class _Worker:
    """After each pass: the queued intervals into the series (so they never pile up when
    nobody scrapes), and the textfile when asked for."""

    def __init__(
        self,
        exporter: Exporter,
        registry: CollectorRegistry,
        path: Path | None,
        warn: Callable[[str], None],
    ) -> None:
        self.path = path
        self.due = threading.Event()
        self._exporter = exporter
        self._registry = registry
        self._warn = warn
        self._stopping = False
        self.error: str | None = None
        self._thread = threading.Thread(target=self._run, daemon=True, name="esatui-exposition")
        self._thread.start()

    def _run(self) -> None:
        while True:
            self.due.wait()
            self.due.clear()
            self._exporter.drain()
            if self.path is not None:
                self._write(self.path)
            if self._stopping:
                return

    def _write(self, path: Path) -> None:
        try:
            write_to_textfile(str(path), self._registry)
            self.error = None
        except OSError as exc:
            error = f"textfile {path}: {exc.strerror or exc}"
            if error != self.error:  # said once until it works again
                self._warn(error)
            self.error = error

    def stop(self) -> None:
        self._stopping = True
        self.due.set()
        self._thread.join(timeout=5)
