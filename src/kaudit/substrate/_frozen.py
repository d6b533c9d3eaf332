"""A run's final state frozen on the sandbox's own connection: read in place, bytes on demand.

Copying the final state out (`serialize()`) and back in (`deserialize()`) to label it
costs two image copies and a second parse of the schema, the change-capture triggers
included; labeling on the connection the run wrote through costs neither. The state is
frozen when the dump is taken, so whatever reads it later (the labeler, the checks, the
bytes for the ledger) sees the state the run left, and nothing can change it: the
connection's statement gate is switched to reads only (the labeler may do more, but
never change `main`). It is switched, not replaced, and no flag PRAGMA is set
(`query_only` would expire every compiled statement too): a pooled connection keeps
what it compiled for the next run (`substrate._gate`).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from kaudit.errors import SubstrateError
from kaudit.substrate._gate import Mode, ReadOnlyGuard, gate_of
from kaudit.substrate._schema import Schema, drop_temporary, read_schema


def shadows_dropped(conn: sqlite3.Connection) -> None:
    """Drop the temporary tables and views on `conn`: their names resolve before `main`'s.

    A temporary table named like a main table (or like a table-valued PRAGMA the
    schema reader calls) would answer for it to the checks and the labeler. Temporary
    triggers stay: on a frozen state no write can fire them.
    """
    with gate_of(conn).trusted():
        drop_temporary(conn, ("table", "view"))


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
        self._gate = gate_of(conn)
        self._guard = self._gate.read_only
        self._gate.mode = Mode.FROZEN
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

        Changes to `main` are still refused (the gate's `LABEL` mode); a database the labeler
        attaches beside `main` is detached by the labeler itself.
        """
        conn = self._open_connection()
        with self._gate.trusted(Mode.LABEL):
            yield conn

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
