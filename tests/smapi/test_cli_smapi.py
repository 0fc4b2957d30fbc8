"""Issue 5's checks through the command line, against the loopback SMAPI server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from esatui.cli import main
from esatui.db.sqlite_reader import SqliteReader
from esatui.sim.interfaces.smapi_server import SimCpu, SimLpar
from tests.fakes.smapi_server import SimGuest, SmapiTestServer

PASSWORD = "Zq7-secret-pw"


def guests() -> list[SimGuest]:
    return [
        SimGuest("LNXT01", step_cpu_us=250_000, step_elapsed_us=1_000_000, step_samples=3),
        SimGuest("ZVSE1", step_cpu_us=900_000, step_elapsed_us=1_000_000),
        SimGuest("TCPIP", step_cpu_us=10_000, step_elapsed_us=1_000_000),
    ]


@pytest.fixture
def server() -> SmapiTestServer:
    lpars = [
        SimLpar("LP1", 1, [SimCpu("CP", 40.0), SimCpu("IFL", 70.0), SimCpu("IFL", 60.0)]),
        SimLpar("LP2", 2, [SimCpu("IFL", 99.0)]),
    ]
    return SmapiTestServer(
        userid="ESATUI", password=PASSWORD.encode(), guests=guests(), lpars=lpars, my_lpar="LP1"
    )


def test_usr2_cpu_equals_the_advance_over_measured_durations(
    server: SmapiTestServer,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("ESATUI_SMAPI_PASSWORD", PASSWORD)
    with server:
        code = main(
            [
                "collect",
                "--source",
                f"smapi:127.0.0.1:{server.port}",
                "--smapi-user",
                "esatui",
                "--interval",
                "1",
                "--count",
                "3",
                "--db",
                str(db_path),
            ]
        )
    out, err = capsys.readouterr()
    assert code == 0, err
    with SqliteReader.open(db_path) as reader:
        node = reader.queries.node_id(None)
        assert node is not None
        durations = {i.end_us: i.duration_us for i in reader.queries.intervals(node, ["smapi"])}
    assert len(durations) == 3
    assert main(["export", "ESAUSR2", "--db", str(db_path), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    steps = {g.name: g.step_cpu_us for g in guests()}
    from esatui.timeparse import parse_time

    assert len(rows) == 9
    for row in rows:
        duration = durations[parse_time(row["time"])]
        # one record served per guest per sample: the CPU used advanced by one step
        expected = steps[row["userid"]] * 100 / duration
        assert row["cpu_pct"] == pytest.approx(round(expected, 1), abs=0.051)
    assert main(["export", "ESACPUU", "--db", str(db_path), "--format", "json"]) == 0
    cpuu = json.loads(capsys.readouterr().out)["rows"]
    newest = [r for r in cpuu if r["time"] == cpuu[0]["time"]]
    assert [(r["type"], r["id"], r["total"], r.get("row", "data")) for r in newest] == [
        ("CP", 0, 40.0, "data"),
        ("CP", "Tot", 40.0, "subtotal"),
        ("IFL", 1, 70.0, "data"),
        ("IFL", 2, 60.0, "data"),
        ("IFL", "Tot", 130.0, "subtotal"),
    ]
    # the password is nowhere on disk: not in the database, not in any export
    exports = []
    for screen in ("ESAUSR2", "ESACPUU", "ESASSUM"):
        for fmt in ("text", "csv", "json", "jsonl"):
            target = tmp_path / f"{screen}.{fmt}"
            assert (
                main(
                    [
                        "export",
                        screen,
                        "--db",
                        str(db_path),
                        "--format",
                        fmt,
                        "--output",
                        str(target),
                    ]
                )
                == 0
            )
            exports.append(target)
    for path in [*db_path.parent.glob(db_path.name + "*"), *exports]:
        assert PASSWORD.encode() not in path.read_bytes(), path
    assert PASSWORD not in out + err


def test_a_wrong_password_is_one_line_with_rc_120_and_exit_1(
    server: SmapiTestServer,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ESATUI_SMAPI_PASSWORD", "not-the-password")
    with server:
        code = main(
            [
                "collect",
                "--source",
                f"smapi:127.0.0.1:{server.port}",
                "--smapi-user",
                "esatui",
                "--interval",
                "0.2",
                "--count",
                "2",
                "--db",
                str(db_path),
            ]
        )
    _, err = capsys.readouterr()
    assert code == 1
    lines = [line for line in err.splitlines() if line]
    assert len(lines) == 1, err
    assert "return code 120" in lines[0]
    assert "not-the-password" not in err
    for path in db_path.parent.glob(db_path.name + "*"):
        assert b"not-the-password" not in path.read_bytes()


def test_a_server_that_refuses_leaves_no_database(
    db_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: '1 interval recorded (sources: esatui)', then the error, and a new database
    holding esatui's own rows alone; and the error's reason was "still sampling at the
    end", not the refusal."""
    monkeypatch.setenv("ESATUI_SMAPI_PASSWORD", PASSWORD)
    argv = ["collect", "--source", "smapi:127.0.0.1:1", "--smapi-user", "esatui"]
    # two 2 s intervals: the client's retries (0.5 s, 1 s) give up before the end
    code = main([*argv, "--interval", "2", "--count", "2", "--db", str(db_path)])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert err.splitlines()[-1].startswith("esatui: error: nothing was recorded from smapi")
    assert err.splitlines()[-1].endswith(f"; {db_path} not kept")
    # why: the refusal (retried, so the call was under way at the end), not only that
    assert "refused the connection; still sampling at the end" in err.splitlines()[-1]
    assert list(db_path.parent.glob(db_path.name + "*")) == []


def test_a_password_file_readable_by_others_is_refused(
    db_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "pw"
    secret.write_text(PASSWORD)
    secret.chmod(0o644)
    code = main(
        [
            "collect",
            "--source",
            "smapi:127.0.0.1:9",
            "--smapi-user",
            "esatui",
            "--smapi-password-file",
            str(secret),
            "--count",
            "1",
            "--db",
            str(db_path),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "readable" in err and len(err.strip().splitlines()) == 1
