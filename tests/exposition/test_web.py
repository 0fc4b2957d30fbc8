"""The screens in a real browser: ``esatui serve --web`` loaded by headless Chromium.

The distribution's ``chromium`` (installed by ``make test``: .ci/system-deps; this test
fails, never skips, without it) opens the page through the DevTools protocol (aiohttp's
WebSocket client, which textual-serve brings). The terminal draws on a canvas, so the test
reads what the page was sent: it waits for the screen's name in the frames the page's
WebSocket receives from the server, then until a screenshot of the page is not blank (the
canvas drew), and keeps that screenshot.
"""

from __future__ import annotations

import asyncio
import base64
import shutil
import socket
import struct
import subprocess
import sys
import time
import urllib.request
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.exposition.test_prometheus import free_port, wait_until

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1280,800",
)
pytestmark = pytest.mark.slow


def chromium_binary() -> str:
    found = shutil.which("chromium")
    if found is None:
        pytest.fail(
            "chromium is not installed: `make test` installs it (.ci/system-deps, as root: "
            "apt-get install -y --no-install-recommends chromium)"
        )
    return found


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """A short simulated recording, served read-only; the page's URL."""
    db = tmp_path / "sim.sqlite"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "esatui",
            "sim",
            "--scenario",
            "mode-vm-day",
            "--duration",
            "5m",
            "--db",
            str(db),
        ],
        check=True,
        capture_output=True,
    )
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "esatui", "serve", "--web", f"127.0.0.1:{port}", "--db", str(db)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_until(lambda: urllib.request.urlopen(url, timeout=2).status == 200, 30, "the server")
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


def png_colours(png: bytes) -> int:
    """How many different colours an 8-bit RGB(A) PNG holds (every eighth scanline is plenty
    to tell a blank page)."""
    return len(png_pixels(png, every=8))


def png_pixels(png: bytes, every: int = 1) -> set[bytes]:
    """The RGB colours of an 8-bit RGB(A) PNG's pixels, of every ``every``-th scanline (its
    scanlines unfiltered)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos : pos + 8])
        data = png[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", data[:10])
            assert depth == 8 and colour in (2, 6)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += data
        pos += 12 + length
    raw, stride = zlib.decompress(idat), width * channels
    previous, seen = bytearray(stride), set[bytes]()
    for y in range(height):
        kind, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b, c = previous[x], previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + a) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + b) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        if y % every == 0:
            seen.update(bytes(line[i : i + 3]) for i in range(0, stride, channels))
        previous = line
    return seen


async def browse(devtools: str, url: str, screen: str, timeout_s: float) -> tuple[bytes, str]:
    """Open ``url``, wait for ``screen`` in what the page's WebSocket receives and for a
    screenshot that is not blank; the screenshot and the text received."""
    import aiohttp

    async with aiohttp.ClientSession() as session:
        async with session.put(f"{devtools}/json/new?about:blank") as answer:
            target = await answer.json()
        ws = await session.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0)
        ids = iter(range(1, 1_000_000))
        received: list[str] = []

        async def call(method: str, **params: Any) -> dict[str, Any]:
            mid = next(ids)
            await ws.send_json({"id": mid, "method": method, "params": params})
            while True:
                message: dict[str, Any] = await ws.receive_json()
                if message.get("method") == "Network.webSocketFrameReceived":
                    frame = message["params"]["response"]
                    payload = frame["payloadData"]
                    if frame.get("opcode") == 2:
                        payload = base64.b64decode(payload).decode("utf-8", "replace")
                    received.append(payload)
                if message.get("id") == mid:
                    return message

        await call("Network.enable")
        await call("Page.navigate", url=url)
        deadline = time.monotonic() + timeout_s
        while screen not in "".join(received):
            assert time.monotonic() < deadline, f"{screen} never reached the page"
            await call("Runtime.evaluate", expression="1")  # lets the frames come in
            await asyncio.sleep(0.2)
        while True:
            shot = await call("Page.captureScreenshot", format="png")
            png = base64.b64decode(shot["result"]["data"])
            if png_colours(png) > 2:
                return png, "".join(received)
            assert time.monotonic() < deadline, "the page stayed blank"
            await asyncio.sleep(0.5)


def test_a_browser_shows_the_screens(served: str, tmp_path: Path) -> None:
    binary = chromium_binary()
    port = free_port()
    profile = tmp_path / "chromium-profile"
    profile.mkdir()
    browser = subprocess.Popen(
        [
            binary,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            f"--remote-debugging-port={port}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    devtools = f"http://127.0.0.1:{port}"
    try:
        wait_until(
            lambda: urllib.request.urlopen(f"{devtools}/json/version", timeout=2).status == 200,
            60,
            "Chromium's DevTools",
        )
        png, text = asyncio.run(browse(devtools, served, "ESASSUM", 90))
    finally:
        browser.terminate()
        try:
            browser.wait(timeout=10)
        except subprocess.TimeoutExpired:
            browser.kill()
    (tmp_path / "esassum.png").write_bytes(png)
    assert "System Summary" in text
    assert png_colours(png) > 4  # the table's colours on the background


def test_the_server_runs_a_viewer_only(tmp_path: Path) -> None:
    """Each browser connection runs ``esatui replay``: nothing that records or changes."""
    import shlex

    from esatui.cli import build_parser
    from esatui.commands.serve import viewer_command

    db = tmp_path / "x.sqlite"
    db.write_bytes(b"")
    args = build_parser().parse_args(["serve", "--web", "9999", "--db", str(db), "--follow"])
    assert args.web == ("127.0.0.1", 9999)  # loopback unless told otherwise
    argv = shlex.split(viewer_command(args))
    assert argv[1:4] == ["-m", "esatui", "replay"] and "--follow" in argv
    args = build_parser().parse_args(["serve", "--web", "0.0.0.0:80", "--prometheus", "http://p"])
    assert shlex.split(viewer_command(args))[3:] == [
        "replay",
        "--screen",
        "ESASSUM",
        "--prometheus",
        "http://p",
    ]
    args = build_parser().parse_args(["serve", "--web", "80", "--db", str(tmp_path / "none")])
    with pytest.raises(RuntimeError, match="no such database"):
        viewer_command(args)


def test_a_file_that_is_no_database_is_refused_before_serving(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the server started, and each browser got the viewer's error."""
    from esatui.cli import main

    notes = tmp_path / "notes.sqlite"
    notes.write_text("not a database\n" * 100)
    assert main(["serve", "--web", "65000", "--db", str(notes)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a usable esatui database" in err[0], err


def test_a_port_in_use_is_one_line_and_no_serving_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: 'serving the monitor at ...', then the address already in use."""
    from esatui.cli import main
    from tests.fixtures.recording import host_recording

    db = tmp_path / "run.sqlite"
    host_recording(db, n_intervals=2)
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert main(["serve", "--web", str(port), "--db", str(db)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"esatui: error: cannot serve at 127.0.0.1:{port}: Address already in use"]
