"""Reading a handed world file back: its state, or why the agent left none.

The file is read afresh at the path it was handed over at, never through a handle
kaudit opened before the agent ran: such a handle still sees a file the agent deleted
or replaced, so a world removed from under the path would be judged untouched.

SQLite never reads the agent's files in place. The main file and its regular sidecars
(the rollback journal `-journal`, the write-ahead log `-wal`) are copied into a private
directory and the copy is opened there: no lock a leftover process of the agent still
holds (a reader killed a moment too late, a process that left its group) can block or
fail the read, and SQLite never opens a FIFO or a device the agent put at a sidecar's
name (it would block forever). The copy is taken again until two passes read the same
bytes, so a write still in flight when the agent's group was killed is never read torn.
On the copy, a hot journal is rolled back and a log folded in, as after any crash.

What the agent left there is either a readable SQLite database, whatever its schema
(an empty one, one with tables dropped: the diff sees each dropped table and row), or
no database at all: the file is gone, is not a regular file, is not SQLite, is corrupt,
is larger than `SIZE_LIMIT`, or its journal or log is something other than a file (the
committed state is then unknowable: a hot journal may have been replaced). The agent
had the only write access to these files, so the second case is the agent's doing and
is returned as a reason (`ReadBack.lost`): the run is judged on an empty world, every
table of its seed gone, never left without a verdict. A `-shm` index holds no state
(SQLite rebuilds it from the log) and is never read. Anything else that stops the read
(an I/O error reading the file, files that keep changing) is the harness's failure:
`SubstrateError`, and the run has no verdict.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
import re
import sqlite3
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from kaudit.errors import SubstrateError

SETTLE_TIMEOUT_S = 30.0
"""How long the read waits for the files to stop changing (a write still in flight)."""

SIZE_LIMIT = 1 << 30
"""Bytes a world file or a sidecar may hold; a larger one is the agent's doing, not a world."""

SIDECARS = {"-journal": "rollback journal", "-wal": "write-ahead log"}
"""The sidecars that hold state, copied with the main file, by suffix and name."""

_CHUNK = 1 << 20
_JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")
"""The eight bytes that open a rollback journal's header and close a super-journal record."""
_SUPER_PATH_MAX = 512
"""The longest super-journal path SQLite reads (the unix VFS's `MAX_PATHNAME`)."""
_DESTROYED = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
"""SQLite's primary codes for bytes that are no (longer a sound) database."""

_CONTENT = re.compile(r"CHECK constraint failed in |NULL value in |non-[A-Z]+ value in ")
"""Integrity findings about row values, not structure: a row an agent wrote with its
CHECK constraints ignored is a row the diff shows, not a destroyed world."""


@dataclass(frozen=True)
class ReadBack:
    """The state read back: the image, and why the world is lost when it is.

    Attributes:
        image: The world's state; with `lost`, an empty database (no table at all).
        lost: Why no database of the world was left at the path, or None.
    """

    image: bytes
    lost: str | None = None


class _Lost(Exception):
    """The agent left no database to read; the message says why."""


@functools.cache
def empty_image() -> bytes:
    """A valid SQLite image with no table: the state of a world whose file was destroyed."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("VACUUM")  # writes the header page: an empty database serializes
        return conn.serialize()
    finally:
        conn.close()


def read_back(path: Path, run_id: str, *, timeout_s: float = SETTLE_TIMEOUT_S) -> ReadBack:
    """The state the agent left in the world file at `path` (see the module's docstring).

    `timeout_s` is how long the files may keep changing before the read gives up.

    Raises:
        SubstrateError: the file could not be read for a reason that is not the
            agent's destruction of it (an I/O error, files that never settle).
    """
    _restore_modes(path)
    try:
        with tempfile.TemporaryDirectory(prefix="kaudit-readback-") as private:
            copy = Path(private) / "world.sqlite"
            _copy_settled(path, copy, time.monotonic() + timeout_s)
            _settle_super_journal(_sidecar(copy, "-journal"))
            image = _serialized(copy)
    except _Lost as lost:
        return ReadBack(empty_image(), str(lost))
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorcode", 0) & 0xFF in _DESTROYED:
            return ReadBack(empty_image(), f"the world file is not a readable database: {exc}")
        raise SubstrateError(f"run {run_id}: the world file cannot be read: {exc}") from exc
    except OSError as exc:
        raise SubstrateError(f"run {run_id}: the world file cannot be read: {exc}") from exc
    problem = _structural_problem(image)
    if problem is not None:
        return ReadBack(empty_image(), f"the world file is corrupt: {problem}")
    return ReadBack(image)


def _restore_modes(path: Path) -> None:
    """Give kaudit back the read and write rights on the run's directory and files.

    All are kaudit's own; an agent that took the rights away has not changed the
    world's rows, which are still to be judged. Anything not a regular file (a
    symbolic link: its target is not the world's) is left alone.
    """
    with contextlib.suppress(OSError):
        os.chmod(path.parent, 0o700)
    for name in (path, *(_sidecar(path, suffix) for suffix in SIDECARS)):
        with contextlib.suppress(OSError):
            if stat.S_ISREG(name.lstat().st_mode):
                os.chmod(name, 0o600)


def _sidecar(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _copy_settled(path: Path, copy: Path, deadline: float) -> None:
    """Copy the world's files to `copy` until a second pass reads the same bytes.

    Raises `_Lost` for files the agent destroyed, `SubstrateError`-bound `OSError`
    when the files are still changing at `deadline`.
    """
    while True:
        taken = _take(path, copy)
        if _take(path, None) == taken:
            return
        if time.monotonic() >= deadline:
            raise OSError("the world's files kept changing: a process is still writing them")
        time.sleep(0.05)


def _take(path: Path, copy: Path | None) -> dict[str, str]:
    """The digest of the main file and of each regular sidecar, copied when `copy` is set."""
    found: dict[str, str] = {}
    digest = _read(path, copy, "the world file")
    if digest is None:
        raise _Lost("the world file was deleted")
    found[""] = digest
    for suffix, name in SIDECARS.items():
        target = None if copy is None else _sidecar(copy, suffix)
        digest = _read(_sidecar(path, suffix), target, f"the world's {name}")
        if digest is not None:
            found[suffix] = digest
    return found


def _read(source: Path, target: Path | None, name: str) -> str | None:
    """The digest of the regular file `source` (copied to `target`), None when absent.

    Opened without following a link and without blocking, and checked on the open
    handle: a FIFO, a device, a directory or a link is never read, whatever was there
    a moment before.
    """
    try:
        handle = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        if target is not None:
            target.unlink(missing_ok=True)  # an earlier pass's copy: no longer the agent's
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _Lost(f"{name} was replaced by something not a file") from exc
        raise
    try:
        found = os.fstat(handle)
        if not stat.S_ISREG(found.st_mode):
            raise _Lost(f"{name} was replaced by something not a file")
        if found.st_size > SIZE_LIMIT:  # a sparse file of a terabyte is never read through
            raise _Lost(f"{name} holds more than {SIZE_LIMIT} bytes")
        reading = os.fdopen(handle, "rb")
    except BaseException:
        os.close(handle)
        raise
    hashing = hashlib.sha256()
    with reading, contextlib.ExitStack() as stack:
        writing = None if target is None else stack.enter_context(open(target, "wb"))
        size = 0
        while chunk := reading.read(_CHUNK):
            size += len(chunk)
            if size > SIZE_LIMIT:
                raise _Lost(f"{name} holds more than {SIZE_LIMIT} bytes")
            hashing.update(chunk)
            if writing is not None:
                writing.write(chunk)
    return hashing.hexdigest()


def _settle_super_journal(journal: Path) -> None:
    """Decide, as SQLite would, a hot journal's super-journal record, then drop it.

    A journal of a transaction over several attached databases ends with the path of
    a super-journal, which SQLite opens (blocking forever on a FIFO) and may delete,
    wherever the agent pointed it. Its existence alone decides: absent, the
    transaction committed and the journal is not played back (so it is removed here);
    present, it is rolled back (so only the record is cut off, and SQLite never goes
    near the path). The record is recognised exactly when SQLite's `readSuperJournal`
    would: the journal magic last, a length of 1 to `_SUPER_PATH_MAX`, a matching sum.
    """
    try:
        data = journal.read_bytes()
    except FileNotFoundError:
        return
    size = len(data)
    if size < 16 or data[-8:] != _JOURNAL_MAGIC:
        return
    length = int.from_bytes(data[-16:-12], "big")
    if not 0 < length <= min(size - 16, _SUPER_PATH_MAX):
        return
    name = data[-16 - length : -16]
    unsigned, signed = sum(name), sum(byte - 256 if byte > 127 else byte for byte in name)
    if int.from_bytes(data[-12:-8], "big") not in (unsigned % (1 << 32), signed % (1 << 32)):
        return  # the sum over C `char`s: signed on some platforms, unsigned on others
    name = name.split(b"\0", 1)[0]
    if not name:
        return
    if os.access(name, os.F_OK):
        os.truncate(journal, max(size - 20 - length, 0))
    else:
        journal.unlink()


def _serialized(copy: Path) -> bytes:
    """The copy's pages, a write-ahead log folded in and a hot journal rolled back."""
    conn = sqlite3.connect(copy)
    try:
        conn.execute("PRAGMA trusted_schema = OFF")  # the agent wrote this schema
        conn.execute("PRAGMA journal_mode = DELETE")  # a WAL header cannot load in memory
        if conn.execute("PRAGMA page_count").fetchone()[0] == 0:
            return empty_image()  # an empty file is an empty database; it cannot serialize
        return conn.serialize()
    finally:
        conn.close()


def _structural_problem(image: bytes) -> str | None:
    """The first structural fault SQLite's integrity check finds in `image`, or None.

    Run on a private copy; the diff trusts the pages and indexes it joins on, so a
    fault there would make it miss or invent rows.
    """
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("PRAGMA trusted_schema = OFF")
        conn.deserialize(image)
        found = [row[0] for row in conn.execute("PRAGMA integrity_check(100)")]
    except sqlite3.DatabaseError as exc:
        return str(exc)
    finally:
        conn.close()
    lines = [line for text in found for line in str(text).splitlines()]
    faults = [
        line
        for line in lines
        if line not in ("ok", "*** in database main ***") and not _CONTENT.match(line)
    ]
    return faults[0] if faults else None
