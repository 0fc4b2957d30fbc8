"""Fault injection at the command line (issue 13 items 1, 10, 12): a SMAPI server that
never answers or dribbles, report files in a directory another user can write to, and the
inputs that hung or spoke Python."""

from __future__ import annotations

import os
import re
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from esatui.cli import main
from esatui.collectors.base import SourceContext
from esatui.collectors.smapi.source import build_source
from tests.fixtures.reading import sql
from tests.fixtures.recording import host_recording
from tests.reliability.figures import record_figure


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A port that takes connections (the kernel's backlog) and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    yield listener.getsockname()[1]
    listener.close()


@pytest.fixture
def dribbling_server() -> Iterator[int]:
    """Answers every connection one byte at a time, five a second, forever."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    done = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            threading.Thread(target=drip, args=(conn,), daemon=True).start()

    def drip(conn: socket.socket) -> None:
        with conn:
            while not done.wait(0.2):
                try:
                    conn.send(b"\x00")
                except OSError:
                    return

    threading.Thread(target=serve, daemon=True).start()
    yield listener.getsockname()[1]
    done.set()
    listener.close()


@pytest.mark.slow
@pytest.mark.parametrize("server", ["silent_server", "dribbling_server"])
def test_a_smapi_server_that_never_answers_holds_nothing_up(
    server: str,
    request: pytest.FixtureRequest,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: host intervals of 91 s and 181 s at --interval 2, and collect --count 2 took
    274 s. Now the host's intervals close on time and the run ends after its two."""
    port = request.getfixturevalue(server)
    monkeypatch.setenv("ESATUI_SMAPI_PASSWORD", "secret")
    smapi = f"smapi:127.0.0.1:{port}"
    args = ["collect", "--db", str(db_path), "--interval", "1", "--count", "2",
            "--source", "host", "--source", smapi, "--smapi-user", "ESATUI"]  # fmt: skip
    code = main(args)
    err = capsys.readouterr().err.splitlines()
    assert code == 1  # smapi recorded nothing
    durations = sql(db_path, "SELECT duration_us FROM interval WHERE source = 'host'")
    assert len(durations) == 2
    # not held up by SMAPI's 30 s read timeout (the first interval is 0.5 to 1.5 long)
    assert all(d < 3_000_000 for (d,) in durations), durations
    late = [line for line in err if "smapi: no sample within 0.5 s" in line]
    assert len(late) == 1, err
    assert err[-1].startswith("esatui: error: nothing was recorded from smapi")
    assert not [line for line in err if "smapi: smapi:" in line or "clear text" in line]
    kind = server.split("_", maxsplit=1)[0]
    record_figure(f"SMAPI {kind}", "2 of 2 host intervals on time, exit 1")


@pytest.mark.slow
def test_a_refused_smapi_connection_is_said_at_its_first_retry(
    db_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the retries (0.5, 1 and 2 s) outlasted a 1-second interval, and the run said
    only that no sample came within 0.5 s, and that nothing was recorded for that reason."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # bound, never listening: connections are refused
        monkeypatch.setenv("ESATUI_SMAPI_PASSWORD", "secret")
        args = ["collect", "--db", str(db_path), "--interval", "1", "--count", "1",
                "--source", "host", "--source", f"smapi:127.0.0.1:{port}",
                "--smapi-user", "ESATUI"]  # fmt: skip
        assert main(args) == 1
    err = capsys.readouterr().err.splitlines()
    refused = f"SMAPI server 127.0.0.1:{port} refused the connection"
    assert f"esatui: smapi: {refused}: trying again in 0.5 s (3 more at most)" in err
    assert err[-1].startswith(f"esatui: error: nothing was recorded from smapi ({refused}")


def test_the_password_in_clear_text_to_another_host_is_said_once() -> None:
    said: list[str] = []
    ctx = SourceContext(warn=said.append)
    env = {"ESATUI_SMAPI_PASSWORD": "secret"}
    for host in ("127.0.0.1", "localhost", "[::1]"):
        build_source(f"smapi:{host}", user="ESATUI", environ=env, ctx=ctx)
    assert said == []
    build_source("smapi:192.0.2.1", user="ESATUI", environ=env, ctx=ctx)
    assert len(said) == 1 and "clear text" in said[0] and "--smapi-tls" in said[0]
    assert said[0].startswith("smapi: the SMAPI password goes to 192.0.2.1")


def test_a_non_ascii_smapi_user_is_refused_up_front(capsys: pytest.CaptureFixture[str]) -> None:
    """Before: every sample was skipped with a codec message, and the run exited 0."""
    code = main(["collect", "--source", "smapi:127.0.0.1", "--smapi-user", "BÄR", "--count", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "is not a z/VM userid" in err[0]


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_password_file_that_is_a_fifo_or_a_directory_is_one_line(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a FIFO hung the command; a directory gave Python's own words."""
    path = tmp_path / "pw"
    if kind == "fifo":
        os.mkfifo(path, 0o600)
    else:
        path.mkdir(mode=0o700)
    code = main(["collect", "--source", "smapi:127.0.0.1", "--smapi-user", "ESATUI",
                 "--smapi-password-file", str(path), "--count", "1"])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "is not a regular file" in err[0]


# --- export --output ----------------------------------------------------------------------


@pytest.fixture
def recorded(db_path: Path) -> Path:
    host_recording(db_path, n_intervals=5)
    return db_path


def _export(db: Path, output: Path | str) -> int:
    return main(["export", "ESALNXC", "--db", str(db), "--output", str(output)])


def test_a_link_planted_at_the_old_temporary_name_is_not_followed(
    recorded: Path, tmp_path: Path
) -> None:
    """Before: another user's symlink at .report.txt.esatui-tmp made the export overwrite
    whatever it pointed to."""
    shared = tmp_path / "shared"
    shared.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (shared / ".report.txt.esatui-tmp").symlink_to(victim)
    assert _export(recorded, shared / "report.txt") == 0
    assert victim.read_text() == "precious"
    assert "ESALNXC" in (shared / "report.txt").read_text()


def _stat(mode: int, uid: int) -> os.stat_result:
    return os.stat_result((mode, 0, 0, 1, uid, 0, 0, 0, 0, 0))


@pytest.mark.parametrize(
    ("dir_mode", "dir_uid", "link_uid", "follows"),
    [
        (0o40755, 1000, 2000, True),  # a private directory: anyone's link is followed
        (0o41777, 0, 1000, True),  # /tmp: the user's own link
        (0o41777, 0, 0, True),  # /tmp: the directory owner's
        (0o41777, 0, 2000, False),  # /tmp: a stranger's, maybe planted
        (0o40777, 0, 2000, True),  # anyone may write, but not sticky: as the kernel does
    ],
)
def test_a_link_is_followed_unless_a_stranger_could_have_planted_it(
    dir_mode: int, dir_uid: int, link_uid: int, follows: bool
) -> None:
    from esatui.commands.output import may_follow

    link = _stat(0o120777, link_uid)
    assert may_follow(link, _stat(dir_mode, dir_uid), 1000) is follows


@pytest.mark.skipif(os.geteuid() != 0, reason="planting another user's link needs root")
def test_a_link_planted_at_the_final_name_is_replaced_not_followed(
    recorded: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    victim = tmp_path / "victim"
    victim.write_text("precious")
    report = shared / "report.txt"
    report.symlink_to(victim)
    os.lchown(report, 65534, 65534)  # a stranger's (nobody's) link in a shared directory
    assert _export(recorded, report) == 0
    assert victim.read_text() == "precious"
    assert not report.is_symlink() and "ESALNXC" in report.read_text()
    assert not [p for p in shared.iterdir() if p.name.endswith(".esatui-tmp")]


def test_a_users_own_link_is_written_through(recorded: Path, tmp_path: Path) -> None:
    """Before: the link was replaced by a file and the file it named left as it was."""
    reports = tmp_path / "reports"
    reports.mkdir()
    named = reports / "monday.txt"
    named.write_text("old")
    named.chmod(0o640)
    latest = tmp_path / "latest.txt"
    latest.symlink_to(named)
    assert _export(recorded, latest) == 0
    assert latest.is_symlink() and "ESALNXC" in named.read_text()
    assert named.stat().st_mode & 0o777 == 0o640
    dangling = tmp_path / "next.txt"
    dangling.symlink_to(reports / "tuesday.txt")
    assert _export(recorded, dangling) == 0
    assert dangling.is_symlink() and "ESALNXC" in (reports / "tuesday.txt").read_text()


def test_a_pipe_is_written_into_not_replaced(recorded: Path, tmp_path: Path) -> None:
    """Before: a FIFO (and a device: /dev/null) was replaced by a regular file."""
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    assert _export(recorded, fifo) == 0
    reader.join(timeout=30)
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and b"ESALNXC" in got[0]
    held = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # a reader for the pipe, as a shell's
    try:
        stdout = tmp_path / "stdout"
        stdout.symlink_to(f"/proc/self/fd/{held}")  # as /dev/stdout is
        assert _export(recorded, stdout) == 0
        assert stdout.is_symlink() and b"ESALNXC" in os.read(held, 1 << 16)
    finally:
        os.close(held)


def test_a_device_that_refuses_the_report_is_one_line(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _export(recorded, "/dev/full") == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["esatui: error: cannot write /dev/full: No space left on device"]
    assert stat.S_ISCHR(Path("/dev/full").lstat().st_mode)


@pytest.mark.parametrize("where", ["/nonexistent/dir/x.txt", "/"])
def test_an_output_that_cannot_be_a_file_is_one_line(
    where: str, recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a raw errno and the temporary file's name."""
    code = _export(recorded, where)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1
    assert "esatui-tmp" not in err[0] and "Errno" not in err[0]
    assert ("does not exist" in err[0]) if where != "/" else ("is a directory" in err[0])


@pytest.mark.parametrize(
    ("command", "named"),
    [
        (["export", "ESALNXC", "--format", "csv"], "{db}"),
        (["export", "ESALNXC", "--format", "svg", "--column", "total"], "{link}"),
        (["export", "ESALNXC"], "{db}-wal"),
        (["compare", "ESALNXC", "--with-from", "2020-01-01 00:00"], "{hard}"),
    ],
)
def test_a_report_never_replaces_the_database_it_reads(
    command: list[str], named: str, recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the export replaced the recording with its CSV, exit 0."""
    link, hard = recorded.with_name("link.sqlite"), recorded.with_name("hard.sqlite")
    link.symlink_to(recorded)
    hard.hardlink_to(recorded)
    before = recorded.read_bytes()
    output = named.format(db=recorded, link=link, hard=hard)
    assert main([*command, "--db", str(recorded), "--output", output]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the report is read from" in err[0]
    assert recorded.read_bytes() == before
    if output.endswith("-wal"):
        assert not Path(output).exists()  # no report for SQLite to read as the log


def test_a_report_keeps_the_mode_of_the_file_it_replaces(recorded: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.txt"
    report.write_text("old")
    report.chmod(0o640)
    assert _export(recorded, report) == 0
    assert report.stat().st_mode & 0o777 == 0o640


INTERRUPTED_WRITE = """
import os, signal, sys
from pathlib import Path
from esatui.commands.output import OutputError, write_report_with

def write(out):
    out.write("half a report\\n")
    out.flush()
    os.kill(os.getpid(), signal.Signals[sys.argv[2]])
    out.write("the rest\\n")

try:
    write_report_with(Path(sys.argv[1]), write)
except OutputError as exc:
    print(exc)
"""


@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_report_a_signal_interrupts_leaves_no_temporary_file(
    signal_name: str, tmp_path: Path
) -> None:
    """Before: SIGTERM or SIGHUP (a kill, the terminal closed) during ``--output`` ended the
    process as it stood, leaving the half-written ``.NAME.XXXX.esatui-tmp`` beside the
    report. Run in a process of its own: without the fix the signal kills it."""
    report = tmp_path / "report.txt"
    report.write_text("the last report\n")
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_WRITE, str(report), signal_name],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"{report} not written: interrupted by {signal_name}\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.txt"]
    assert report.read_text() == "the last report\n"


@pytest.mark.parametrize("command", [["live", "--no-record"], ["replay"], ["demo"]])
def test_the_monitor_without_a_terminal_is_one_line_and_makes_nothing(
    command: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before: with stdin from /dev/null the monitor's input driver spun on the end of its
    input, a whole CPU, drawing on nothing (pytest's stdin is not a terminal either)."""
    monkeypatch.delenv("TEXTUAL_DRIVER", raising=False)  # the browser's driver draws
    db = tmp_path / "run.sqlite"
    if command == ["replay"]:
        host_recording(db, n_intervals=2)
    made = sorted(tmp_path.iterdir())
    assert main([*command, "--db", str(db)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "draws its screens on a terminal" in err[0]
    assert sorted(tmp_path.iterdir()) == made


@pytest.mark.parametrize("how", ["file", "link"])
def test_a_report_never_replaces_another_sqlite_database(
    how: str, recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: --output naming another recording replaced it with the report, exit 0."""
    other = tmp_path / "other.sqlite"
    host_recording(other, n_intervals=2)
    before = other.read_bytes()
    target = other if how == "file" else tmp_path / "latest"
    if how == "link":
        target.symlink_to(other)
    assert _export(recorded, target) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"esatui: error: --output {other} is an SQLite database: a report does not replace "
        "it; give another file name (or remove it first)"
    ]
    assert other.read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".esatui-tmp")]


@pytest.mark.parametrize(
    ("where", "said"),
    [
        (
            "/proc/version",
            "cannot write /proc/version: no new file can be made in /proc (No such file or "
            "directory); give a file in another directory",
        ),
        (
            "/tmp/" + "a" * 300,
            "cannot write --output /tmp/" + "a" * 35 + "...: the name is too long (305 "
            "characters; a file name is at most 255 bytes)",
        ),
    ],
)
def test_an_output_where_no_file_can_be_made_is_one_clear_line(
    where: str, said: str, recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: "cannot write in /proc: No such file or directory" and "[Errno 36] File name
    too long: ..." (the whole name)."""
    assert _export(recorded, where) == 1
    assert capsys.readouterr().err.strip().splitlines() == [f"esatui: error: {said}"]


def test_compare_with_a_missing_database_says_so(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: "both runs are labelled 'x'" for --with-db /nonexist/x.sqlite."""
    missing = tmp_path / "nonexist" / recorded.name
    argv = ["compare", "ESALNXC", "--db", str(recorded), "--with-db", str(missing)]
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"esatui: error: no database at {missing}"]


def test_a_prometheus_url_that_is_no_url_is_one_clear_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: "argument --prometheus: invalid prometheus_url value: 'http://[::1'"."""
    assert main(["export", "ESALNXC", "--prometheus", "http://[::1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == (
        "esatui: error: argument --prometheus: 'http://[::1' is no URL (Invalid IPv6 URL): "
        "give the server's http:// or https:// URL (http://prometheus:9090)"
    )


@pytest.mark.slow
def test_an_interval_the_store_refuses_is_said_with_its_source_and_time(
    db_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found from outside (a recording whose index was damaged): each interval was said as
    'interval ending 1795903715000000 not written: ...', and the run ended with 'nothing
    was recorded from host (no interval ended)'."""
    import sqlite3

    from esatui.db.store import Store

    def refused(self: Store, intervals: object) -> object:
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(Store, "write_all", refused)
    args = ["collect", "--db", str(db_path), "--interval", "1", "--count", "1", "--source", "host"]
    assert main(args) == 1
    err = capsys.readouterr().err.splitlines()
    said = [line for line in err[:-1] if "not written" in line]
    assert said and all(
        re.fullmatch(
            r"esatui: (host|esatui): interval ending \d{4}-\d\d-\d\d \d\d:\d\d:\d\d not "
            r"written: database disk image is malformed",
            line,
        )
        for line in said
    ), said
    assert err[-1].startswith("esatui: error: nothing was recorded from host (interval ending ")
