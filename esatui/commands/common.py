"""What several commands share: one-line errors, the database's default place, the warning
line, and the source registry with every source type the app ships."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from esatui.garbage import start_up_set_aside

if TYPE_CHECKING:
    import threading

    from textual.app import App

    from esatui.db.reader import Reader
    from esatui.exposition.serve import Exposition
    from esatui.registry import Registry, SourceOptions
    from esatui.sampling.recorder import Retention
    from esatui.screens.catalog import Query
    from esatui.screens.crypto_costs import CostTable
    from esatui.screens.model import Threshold

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
MAX_COST_TABLE_BYTES = 1 << 20  # --crypto-costs: the built-in tables take 1 KB
DEFAULT_HF_S = 2.0  # --hf: the gauges' sampling rate, like the z/VM monitor's high frequency

# The modules whose source types the app offers, in the order ``esatui sources`` lists them.
SOURCE_TYPE_MODULES = ("esatui.source_types", "esatui.sim.source_type")


class UsageError(Exception):
    """Bad arguments: exit status 2."""


def on_a_terminal() -> bool:
    """A terminal to draw on, or a driver that draws elsewhere (``esatui serve``'s browser:
    textual-serve names its web driver, which speaks over the pipes)."""
    return bool(os.environ.get("TEXTUAL_DRIVER")) or (sys.stdin.isatty() and sys.stdout.isatty())


def need_terminal(command: str) -> None:
    """Refuse to draw the monitor where there is no terminal to draw on: without one (stdin
    from /dev/null, a pipe) its input driver would spin on the end of the input."""
    if not on_a_terminal():
        raise UsageError(
            f"{command} draws its screens on a terminal, and stdin or stdout is not one: "
            "to record without a screen, esatui collect; to print a screen, esatui export"
        )


def run_monitor(app: App[int], command: str) -> int:
    """Run the monitor, start-up's objects set aside from the garbage collector's passes
    (``esatui.garbage``); its exit status."""
    need_terminal(command)
    with start_up_set_aside():
        app.run()
    return app.return_code or 0


def leave_at_rest(path: Path) -> None:
    """A kept database back in rollback-journal mode once the monitor is gone: its recorder
    could not switch while the monitor still read it, and left the -wal and -shm files.
    Nothing happens while another writer holds it."""
    if not Path(f"{path}-wal").exists():
        return
    from esatui.db.store import Store, StoreError

    with contextlib.suppress(StoreError):
        Store.open(path, create=False).close()


def remove_database(path: Path) -> None:
    """A database this run made, with the files SQLite and esatui keep beside it."""
    from esatui.db.database import database_files

    for part in database_files(path):
        with contextlib.suppress(OSError):
            part.unlink()


def default_db() -> Path:
    env = os.environ.get("ESATUI_DB")
    if env:
        return Path(env)
    from platformdirs import user_data_dir

    return Path(user_data_dir("esatui")) / "esatui.sqlite"


def databases_read(args: argparse.Namespace) -> list[Path]:
    """The database files a command reads (``--db``, ``compare --with-db``, the databases
    ``db merge`` reads), those that are there."""
    if getattr(args, "prometheus", None) or not hasattr(args, "db"):
        return []
    found = [db_path(args), getattr(args, "with_db", None), *getattr(args, "others", ())]
    return [p for p in found if isinstance(p, Path) and p.is_file()]


def damage_said(args: argparse.Namespace | None, exc: Exception) -> str | None:
    """For an error that reading a damaged database gives (SQLite's, or a value of a type
    or size no recorder writes reaching the screens' arithmetic): the line naming the
    database and what of it is damaged, when it is found so (else ``None``)."""
    sqlite3 = sys.modules.get("sqlite3")  # loaded if a database was read
    kinds: tuple[type[Exception], ...] = (TypeError, ValueError, ArithmeticError)
    if sqlite3 is not None:
        kinds += (sqlite3.Error,)
    if args is None or not isinstance(exc, kinds):
        return None
    from esatui.db.database import damage_at, may_be_damage

    if not may_be_damage(exc):
        return None

    for path in databases_read(args):
        found = damage_at(path)
        if found is not None:
            return found
    return None


def db_path(args: argparse.Namespace) -> Path:
    given: Path | None = args.db
    return given or default_db()


def check_output(output: Path | None, *databases: Path) -> None:
    """Refuses an ``--output`` that is a database the command reads (or a file SQLite keeps
    beside it): the report would replace the recording it was made from."""
    if output is None:
        return
    from esatui.db.database import database_files

    target = os.path.realpath(output)
    for db in databases:
        for kept in database_files(db):
            if target == os.path.realpath(kept) or _same_file(output, kept):
                what = "a file of the database" if kept != db else "the database"
                raise UsageError(
                    f"--output {output} is {what} {db} the report is read from: give another file"
                )


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)  # a hard link too
    except OSError:
        return False  # either is not there


def own_data_dir(args: argparse.Namespace) -> bool:
    """Whether the database goes to esatui's own data directory, which a writer creates
    (0700) when it is missing; a directory the user named (``--db``, ``ESATUI_DB``) must
    exist."""
    return args.db is None and not os.environ.get("ESATUI_DB")


def warn(message: str) -> None:
    print(f"esatui: {message}", file=sys.stderr, flush=True)


def registry() -> Registry:
    """The source registry, with the source types of every module the app ships."""
    from esatui.registry import REGISTRY

    for module in SOURCE_TYPE_MODULES:
        importlib.import_module(module)
    return REGISTRY


def source_options(
    args: argparse.Namespace,
    progress: Callable[[int, int], None] | None = None,
    warn_to: Callable[[str], None] = warn,
) -> SourceOptions:
    from esatui.registry import SourceOptions

    return SourceOptions(
        root=args.root,
        warn=warn_to,
        smapi_user=getattr(args, "smapi_user", None),
        smapi_password_file=getattr(args, "smapi_password_file", None),
        smapi_guests=getattr(args, "smapi_guests", "*"),
        smapi_tls=getattr(args, "smapi_tls", False),
        smapi_ca=getattr(args, "smapi_ca", None),
        monitor_layout=monitor_layout(args),
        progress=progress,
        interval_s=getattr(args, "interval", None),
    )


def monitor_layout(args: argparse.Namespace) -> Path | None:
    """``--monitor-layout``, read and checked whether or not a monitor source runs (a
    mistyped file was ignored where none did, as ``--crypto-costs`` never is)."""
    path: Path | None = getattr(args, "monitor_layout", None)
    if path is not None:
        from esatui.collectors.monitor.layoutfile import LayoutError, load_layout_file

        try:
            load_layout_file(path)
        except LayoutError as exc:
            raise UsageError(str(exc)) from None
    return path


def gauge_rate(args: argparse.Namespace) -> float:
    """``--hf``, refused when longer than the interval: gauges are sampled at least once an
    interval, so a longer rate asked for is not what the recording would do. Left out, the
    default (2 s), which an interval of 2 s or less samples once an interval."""
    if args.hf is None:
        return DEFAULT_HF_S
    if args.hf > args.interval:
        from esatui.screens.render import format_duration

        raise UsageError(
            f"--hf {format_duration(args.hf)} is longer than the interval "
            f"({format_duration(args.interval)}): gauges are sampled at least once an "
            "interval; give an --hf of at most the interval, or leave it out"
        )
    return float(args.hf)


def retention(args: argparse.Namespace) -> Retention | None:
    from esatui.sampling.recorder import Retention

    if args.keep is None and args.max_size is None:
        return None
    return Retention(args.keep, args.max_size)


def exposition(
    args: argparse.Namespace, warn_to: Callable[[str], None] = warn
) -> Exposition | None:
    """The Prometheus exposition ``--listen`` and ``--textfile`` ask for, started."""
    if args.listen is None and args.textfile is None:
        return None
    from esatui.exposition.serve import Exposition, Listen

    where = None if args.listen is None else Listen(*args.listen)
    return Exposition(where, args.textfile, warn_to, getattr(args, "interval", None))


def open_reader(args: argparse.Namespace) -> Reader:
    """What ``--prometheus URL`` or the database (``--db``) holds, for reading."""
    url = getattr(args, "prometheus", None)
    if url:
        from esatui.exposition.prometheus_reader import PrometheusReader

        if args.db is not None:
            raise UsageError("--prometheus and --db name two places to read from: give one")

        return PrometheusReader(url)
    from esatui.db.sqlite_reader import SqliteReader

    return SqliteReader.open(db_path(args))


def thresholds(args: argparse.Namespace) -> dict[str, Threshold]:
    from esatui.screens.model import DEFAULT_THRESHOLDS, THRESHOLD_GATES, Threshold

    found = dict(DEFAULT_THRESHOLDS)
    given = {name for name, _, _ in args.threshold}
    for name, low, high in args.threshold:
        if name not in found:
            raise UsageError(f"unknown threshold {name!r} (thresholds: {', '.join(found)})")
        # one set alone marks on its own; with its gate, the two together
        found[name] = Threshold(low, high, gated=THRESHOLD_GATES.get(name) in given)
    return found


def screen_query(args: argparse.Namespace) -> Query:
    """What ``export`` (as rows or as a graph) asks the screen for."""
    from esatui.screens.catalog import Query

    return Query(
        node=args.node,
        after_us=args.from_,
        until_us=args.to,
        interval_len_us=None if args.interval_len is None else round(args.interval_len * 1e6),
        thresholds=thresholds(args),
        options=frozenset(args.option),
        crypto_costs=crypto_costs(args),
    )


def check_node(reader: Reader, node: str | None) -> str | None:
    """A ``--node`` the recording holds (or none asked for), as the recording spells it: a
    name in another case is the node when no other one matches it so (z/VM names its
    systems in capitals, a user types them as they come)."""
    if node is None:
        return None
    nodes = reader.nodes()
    if node in nodes:
        return node
    alike = [n for n in nodes if n.casefold() == node.casefold()]
    if len(alike) == 1:
        return alike[0]
    raise RuntimeError(f"no data for node {node!r} (nodes: {', '.join(nodes)})")


def say_node_chosen(reader: Reader, node: str | None, fleet: bool) -> None:
    """A line on stderr when a screen of one node was asked of several without ``--node``:
    which one it shows (the one written last) and how to see another."""
    if node is not None or fleet:
        return
    nodes = reader.nodes()
    if len(nodes) > 1:
        warn(
            f"{len(nodes)} nodes recorded ({', '.join(nodes)}): showing {reader.node(None)}, "
            "the one written last; --node NAME for another"
        )


def check_length(recorded_us: int | None, length_s: float | None) -> None:
    """``--interval-len`` shorter than the recorded intervals cannot be made from them; one
    that is no multiple of them is made, with a warning."""
    from esatui.db.navigator import multiple_of_recorded, shorter_than_recorded
    from esatui.screens.render import format_duration

    if recorded_us is None or length_s is None:
        return
    recorded = format_duration(round(recorded_us / 1e6, 3))
    if not shorter_than_recorded(length_s * 1e6, recorded_us):
        if not multiple_of_recorded(length_s * 1e6, recorded_us):
            warn(
                f"--interval-len {format_duration(length_s)} is no multiple of the recorded "
                f"intervals ({recorded}): each holds the intervals that end in it, so some hold "
                "more time than others (their rates are over the time they hold)"
            )
        return
    raise UsageError(
        f"--interval-len {format_duration(length_s)} is shorter than the recorded intervals "
        f"({recorded}): give {recorded} or longer"
    )


def crypto_costs(args: argparse.Namespace) -> CostTable | None:
    """The cost table ``--crypto-costs`` names (None: the built-in default)."""
    spec = getattr(args, "crypto_costs", None)
    if spec is None:
        return None
    from esatui.screens.crypto_costs import CostTableError, builtin_tables, load
    from esatui.smallfile import SmallFileError, check_small

    if spec not in builtin_tables()[0]:
        try:  # a device (/dev/zero) was read until memory ran out, a FIFO hung
            check_small(Path(spec), MAX_COST_TABLE_BYTES)
        except SmallFileError as exc:
            raise UsageError(f"--crypto-costs {spec} {exc}: give a JSON or TOML file") from None
    try:
        return load(spec)
    except CostTableError as exc:
        raise UsageError(str(exc)) from None


def stop_on_signals(stop: threading.Event, caught: list[int] | None = None) -> dict[int, Any]:
    """SIGINT, SIGTERM and SIGHUP (the terminal closed) end a recording cleanly, at the
    interval under way: each sets ``stop`` (and is appended to ``caught``); returns the
    handlers they replaced."""
    import signal  # a recorder's only: an export starts without it

    def handler(signum: int, frame: object) -> None:
        if caught is not None:
            caught.append(signum)
        stop.set()

    return {sig: signal.signal(sig, handler) for sig in _ending_signals()}


class Interrupted(Exception):
    """SIGINT, SIGTERM or SIGHUP during a command that ends by undoing what it began."""

    def __init__(self, signum: int) -> None:
        import signal

        self.signal = signal.Signals(signum).name
        super().__init__(f"interrupted by {self.signal}")


class SignalScope:
    """Where SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted`, until :meth:`hold`: from
    there on what was begun is done, and a signal is only noted (``caught``)."""

    def __init__(self) -> None:
        self.caught: list[int] = []
        self._held = False

    def hold(self) -> None:
        self._held = True

    def handler(self, signum: int, frame: object) -> None:
        if self.caught:
            return  # a second signal while the first unwinds
        self.caught.append(signum)
        if not self._held:
            raise Interrupted(signum)


@contextlib.contextmanager
def raise_on_signals() -> Iterator[SignalScope]:
    """Inside, SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted` (once: a second signal
    while it unwinds is ignored), so what was begun is rolled back or removed, not left
    half made by the signal's default (the process killed as it stands); after the scope's
    :meth:`~SignalScope.hold`, they are noted only."""
    import signal

    scope = SignalScope()
    previous = {sig: signal.signal(sig, scope.handler) for sig in _ending_signals()}
    try:
        yield scope
    finally:
        restore_signals(previous)


def _ending_signals() -> tuple[int, ...]:
    """The signals that end a command: ^C, ``kill``, and the terminal closed."""
    import signal

    return (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def restore_signals(previous: dict[int, Any]) -> None:
    import signal

    for sig, handler in previous.items():
        signal.signal(sig, handler)
