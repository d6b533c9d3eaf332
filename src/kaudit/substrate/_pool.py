"""Reusing sandbox connections: a run is one transaction, rolled back when it ends.

A fresh SQLite sandbox costs a copy of the template and, on its first statement, a
parse of the whole schema, the change-capture triggers included (about 0.7 ms for the
built-in world's 102 triggers, more than the tool calls themselves). A pooled
connection keeps its parsed schema: the run's first statement opens a transaction,
releasing the sandbox rolls it back, and the connection goes back to the pool only if
it then holds the template byte for byte and carries nothing of the run (no attached
database, no PRAGMA the run set; temporary objects the harness made before the run,
such as a boundary's scope triggers, are dropped, unless the run held them as its
connection's *guard script*, see `PooledRun.hold_script`).

The run must see exactly what an autocommit connection shows it, so statements whose
effect differs inside an open transaction are sorted before they run (`pooled_effect`):
at the top level the run leaves the pool first (what it did so far is committed and it
goes on in autocommit, as an unpooled sandbox would; the connection is discarded
afterwards). Inside an `atomic()` block nothing can be committed without committing the
block's partial work, so the few statements that would roll back more than the block
(`ROLLBACK`, `OR ROLLBACK`) or defer constraints past it are refused as a harness
error: the run becomes INVALID with the reason, never a wrong verdict. Worlds whose own
schema can roll back or defer (`ON CONFLICT ROLLBACK`, `RAISE(ROLLBACK, ...)`,
`DEFERRABLE`) are never pooled.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import threading
import weakref
from typing import Literal

from kaudit.errors import SubstrateError
from kaudit.substrate._capture import CHANGE_LOG
from kaudit.substrate._schema import quote

IDLE_PER_WORLD = 8
"""Idle connections kept per template (a local campaign runs 8 sandboxes at once)."""
IDLE_IN_PROCESS = 16
"""Idle connections kept over every template of the process, to bound memory."""

_QUOTED = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|`[^`]*`|\[[^\]]*\]")
_LEADING = re.compile(r"^(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.DOTALL)
_FIRST_WORD = re.compile(r"\w+")
_CONFLICT_ROLLBACK = re.compile(r"\bOR\s+ROLLBACK\b", re.IGNORECASE)
_DDL_UNSAFE = re.compile(r"\b(ROLLBACK|DEFERRABLE|DEFERRED)\b", re.IGNORECASE)
_ROLLBACK_TO = re.compile(r"^ROLLBACK\s+(TRANSACTION\s+)?TO\b", re.IGNORECASE)
_LEAVES = frozenset({"BEGIN", "COMMIT", "END", "SAVEPOINT", "RELEASE", "ROLLBACK", "PRAGMA",
                     "VACUUM", "ATTACH", "DETACH"})  # fmt: skip
_ENDS = frozenset({"COMMIT", "END"})
_MARKS = frozenset({"PRAGMA", "ATTACH", "DETACH", "VACUUM"})
_DDL = frozenset({"CREATE", "ALTER"})

Effect = Literal["same", "marks", "ends", "leave", "refuse"]
"""What a statement does to a pooled run: nothing different; leaves state on the
connection (never pooled again); ends the run's transaction (its work is committed, as
in autocommit); must run in autocommit (leave the pool first); cannot run pooled."""


def _rolls_back_or_defers(first: str, text: str) -> bool:
    """Whether a DML or DDL statement (literals removed) can roll back or defer a check.

    `OR ROLLBACK` in a write; `ON CONFLICT ROLLBACK`, `RAISE(ROLLBACK, ...)` or a
    deferrable constraint in DDL. Words inside literals and quoted names never count.
    """
    if first in _DDL:
        return _DDL_UNSAFE.search(text) is not None
    return _CONFLICT_ROLLBACK.search(text) is not None


@functools.lru_cache(maxsize=4096)
def pooled_effect(sql: str, depth: int) -> Effect:
    """How `sql` behaves in a pooled run at `atomic()` depth `depth` (0 = top level).

    Memoized: tools send the same parameterized statements run after run.
    """
    text = _QUOTED.sub("''", sql)
    text = text[_LEADING.match(text).end() :]  # type: ignore[union-attr]
    found = _FIRST_WORD.match(text)
    first = found.group(0).upper() if found else ""
    unsafe = _rolls_back_or_defers(first, text)
    if depth == 0:
        return "leave" if first in _LEAVES or unsafe else "same"
    if _ROLLBACK_TO.match(text):
        return "same"  # the tool's own savepoint inside the block: nested either way
    if unsafe or first == "ROLLBACK":
        return "refuse"
    if first in _ENDS:
        return "ends"
    return "marks" if first in _MARKS else "same"


def poolable(conn: sqlite3.Connection) -> bool:
    """Whether a template's own schema keeps autocommit semantics inside a transaction."""
    rows = conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL").fetchall()
    return not any(_rolls_back_or_defers("CREATE", _QUOTED.sub("''", sql)) for (sql,) in rows)


_POOLS: weakref.WeakSet[SandboxPool] = weakref.WeakSet()
_BUDGET = threading.Lock()


Idle = tuple[sqlite3.Connection, str | None]
"""An idle connection and the guard script its temp schema holds (None: nothing)."""


class SandboxPool:
    """Idle connections of one template, each holding it byte for byte, schema parsed.

    A pool that is garbage-collected takes its idle connections with it, so the
    process-wide budget counts only the pools still alive.
    """

    def __init__(self) -> None:
        self._idle: list[Idle] = []
        with _BUDGET:
            _POOLS.add(self)

    def take(self) -> Idle | None:
        """The idle connection given back last (runs of one cell follow each other), or None."""
        with _BUDGET:
            return self._idle.pop() if self._idle else None

    def give_back(self, conn: sqlite3.Connection, script: str | None = None) -> None:
        """Keep `conn` (holding guard script `script`) for a later run, or close it when full.

        When the process holds its budget of idle connections, the oldest idle one of
        the fullest other pool is closed instead: the template in use stays warm.
        """
        closing: sqlite3.Connection | None = conn
        with _BUDGET:
            if len(self._idle) < IDLE_PER_WORLD:
                closing = None
                if sum(len(pool._idle) for pool in _POOLS) >= IDLE_IN_PROCESS:
                    others = [pool for pool in _POOLS if pool is not self and pool._idle]
                    closing = max(others, key=len)._idle.pop(0)[0] if others else conn
                if closing is not conn:
                    self._idle.append((conn, script))
        if closing is not None:
            closing.close()

    def __len__(self) -> int:
        return len(self._idle)


class PooledRun:
    """One run's transaction on a pooled connection: the statement hooks and the way back.

    The transaction opens lazily, before the run's first statement, so what is set up on
    the connection before it (a boundary's temporary triggers, created by a script that
    would commit an open transaction) stays in place for the run.

    A boundary's scope triggers cost more to create and drop (about 2 ms each way for the
    built-in world) than the rest of a run's harness work, and consecutive runs of one
    cell need the same ones. So the temp schema a *guard script* made stays on the
    connection when it goes back to the pool, tagged with that script: the next run
    that asks for the same script finds it in place, and a run that asks for another one
    or none has it dropped before its first statement, so it sees what a fresh sandbox
    shows.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        pool: SandboxPool,
        template: bytes,
        run_id: str,
        script: str | None = None,
    ) -> None:
        self.conn = conn
        self.pool = pool
        self.run_id = run_id
        self.broken: str | None = None
        self._template = template
        self._opened = False
        self._left = False
        self._marked = False
        self._ends = False
        self._script = script
        self._script_rows: frozenset[tuple[str, str]] = (
            _temp_rows(conn) if script is not None else frozenset()
        )
        self._holds_script = False

    def hold_script(self, script: str) -> None:
        """Make the temp schema hold exactly what `script` creates, reusing it when it does.

        Called before the run's first statement; the script runs outside the run's
        transaction, so rolling the run back keeps what it made.
        """
        if self._opened:
            raise SubstrateError(f"run {self.run_id}: a guard script after the run began")
        if self._script != script:
            _drop_temporary(self.conn)
            self.conn.executescript(script)
            self._script = script
            self._script_rows = _temp_rows(self.conn)
        self._holds_script = True

    def settle(self) -> None:
        """Drop a guard script an earlier run left that this run did not ask for."""
        if self._script is not None and not self._holds_script:
            _drop_temporary(self.conn)
            self._script = None
            self._script_rows = frozenset()

    @property
    def pending(self) -> bool:
        """Whether the run's work sits in the open transaction (not committed)."""
        return self._opened and not self._left

    def _break(self, reason: str) -> None:
        self.broken = f"run {self.run_id}: {reason}"
        raise SubstrateError(self.broken)

    def before(self, sql: str | None, depth: int) -> None:
        """Open the transaction, check it still holds, and sort the statement."""
        if self._left:
            return
        if self.broken is not None:
            raise SubstrateError(self.broken)
        if not self._opened:
            self.settle()
            self.conn.execute("BEGIN")
            self._opened = True
        elif not self.conn.in_transaction:
            self._break("the run's transaction ended outside kaudit; its writes may be lost")
        if sql is None:
            return
        effect = pooled_effect(sql, depth)
        if effect == "leave":
            self.commit()
        elif effect == "refuse":
            self._break(
                f"a pooled sandbox cannot run {sql.strip()[:60]!r} inside atomic(): it would "
                "roll back or defer past the block"
            )
        self._marked |= effect == "marks"
        self._ends = effect == "ends"

    def after(self) -> None:
        """A transaction that ended is fine only after COMMIT; anything else lost writes."""
        if self.pending and not self.conn.in_transaction:
            if not self._ends:
                self._break("a statement rolled back the run's transaction")
            self._left = True
        self._ends = False

    def commit(self) -> None:
        """Commit the run's work and go on in autocommit; the connection is not pooled again."""
        if self.pending:
            self.conn.execute("COMMIT")
        self._left = True

    def release(self, conn: sqlite3.Connection) -> None:
        """Roll the run back and pool the connection if it is the template again, else close it."""
        reusable = not (self._left or self._marked or self.broken)
        script = self._script if self._holds_script else None
        try:
            conn.set_authorizer(None)
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            conn.execute("PRAGMA query_only = OFF")
            if script is not None and _temp_rows(conn) != self._script_rows:
                script = None  # the run's SQL changed what the script made outside kaudit
            reusable = reusable and self._pristine(conn, keep_temporary=script is not None)
        except sqlite3.Error:
            reusable = False
        if reusable:
            self.pool.give_back(conn, script)
        else:
            conn.close()

    def _pristine(self, conn: sqlite3.Connection, *, keep_temporary: bool) -> bool:
        """Whether `conn` shows the next run what a fresh sandbox would (but a guard script).

        `keep_temporary` keeps the temp schema a guard script made (checked unchanged by
        the caller); the next run drops it unless it asks for the same script.
        """
        names = {row[1] for row in conn.execute("PRAGMA database_list")}
        if not names <= {"main", "temp"}:
            return False
        if not keep_temporary:
            # Temporary objects that outlived the rollback were made outside the run's
            # transaction, by the harness before the run's first statement (a
            # boundary's scope triggers); a fresh connection has none.
            _drop_temporary(conn)
            if conn.execute("SELECT 1 FROM temp.sqlite_master LIMIT 1").fetchone() is not None:
                return False
        if conn.execute("SELECT last_insert_rowid()").fetchone()[0] != 0:
            # A fresh connection answers 0; an insert rolled back inside a transaction
            # sets it back without leaving anything behind.
            conn.execute("BEGIN")
            conn.execute(f"INSERT INTO {CHANGE_LOG} (seq, tbl) VALUES (0, '')")
            conn.execute("ROLLBACK")
        conn.row_factory = None
        conn.text_factory = str
        # The SeedDriftError guarantee, checked when the connection comes back.
        return conn.serialize() == self._template


def _temp_rows(conn: sqlite3.Connection) -> frozenset[tuple[str, str]]:
    """The temp schema's objects as SQLite stores them: (name, sql)."""
    rows = conn.execute("SELECT name, coalesce(sql, '') FROM temp.sqlite_master").fetchall()
    return frozenset(rows)


def _drop_temporary(conn: sqlite3.Connection) -> None:
    """Drop every temporary trigger, view and table (indexes go with their tables)."""
    temporary = conn.execute(
        "SELECT type, name FROM temp.sqlite_master WHERE type IN ('trigger', 'view', 'table')"
    ).fetchall()
    for kind, name in temporary:
        conn.execute(f"DROP {kind.upper()} IF EXISTS temp.{quote(name)}")
