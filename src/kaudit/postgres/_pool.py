"""Run databases made ahead and cleaned up behind, by one worker thread per substrate.

A clone (`CREATE DATABASE ... TEMPLATE`) costs hundreds of milliseconds on a loaded
server and a drop tens; done inside a run, both are the run's harness time. So a
`DatabasePool` keeps databases ready before runs ask for them and takes their cleanup
off the run's path: its worker thread clones ahead (a bounded number: `ahead` ready
ones), drops the databases of finished clone-mode runs and rolls back finished
rollback-mode runs, cleanup first. A run that finds none ready clones its own, so the
pool only ever saves time. Each ready database comes with its open connection and the
fingerprint of its catalog (see `_capture`), taken while it is still the template.

The rollback fast path: runs reuse cloned databases, each run one transaction. A run
opens a transaction on a pooled database, every tool statement runs in its own
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
starts a pool of its own (the worker thread does not survive a fork anyway).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import psycopg

from kaudit.errors import SubstrateError
from kaudit.postgres._conn import connect, drop_database
from kaudit.postgres._db import PostgresDb
from kaudit.postgres._guard import PostgresGuard
from kaudit.spec import Identity
from kaudit.substrate import Dump, ForeignKey, HandedDatabase, Schema, StateDump

_INTRANS = psycopg.pq.TransactionStatus.INTRANS
_IDLE = psycopg.pq.TransactionStatus.IDLE
_NAMES = itertools.count()


@dataclass(frozen=True)
class Prepared:
    """A database that is the template, its open connection, and its catalog's fingerprint."""

    database: str
    conn: psycopg.Connection[Any]
    fingerprint: str | None
    """None when change capture cannot be trusted on it (the dump then reads every table)."""


class PoolOwner(Protocol):
    """The substrate a pool makes databases for, as the pool and its sandboxes use it.

    Named by what they need rather than by its class: the substrate builds the pool
    and its sandboxes, so naming `PostgresSubstrate` here would make each module
    import the other.
    """

    @property
    def url(self) -> str:
        """The server URL (without kaudit's own options)."""
        ...

    @property
    def template(self) -> StateDump:
        """The seeded state every run database starts as."""
        ...

    @property
    def schema(self) -> Schema:
        """The world's schema, as the run databases hold it."""
        ...

    def final_state(
        self, conn: psycopg.Connection[Any], db: PostgresDb, fingerprint: str | None, run_id: str
    ) -> tuple[Dump, str]:
        """A run's final state, and how it was read."""
        ...

    def drop_database(self, name: str) -> None:
        """Drop one run database."""
        ...


def _release(idle: list[Prepared], state: _State) -> None:
    """Stop the worker, finish its cleanup, then close and drop every idle database.

    Nothing in any process but the pool's maker: a forked child's copy of the list holds
    the parent's connections and databases.
    """
    if os.getpid() != state.pid:
        return
    with state.cond:
        state.closed = True
        state.cond.notify_all()
    if state.thread is not None and state.thread is not threading.current_thread():
        state.thread.join(timeout=60)
    with contextlib.suppress(Exception):
        while state.jobs:
            state.jobs.pop(0)()
    _drain(state.url, idle)


def _drain(url: str, idle: list[Prepared]) -> None:
    """Close and drop every idle database; safe from two threads at once.

    Every connection is closed even when the server refuses the admin session that drops
    the databases (those are left to `reclaim` and `prune`).
    """
    taken: list[Prepared] = []
    with contextlib.suppress(IndexError):
        while True:
            taken.append(idle.pop())
    for prepared in taken:
        prepared.conn.close()
    if taken:
        with contextlib.suppress(Exception), connect(url) as admin:
            for prepared in taken:
                drop_database(admin, prepared.database)


@dataclass
class _State:
    """What the worker and the finalizer share (never the substrate itself)."""

    pid: int
    url: str
    cond: threading.Condition
    jobs: list[Callable[[], None]]
    ahead: int
    """At most how many ready databases the worker keeps (0: none made ahead)."""
    out: int = 0
    """Databases handed to runs and not yet cleaned up."""
    peak: int = 0
    """The most runs this pool has served at once: the worker keeps that many ready (at
    most `ahead`), so a process that runs one sandbox at a time makes one ahead, not four."""
    closed: bool = False
    making: int = 0
    running: int = 0
    """Cleanup jobs the worker is running now."""
    thread: threading.Thread | None = None


class DatabasePool:
    """Ready databases of one substrate, and the worker that makes them and cleans up.

    `make` is called by the worker to make one more ready database; it must hold the
    substrate only weakly, so a substrate nobody uses is collected and its pool released.
    """

    def __init__(
        self, substrate: PoolOwner, make: Callable[[], Prepared | None], ahead: int
    ) -> None:
        self._idle: list[Prepared] = []
        self._make = make
        self._state = _State(os.getpid(), substrate.url, threading.Condition(), [], ahead)
        weakref.finalize(substrate, _release, self._idle, self._state)

    @property
    def mine(self) -> bool:
        """Whether this process made the pool (False in a forked child)."""
        return os.getpid() == self._state.pid

    def take(self) -> Prepared | None:
        """A ready database and its connection, or None when none is ready.

        Counts a run as served until `done`, whether it takes one or clones its own.
        """
        state = self._state
        with state.cond:
            taken = self._idle.pop() if self._idle else None
            state.out += 1
            state.peak = max(state.peak, state.out)
            self._wake()
        return taken

    def done(self) -> None:
        """One run served by `take` has ended."""
        with self._state.cond:
            self._state.out = max(0, self._state.out - 1)

    def give_back(self, prepared: Prepared) -> None:
        """Return a database that is the template again."""
        with self._state.cond:
            self._idle.append(prepared)
            self._state.cond.notify_all()

    def later(self, job: Callable[[], None]) -> None:
        """Run `job` on the worker, before any database is made ahead; at once if closed."""
        state = self._state
        with state.cond:
            if not state.closed:
                state.jobs.append(job)
                self._wake()
                return
        job()

    def settle(self) -> None:
        """Wait until the worker has no cleanup queued and makes nothing (tests, benches)."""
        state = self._state
        with state.cond:
            while (
                state.thread is not None
                and not state.closed
                and (state.jobs or state.making or state.running)
            ):
                state.cond.wait(timeout=1)

    def release(self) -> None:
        """Finish the cleanup and drop every idle database now (nothing in a forked child)."""
        _release(self._idle, self._state)
        with self._state.cond:
            self._state.closed = False
            self._state.thread = None

    def _wake(self) -> None:
        """Called under the lock: start the worker if needed, and tell it there is work."""
        state = self._state
        if state.thread is None and (state.jobs or _wants_more(self._idle, state)):
            state.thread = threading.Thread(
                target=_work, args=(self._idle, state, self._make), daemon=True
            )
            state.thread.start()
        state.cond.notify_all()


def _wants_more(idle: list[Prepared], state: _State) -> bool:
    return len(idle) + state.making < min(state.ahead, state.peak)


def _work(idle: list[Prepared], state: _State, make: Callable[[], Prepared | None]) -> None:
    """The worker: cleanup jobs first, then ready databases up to `state.ahead`."""
    while True:
        with state.cond:
            while not state.closed and not state.jobs and not _wants_more(idle, state):
                state.cond.wait()
            if state.closed:
                return
            job = state.jobs.pop(0) if state.jobs else None
            if job is None:
                state.making += 1
            else:
                state.running += 1
        if job is not None:
            with contextlib.suppress(Exception):  # a failed drop is left to reclaim/prune
                job()
            # Held while the worker waits, the last job (a closure over its sandbox) would
            # keep its substrate alive, so the finalizer that releases this pool never runs.
            job = None
            with state.cond:
                state.running -= 1
                state.cond.notify_all()
            continue
        made: Prepared | None = None
        with contextlib.suppress(Exception):  # a run that needs one clones its own, and says
            made = make()
        with state.cond:
            state.making -= 1
            if made is None:
                state.ahead = 0  # the server refuses: stop making ahead
            else:
                idle.append(made)  # dropped with the rest when the pool is released
            released = state.closed
            state.cond.notify_all()
        if released:
            # The substrate's last reference can die in this thread, as `make` returns:
            # its finalizer then released the pool before `made` was in the idle list.
            _drain(state.url, idle)
            return


def pool_serial() -> str:
    """What makes a pooled database's name unique in this process.

    The owner key in the name makes it unique across processes.
    """
    return f"\0pool\0{next(_NAMES)}"


class PreparedSandbox:
    """What a run's sandbox on a prepared database holds, whichever way it is reset.

    The clone mode (`PostgresSandbox`, a database per run) and the rollback mode
    (`PooledSandbox`, a transaction per run) differ in how they dump and clean up, not
    in what they hold.
    """

    def __init__(
        self, run_id: str, substrate: PoolOwner, prepared: Prepared, db: PostgresDb
    ) -> None:
        self.run_id = run_id
        self.initial = substrate.template
        self.database = prepared.database
        self.server = substrate.url
        """The server URL (a boundary creates its role there)."""
        self.schema = substrate.schema
        self._substrate = substrate
        self._prepared = prepared
        self._conn = prepared.conn
        self.db = db
        self.dumped_by: str | None = None
        """After the dump: 'changes', or why every table was read."""

    def guard(self, identity: Identity, ownership: Sequence[ForeignKey] = ()) -> PostgresGuard:
        """PostgreSQL's boundary for `identity` in this run's database (`PostgresGuard`)."""
        return PostgresGuard(self.db, identity, self.server, self.schema, ownership)


class PooledSandbox(PreparedSandbox):
    """One run as one transaction on a pooled database."""

    def __init__(
        self,
        run_id: str,
        substrate: PoolOwner,
        pool: DatabasePool,
        prepared: Prepared,
    ) -> None:
        self._pool = pool
        try:
            db = PostgresDb(prepared.conn, statement_savepoints=True)
            super().__init__(run_id, substrate, prepared, db)
            self._conn.execute("BEGIN")
        except psycopg.Error as exc:
            raise SubstrateError(
                f"run {run_id}: pooled database {prepared.database}: {exc}"
            ) from None

    @property
    def intact(self) -> bool:
        """Whether the run's transaction is still the one opened at seed (nothing committed)."""
        return self._conn.info.transaction_status == _INTRANS

    def hand_over(self, directory: Path) -> HandedDatabase:
        """Refused: the run is one uncommitted transaction no other connection can see."""
        raise SubstrateError(
            f"run {self.run_id}: a substrate with reset=rollback cannot hand its world to "
            "an agent's own code (use reset=clone)"
        )

    def take_back(self) -> None:
        """Nothing was handed over."""

    def dump(self) -> Dump:
        """The state inside the run's transaction; an open `atomic()` block is an error."""
        if self.db.depth:
            raise SubstrateError(f"run {self.run_id}: dump requested inside a transaction")
        if self._conn.info.transaction_status not in (_INTRANS, _IDLE):
            raise SubstrateError(f"run {self.run_id}: the run's transaction is broken")
        fingerprint = self._prepared.fingerprint if self.intact else None
        state, self.dumped_by = self._substrate.final_state(
            self._conn, self.db, fingerprint, self.run_id
        )
        return state

    def close(self) -> None:
        """Roll back and pool the database again, or drop it if anything committed.

        The rollback runs on the pool's worker, off the run's path.
        """
        reusable = self.intact and not self.db.depth
        self._pool.done()
        self._pool.later(lambda: self._clean(reusable))

    def _clean(self, reusable: bool) -> None:
        if reusable:
            try:
                self._conn.execute("ROLLBACK")
            except psycopg.Error:
                pass
            else:
                if self._conn.info.transaction_status == _IDLE:
                    self._pool.give_back(self._prepared)
                    return
        self._conn.close()
        self._substrate.drop_database(self.database)
