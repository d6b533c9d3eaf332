"""The rollback fast path: runs reuse a pool of cloned databases, each run one transaction.

A run opens a transaction on a pooled database, every tool statement runs in its own
savepoint (so a refused statement fails alone, as in autocommit), the dump reads the
state inside the transaction, and cleanup rolls it back: the database is the template
again for the next run, at the cost of a ROLLBACK instead of a clone and a drop. This is
only correct while nothing a run does commits; a run whose transaction ended (a tool
issued COMMIT) or broke is still dumped when it can be, but its database is dropped,
never reused. Pooled databases are dropped when the substrate is garbage-collected or
the process exits; a killed process leaves them to `reclaim` and `prune`, like clones.

A pool belongs to the process that made it. A forked child inherits the parent's idle
connections, whose sockets it shares: using one, closing one, or dropping its database at
the child's exit would break the parent's runs. So the child never touches them and
starts a pool of its own.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import weakref
from typing import TYPE_CHECKING, Any

import psycopg

from kaudit.errors import SubstrateError
from kaudit.substrate._dump import StateDump
from kaudit.substrate._pg_conn import connect, drop_database
from kaudit.substrate._pg_db import PostgresDb
from kaudit.substrate._pg_dump import dump_image

if TYPE_CHECKING:
    from kaudit.substrate._postgres import PostgresSubstrate

_INTRANS = psycopg.pq.TransactionStatus.INTRANS
_IDLE = psycopg.pq.TransactionStatus.IDLE
_NAMES = itertools.count()

Idle = list[tuple[str, psycopg.Connection[Any]]]


def _release(url: str, idle: Idle, pid: int) -> None:
    """Close and drop every idle pooled database (at garbage collection or exit).

    Nothing in any process but `pid`, the pool's maker: a forked child's copy of the
    list holds the parent's connections and databases.
    """
    if os.getpid() != pid:
        return
    with contextlib.suppress(Exception), connect(url) as admin:
        while idle:
            database, conn = idle.pop()
            conn.close()
            drop_database(admin, database)


class RollbackPool:
    """Idle cloned databases of one substrate, each with its open connection."""

    def __init__(self, substrate: PostgresSubstrate) -> None:
        self._url = substrate.url
        self._idle: Idle = []
        self._lock = threading.Lock()
        self._pid = os.getpid()
        weakref.finalize(substrate, _release, substrate.url, self._idle, self._pid)

    @property
    def mine(self) -> bool:
        """Whether this process made the pool (False in a forked child)."""
        return os.getpid() == self._pid

    def take(self) -> tuple[str, psycopg.Connection[Any]] | None:
        """An idle database and its connection, or None when all are in use."""
        with self._lock:
            return self._idle.pop() if self._idle else None

    def give_back(self, database: str, conn: psycopg.Connection[Any]) -> None:
        """Return a database that is the template again."""
        with self._lock:
            self._idle.append((database, conn))

    def release(self) -> None:
        """Drop every idle database now (nothing in a forked child)."""
        with self._lock:
            _release(self._url, self._idle, self._pid)


def pool_serial() -> str:
    """What makes a pooled database's name unique in this process.

    The owner key in the name makes it unique across processes.
    """
    return f"\0pool\0{next(_NAMES)}"


class PooledSandbox:
    """One run as one transaction on a pooled database."""

    def __init__(
        self,
        run_id: str,
        substrate: PostgresSubstrate,
        pool: RollbackPool,
        database: str,
        conn: psycopg.Connection[Any],
    ) -> None:
        self.run_id = run_id
        self.initial = substrate.template
        self.database = database
        self.server = substrate.url
        """The server URL (a boundary creates its role there)."""
        self.schema = substrate.schema
        self._substrate = substrate
        self._pool = pool
        self._conn = conn
        try:
            self.db = PostgresDb(conn, statement_savepoints=True)
            conn.execute("BEGIN")
        except psycopg.Error as exc:
            raise SubstrateError(f"run {run_id}: pooled database {database}: {exc}") from None

    @property
    def intact(self) -> bool:
        """Whether the run's transaction is still the one opened at seed (nothing committed)."""
        return self._conn.info.transaction_status == _INTRANS

    def dump(self) -> StateDump:
        """The state inside the run's transaction; an open `atomic()` block is an error."""
        if self.db.depth:
            raise SubstrateError(f"run {self.run_id}: dump requested inside a transaction")
        if self._conn.info.transaction_status not in (_INTRANS, _IDLE):
            raise SubstrateError(f"run {self.run_id}: the run's transaction is broken")
        try:
            return StateDump.of(dump_image(self._conn, self._substrate.schema))
        except psycopg.Error as exc:
            raise SubstrateError(f"run {self.run_id}: dump failed: {exc}") from None

    def close(self) -> None:
        """Roll back and return the database to the pool, or drop it if anything committed."""
        if self.intact and not self.db.depth:
            try:
                self._conn.execute("ROLLBACK")
            except psycopg.Error:
                pass
            else:
                if self._conn.info.transaction_status == _IDLE:
                    self._pool.give_back(self.database, self._conn)
                    return
        self._conn.close()
        self._substrate.drop_database(self.database)
