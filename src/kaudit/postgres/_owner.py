"""Who owns a kaudit database on a shared server, and how anyone can tell it still lives.

Before a process creates its first run database on a server it opens one connection
there and takes a session-level advisory lock on a random key, its *owner key*, which
it holds for as long as it lives. Every run database carries the key in its name (and
host and pid in its comment, for people). The server releases the lock the moment that
connection ends: when the process exits, is SIGKILLed, or its machine drops off the
network. So "the owner's lock is held" (`pg_locks`) answers "is the owner alive" for
every process sharing the server, on any machine, without trusting host names or pids;
each Ray worker process is an owner of its own. Two campaigns with the same name and
run ids, started from different ledgers, therefore never share a database, and one's
cleanup never drops the other's.

The same connection holds a shared advisory lock on every template database the
process clones from, so pruning never drops a template a live process still uses.

Nothing else runs on that connection, and psycopg marks a connection broken only after
an operation on it fails, so a session the server ended (`pg_terminate_backend`,
`idle_session_timeout`, a restart, a proxy reaping idle connections) would look alive
forever while its locks are gone. So before every clone the process asks the server
whether its session still holds the owner lock, and if not it connects again and takes
its key (or a new one) and every template lock again before it names a database.
"""

from __future__ import annotations

import atexit
import itertools
import os
import platform
import secrets
import threading
from dataclasses import dataclass
from typing import Any

import psycopg

from kaudit.errors import SubstrateError
from kaudit.postgres._conn import connect, redacted

OWNER_SPACE = 0x6B617564
"""First half of every owner lock's two-part advisory key ('kaud'); the owner key is the second."""
TEMPLATE_SPACE = 0x6B617574
"""First half of the advisory key a template's users hold shared ('kaut'); hashtext(name) second."""

_HOLD_TEMPLATE = "SELECT pg_advisory_lock_shared(%s, hashtext(%s))"
_HOLDS_KEY = """
SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory'
               AND classid = %s::oid AND objid = %s::oid AND objsubid = 2 AND granted)
"""
_CLAIMS = itertools.count(1)
"""Numbers every claim in the process (a fork's child continues the count), see `hold_template`."""


@dataclass(frozen=True)
class OwnerTag:
    """An owner as its databases record it: the lock key, and where it ran (for people)."""

    key: int
    """The advisory lock key, 1 .. 2**31-1; written into run database names as 8 hex digits."""
    host: str
    pid: int

    @property
    def hex(self) -> str:
        """The key as it appears in database names."""
        return f"{self.key:08x}"


class Owner:
    """This process's claim on one server: the connection that holds the owner lock."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._lock = threading.Lock()
        self._templates: set[str] = set()
        self.claim = next(_CLAIMS)
        """Which claim holds the locks now; a new number each time they are taken again."""
        self.tag, self._conn = self._claim(None)

    def _claim(self, key: int | None) -> tuple[OwnerTag, psycopg.Connection[Any]]:
        """Connect and take a free owner key (`key` again after a lost connection, if free)."""
        conn = connect(self.url)
        try:
            if conn.info.server_version >= 140000:
                # This session is idle by design; a server-wide idle timeout must not end it.
                conn.execute("SET idle_session_timeout = 0")
            while True:
                candidate = key or secrets.randbelow(2**31 - 1) + 1
                row = conn.execute(
                    "SELECT pg_try_advisory_lock(%s, %s)", (OWNER_SPACE, candidate)
                ).fetchone()
                if row is not None and row[0]:
                    break
                key = None  # held by a live owner: never share a key with one
            for name in sorted(self._templates):
                conn.execute(_HOLD_TEMPLATE, (TEMPLATE_SPACE, name))
        except psycopg.Error as exc:
            conn.close()
            raise SubstrateError(f"PostgreSQL at {redacted(self.url)}: {exc}") from None
        return OwnerTag(candidate, platform.node(), os.getpid()), conn

    def _holds_key(self) -> bool:
        """Whether the owner session is alive and holds the owner lock (one round trip)."""
        if self._conn.closed or self._conn.broken:
            return False
        try:
            row = self._conn.execute(_HOLDS_KEY, (OWNER_SPACE, self.tag.key)).fetchone()
        except psycopg.Error:
            return False
        return bool(row and row[0])

    def _live_conn(self) -> psycopg.Connection[Any]:
        # A lost session lost its locks with it: others may now reclaim this process's
        # databases that nobody is connected to and prune its templates, so take the key
        # and the templates again before naming or cloning anything more.
        if not self._holds_key():
            self._conn.close()
            self.tag, self._conn = self._claim(self.tag.key)
            self.claim = next(_CLAIMS)
        return self._conn

    def current(self) -> OwnerTag:
        """The tag to give a new database, after checking that the owner lock is still held.

        When the lock was lost the claim is taken again first (same key if still free).
        """
        with self._lock:
            self._live_conn()
            return self.tag

    def hold_template(self, name: str) -> int:
        """Mark template database `name` as in use until this process ends; returns the claim.

        Checks the claim first, like `current`. A claim taken again means the template
        went unheld for a while and a prune may have dropped it, so a caller that checked
        the template under an earlier claim must check it again. Waits while a prune holds
        the template to drop it; the caller then finds it gone and builds it again.
        """
        with self._lock:
            conn = self._live_conn()
            if name not in self._templates:
                try:
                    conn.execute(_HOLD_TEMPLATE, (TEMPLATE_SPACE, name))
                except psycopg.Error as exc:
                    raise SubstrateError(f"PostgreSQL at {redacted(self.url)}: {exc}") from None
                self._templates.add(name)
            return self.claim

    def close(self) -> None:
        """End the claim (the server releases every lock of the connection)."""
        with self._lock:
            self._conn.close()


_OWNERS: dict[str, Owner] = {}
_INHERITED: list[Owner] = []
"""A forked child's copies of its parent's owners: kept, never closed or collected, since
closing one would end the parent's session (and its locks) through the shared socket."""
_OWNERS_LOCK = threading.Lock()


def owner_for(url: str) -> Owner:
    """This process's owner on the server `url` names, claimed on first use."""
    with _OWNERS_LOCK:
        owner = _OWNERS.get(url)
        if owner is None:
            owner = _OWNERS[url] = Owner(url)
        return owner


def _forget_parent_owners() -> None:
    global _OWNERS_LOCK
    _OWNERS_LOCK = threading.Lock()  # another thread may have held it at the fork
    _INHERITED.extend(_OWNERS.values())
    _OWNERS.clear()


def _close_owners() -> None:
    for owner in list(_OWNERS.values()):
        owner.close()


os.register_at_fork(after_in_child=_forget_parent_owners)
atexit.register(_close_owners)
