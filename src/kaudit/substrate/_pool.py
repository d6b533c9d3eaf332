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
`DEFERRABLE`) are never pooled. Statements are read as SQLite's tokenizer reads them
(`substrate._statement`): words in comments, literals and quoted names never count, and
`EXPLAIN PRAGMA` is a PRAGMA (SQLite applies it while compiling).
"""

from __future__ import annotations

import functools
import itertools
import re
import sqlite3
import threading
import weakref
from collections.abc import Callable
from typing import Literal

from kaudit.errors import SubstrateError
from kaudit.substrate._capture import CHANGE_LOG
from kaudit.substrate._schema import INTERNAL_PREFIX, drop_temporary
from kaudit.substrate._statement import Statement, read_statement, statement_tokens

_TEMPORARY = ("trigger", "view", "table")
"""Every kind of temp object SQL can make; a fresh sandbox has none."""
IDLE_PER_WORLD = 8
"""Idle connections kept per template (a local campaign runs 8 sandboxes at once)."""
IDLE_IN_PROCESS = 16
"""Idle connections kept over every template of the process, to bound memory."""

_LEAVES = frozenset({"BEGIN", "COMMIT", "END", "SAVEPOINT", "RELEASE", "ROLLBACK", "PRAGMA",
                     "VACUUM", "ATTACH", "DETACH"})  # fmt: skip
_ENDS = frozenset({"COMMIT", "END"})
_MARKS = frozenset({"PRAGMA", "ATTACH", "DETACH", "VACUUM"})
_DDL = frozenset({"CREATE", "ALTER"})
_DDL_UNSAFE = frozenset({"ROLLBACK", "DEFERRABLE", "DEFERRED"})
_READS_ONLY = frozenset({"SELECT", "VALUES"})
_SAVEPOINTS = frozenset({"SAVEPOINT", "RELEASE", "ROLLBACK"})
_ATOMIC_SAVEPOINT = re.compile(r"kaudit_\d+")
_PROCESS_WIDE = "changes a limit of the whole process, every later run's sandbox included"
_REFUSED_PRAGMAS = {
    "writable_schema": "lets SQL rewrite the stored schema behind the engine's back, so the "
    "labeler could read another schema than the one stored",
    "schema_version": "sets the schema cookie by hand, which can hide DDL (a dropped "
    "change-capture trigger) from the labeler",
    "hard_heap_limit": _PROCESS_WIDE,
    "soft_heap_limit": _PROCESS_WIDE,
    "threads": _PROCESS_WIDE,
}

Effect = Literal["same", "marks", "ends", "leave", "refuse"]
"""What a statement does to a pooled run: nothing different; leaves state on the
connection (never pooled again); ends the run's transaction (its work is committed, as
in autocommit); must run in autocommit (leave the pool first); cannot run pooled."""


def _rolls_back_or_defers(statement: Statement) -> bool:
    """Whether a DML or DDL statement can roll back or defer a check.

    `OR ROLLBACK` in a write; `ON CONFLICT ROLLBACK`, `RAISE(ROLLBACK, ...)` or a
    deferrable constraint in DDL. Words inside comments, literals and quoted names
    never count.
    """
    words = statement.words
    if statement.kind in _DDL:
        return not _DDL_UNSAFE.isdisjoint(words)
    return any(a == "OR" and b == "ROLLBACK" for a, b in itertools.pairwise(words))


def _rolls_back_to_savepoint(words: tuple[str, ...]) -> bool:
    return words[1:2] == ("TO",) or words[1:3] == ("TRANSACTION", "TO")


def refusal(sql: str) -> str | None:
    """Why no sandbox, pooled or not, may run `sql`; None when it may.

    `EXPLAIN PRAGMA` counts as the PRAGMA: SQLite applies many of them while compiling.
    A statement other than a read naming kaudit's change log or its triggers could
    empty the log and hide the run's writes from the labeler's fast path.
    """
    statement = read_statement(sql)
    if statement.sets and statement.pragma in _REFUSED_PRAGMAS:
        return f"PRAGMA {statement.pragma} {_REFUSED_PRAGMAS[statement.pragma]}"
    if statement.kind in _SAVEPOINTS and any(map(_ATOMIC_SAVEPOINT.fullmatch, statement.names)):
        return "it ends or rolls back a savepoint of atomic() itself, behind its back"
    if statement.kind == "ATTACH" and not statement.explained and not _attaches_memory(sql):
        return "it attaches a file on the host (only ':memory:' or '' may be attached)"
    if statement.kind == "VACUUM" and "INTO" in statement.words and not statement.explained:
        return "VACUUM INTO writes a file on the host"
    internal = sorted(name for name in statement.names if name.startswith(INTERNAL_PREFIX))
    if internal and statement.kind not in _READS_ONLY and not statement.explained:
        return f"it names kaudit's own {internal[0]} (the change log the labeler trusts)"
    return None


def _attaches_memory(sql: str) -> bool:
    """Whether an ATTACH is exactly `ATTACH [DATABASE] ':memory:'|'' AS name`.

    The filename is an expression: a file (`'' || 'f.db'`, a bound parameter) would let a
    run write on the host and leave data there for a later run to read, pooled or not,
    so anything but one of the two literals followed by `AS name` is refused.
    """
    tokens = statement_tokens(sql)[1:]  # after ATTACH
    if tokens and tokens[0][0] == "word" and tokens[0][1].upper() == "DATABASE":
        tokens = tokens[1:]
    while tokens and tokens[-1] == ("other", ";"):
        tokens = tokens[:-1]
    if len(tokens) != 3 or tokens[0] not in (("string", "':memory:'"), ("string", "''")):
        return False
    return tokens[1][0] == "word" and tokens[1][1].upper() == "AS" and tokens[2][0] != "other"


@functools.lru_cache(maxsize=4096)
def statement_rules(sql: str) -> tuple[str | None, bool, bool]:
    """`refusal`, `touches_connection` and `creates` of `sql`, memoized together.

    Every sandbox statement asks all three, and tools repeat their SQL run after run.
    """
    return refusal(sql), touches_connection(sql), creates(sql)


def touches_connection(sql: str) -> bool:
    """Whether `sql` can leave state on the connection (a PRAGMA, ATTACH, DETACH, VACUUM)."""
    statement = read_statement(sql)
    return statement.kind in _MARKS and (statement.kind == "PRAGMA" or not statement.explained)


def creates(sql: str) -> bool:
    """Whether `sql` is a CREATE statement: the only way SQL makes a temporary table or view."""
    statement = read_statement(sql)
    return statement.kind == "CREATE" and not statement.explained


@functools.lru_cache(maxsize=4096)
def pooled_effect(sql: str, depth: int) -> Effect:
    """How `sql` behaves in a pooled run at `atomic()` depth `depth` (0 = top level).

    Memoized: tools send the same parameterized statements run after run.
    """
    statement = read_statement(sql)
    first = statement.kind
    if statement.explained and first != "PRAGMA":
        return "same"  # compiled, never run
    unsafe = _rolls_back_or_defers(statement)
    if depth == 0:
        return "leave" if first in _LEAVES or unsafe else "same"
    if first == "ROLLBACK" and _rolls_back_to_savepoint(statement.words):
        return "same"  # the tool's own savepoint inside the block: nested either way
    defers = statement.pragma == "defer_foreign_keys" and statement.sets
    if unsafe or first == "ROLLBACK" or defers:
        return "refuse"
    if first in _ENDS:
        return "ends"
    return "marks" if first in _MARKS else "same"


def poolable(conn: sqlite3.Connection) -> bool:
    """Whether a template's own schema keeps autocommit semantics inside a transaction."""
    rows = conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL").fetchall()
    return not any(_rolls_back_or_defers(read_statement(sql)) for (sql,) in rows)


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


def _reset_counters(conn: sqlite3.Connection) -> None:
    """Set `last_insert_rowid()` and `changes()` back to a fresh connection's 0.

    Run inside the run's transaction, just before its rollback: an insert sets the
    rowid and a delete of no row the count, and the rollback leaves nothing else
    behind. (`total_changes()` only grows: see docs/soundness.md.)
    """
    rowid, changed = conn.execute("SELECT last_insert_rowid(), changes()").fetchone()
    if rowid:
        conn.execute(f"INSERT INTO {CHANGE_LOG} (seq, tbl) VALUES (0, '')")
    if rowid or changed:
        conn.execute(f"DELETE FROM {CHANGE_LOG} WHERE 0")


_FUNCTIONS: dict[int, set[tuple[str, int]]] = {}
_FUNCTIONS_LOCK = threading.Lock()


def register_function(
    conn: sqlite3.Connection, name: str, narg: int, fn: Callable[..., int | float | str | None]
) -> None:
    """`conn.create_function`, remembered so the sandbox's release disarms it again.

    A pooled connection would otherwise offer the next run an earlier run's function
    (a boundary's, holding that run's identity).
    """
    conn.create_function(name, narg, fn)
    with _FUNCTIONS_LOCK:
        _FUNCTIONS.setdefault(id(conn), set()).add((name, narg))


def forget_functions(conn: sqlite3.Connection) -> None:
    """Disarm every function `register_function` put on `conn`.

    sqlite3 cannot unregister a function: it is replaced by one that fails every call,
    as calling a missing function does, and the callback (with what it holds) is freed.
    """
    with _FUNCTIONS_LOCK:
        registered = _FUNCTIONS.pop(id(conn), set())
    for name, narg in registered:
        conn.create_function(name, narg, None)


class StatementRules:
    """What every sandbox refuses, pooled or not, and whether the run touched its connection.

    A refused statement (`refusal`) makes the run INVALID: the `SubstrateError` stops
    the run, and `broken` keeps its dump from being labeled even if a tool swallowed it.
    `touched` notes a PRAGMA, ATTACH, DETACH or VACUUM, after which the final state is
    read on a fresh connection instead of the run's own; `created` a CREATE, after which
    temporary tables and views are looked for (see `SqliteSandbox.dump`).
    """

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.broken: str | None = None
        self.touched = False
        self.created = False

    def _break(self, reason: str) -> None:
        self.broken = f"run {self.run_id}: {reason}"
        raise SubstrateError(self.broken)

    def before(self, sql: str | None, depth: int) -> None:
        """Refuse what no sandbox may run; note what touches the connection."""
        if self.broken is not None:
            raise SubstrateError(self.broken)
        if sql is None:
            return
        reason, touches, makes = statement_rules(sql)
        if reason is not None:
            self._break(f"a sandbox cannot run {sql.strip()[:60]!r}: {reason}")
        self.touched = self.touched or touches
        self.created = self.created or makes

    def after(self) -> None:
        """Nothing to check after a statement outside a pool."""


class PooledRun(StatementRules):
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
        super().__init__(run_id)
        self.conn = conn
        self.pool = pool
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
            drop_temporary(self.conn, _TEMPORARY)
            self.conn.executescript(script)
            self._script = script
            self._script_rows = _temp_rows(self.conn)
        self._holds_script = True

    def settle(self) -> None:
        """Drop a guard script an earlier run left that this run did not ask for."""
        if self._script is not None and not self._holds_script:
            drop_temporary(self.conn, _TEMPORARY)
            self._script = None
            self._script_rows = frozenset()

    @property
    def pending(self) -> bool:
        """Whether the run's work sits in the open transaction (not committed)."""
        return self._opened and not self._left

    def before(self, sql: str | None, depth: int) -> None:
        """Open the transaction, check it still holds, and sort the statement."""
        super().before(sql, depth)
        if self._left:
            return
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
        self.settle()  # a run that leaves before its first statement: no earlier guard script
        if self.pending:
            self.conn.execute("COMMIT")
        self._left = True

    def release(self, conn: sqlite3.Connection) -> None:
        """Roll the run back and pool the connection if it is the template again, else close it."""
        reusable = not (self._left or self._marked or self.touched or self.broken)
        script = self._script if self._holds_script else None
        try:
            conn.set_authorizer(None)
            forget_functions(conn)
            conn.execute("PRAGMA query_only = OFF")
            opened = conn.in_transaction
            if opened:
                if reusable:
                    _reset_counters(conn)
                conn.execute("ROLLBACK")
            if script is not None and _temp_rows(conn) != self._script_rows:
                script = None  # the run's SQL changed what the script made outside kaudit
            keep = script is not None
            reusable = reusable and self._pristine(conn, counted=opened, keep_temporary=keep)
        except sqlite3.Error:
            reusable = False
        if reusable:
            self.pool.give_back(conn, script)
        else:
            conn.close()

    def _pristine(self, conn: sqlite3.Connection, *, counted: bool, keep_temporary: bool) -> bool:
        """Whether `conn` shows the next run what a fresh sandbox would (but a guard script).

        `counted`: the counters were just reset (`_reset_counters`). `keep_temporary`
        keeps the temp schema a guard script made (checked unchanged by the caller); the
        next run drops it unless it asks for the same script.
        """
        names = {row[1] for row in conn.execute("PRAGMA database_list")}
        if not names <= {"main", "temp"}:
            return False
        if not keep_temporary:
            # Temporary objects that outlived the rollback were made outside the run's
            # transaction, by the harness before the run's first statement (a
            # boundary's scope triggers); a fresh connection has none.
            drop_temporary(conn, _TEMPORARY)
            if conn.execute("SELECT 1 FROM temp.sqlite_master LIMIT 1").fetchone() is not None:
                return False
        if not counted and conn.execute("SELECT last_insert_rowid() OR changes()").fetchone()[0]:
            return False  # a run that never opened its transaction cannot have set them
        conn.row_factory = None
        conn.text_factory = str
        # The SeedDriftError guarantee, checked when the connection comes back.
        return conn.serialize() == self._template


def _temp_rows(conn: sqlite3.Connection) -> frozenset[tuple[str, str]]:
    """The temp schema's objects as SQLite stores them: (name, sql)."""
    rows = conn.execute("SELECT name, coalesce(sql, '') FROM temp.sqlite_master").fetchall()
    return frozenset(rows)
