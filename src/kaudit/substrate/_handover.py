"""A run's world handed to code kaudit does not run: a file or a database URL, per run.

An agent that brings its own database code (its own `sqlite3` or `psycopg` calls) is
audited on the run's world itself: the sandbox moves its state where that code can
reach it (`HandableSandbox.hand_over`) and takes it back before the dump
(`take_back`), so the pipeline dumps and labels the state the agent's code left.

Every handed world lives in a private per-run directory under `runs_root()`, locked by
the process that made it (`run_directory`). The lock dies with the process however it
ends, so a directory whose lock can be taken belongs to nobody and `prune_run_directories`
removes it: a kill of kaudit leaves nothing the next start does not remove.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from kaudit.substrate._protocol import Sandbox

LOCK_NAME = ".owner"
"""The file in each run directory its owning process holds an exclusive lock on."""
UNLOCKED_GRACE_S = 60.0
"""How old a run directory without its lock file must be before it counts as abandoned."""


@dataclass(frozen=True)
class HandedDatabase:
    """Where the run's world is for the agent's own code.

    Attributes:
        db_path: SQLite: the world file (None on a database server).
        url: The URL the agent connects with (`sqlite:////…` or `postgresql://…`).
    """

    db_path: Path | None
    url: str


@runtime_checkable
class HandableSandbox(Sandbox, Protocol):
    """A sandbox that can hand its world to foreign code and take it back before the dump."""

    def hand_over(self, directory: Path) -> HandedDatabase:
        """Make the world reachable (a file in `directory`, or the run's database URL).

        Raises `SubstrateError` when this sandbox cannot (a run that is one uncommitted
        transaction cannot be seen by another connection).
        """
        ...

    def take_back(self) -> str | None:
        """The state the foreign code left becomes the sandbox's own, ready for `dump()`.

        Called after every foreign process has ended; the file may be removed afterwards.
        Returns why the world is lost when the foreign code left no readable world (a
        SQLite file deleted or corrupted); the sandbox then holds an empty world, every
        table gone, which the run is judged on. None otherwise (always on a server,
        where the agent's role can change rows but never the database itself).
        """
        ...


def runs_root() -> Path:
    """Where per-run directories live: `$KAUDIT_RUNS`, else `<tmp>/kaudit-runs-<uid>`."""
    given = os.environ.get("KAUDIT_RUNS")
    return Path(given) if given else Path(tempfile.gettempdir()) / f"kaudit-runs-{os.getuid()}"


@contextlib.contextmanager
def run_directory() -> Iterator[Path]:
    """A new private directory (mode 0700) for one run, locked by this process, removed after.

    Stale directories of dead processes are removed on the way in.
    """
    root = runs_root()
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    prune_run_directories(root)
    directory = Path(tempfile.mkdtemp(prefix="run-", dir=root))
    lock = os.open(directory / LOCK_NAME, os.O_CREAT | os.O_WRONLY, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # held until this run ends or the process dies
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)
        os.close(lock)


def prune_run_directories(root: Path | None = None) -> int:
    """Remove every run directory no live process holds; returns how many were removed."""
    root = runs_root() if root is None else root
    if not root.is_dir():
        return 0
    removed = 0
    for directory in root.iterdir():
        if directory.is_dir() and _abandoned(directory):
            shutil.rmtree(directory, ignore_errors=True)
            removed += 1
    return removed


def _abandoned(directory: Path) -> bool:
    """Whether no process holds the directory's lock (or it never got one)."""
    try:
        fd = os.open(directory / LOCK_NAME, os.O_RDONLY)
    except FileNotFoundError:
        # No lock yet: a live process between mkdtemp and its lock, or one killed there.
        return time.time() - directory.stat().st_mtime > UNLOCKED_GRACE_S
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True
