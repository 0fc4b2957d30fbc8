"""The streamed export (issue 16) gives the bytes of the whole-range model, rendered by
``esatui/formats.py``, in every format, order and interval length, for chunks of any size;
and a screen or range that cannot stream is built whole."""

from __future__ import annotations

import importlib
import io
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from esatui.cli import main
from esatui.collectors.kinds import LCPU
from esatui.collectors.model import Reading, Sample
from esatui.collectors.vmcp.source import VCPU
from esatui.commands import streaming
from esatui.commands.streaming import ascending
from esatui.db.sqlite_reader import SqliteReader
from esatui.db.store import Store
from esatui.formats import FORMATS, Format, render
from esatui.screens import catalog
from esatui.screens.catalog import Built, Context, ScreenDef
from esatui.screens.render import line_text, pages, row_line, row_text, text_plan
from tests.fixtures.hypervisor import guests_recording
from tests.fixtures.recording import START_US, host_recording, write

MINUTE = 60_000_000
INTERVALS = 150
START = START_US + 9 * 60 * MINUTE + 50 * MINUTE  # 23:50 UTC: the rows cross midnight
LOST = range(70, 76)  # minutes the monitor lost: partial buckets inside the range


def lcpu_samples() -> list[Sample]:
    """The monitor's three logical processors, sampled 7 s after the host (its own clock:
    each interval is placed into the host interval it overlaps most), six minutes lost."""
    samples = []
    for i in range(INTERVALS + 1):
        if i in LOST:
            continue
        readings = tuple(
            Reading(
                "lcpu",
                str(n),
                {
                    "elapsed_us": i * MINUTE,
                    "emul_us": i * (10 + 20 * n) * 600_000 + (i * i * 977) % 600_000,
                    "user_us": i * 2 * 600_000,
                    "syst_us": i * (3 + n) * 600_000,
                    "idle_us": i * (80 - 20 * n) * 600_000,
                    "steal_us": i * ((5 - n) + i % 13) * 600_000,
                },
                {"type": t, "lpar": "L32", "type_source": "monitor"},
            )
            for n, t in enumerate(("CP", "IFL", "IFL"))
        )
        samples.append(Sample("monitor", START + 7_000_000 + i * MINUTE, readings))
    return samples


def vcpu_samples() -> list[Sample]:
    """CP's view of the guest's virtual CPUs (vmcp) every 90 s, 25 s off the host's clock,
    their type changing every few samples: ESALNXC shows the type of the vmcp interval
    each host interval holds, so a misplaced one changes the text."""
    return [
        Sample(
            "vmcp",
            START + 25_000_000 + i * 90_000_000,
            tuple(
                Reading(
                    "vcpu",
                    str(n),
                    {},
                    {"type": "CP" if (i // 3 + n) % 2 else "IFL", "type_source": "vmcp"},
                )
                for n in range(4)
            ),
        )
        for i in range(INTERVALS * 2 // 3)
    ]


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqliteReader]:
    path = tmp_path_factory.mktemp("stream") / "esatui.sqlite"
    host_recording(path, n_intervals=INTERVALS, start_us=START)
    with Store.open(path) as store:
        write(store, "monitor", (LCPU,), lcpu_samples())
        write(store, "vmcp", (VCPU,), vcpu_samples())
    with SqliteReader.open(path) as reader:
        yield reader


def whole(reader: SqliteReader, name: str, query: catalog.Query, fmt: Format, asc: bool) -> str:
    model = catalog.build_model(reader, name, query)
    if asc:
        model = replace(model, rows=ascending(model.rows))
    return render(model, fmt, 132)


def streamed(
    reader: SqliteReader,
    screen: ScreenDef,
    query: catalog.Query,
    fmt: Format,
    asc: bool,
    chunk: int,
    width: int = 132,
) -> str | None:
    out = io.StringIO()

    def write(report: object) -> None:
        assert callable(report)
        report(out)

    done = streaming.export(reader, screen, query, fmt, width, asc, write, chunk=chunk)
    return out.getvalue() if done else None


STREAMING = [name for name, s in catalog.screens().items() if s.streams]
# the screens of this recording's CPUs that stream from chunks of any size; ESASSUM's view of
# the CPUs is the whole range's (the hypervisor's wherever one slot has its processors): a
# chunk inside the monitor's lost minutes sees the guest's (tested below); the others' data
# is in the simulated recording (tested below)
EVERY_CHUNK = ["ESACPUU", "ESALNXC"]


def test_every_screen_of_one_node_streams() -> None:
    fleet = [name for name, s in catalog.screens().items() if s.fleet]
    assert fleet == ["ESANODE"]
    assert [name for name in catalog.SCREEN_NAMES if name not in fleet] == STREAMING


# every source; the second is z/VM 7.2, whose D3R2 ESAPAGE shows (mode-vm-day's 6.3 has none)
SCENARIOS = ("mode-vm-day", "seed002-t3-polling")


@pytest.fixture(scope="module")
def crypto_guest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqliteReader]:
    """Nine intervals of a guest's zcrypt (tests/fixtures/cryq_recording.py): a card new in
    the second, a counter reset in the third, the poll timeout changed in the fifth."""
    from tests.fixtures.cryq_recording import record

    base = tmp_path_factory.mktemp("cryq")
    record(base / "esatui.sqlite", base / "sys", 9, change_poll_at=5)
    with SqliteReader.open(base / "esatui.sqlite") as reader:
        yield reader


@pytest.mark.parametrize("length_s", [None, 120, 300])
@pytest.mark.parametrize("chunk", [1, 2, 4, 1000])
def test_esacryq_streams_what_its_chunks_add_up_to(
    crypto_guest: SqliteReader, length_s: int | None, chunk: int
) -> None:
    """ESACRYQ's notes and header are of the whole range (the newest AP bus settings, where
    they changed, the flags of every row): each chunk's facts add up to the whole range's,
    so chunks of any size stream the whole model's bytes, though a chunk alone says other
    things (no reset, no change)."""
    screen = catalog.get("ESACRYQ")
    query = catalog.Query(interval_len_us=None if length_s is None else length_s * 1_000_000)
    text = whole(crypto_guest, "ESACRYQ", query, "text", False)
    assert "R counter reset" in text and "AP bus settings changed" in text
    for fmt in FORMATS:
        for asc in (False, True):
            want = whole(crypto_guest, "ESACRYQ", query, fmt, asc)
            assert streamed(crypto_guest, screen, query, fmt, asc, chunk) == want, (fmt, asc)


@pytest.fixture(scope="module", params=SCENARIOS)
def simulated(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SqliteReader]:
    """Two hours of a simulated z/VM system: every source (the monitor's crypto, the
    collectors' and esatui's own cost among them)."""
    path = tmp_path_factory.mktemp("stream") / "sim.sqlite"
    argv = ["sim", "--scenario", request.param, "--duration", "2h", "--db", str(path)]
    assert main(argv) == 0
    reader = SqliteReader.open(path)
    try:
        yield reader
    finally:
        reader.close()


@pytest.mark.parametrize("name", STREAMING)
@pytest.mark.parametrize("length_s", [None, 300, 3600])
def test_every_streaming_screen_of_a_simulated_system(
    simulated: SqliteReader, name: str, length_s: int | None
) -> None:
    """Each screen that streams, on a system with every source: chunks of one and seven
    intervals and of the whole range give the whole model's bytes in every format and order
    (what a chunk says of the range is what the others say, or adds up with it: ESACRYQ's
    and ESAPOLL's notes, ESALOCK's, ESACRYPE's). A screen without rows is left to the whole
    model."""
    screen = catalog.get(name)
    query = catalog.Query(interval_len_us=None if length_s is None else length_s * 1_000_000)
    if not catalog.build_model(simulated, name, query).rows:
        assert name == "ESAPAGE"  # mode-vm-day's z/VM 6.3 has no D3R2
        assert streamed(simulated, screen, query, "text", False, 7) is None
        return
    for fmt in FORMATS:
        for asc in (False, True):
            want = whole(simulated, name, query, fmt, asc)
            for chunk in (1, 7, 1000):
                assert streamed(simulated, screen, query, fmt, asc, chunk) == want, (fmt, chunk)


@pytest.mark.parametrize("name", EVERY_CHUNK)
@pytest.mark.parametrize("length_s", [None, 120, 300, 3600, 7200])
@pytest.mark.parametrize("chunk", [1, 2, 7, 1000])
def test_streamed_export_is_the_whole_models_bytes(
    recording: SqliteReader, name: str, length_s: int | None, chunk: int
) -> None:
    screen = catalog.get(name)
    query = catalog.Query(interval_len_us=None if length_s is None else length_s * 1_000_000)
    for fmt in FORMATS:
        for asc in (False, True):
            got = streamed(recording, screen, query, fmt, asc, chunk)
            assert got is not None, (fmt, asc)
            assert got == whole(recording, name, query, fmt, asc), (fmt, asc)


@pytest.mark.parametrize("length_s", [None, 300, 3600])
def test_esassum_streams_where_every_chunk_sees_the_ranges_view(
    recording: SqliteReader, length_s: int | None
) -> None:
    """ESASSUM's CPU types are the hypervisor's view wherever one slot of the range has the
    LPAR's processors. Chunks of seven intervals or more each hold some: they stream the
    whole model's bytes. Chunks of one or two inside the monitor's lost minutes see the
    guest's view, say so in their notes and columns, and the export is built whole."""
    screen = catalog.get("ESASSUM")
    query = catalog.Query(interval_len_us=None if length_s is None else length_s * 1_000_000)
    for fmt in FORMATS:
        for asc in (False, True):
            want = whole(recording, "ESASSUM", query, fmt, asc)
            for chunk in (7, 1000):
                assert streamed(recording, screen, query, fmt, asc, chunk) == want, (fmt, chunk)
    if length_s is None:
        assert streamed(recording, screen, query, "text", False, 1) is None


@pytest.mark.parametrize("name", EVERY_CHUNK)
def test_streamed_export_of_a_range_narrow_widths_and_options(
    recording: SqliteReader, name: str
) -> None:
    screen = catalog.get(name)
    for after_min, until_min in ((3, 40), (65, 80), (1, 149)):
        query = catalog.Query(
            after_us=START + after_min * MINUTE + 5_000_000,
            until_us=START + until_min * MINUTE,
            interval_len_us=300_000_000 if after_min == 65 else None,
            options=frozenset(screen.options[:1]),
        )
        for width in (40, 80):
            got = streamed(recording, screen, query, "text", False, 3, width)
            model = catalog.build_model(recording, name, query)
            assert got == render(model, "text", width)


def test_partial_buckets_are_marked_as_the_whole_model_marks_them(
    recording: SqliteReader,
) -> None:
    query = catalog.Query(interval_len_us=300_000_000)
    text = streamed(recording, catalog.get("ESACPUU"), query, "text", False, 2)
    assert text is not None and "~ partial" in text


def test_screens_that_do_not_declare_streams_are_built_whole(recording: SqliteReader) -> None:
    for name, screen in catalog.screens().items():
        if not screen.streams:
            assert streamed(recording, screen, catalog.Query(), "text", False, 2) is None, name


def test_chunks_that_disagree_on_the_notes_are_built_whole(recording: SqliteReader) -> None:
    """A build whose notes depend on how many slots it saw cannot stream exactly."""
    cpuu = catalog.get("ESACPUU")

    def counting(ctx: Context) -> Built:
        built = cpuu.build(ctx)
        return replace(built, notes=(f"{len(ctx.slots)} intervals",))

    screen = replace(cpuu, build=counting)
    assert streamed(recording, screen, catalog.Query(), "csv", False, 7) is None
    assert streamed(recording, screen, catalog.Query(), "csv", False, 1000) is not None


def test_no_rows_is_left_to_the_whole_model(recording: SqliteReader) -> None:
    query = catalog.Query(until_us=START - MINUTE)
    assert streamed(recording, catalog.get("ESALNXC"), query, "text", False, 2) is None


def test_row_text_is_row_lines_text(recording: SqliteReader, tmp_path: Path) -> None:
    """The export's text rows are the rows the TUI and the text report draw, for every
    screen, page, and row (with the guests' screens of another recording too)."""
    other = SqliteReader.open(guests_recording(tmp_path / "guests.sqlite"))
    checked = 0
    try:
        for reader in (recording, other):
            for name in catalog.screens():
                for length in (None, 300_000_000):
                    query = catalog.Query(interval_len_us=length)
                    model = catalog.build_model(reader, name, query)
                    for columns in pages(model, 80):
                        plan = text_plan(columns)
                        previous = None
                        for row in model.rows:
                            flags = model.flags_legend
                            want = line_text(row_line(columns, row, previous, flags))
                            assert row_text(plan, row, previous, flags) == want
                            previous = row
                            checked += 1
    finally:
        other.close()
    assert checked > 1000


def test_export_command_writes_the_stream_to_a_file_and_to_stdout(
    recording: SqliteReader, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from esatui import cli

    db = str(recording.path)
    out = tmp_path / "cpuu.json"
    assert (
        cli.main(["export", "ESACPUU", "--db", db, "--format", "json", "--output", str(out)]) == 0
    )
    want = whole(recording, "ESACPUU", catalog.Query(), "json", False)
    # the command names the recording's interval length where the model leaves it open
    assert out.read_text() == want.replace('"interval_len_s": null', '"interval_len_s": 60.0')
    capsys.readouterr()
    assert cli.main(["export", "ESACPUU", "--db", db, "--order", "asc"]) == 0
    assert capsys.readouterr().out == whole(recording, "ESACPUU", catalog.Query(), "text", True)


def test_each_screen_module_is_named_after_its_screen() -> None:
    for name, module in zip(catalog.SCREEN_NAMES, catalog.SCREEN_MODULES, strict=True):
        assert importlib.import_module(module).SCREEN.name == name
    assert list(catalog.screens()) == list(catalog.SCREEN_NAMES)


def test_an_export_imports_its_own_screen_only() -> None:
    """Finding a screen by name imports that screen's module, not the catalog's others."""
    code = (
        "import sys; from esatui.screens import catalog; catalog.get('cpuu');"
        "print(sorted(m for m in sys.modules if m.startswith('esatui.screens.esa')))"
    )
    command = [sys.executable, "-c", code]
    found = subprocess.run(command, capture_output=True, text=True, check=False)
    assert found.stdout.strip() == "['esatui.screens.esacpuu']", found.stderr


def test_an_export_runs_the_garbage_collector_rarely_and_restores_it(
    recording: SqliteReader, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """While an export writes, the cyclic collector runs every 100,000 new objects and
    start-up's objects are set aside (its rows are acyclic: issue 16); afterwards the
    collector is as it was."""
    import gc

    from esatui import cli

    before = gc.get_threshold()
    seen: list[tuple[int, bool]] = []
    export = streaming.export

    def watched(*args: object, **kwargs: object) -> bool:
        seen.append((gc.get_threshold()[0], gc.get_freeze_count() > 0))
        return export(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(streaming, "export", watched)
    db, out = str(recording.path), str(tmp_path / "cpuu.txt")
    assert cli.main(["export", "ESACPUU", "--db", db, "--output", out]) == 0
    assert seen == [(100_000, True)]
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    # a caller's own frozen objects stay frozen (esatui run in-process)
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert cli.main(["export", "ESACPUU", "--db", db, "--output", out]) == 0
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_esacryq_stats_are_read_a_chunk_at_a_time(
    crypto_guest: SqliteReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``export --stats`` of ESACRYQ streams too, for chunks of one interval: what it reads
    is the whole range built as recorded's statistics, and it never builds that range."""
    from esatui.screens import distribution

    stats = ("mean", "p99", "max")
    query = catalog.Query(interval_len_us=300_000_000)
    bucketed = catalog.build_model(crypto_guest, "ESACRYQ", query)
    recorded = distribution.recorded_model(crypto_guest, "ESACRYQ", query, bucketed)
    want = distribution.with_stats(bucketed, recorded, 300_000_000, stats)

    def whole_range(*args: object) -> None:
        raise AssertionError("built whole")

    monkeypatch.setattr(distribution, "recorded_model", whole_range)
    for chunk in (1, 3):
        assert distribution.recorded_stats(crypto_guest, bucketed, query, stats, chunk) == want


def crypto_recording(path: Path, serv_step_us: float) -> Path:
    """Twelve minutes of the monitor's D5R9 counters, CRYVSERV growing by ``serv_step_us``
    a minute (a fraction: sums that depend on the grouping of their terms)."""
    from esatui.collectors.monitor.kinds import CRYPTO, CRYPTO_KEY

    samples = [
        Sample(
            "monitor",
            START + i * MINUTE,
            (
                Reading(
                    "crypto",
                    CRYPTO_KEY,
                    {
                        "virt_nq": 3_000 * i + i * i,
                        "real_nq": 3_000 * i,
                        "virt_dq": 9_000 * i,
                        "real_dq": 4_000 * i,
                        "vserv_us": serv_step_us * i * (1 + i % 5),
                        "rserv_us": 800_000 * i,
                    },
                    {"record_length": "360"},
                ),
            ),
        )
        for i in range(13)
    ]
    with Store.open(path) as store:
        write(store, "monitor", (CRYPTO,), samples)
    return path


def test_esapoll_streams_where_its_sums_are_exact(tmp_path: Path) -> None:
    """ESAPOLL's notes explain the whole range from its counters added up. Added a chunk at
    a time, whole numbers (µs and counts, as the monitor records them) give the whole
    range's sums exactly: chunks of any size stream its bytes. Fractions would give other
    bits in other groupings: such a range is built whole, never streamed."""
    screen = catalog.get("ESAPOLL")
    query = catalog.Query()
    with SqliteReader.open(crypto_recording(tmp_path / "whole.sqlite", 1_700_000)) as reader:
        for chunk in (1, 2, 5, 1000):
            want = whole(reader, "ESAPOLL", query, "json", False)
            assert streamed(reader, screen, query, "json", False, chunk) == want
    with SqliteReader.open(crypto_recording(tmp_path / "fractions.sqlite", 1_700_000.1)) as reader:
        assert streamed(reader, screen, query, "json", False, 2) is None
        want = whole(reader, "ESAPOLL", query, "text", False)
        assert streamed(reader, screen, query, "text", False, 1000) == want
