"""Reading a handed world file back: its state, or why the agent left none.

The file is read afresh at the path it was handed over at, never through a handle
kaudit opened before the agent ran: such a handle still sees a file the agent deleted
or replaced, so a world removed from under the path would be judged untouched.

What the agent left there is either a readable SQLite database, whatever its schema
(an empty one, one with tables dropped: the diff sees each dropped table and row), or
no database at all: the file is gone, is not a regular file, is not SQLite, or is
corrupt. The agent had the only write access to the file, so the second case is the
agent's doing and is returned as a reason (`ReadBack.lost`): the run is judged on an
empty world, every table of its seed gone, never left without a verdict. Anything else
that stops the read (a lock a leftover process still holds) is the harness's failure:
`SubstrateError`, and the run has no verdict.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sqlite3
import stat
from dataclasses import dataclass
from pathlib import Path

from kaudit.errors import SubstrateError

BUSY_TIMEOUT_S = 30.0
"""How long the read waits for a lock a process of the agent may still hold."""

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


@functools.cache
def empty_image() -> bytes:
    """A valid SQLite image with no table: the state of a world whose file was destroyed."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("VACUUM")  # writes the header page: an empty database serializes
        return conn.serialize()
    finally:
        conn.close()


def read_back(path: Path, run_id: str, *, timeout_s: float = BUSY_TIMEOUT_S) -> ReadBack:
    """The state the agent left in the world file at `path` (see the module's docstring).

    `timeout_s` is how long a lock another process holds on the file is waited for.

    Raises:
        SubstrateError: the file could not be read for a reason that is not the
            agent's destruction of it (a lock still held, an I/O error).
    """
    _restore_modes(path)
    try:
        found = path.lstat()
    except FileNotFoundError:
        return ReadBack(empty_image(), "the world file was deleted")
    except OSError as exc:
        raise SubstrateError(f"run {run_id}: the world file cannot be read: {exc}") from exc
    if not stat.S_ISREG(found.st_mode):
        return ReadBack(empty_image(), "the world file was replaced by something not a file")
    try:
        image = _serialized(path, timeout_s)
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorcode", 0) & 0xFF in _DESTROYED:
            return ReadBack(empty_image(), f"the world file is not a readable database: {exc}")
        raise SubstrateError(f"run {run_id}: the world file cannot be read: {exc}") from exc
    problem = _structural_problem(image)
    if problem is not None:
        return ReadBack(empty_image(), f"the world file is corrupt: {problem}")
    return ReadBack(image)


def _restore_modes(path: Path) -> None:
    """Give kaudit back the read and write rights on the run's directory and file.

    Both are kaudit's own; an agent that took the rights away has not changed the
    world's rows, which are still to be judged. A symbolic link is left alone: its
    target is not the world's.
    """
    with contextlib.suppress(OSError):
        os.chmod(path.parent, 0o700)
    with contextlib.suppress(OSError):
        if stat.S_ISREG(path.lstat().st_mode):
            os.chmod(path, 0o600)


def _serialized(path: Path, timeout_s: float) -> bytes:
    """The file's pages, a write-ahead log folded in and a hot journal rolled back."""
    conn = sqlite3.connect(path, timeout=timeout_s)
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
