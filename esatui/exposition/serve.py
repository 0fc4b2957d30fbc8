"""Where the exposition goes: an HTTP endpoint (``--listen``) and node_exporter's textfile
collector (``--textfile DIR``).

The endpoint is prometheus_client's threading WSGI server in a daemon thread, and its WSGI
app for everything but a plain scrape: a scrape gets the format the library's
``choose_encoder`` picks for its Accept header (OpenMetrics when asked for, as Prometheus
does, else the text format), from :class:`~esatui.exposition.cache.ExpositionCache`, so a
scrape formats only what changed since the last one. A thread of its own wakes after each of
the recorder's passes (its own interval, the last of a pass), adds the queued intervals to
the series and writes the textfile (the library's text format, as ``write_to_textfile``
writes it): a temporary file renamed over ``esatui.prom``, so node_exporter never reads half
a file and the recorder never waits for the disk.
"""

from __future__ import annotations

import functools
import os
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, exposition, make_wsgi_app
from prometheus_client.openmetrics.exposition import ALLOWUTF8

from esatui.db.records import Interval
from esatui.exposition.cache import ExpositionCache
from esatui.exposition.exporter import PASS_SOURCE, Exporter

TEXTFILE_NAME = "esatui.prom"
_TEXTFILE_ENCODER = functools.partial(exposition.generate_latest, escaping=ALLOWUTF8)


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
        self.cache = ExpositionCache(self.exporter)
        path = None if textfile_dir is None else _textfile(textfile_dir)
        self._server: WSGIServer | None = None
        if listen is not None:
            try:
                self._server = _serve(listen, _App(self.cache, self.registry))
            except OSError as exc:
                raise RuntimeError(f"cannot listen on {listen}: {exc.strerror or exc}") from None
        self._worker = _Worker(self.exporter, self.cache, path, warn)

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


Environ = dict[str, Any]
StartResponse = Callable[[str, list[tuple[str, str]]], object]


def _temporary(path: Path) -> Path:
    """Where the textfile is written before it is renamed over ``path``."""
    return path.with_name(f".{path.name}.{os.getpid()}")


def _textfile(directory: Path) -> Path:
    """DIR/esatui.prom, once its temporary file could be made: refused at the start (as a
    port in use), not warned about at every interval while the recorder goes on."""
    if not directory.is_dir():
        raise RuntimeError(f"--textfile {directory}: not a directory")
    path = directory / TEXTFILE_NAME
    temporary = _temporary(path)
    try:
        temporary.touch()
        temporary.unlink()
    except OSError as exc:
        raise RuntimeError(
            f"--textfile {directory}: cannot write there ({exc.strerror or exc})"
        ) from None
    return path


class _App:
    """A scrape from the cache; anything else (OPTIONS, a favicon, ``name[]`` filters) as
    prometheus_client's own app answers it."""

    def __init__(self, cache: ExpositionCache, registry: CollectorRegistry) -> None:
        self._cache = cache
        self._library = make_wsgi_app(registry)

    def __call__(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        if (
            environ["REQUEST_METHOD"] != "GET"
            or environ.get("PATH_INFO") == "/favicon.ico"
            or "name[]" in parse_qs(environ.get("QUERY_STRING", ""))
        ):
            answer: Iterable[bytes] = self._library(environ, start_response)
            return answer
        encoder, content_type = exposition.choose_encoder(environ.get("HTTP_ACCEPT", ""))
        gzipped = exposition.gzip_accepted(environ.get("HTTP_ACCEPT_ENCODING", ""))
        body = self._cache.body(content_type, encoder, gzipped)
        headers = [("Content-Type", content_type)]
        if gzipped:
            headers.append(("Content-Encoding", "gzip"))
        start_response("200 OK", headers)
        return [body]


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """A scrape is not news."""


def _serve(listen: Listen, app: _App) -> WSGIServer:
    """The app on prometheus_client's threading server, IPv6 where the address is."""
    family = socket.getaddrinfo(listen.host, listen.port, type=socket.SOCK_STREAM)[0][0]

    class Server(exposition.ThreadingWSGIServer):
        address_family = family

    server = make_server(listen.host, listen.port, app, Server, handler_class=_Quiet)
    threading.Thread(target=server.serve_forever, daemon=True, name="esatui-metrics").start()
    return server


class _Worker:
    """After each pass: the queued intervals into the series (so they never pile up when
    nobody scrapes), and the textfile when asked for."""

    def __init__(
        self,
        exporter: Exporter,
        cache: ExpositionCache,
        path: Path | None,
        warn: Callable[[str], None],
    ) -> None:
        self.path = path
        self.due = threading.Event()
        self._exporter = exporter
        self._cache = cache
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
        temporary = _temporary(path)
        try:
            # the library's text format, with its write_to_textfile's escaping
            body = self._cache.body("textfile", _TEXTFILE_ENCODER)
            temporary.write_bytes(body)
            temporary.replace(path)  # atomic: node_exporter never reads half a file
            self.error = None
        except OSError as exc:
            temporary.unlink(missing_ok=True)
            error = f"textfile {path}: {exc.strerror or exc}"
            if error != self.error:  # said once until it works again
                self._warn(error)
            self.error = error

    def stop(self) -> None:
        self._stopping = True
        self.due.set()
        self._thread.join(timeout=5)
