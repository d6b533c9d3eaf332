"""A run's final state frozen on the sandbox's own connection: read in place, bytes on demand.

Copying the final state out (`serialize()`) and back in (`deserialize()`) to label it
costs two image copies and a second parse of the schema, the change-capture triggers
included; labeling on the connection the run wrote through costs neither. The state is
frozen when the dump is taken, so whatever reads it later (the labeler, the checks, the
bytes for the ledger) sees the state the run left, and nothing can change it:
`PRAGMA query_only` makes the engine refuse every write, and an authorizer that only
allows reads keeps any SQL from turning that off.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from kaudit.errors import SubstrateError
from kaudit.substrate._schema import Schema, drop_temporary, read_schema

_READS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE})
FILE_FUNCTIONS = frozenset(
    {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", "lsmode", "fsdir"}
)
"""SQL functions that reach the host's files; never allowed on a frozen state."""
_ACTION_NAMES = {
    getattr(sqlite3, f"SQLITE_{name}"): name
    for name in [
        "ALTER_TABLE",
        "ANALYZE",
        "ATTACH",
        "CREATE_INDEX",
        "CREATE_TABLE",
        "CREATE_TEMP_TABLE",
        "CREATE_TRIGGER",
        "CREATE_VIEW",
        "CREATE_VTABLE",
        "DELETE",
        "DETACH",
        "DROP_TABLE",
        "DROP_TRIGGER",
        "DROP_VIEW",
        "FUNCTION",
        "INSERT",
        "PRAGMA",
        "REINDEX",
        "SAVEPOINT",
        "TRANSACTION",
        "UPDATE",
    ]
}


def shadows_dropped(conn: sqlite3.Connection) -> None:
    """Drop the temporary tables and views on `conn`: their names resolve before `main`'s.

    A temporary table named like a main table (or like a table-valued PRAGMA the
    schema reader calls) would answer for it to the checks and the labeler. Temporary
    triggers stay: on a frozen state no write can fire them.
    """
    drop_temporary(conn, ("table", "view"))


class ReadOnlyGuard:
    """An SQLite authorizer allowing SELECT, table reads, CTEs and non-file functions.

    Every other action is denied and noted in `denied`, so a caller can tell a refused
    statement from an ordinary SQL error. While `trusted` is set (kaudit's own labeler,
    never SQL from a task file) everything is allowed; writes still fail, because the
    connection is `query_only`.
    """

    def __init__(self) -> None:
        self.denied: list[str] = []
        self.trusted = False

    def __call__(self, action: int, arg1: str | None, arg2: str | None, *_: object) -> int:
        if self.trusted or action in _READS:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() not in FILE_FUNCTIONS:
            return sqlite3.SQLITE_OK
        what = _ACTION_NAMES.get(action, str(action))
        self.denied.append(" ".join(x for x in (what, arg1, arg2) if x))
        return sqlite3.SQLITE_DENY


class FrozenState:
    """The final state of one run, frozen in place on the connection the run wrote through.

    Created by `SqliteSandbox.dump()`; from then on the connection only reads. `image`
    (the SQLite bytes) and `digest` (their sha256) are produced on first use and are the
    same whenever they are taken, since the state cannot change. `release()` frees the
    state; until then it outlives the sandbox's `close()`.

    A pooled sandbox's state sits in an open transaction: `before_image` commits it first
    (the bytes of a memory database are written at commit), and `on_release` takes the
    connection back instead of closing it.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        run_id: str,
        *,
        before_image: Callable[[], None] | None = None,
        on_release: Callable[[sqlite3.Connection], None] | None = None,
    ) -> None:
        self.run_id = run_id
        self._guard = ReadOnlyGuard()
        conn.execute("PRAGMA query_only = ON")
        conn.set_authorizer(self._guard)  # also expires statements prepared before
        self._conn: sqlite3.Connection | None = conn
        self._image: bytes | None = None
        self._digest: str | None = None
        self._before_image = before_image
        self._on_release = on_release

    def _open_connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise SubstrateError(f"run {self.run_id}: the final state was released")
        return self._conn

    @property
    def image(self) -> bytes:
        """The state as SQLite bytes (`serialize()` of the frozen database, taken once)."""
        if self._image is None:
            if self._before_image is not None:
                with self.reading():
                    self._before_image()  # COMMIT changes no row: the state stays frozen
            self._image = self._open_connection().serialize()
        return self._image

    @property
    def digest(self) -> str:
        """sha256 of `image`."""
        if self._digest is None:
            self._digest = hashlib.sha256(self.image).hexdigest()
        return self._digest

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """The frozen connection for kaudit's labeler: any read, schema PRAGMAs, ATTACH.

        Writes are still refused (the connection is `query_only`); a database the labeler
        attaches beside `main` is detached by the labeler itself.
        """
        conn = self._open_connection()
        self._guard.trusted = True
        try:
            yield conn
        finally:
            self._guard.trusted = False

    @contextmanager
    def guarded(self) -> Iterator[tuple[sqlite3.Connection, ReadOnlyGuard]]:
        """The frozen connection for untrusted SQL (a task's checks), with its guard's notes."""
        conn = self._open_connection()
        self._guard.denied.clear()
        yield conn, self._guard

    def open(self) -> sqlite3.Connection:
        """A private in-memory connection over a copy of the image."""
        conn = sqlite3.connect(":memory:")
        conn.deserialize(self.image)
        return conn

    def schema(self) -> Schema:
        """Tables, columns and primary keys of the frozen state."""
        with self.reading() as conn:
            return read_schema(conn)

    def release(self) -> None:
        """Free the state; `image` and `digest` stay readable only if they were taken."""
        if self._conn is not None:
            conn, self._conn = self._conn, None
            if self._on_release is not None:
                self._on_release(conn)
            else:
                conn.close()
