"""Opening a database file: its creation and modes, the writer's lock, the version check,
a new database's framework, migrations.

Both the writer (``db/store.py``) and the reader (``db/sqlite_reader.py``) open through
:func:`connect`; each keeps the connection to itself. The writer first calls
:func:`claim_for_writing`.

Files: a directory esatui creates is 0700 and a database (with its ``-wal``, ``-shm``, lock
and backup files, which take its mode) 0600, since a recording names hosts, LPARs, guests
and serial numbers; an existing file keeps the mode its owner gave it. Readers open the file
read-only (``mode=ro``) and create nothing. A database at rest is in rollback-journal mode
(the writer switches it to WAL when it opens it and back when it closes it, if no reader
has it open), so anyone allowed to read the file can read it without writing next to it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from esatui import __version__
from esatui.db.reading import Queries
from esatui.db.schema import (
    FRAMEWORK,
    FRAMEWORK_TABLES,
    MIGRATIONS,
    READY_KEY,
    READY_VALUE,
    SCHEMA_VERSION,
    Migration,
)
from esatui.smallfile import kind_of

if TYPE_CHECKING:
    from esatui.db.writer_lock import WriterLock

DIR_MODE = 0o700
FILE_MODE = 0o600
SIDE_SUFFIXES = ("-wal", "-shm")
JOURNAL_SUFFIX = "-journal"  # a rollback journal, while a transaction is under way


def database_files(path: Path) -> tuple[Path, ...]:
    """The database's file and every file SQLite and esatui keep beside it."""
    from esatui.db.writer_lock import LOCK_SUFFIX

    return tuple(side_path(path, s) for s in ("", *SIDE_SUFFIXES, JOURNAL_SUFFIX, LOCK_SUFFIX))


SHARING = "docs/RELIABILITY.md, 'Sharing a recording'"
NOT_UTF8 = "it holds text that is not UTF-8"


class StoreError(Exception):
    """A database that cannot be used, in one line."""


class Transaction:
    """``with Transaction(conn):`` one immediate transaction, rolled back on an exception.
    Inside a transaction already under way (:meth:`Store.all_or_nothing`) it is a savepoint
    of it: its rollback undoes its own part, its end commits nothing."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._nested = False

    def __enter__(self) -> None:
        self._nested = self._conn.in_transaction
        self._conn.execute("SAVEPOINT step" if self._nested else "BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if not self._nested:
            self._conn.execute("ROLLBACK" if exc_type is not None else "COMMIT")
            return
        if exc_type is not None:
            self._conn.execute("ROLLBACK TO step")
        self._conn.execute("RELEASE step")


def connect(
    path: Path,
    *,
    readonly: bool,
    create: bool = True,
    migrations: Mapping[int, Migration] = MIGRATIONS,
    version: int = SCHEMA_VERSION,
) -> sqlite3.Connection:
    """A connection to an esatui database of ``version`` (migrated in place when older and
    not ``readonly``); :class:`StoreError` in one line when it cannot be used. A writer
    calls :func:`claim_for_writing` first (it creates the file)."""
    check_file(path)
    try:
        conn = sqlite3.connect(
            file_uri(path, "ro" if readonly else "rw"),
            uri=True,
            timeout=10.0,
            check_same_thread=False,
            isolation_level=None,
        )
    except sqlite3.DatabaseError as exc:
        raise _unusable(path, exc, readonly) from None
    try:
        _prepare(conn, path, readonly, create, migrations, version)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise _unusable(path, exc, readonly) from None
    except UnicodeDecodeError:
        # SQLite's own message on a malformed schema quotes the damaged bytes, which
        # Python cannot decode: the message is lost, the damage is not
        conn.close()
        raise StoreError(f"{path} is not a usable esatui database ({NOT_UTF8})") from None
    except StoreError:
        conn.close()
        raise
    return conn


def claim_for_writing(path: Path, *, create: bool, make_dirs: bool = False) -> WriterLock:
    """Make the database file if asked (0600; its directories 0700 with ``make_dirs``),
    check that this user can write what SQLite writes next to it, and take the writer's
    lock: :class:`StoreError` naming the writer that holds it."""
    if not path.exists():
        if not create:
            raise StoreError(f"no database at {path}")
        _create_file(path, make_dirs=make_dirs)
    check_file(path)
    for part in (path, *(side_path(path, s) for s in SIDE_SUFFIXES)):
        if part.exists() and not os.access(part, os.W_OK):
            raise StoreError(_not_writable(part))
    # a writer's only: a reader (an export) starts without it
    from esatui.db.writer_lock import WriterBusy, WriterLock

    lock = WriterLock(path, stat.S_IMODE(path.stat().st_mode) & 0o666)
    try:
        lock.acquire()
    except WriterBusy as busy:
        raise StoreError(
            f"{path} is already being written by {busy}: one writer at a time "
            "(stop that recorder first; viewers and exports can read it meanwhile)"
        ) from None
    except OSError as exc:
        raise StoreError(f"cannot lock {lock.path} for writing: {exc.strerror or exc}") from None
    return lock


def file_uri(path: Path, mode: str) -> str:
    """The URI SQLite opens for ``path`` taken as a plain file name. SQLite reads a name
    that begins with ``file:`` as a URI and ``:memory:`` as no file at all, even without
    ``uri=True``: the writer's lock (``<name>-lock``) and the database would then be two
    different files. An absolute path, quoted, is that file and only it."""
    return f"file:{quote(str(path.absolute()))}?mode={mode}"


def check_file(path: Path) -> None:
    """:class:`StoreError` unless ``path`` is a regular file (or a link to one): SQLite would
    hang reading a FIFO, and read a device as an empty or damaged database."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise StoreError(f"no database at {path}") from None
    except OSError as exc:
        raise StoreError(f"cannot use {path}: {exc.strerror or exc}") from None
    if stat.S_ISREG(mode):
        return
    what = kind_of(mode)
    hint = "; give a file name" if stat.S_ISDIR(mode) else ""
    raise StoreError(f"{path} is {what}, not an esatui database{hint}")


def side_path(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def make_private_dirs(directory: Path) -> None:
    """``directory`` and its missing parents, each created 0700."""
    missing: list[Path] = []
    here = directory
    while not here.exists():
        missing.append(here)
        here = here.parent
    for level in reversed(missing):
        with contextlib.suppress(FileExistsError):
            level.mkdir(mode=DIR_MODE)
            level.chmod(DIR_MODE)  # whatever the umask


def _create_file(path: Path, *, make_dirs: bool) -> None:
    if not path.parent.is_dir():
        if not make_dirs:
            raise StoreError(f"cannot create {path}: directory {path.parent} does not exist")
        try:
            make_private_dirs(path.parent)
        except OSError as exc:
            raise StoreError(
                f"cannot create directory {path.parent}: {exc.strerror or exc}"
            ) from None
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    except FileExistsError:
        return  # made meanwhile (by another writer, which the lock then refuses)
    except OSError as exc:
        raise StoreError(f"cannot create {path}: {exc.strerror or exc}") from None
    os.close(fd)


def _not_writable(part: Path) -> str:
    if os.statvfs(part).f_flag & os.ST_RDONLY:
        return f"cannot write {part}: its file system is mounted read-only"
    info = part.stat()
    if part.name.endswith(SIDE_SUFFIXES):
        return (
            f"{part} belongs to uid {info.st_uid} (mode {stat.S_IMODE(info.st_mode):04o}) and "
            "this user cannot write it: record as the user who owns the database, or remove "
            f"that file once nothing has the database open ({SHARING})"
        )
    return (
        f"cannot write {part}: it belongs to uid {info.st_uid} "
        f"(mode {stat.S_IMODE(info.st_mode):04o}); record as its owner ({SHARING})"
    )


def _unusable(path: Path, exc: sqlite3.DatabaseError, readonly: bool) -> StoreError:
    """The one sentence for a database SQLite would not open or read."""
    text = str(exc)
    if path.is_dir():
        return StoreError(f"{path} is a directory, not an esatui database; give a file name")
    if not os.access(path, os.R_OK):
        info = path.stat()
        return StoreError(
            f"cannot read {path}: it belongs to uid {info.st_uid} with mode "
            f"{stat.S_IMODE(info.st_mode):04o}; ask its owner to share it ({SHARING})"
        )
    if readonly and ("readonly" in text or "unable to open" in text):
        return StoreError(
            f"cannot read {path}: it is in WAL mode and this user cannot use its -wal and "
            f"-shm files (missing, or not readable); have its owner run 'esatui db vacuum "
            f"--db {path}' once, which leaves it readable without them ({SHARING})"
        )
    if not readonly and "readonly" in text:
        return StoreError(f"cannot write {path}: {text} ({SHARING})")
    return StoreError(f"{path} is not a usable esatui database ({_plain(text)})")


def damaged(path: Path, what: str) -> str:
    """The one line for a database whose content no recorder could have written."""
    return f"{path} is damaged: {what}; restore it from a backup"


def may_be_damage(exc: BaseException) -> bool:
    """Whether a failure of reading may come of a damaged database: not a database another
    process held locked past the busy timeout (the look at every table would then take as
    long as the tables are big, for nothing)."""
    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc).lower()
        return "locked" not in text and "busy" not in text
    return True


def damage_at(path: Path) -> str | None:
    """Looked for once reading ``path`` failed: the line naming what of it is damaged
    (``Queries.damage``, or SQLite's own words for a file it finds malformed), ``None`` when
    it is not (the failure was something else)."""
    try:
        conn = connect(path, readonly=True)
    except StoreError:
        return None  # what is wrong with the file is said where it is opened
    try:
        what = Queries(conn).damage() or _malformed(conn)
    except sqlite3.DatabaseError as exc:
        what = _plain(str(exc))
    except UnicodeDecodeError:
        what = NOT_UTF8
    finally:
        conn.close()
    return None if what is None else damaged(path, what)


def _malformed(conn: sqlite3.Connection) -> str | None:
    """SQLite's own check, where the tables' rows hold nothing no recorder writes: a
    damaged index (a copy cut short, a disk's error) is read only by the queries that use
    it, which then fail with no word of which database. As the look at every row before
    it, it reads the whole file, once, after a failure."""
    found = conn.execute("PRAGMA quick_check(1)").fetchone()
    said = "ok" if found is None else str(found[0]).removeprefix("*** in database main ***")
    return None if said == "ok" else f"SQLite's check finds it malformed ({_plain(said)})"


def _plain(text: str) -> str:
    """SQLite's own words, in one line."""
    return " ".join(text.split())


def _prepare(
    conn: sqlite3.Connection,
    path: Path,
    readonly: bool,
    create: bool,
    migrations: Mapping[int, Migration],
    version: int,
) -> None:
    conn.execute("PRAGMA busy_timeout = 10000")
    queries = Queries(conn)
    found = queries.schema_version()
    fresh = found == 0 and queries.empty()
    if fresh:
        if readonly or not create:  # maintenance of an empty file makes no database of it
            raise StoreError(f"{path} is empty, not an esatui database")
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        conn.execute("PRAGMA journal_mode = WAL")
        with Transaction(conn):
            _create_framework(conn, version)
        found = version
    elif found == 0:
        raise StoreError(f"{path} is an SQLite database but not an esatui one")
    _check_version(path, found)
    if found > version:
        raise StoreError(
            f"{path} has schema version {found}, newer than this esatui reads "
            f"({version}): upgrade esatui"
        )
    if found == version and (
        missing := queries.missing_tables(FRAMEWORK_TABLES) or queries.missing_kind_tables()
    ):
        tables = ", ".join(missing)
        plural = "tables are" if len(missing) > 1 else "table is"
        raise StoreError(
            f"{path} is damaged: its {tables} {plural} missing "
            "(restore it from a backup, or record into a new file)"
        )
    if found < version:
        if readonly:
            raise StoreError(
                f"{path} has schema version {found}; open it once for writing "
                f"to migrate it to {version}"
            )
        _migrate(conn, path, found, version, migrations)
    if readonly:
        conn.execute("PRAGMA query_only = 1")
        return
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")


def _check_version(path: Path, found: int) -> None:
    """A schema version no esatui writes (below 1: ``PRAGMA user_version`` edited, a disk's
    error) is damage, said the same to readers and writers (a writer made a migration's
    backup of it at every attempt, then found no migration from it)."""
    if found < 1:
        raise StoreError(damaged(path, f"its schema version is {found}, which no esatui writes"))


def rest(conn: sqlite3.Connection) -> None:
    """Before the writer closes: back to rollback-journal mode (a checkpoint, and the -wal
    and -shm files go), so readers need nothing but the file. A reader that has it open
    keeps it in WAL mode, whose files then stay, this user's."""
    try:
        conn.execute("PRAGMA busy_timeout = 0")
        conn.execute("PRAGMA journal_mode = DELETE").fetchall()
    except sqlite3.Error:
        pass


def _create_framework(conn: sqlite3.Connection, version: int) -> None:
    for statement in FRAMEWORK.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.executemany(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
        [
            ("created_by", f"esatui {__version__}"),
            ("schema_version", str(version)),
            (READY_KEY, READY_VALUE),
        ],
    )
    conn.execute(f"PRAGMA user_version = {int(version)}")


def _migrate(
    conn: sqlite3.Connection,
    path: Path,
    found: int,
    version: int,
    migrations: Mapping[int, Migration],
) -> None:
    stuck = next((v for v in range(found, version) if v not in migrations), None)
    if stuck is not None:  # said before a backup is made of a file none migrates
        raise StoreError(f"{path}: no migration from schema version {stuck} to {stuck + 1}")
    backup = path.with_name(f"{path.name}.schema{found}.bak")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    copy_private(path, backup)
    with Transaction(conn):
        for v in range(found, version):
            migrations[v](conn)  # each step is there: _check_version
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
            (str(version),),
        )
        conn.execute(f"PRAGMA user_version = {int(version)}")


def copy_private(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` with ``source``'s mode, never through a link planted
    at ``target``."""
    mode = stat.S_IMODE(source.stat().st_mode) & 0o666
    with contextlib.suppress(FileNotFoundError):
        if target.is_symlink():
            target.unlink()
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
    os.fchmod(fd, mode)
    with source.open("rb") as src, os.fdopen(fd, "wb") as dst:
        shutil.copyfileobj(src, dst)


def file_bytes(path: Path) -> int:
    """The size of a database: its file and its write-ahead log."""
    total = 0
    for suffix in ("", "-wal"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            total += part.stat().st_size
    return total
