"""The guard for a sandbox is the one its own substrate brings; without one, a clear error."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import pytest

from kaudit.boundary import guard_for
from kaudit.errors import SubstrateError
from kaudit.spec import Identity
from kaudit.substrate import Denial, ForeignKey, SqliteDb, StateDump


class _Noting:
    """A guard that refuses nothing and remembers what it was built for."""

    def __init__(self, identity: Identity, ownership: Sequence[ForeignKey]) -> None:
        self.identity = identity
        self.ownership = tuple(ownership)

    def take(self) -> list[Denial]:
        return []

    def enter(self) -> None:
        pass

    def leave(self) -> None:
        pass


class _Box:
    """The least a sandbox is: an in-memory database with a run id."""

    def __init__(self) -> None:
        self.run_id = "r1"
        self.db = SqliteDb(sqlite3.connect(":memory:"))
        self.db.conn.execute("CREATE TABLE invoice (id TEXT PRIMARY KEY, org TEXT)")
        self.initial = StateDump.of(self.db.conn.serialize())

    def dump(self) -> StateDump:
        return StateDump.of(self.db.conn.serialize())

    def close(self) -> None:
        self.db.conn.close()


class _GuardedBox(_Box):
    def guard(self, identity: Identity, ownership: Sequence[ForeignKey] = ()) -> _Noting:
        return _Noting(identity, ownership)


def test_the_sandboxs_own_guard_is_used_with_the_worlds_ownership() -> None:
    """Bug caught: `guard_for` choosing by the database's type (this sandbox is over
    kaudit's `SqliteDb`, so SQLite's authorizer would be picked instead), or dropping
    the world's declared keys on the way."""
    identity = Identity(role="clerk", scope={"org": "A"})
    link = ForeignKey("line", ("invoice_id",), "invoice", ())
    guard = guard_for(_GuardedBox(), identity, [link])
    assert isinstance(guard, _Noting)
    assert (guard.identity, guard.ownership) == (identity, (link,))


def test_a_sandbox_whose_substrate_brings_no_guard_is_refused_by_name() -> None:
    """Bug caught: an identity silently ignored on a substrate that cannot enforce it, or
    quietly enforced by another substrate's guard that happens to fit its database."""
    with pytest.raises(SubstrateError) as raised:
        guard_for(_Box(), Identity(role="clerk"))
    assert str(raised.value) == (
        "run r1: identity 'clerk' cannot be enforced: the substrate of "
        "tests.boundary.test_choice._Box gives its sandboxes no guard()"
    )
