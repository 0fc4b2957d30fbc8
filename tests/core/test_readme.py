"""Every example command of the README runs as written (issue 15), in order, against a
simulated recording in the default database.

The commands are taken from the README's code blocks: each line that starts with ``esatui``
or ``cp``, its trailing ``# comment`` dropped. ``a|b|c`` inside a word, and ``esatui db info |
prune ... | vacuum``, are alternatives: each is run. A ``| sed``/``| head`` is a shell pipe.
Commands that start the monitor (``esatui``, ``live``, ``replay``) run in this process with
the app headless, which quits once its first screen is drawn; every other command runs in a
shell as a user types it, with this venv's ``esatui`` on the PATH. ``make`` lines are not run
(``make test`` is this suite; ``make run`` and ``make demo`` are ``esatui live``). Blocks
fenced ```` ```sh server ```` serve until stopped or need a Prometheus server (``--listen``,
``--textfile``, ``--prometheus URL``, ``serve --web``): tests/exposition runs those against a
real Prometheus and a real browser; this test checks that every such block says so.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from esatui.cli import main
from esatui.tui.app import MonitorApp
from esatui.tui.pilot import settle
from tests.monitor.fixtures import seed000_intervals, write_monwrite

ROOT = Path(__file__).resolve().parents[2]
SHELL_TOOLS = frozenset({"sed", "head", "tail", "grep", "less", "wc"})
MONITOR_COMMANDS = frozenset({"live", "replay"})
RUN = MonitorApp.run


def readme_commands(text: str) -> list[str]:
    """The README's example commands, in order, alternatives expanded."""
    commands: list[str] = []
    for info, block in re.findall(r"^```([^\n]*)\n(.*?)^```", text, flags=re.S | re.M):
        if "server" in info.split():
            continue
        for raw in block.splitlines():
            line = re.split(r"\s{2,}#|\s#\s", raw)[0].strip()
            if line.startswith(("esatui", "cp ")):
                commands += expand(line)
    return commands


def expand(line: str) -> list[str]:
    segments = line.split(" | ")
    pipe = ""
    while len(segments) > 1 and segments[-1].split()[0] in SHELL_TOOLS:
        pipe = " | " + segments.pop() + pipe
    if len(segments) > 1:  # `esatui db info | prune ... | vacuum`
        words = segments[0].split()
        prefix, first = " ".join(words[:-1]), words[-1]
        lines = [f"{prefix} {first}", *(f"{prefix} {s}" for s in segments[1:])]
    else:
        lines = segments
    out: list[str] = []
    for one in lines:
        words = one.split(" ")
        alternatives = [i for i, w in enumerate(words) if "|" in w]
        if not alternatives:
            out.append(one + pipe)
            continue
        i = alternatives[0]
        for choice in words[i].split("|"):
            out += expand(" ".join([*words[:i], choice, *words[i + 1 :]]) + pipe)
    return out


SERVING = ("--listen", "--textfile", "--prometheus", "serve --web")


def test_only_server_blocks_are_left_out() -> None:
    """A command that serves or needs a Prometheus server is in a ``server`` block, and a
    ``server`` block holds nothing else that could run here."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert not [c for c in readme_commands(text) if any(s in c for s in SERVING)]
    for info, block in re.findall(r"^```([^\n]*)\n(.*?)^```", text, flags=re.S | re.M):
        if "server" in info.split():
            commands = [ln for ln in block.splitlines() if ln.startswith("esatui")]
            assert all(any(s in c for s in SERVING) for c in commands), block


def test_the_extraction_finds_the_alternatives() -> None:
    assert expand("esatui db info | prune --keep 30d | vacuum") == [
        "esatui db info",
        "esatui db prune --keep 30d",
        "esatui db vacuum",
    ]
    assert expand("esatui export X --format text|csv") == [
        "esatui export X --format text",
        "esatui export X --format csv",
    ]
    assert expand("esatui export X | sed -n 4,9p") == ["esatui export X | sed -n 4,9p"]


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A new user's home and working directory: the default database holds a simulated
    recording of today 13:55 to 15:05, the directory a MONWRITE file and the repository's
    test data (the README's commands name ``tests/data/...``)."""
    home = tmp_path / "home"
    work = tmp_path / "work"
    work.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.delenv("ESATUI_DB", raising=False)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(work)
    (work / "tests").symlink_to(ROOT / "tests")
    write_monwrite(work / "MONDCSS.MONWRITE", seed000_intervals())
    data = home / ".local" / "share" / "esatui"
    data.mkdir(mode=0o700, parents=True)
    today = time.strftime("%Y-%m-%d")
    sim = ["sim", "--scenario", "mode-vm-day", "--start", f"{today} 13:55", "--duration", "70m"]
    assert main([*sim, "--interval", "5m", "--db", str(data / "esatui.sqlite")]) == 0
    for n in (1, 2, 3):  # the recordings the "Many systems" section merges
        short = ["sim", "--scenario", "mode-vm-day", "--start", f"{today} 1{n}:00"]
        assert main([*short, "--duration", "10m", "--db", str(work / f"lnx0{n}.sqlite")]) == 0
    yield work


def run_monitor(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``esatui ...`` that starts the monitor: its first screen's header, then q."""
    drawn: list[str] = []

    async def look_and_quit(pilot: Any) -> None:
        await settle(pilot)
        drawn.extend(pilot.app.header.text_lines)
        await pilot.press("q")

    def headless(self: MonitorApp, **_: object) -> Any:
        return RUN(self, headless=True, size=(80, 24), auto_pilot=look_and_quit)

    monkeypatch.setattr(MonitorApp, "run", headless)
    monkeypatch.setattr("esatui.commands.common.on_a_terminal", lambda: True)
    assert main(argv) == 0, argv
    return drawn


def test_every_readme_example_runs_as_written(
    user_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    commands = readme_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(commands) >= 20  # the extraction found the examples
    ran: list[str] = []
    for command in commands:
        argv = shlex.split(command)[1:]
        if command.startswith("esatui") and (not argv or argv[0] in MONITOR_COMMANDS):
            header = run_monitor(argv, monkeypatch)
            assert header and header[0].startswith("Screen: ESASSUM"), (
                command,
                header,
                capsys.readouterr(),
            )
        else:
            done = subprocess.run(
                command, shell=True, capture_output=True, text=True, timeout=120, check=False
            )
            assert done.returncode == 0, (command, done.stderr)
            assert "Traceback" not in done.stderr, (command, done.stderr)
            if "export" in command and "--output" not in command:
                assert done.stdout.strip(), command  # a screen, a table or rows
        ran.append(command)
        capsys.readouterr()
    assert any("sim --scenario" in c for c in ran) and any("monwrite:" in c for c in ran)
    assert (user_home / "cpu.txt").read_text(encoding="utf-8").startswith("Screen: ESACPUU")


def test_the_what_if_comparison_is_what_compare_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's polling what-if shows ESAPOLL's comparison as the commands above it print
    it (before: its units were written ``us`` where the text says ``µs``)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("Screen: ESAPOLL esatui")
    shown = text[start : text.index("```", start)]
    sim = ["sim", "--scenario", "seed002-t3-polling", "--duration", "10m"]
    default, poll50 = tmp_path / "default.sqlite", tmp_path / "poll50.sqlite"
    assert main([*sim, "--db", str(default)]) == 0
    assert main([*sim, "--set", "poll_timeout_us=50", "--db", str(poll50)]) == 0
    capsys.readouterr()
    argv = ["compare", "ESAPOLL", "--db", str(default), "--with-db", str(poll50)]
    assert main([*argv, "--label", "default", "--with-label", "poll 50 µs"]) == 0
    printed = capsys.readouterr().out
    assert printed.replace(str(tmp_path) + "/", "") == shown
