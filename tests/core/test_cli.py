"""The command line as a user runs it: exit codes, one-line errors, the Done-when checks."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from esatui.cli import main
from esatui.db.schema import READY_VALUE
from esatui.sim.interfaces.procfs import ProcStat
from tests.conftest import DATA
from tests.fixtures.recording import START_US, host_recording


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == "esatui 0.1.0"


def test_collect_then_export_on_this_machine(
    capsys: pytest.CaptureFixture[str], db_path: Path
) -> None:
    """The issue's check: per CPU and interval, total = user + nice + syst + irq + sirq and
    total + iowait + idle + steal = 100 within rounding, the same in every format."""
    code, out, err = run(
        capsys, "collect", "--interval", "0.3", "--count", "3", "--db", str(db_path)
    )
    assert code == 0, err
    assert out.startswith("3 intervals recorded (sources: host, esatui) in ")
    code, out, err = run(capsys, "export", "ESALNXC", "--db", str(db_path), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    cpus = [r for r in doc["rows"] if r["row"] == "data"]
    assert len({r["time"] for r in cpus}) == 3
    for r in cpus:
        assert r["total"] == pytest.approx(
            r["user"] + r["nice"] + r["syst"] + r["irq"] + r["sirq"], abs=0.26
        )
        assert r["total"] + r["iowait"] + r["idle"] + r["steal"] == pytest.approx(100, abs=0.21)
    _, csv_out, _ = run(capsys, "export", "ESALNXC", "--db", str(db_path), "--format", "csv")
    _, text_out, _ = run(capsys, "export", "ESALNXC", "--db", str(db_path))
    for r, line in zip(
        cpus, [ln for ln in csv_out.splitlines()[1:] if ",data," in ln], strict=True
    ):
        assert float(line.split(",")[3]) == r["total"]  # full precision in both
        assert f"{r['total']:.1f}" in text_out or r["total"] == 0


def test_collect_below_a_root(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, db_path: Path
) -> None:
    root = tmp_path / "root"
    shutil.copytree(DATA / "host/trees/util-linux-s390-zvm", root)
    ProcStat(root, [0, 1, 2, 3]).write()
    code, _, err = run(
        capsys,
        "collect",
        "--root",
        str(root),
        "--interval",
        "0.2",
        "--count",
        "1",
        "--db",
        str(db_path),
    )
    assert code == 0, err
    code, out, _ = run(capsys, "export", "ESALNXC", "--db", str(db_path))
    assert code == 0
    assert "R1745003" in out.splitlines()[0]  # node: the VM00 name
    assert "2817 R17LP45" in out.splitlines()[1]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["export", "ESANOPE"], "no screen 'ESANOPE'"),
        (["export", "ESALNXC", "--format", "xml"], "invalid choice"),
        (["export", "ESALNXC", "--from", "tomorrowish"], "is not a time"),
        (["collect", "--interval", "0"], "more than zero"),
        (["export", "ESALNXC", "--interval-len", "-5m"], "'-5m': a duration must be more than"),
        (["export", "ESALNXC", "--prometheus", "prom:9090"], "give the server's http:// or"),
        (["collect", "--interval", "abc"], "is not a duration"),
        (["export", "ESALNXC", "--from", "14:00", "--to", "13:00"], "--from must be before --to"),
        (["db", "prune"], "needs --keep"),
        (["frobnicate"], "invalid choice"),
        (["collect", "--source", "monwrite"], "monwrite needs a file"),  # the registry's
        (["export", "ESALNXC", "--prometheus", "http://127.0.0.1:9"], "give one"),
        (["collect", "--root", "/nonexistent/root"], "'/nonexistent/root': no such directory"),
        (["sources", "--root", "/nonexistent/root"], "'/nonexistent/root': no such directory"),
        # before: "no such directory" for a file that exists (a captured /proc/sysinfo given
        # as the root), and "" taken as the current directory
        (["collect", "--root", "/proc/cpuinfo"], "'/proc/cpuinfo': not a directory"),
        (["sources", "--root", ""], "--root: an empty name: give a directory"),
        (["live", "--prometheus", "http://127.0.0.1:9"], "no --db, --source"),
        # before: an SQLite overflow, exit 1, or an export that never ended
        (["export", "ESALNXC", "--from", "99999999999d ago"], "at most 36525d (a century)"),
        (["db", "prune", "--keep", "9999999999d", "--dry-run"], "at most 36525d (a century)"),
        (["export", "ESALNXC", "--interval-len", "999d"], "must be at most 366d"),
        (["export", "ESALNXC", "--from", "1969-12-31 23:00"], "between 1970 and 9999"),
        (["export", "ESALNXC", "--from", "0001-01-01 00:00"], "between 1970 and 9999"),
        (["export", "ESALNXC", "--interval-len", "1M"], "m is minutes"),  # before: a minute
        (["export", "ESALNXC", "--threshold", "steal=-1,5"], "the levels are 0 or more"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], db_path: Path, argv: list[str], message: str
) -> None:
    host_recording(db_path, n_intervals=2)
    code, _, err = run(capsys, *argv, *(["--db", str(db_path)] if argv[0] != "frobnicate" else []))
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


@pytest.mark.parametrize("command", [["db", "vacuum"], ["db", "prune", "--keep", "1d"]])
def test_maintenance_of_an_empty_or_foreign_file_changes_nothing(
    command: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Before: an empty file became an esatui database (86 KB), and a file that is no
    database got a lock file beside it."""
    for name, content in (("empty.sqlite", b""), ("text.sqlite", b"text")):
        db = tmp_path / name
        db.write_bytes(content)
        code, _, err = run(capsys, *command, "--db", str(db))
        assert code == 1 and len(err.splitlines()) == 1
        assert ("is empty" if not content else "not a usable esatui database") in err
        assert db.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.sqlite", "text.sqlite"]


def test_a_screen_of_one_of_several_nodes_says_which_without_node(
    capsys: pytest.CaptureFixture[str], db_path: Path
) -> None:
    """Before: the node written last, silently (only the header named it)."""
    from tests.fixtures.recording import CONFIG

    host_recording(db_path, n_intervals=2)
    host_recording(
        db_path,
        n_intervals=2,
        start_us=START_US + 3_600_000_000,
        config={**CONFIG, "node": "LNX02"},
    )
    code, _, err = run(capsys, "export", "ESALNXC", "--db", str(db_path))
    assert code == 0
    assert err == (
        f"esatui: 2 nodes recorded ({', '.join(sorted([CONFIG['node'], 'LNX02']))}): "
        "showing LNX02, the one written "
        "last; --node NAME for another\n"
    )
    for argv in (["--node", "LNX02"], ["--format", "plot", "--column", "total", "--node", "LNX02"]):
        code, _, err = run(capsys, "export", "ESALNXC", "--db", str(db_path), *argv)
        assert code == 0 and err == ""
    code, _, err = run(capsys, "export", "ESANODE", "--db", str(db_path))
    assert code == 0 and err == ""  # every node's


def test_other_errors_exit_1_with_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, db_path: Path
) -> None:
    code, _, err = run(capsys, "export", "ESALNXC", "--db", str(tmp_path / "missing.sqlite"))
    assert code == 1 and "no database at" in err and len(err.splitlines()) == 1
    (tmp_path / "junk.sqlite").write_text("junk" * 1000)
    code, _, err = run(capsys, "export", "ESALNXC", "--db", str(tmp_path / "junk.sqlite"))
    assert code == 1 and "not a usable esatui database" in err
    host_recording(db_path, n_intervals=2)
    code, _, err = run(
        capsys, "export", "ESALNXC", "--db", str(db_path), "--to", "2020-01-01 00:00"
    )
    assert code == 1 and (
        "ESALNXC: recorded 11/21/2026 14:00-14:02; nothing up to 01/01/2020 00:00." in err
    )
    code, _, err = run(capsys, "export", "ESALNXC", "--db", str(db_path), "--node", "OTHER")
    assert code == 1 and "no data for node 'OTHER'" in err


def test_export_options(capsys: pytest.CaptureFixture[str], db_path: Path, tmp_path: Path) -> None:
    host_recording(db_path, n_intervals=3)
    out_file = tmp_path / "report.csv"
    code, out, _ = run(
        capsys,
        "export",
        "ESALNXC",
        "--db",
        str(db_path),
        "--format",
        "csv",
        "--order",
        "asc",
        "--output",
        str(out_file),
    )
    assert code == 0 and out == ""
    lines = out_file.read_text().splitlines()
    times = [ln.split(",")[0] for ln in lines[1:]]
    assert times == sorted(times)
    assert lines[2].split(",")[2] == "1"  # each interval's rows keep their order
    code, out, _ = run(
        capsys,
        "export",
        "ESALNXC",
        "--db",
        str(db_path),
        "--from",
        "2026-11-21 14:01",
        "--to",
        "2026-11-21T14:02",
        "--format",
        "jsonl",
    )
    assert {json.loads(ln)["time"] for ln in out.splitlines()} == {"2026-11-21T14:02:00+00:00"}
    code, out, _ = run(capsys, "export", "ESASSUM", "--db", str(db_path), "--width", "40")
    assert "ESASSUM 1/" in out and "ESASSUM 2/" in out  # horizontal pages, one after another
    # the title lines fold where their two ends do not fit (they ran to 60 columns)
    assert max(len(line) for line in out.splitlines()) <= 40
    assert any(line.lstrip().startswith("11/21") for line in out.splitlines())  # the range
    code, out, _ = run(
        capsys,
        "export",
        "ESALNXC",
        "--db",
        str(db_path),
        "--interval-len",
        "1h",
        "--format",
        "json",
    )
    assert json.loads(out)["interval_len_s"] == 3600
    # as recorded: the recording's own length (outside check: it was null, SPEC section 6
    # names the key), streamed or built whole (--stats-less ESANODE is built whole)
    for screen in ("ESALNXC", "ESANODE"):
        code, out, _ = run(capsys, "export", screen, "--db", str(db_path), "--format", "json")
        assert json.loads(out)["interval_len_s"] == 60.0, screen
    code, out, _ = run(
        capsys, "export", "ESALNXC", "--db", str(db_path), "--threshold", "steal=1,2"
    )
    assert "!" in out


def test_screens_names_the_screens_to_list(capsys: pytest.CaptureFixture[str]) -> None:
    """``esatui screens poll`` lists ESAPOLL alone, named as export names screens; before,
    any name was refused ('unrecognized arguments')."""
    code, out, _ = run(capsys, "screens", "poll")
    assert code == 0 and out.startswith("ESAPOLL ") and "ESALNXC" not in out
    assert "[µs]" in out and "[us]" not in out  # as the screen's headers write it
    code, out, _ = run(capsys, "screens", "lnxc", "ESACPUU", "lnxc", "--format", "json")
    assert [s["name"] for s in json.loads(out)] == ["ESALNXC", "ESACPUU"]
    code, out, _ = run(capsys, "screens", "poll", "--format", "json")
    assert {c["unit"] for c in json.loads(out)[0]["columns"]} >= {"us"}  # data: ASCII
    code, out, err = run(capsys, "screens", "nosuch")
    assert code == 2 and not out and err.startswith("esatui: error: no screen 'nosuch'")


def test_screens_sources_and_db(capsys: pytest.CaptureFixture[str], db_path: Path) -> None:
    code, out, _ = run(capsys, "screens")
    assert code == 0 and "ESALNXC" in out and "steal_pct" in out
    code, out, _ = run(capsys, "screens", "--format", "json")
    names = [s["name"] for s in json.loads(out)]
    assert names == [
        "ESASSUM",
        "ESACPUU",
        "ESALNXC",
        "ESACRYPT",
        "ESACRYPA",
        "ESACRYQ",
        "ESAPOLL",
        "ESACRYPE",
        "ESAPAGE",
        "ESALOCK",
        "ESAUSR2",
        "ESAOVHD",
        "ESANODE",
    ]
    code, out, _ = run(capsys, "sources")
    assert code == 0 and out.startswith("host") and "available" in out
    code, out, _ = run(capsys, "sources", "--source", "auto")  # before: 'unknown source'
    assert code == 0 and out.startswith("host")
    code, out, err = run(capsys, "sources", "--source", "bogus")  # before: listed, exit 0
    assert code == 2 and out == "" and err.startswith("esatui: error: unknown source 'bogus'")
    host_recording(db_path, n_intervals=3)
    code, out, _ = run(capsys, "db", "info", "--db", str(db_path))
    assert code == 0 and "schema_version 1" in out and "source host: 3 intervals" in out
    # three intervals of one hour: it is rolled up once the recording writes in a later one
    assert f"rollups        {READY_VALUE}" in out
    assert "kind cpu: 12 rows, 0 hourly rollup rows" in out
    assert "hours rolled up to none" in out
    code, out, _ = run(capsys, "db", "prune", "--db", str(db_path), "--keep", "1h")
    assert code == 0 and "6 source intervals deleted" in out  # host and esatui
    code, out, _ = run(capsys, "db", "vacuum", "--db", str(db_path))
    assert code == 0


def test_collect_and_export_never_load_textual(db_path: Path) -> None:
    script = (
        "import sys\n"
        "from esatui.cli import main\n"
        f"db = {str(db_path)!r}\n"
        "assert main(['collect', '--interval', '0.2', '--count', '1', '--db', db]) == 0\n"
        "assert main(['export', 'ESALNXC', '--db', db]) == 0\n"
        "assert 'textual' not in sys.modules, 'textual was imported'\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


def test_an_export_as_recorded_loads_its_own_command_alone(db_path: Path) -> None:
    """``esatui export`` builds the export command's parser alone, and an export as recorded
    reads without the buckets' code, the writer's lock or the source registry (start-up is
    a third of a day's export: issue 16)."""
    host_recording(db_path, n_intervals=3)
    script = (
        "import sys\n"
        "from esatui.cli import main\n"
        f"assert main(['export', 'ESALNXC', '--db', {str(db_path)!r}]) == 0\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    loaded = set(result.stdout.splitlines()[-1].split())  # after the export's text
    commands = {m for m in loaded if m.startswith("esatui.commands.")}
    assert commands <= {f"esatui.commands.{m}" for m in ("arguments", "common", "export")} | {
        "esatui.commands.output",
        "esatui.commands.streaming",
        "esatui.commands.streams",  # the standard streams, small: io, os and sys alone
    }, commands
    for module in ("esatui.db.buckets", "esatui.db.writer_lock", "esatui.registry"):
        assert module not in loaded, module


def test_a_commands_own_parser_is_the_whole_parsers(capsys: pytest.CaptureFixture[str]) -> None:
    """A command line that names its command builds that command's parser alone: the same
    arguments, defaults and help as in the parser of every command."""
    from esatui.cli import build_parser
    from esatui.commands import COMMANDS

    whole = build_parser()
    for name in COMMANDS:
        own = build_parser(name)
        for parser in (whole, own):
            with pytest.raises(SystemExit):
                parser.parse_args([name, "--help"])
        whole_help, own_help = capsys.readouterr().out.split("usage: esatui " + name)[1:]
        assert own_help == whole_help, name
    argv = ["export", "ESACPUU", "--db", "x", "--interval-len", "15m", "--option", "normalized"]
    assert build_parser("export").parse_args(argv) == whole.parse_args(argv)


def test_esatui_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    """``esatui --help``, a new user's first command, names every command with its line
    (argparse %-formats each line: a bare ``%`` in one made it fail)."""
    from esatui.cli import main
    from esatui.commands import COMMANDS

    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert all(f"    {name} " in out for name in COMMANDS), out


@pytest.mark.parametrize(
    "argv",
    [
        ["--debug", "export", "ESALNXC", "--db", "MISSING"],
        ["export", "ESALNXC", "--debug", "--db", "MISSING"],
        ["db", "vacuum", "--db", "MISSING", "--debug"],
    ],
)
def test_debug_shows_the_traceback_before_or_after_the_command(
    tmp_path: Path, argv: list[str]
) -> None:
    """The README's ``--debug``, wherever a user puts it (before: only before the command;
    after it, 'unrecognized arguments')."""
    from esatui.db.store import StoreError

    missing = str(tmp_path / "missing.sqlite")
    with pytest.raises(StoreError, match="no database at"):
        main([missing if a == "MISSING" else a for a in argv])


def test_esatui_without_a_command_means_live() -> None:
    from esatui.cli import _with_command

    assert _with_command([]) == ["live"]
    assert _with_command(["--db", "x"]) == ["live", "--db", "x"]
    assert _with_command(["--debug", "export", "X"]) == ["--debug", "export", "X"]


def test_the_sim_help_names_every_parameter_and_scenario() -> None:
    from esatui.commands.arguments import SCENARIO_HELP, SET_HELP
    from esatui.sim.params import PARAM_NAMES
    from esatui.sim.scenarios import SCENARIOS

    assert all(name in SET_HELP for name in PARAM_NAMES)
    for name in SCENARIOS:
        assert name == "mode-vm-day" or name.split("-")[1] in SCENARIO_HELP
        assert name.rsplit("-", 1)[-1] in SCENARIO_HELP


def test_every_threshold_is_named_in_the_help() -> None:
    from esatui.commands.arguments import Parser, threshold_option
    from esatui.screens.model import DEFAULT_THRESHOLDS

    parser = Parser(prog="x")
    threshold_option(parser)
    text = " ".join(parser.format_help().split())
    assert all(name in text for name in DEFAULT_THRESHOLDS), text


def test_every_argument_of_export_says_what_it_is() -> None:
    import argparse

    from esatui.cli import build_parser

    commands = next(
        a for a in build_parser("export")._actions if isinstance(a, argparse._SubParsersAction)
    )
    export = commands.choices["export"]
    silent = [a.dest for a in export._actions if not a.help]
    assert not silent, silent


def test_a_node_typed_in_another_case_is_the_recorded_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """z/VM names its systems in capitals: ``--node vmmodevm`` is VMMODEVM (before: no data
    for node 'vmmodevm' (nodes: VMMODEVM)), unless two nodes differ only in case."""
    db = tmp_path / "vm.sqlite"
    sim = ["sim", "--scenario", "mode-vm-day", "--duration", "3m", "--db", str(db)]
    assert main(sim) == 0
    capsys.readouterr()
    code, exact, _ = run(capsys, "export", "ESASSUM", "--db", str(db), "--node", "VMMODEVM")
    code2, typed, err = run(capsys, "export", "ESASSUM", "--db", str(db), "--node", "vmModevm")
    assert code == code2 == 0 and typed == exact, err
    other = tmp_path / "again.sqlite"
    assert main([*sim[:-1], str(other)]) == 0
    capsys.readouterr()
    code, _, err = run(capsys, "compare", "ESASSUM", "--db", str(db), "--with-db", str(other),
                       "--node", "vmmodevm")  # fmt: skip
    assert code == 0, err
    assert main([*sim[:-1], str(tmp_path / "lower.sqlite"), "--node", "vmmodevm"]) == 0
    assert main(["db", "merge", "--db", str(db), str(tmp_path / "lower.sqlite")]) == 0
    capsys.readouterr()
    code, _, err = run(capsys, "export", "ESASSUM", "--db", str(db), "--node", "VmModeVm")
    assert code == 1 and "no data for node 'VmModeVm'" in err  # two nodes match: none chosen


def test_every_option_of_every_command_says_what_it_does() -> None:
    """Before: replay's --from, compare's screen and ranges, sim's --duration and others had
    no help line."""
    import argparse

    from esatui.cli import build_parser

    silent: list[str] = []

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(child, f"{path} {name}")
            elif not isinstance(action, argparse._HelpAction) and not action.help:
                silent.append(f"{path} {'/'.join(action.option_strings) or action.dest}")

    walk(build_parser(), "esatui")
    assert silent == []


def test_an_interval_length_of_no_multiple_of_the_recorded_warns(
    capsys: pytest.CaptureFixture[str], db_path: Path
) -> None:
    """Before: 90-s buckets of 1-minute intervals alternated 60 and 120 s held, silently."""
    host_recording(db_path, n_intervals=6)
    for length, warned in (("90", True), ("2m", False)):
        argv = ["export", "ESALNXC", "--db", str(db_path), "--interval-len", length]
        code, out, err = run(capsys, *argv)
        assert code == 0 and out
        assert ("is no multiple of the recorded intervals (1m)" in err) == warned


def test_interval_len_of_a_live_recording_whose_intervals_run_a_little_long(
    capsys: pytest.CaptureFixture[str], db_path: Path
) -> None:
    """Before: a live recorder's 60 s intervals last 60.00025 s, so `--interval-len 1m` was
    refused as shorter than the recorded intervals (1m) and every `15m` warned it was no
    multiple of them."""
    from dataclasses import replace

    from esatui.collectors.host import CPU
    from esatui.db.store import Store
    from tests.fixtures.recording import host_samples, write

    samples = host_samples(6, (0, 1), 60, START_US)
    drifting = [replace(s, time_us=START_US + i * 60_000_250) for i, s in enumerate(samples)]
    with Store.open(db_path) as store:
        write(store, "host", (CPU,), drifting)
    for length in ("1m", "15m", "1h"):
        argv = ["export", "ESALNXC", "--db", str(db_path), "--interval-len", length]
        code, out, err = run(capsys, *argv)
        assert (code, err) == (0, ""), length
        assert out
    code, _, err = run(capsys, "export", "ESALNXC", "--db", str(db_path), "--interval-len", "90")
    assert code == 0 and "is no multiple of the recorded intervals (1m)" in err
    code, _, err = run(capsys, "export", "ESALNXC", "--db", str(db_path), "--interval-len", "50")
    assert code == 2 and "shorter than the recorded intervals (1m)" in err
