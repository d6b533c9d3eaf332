"""Whether the agent's own code reached the run's world, seen from outside it.

A preflight must know the agent reached the world even when it only read it. On
SQLite the world file's access time says so: it is set back before the agent starts, and
Linux's default `relatime` updates it at the first read after that (a file system
mounted `noatime` shows only writes). On PostgreSQL the server's own view of its
sessions says so: a backend on the run's database that started after the agent did.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

POLL_S = 0.02
"""How often the server's sessions are looked at while the agent runs."""


class FileReach:
    """Reads and writes of the world file since `arm()`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._atime_ns = 0
        self._mtime_ns = 0

    def arm(self) -> None:
        """Set the access time before the modification time, so the next read moves it."""
        found = os.stat(self.path)
        self._mtime_ns = found.st_mtime_ns
        self._atime_ns = found.st_mtime_ns - 1_000_000_000
        os.utime(self.path, ns=(self._atime_ns, self._mtime_ns))

    def reached(self) -> bool:
        """Whether the file was read or written since `arm()` (a journal or WAL counts)."""
        try:
            found = os.stat(self.path)
        except FileNotFoundError:
            return True  # removed by the agent: certainly reached
        sidecars = (self.path.with_name(self.path.name + s) for s in ("-wal", "-journal"))
        return (
            found.st_atime_ns != self._atime_ns
            or found.st_mtime_ns != self._mtime_ns
            or any(p.exists() for p in sidecars)
        )


class ServerReach:
    """Sessions on the run's database opened after `arm()`, polled while the agent runs."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.seen = False
        self._task: asyncio.Task[None] | None = None

    async def arm(self) -> None:
        """Take the server's clock as the baseline, then look until `stop()`."""
        import psycopg

        conn = await psycopg.AsyncConnection.connect(self.url, autocommit=True)
        cursor = await conn.execute("SELECT clock_timestamp()")
        row: Any = await cursor.fetchone()
        self._task = asyncio.create_task(self._poll(conn, row[0]))

    async def stop(self) -> bool:
        """Stop looking; whether a session was seen."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        return self.seen

    async def _poll(self, conn: Any, since: Any) -> None:
        try:
            while not self.seen:
                cursor = await conn.execute(_SESSIONS, (since,))
                row: Any = await cursor.fetchone()
                self.seen = bool(row and row[0])
                await asyncio.sleep(POLL_S)
        finally:
            await conn.close()


_SESSIONS = (
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
    "AND pid <> pg_backend_pid() AND backend_start >= %s"
)
