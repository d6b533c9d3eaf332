"""Reusing sandbox connections: a run is one transaction, rolled back when it ends.

A fresh SQLite sandbox costs a copy of the template and, on its first statement, a
parse of the whole schema, the change-capture triggers included (about 0.7 ms for the
built-in world's 102 triggers, more than the tool calls themselves). A pooled
connection keeps its parsed schema and its compiled statements: the run's first
statement opens a transaction, releasing the sandbox rolls it back, and the
connection goes back to the pool only if it then holds the template byte for byte and
carries nothing of the run (no attached database, no PRAGMA the run set; temporary
objects the harness made before the run, such as a boundary's scope triggers, are
dropped, unless the run held them as its connection's *guard script*, see
`PooledRun.hold_script`).

Comparing the bytes costs a copy and a compare of the whole image (0.3 to 0.8 ms for
the built-in world's 1.7 MB), as much as the rest of a run that changes nothing. So it
is made only when the run may have written a page of `main`: SQLite counted a row
change on the connection (`total_changes`, which counts every INSERT, UPDATE and DELETE,
committed or rolled back, kaudit's own included), the schema cookie moved (any DDL), or
the gate saw a REINDEX or ANALYZE (which write pages neither counts). A run that did none
of these wrote no page, so after its rollback the image is the one the connection was
taken with, which was the template. Every `FULL_CHECK_EVERY`-th such release of a pool is
compared all the same: a tripwire for a write this argument missed (world code that
reruns a statement kaudit compiled escapes the gate's notes, never the two counters).

Every statement a tool runs is judged by the connection's statement gate
(`substrate._gate`, SQLite's own authorizer): what no sandbox may run is refused and
the run becomes INVALID. The run must also see exactly what an autocommit connection
shows it, so statements whose effect differs inside an open transaction are sorted as
they compile: at the top level the run leaves the pool first (what it did so far is
committed and it goes on in autocommit, as an unpooled sandbox would; the connection
is discarded afterwards). Inside an `atomic()` block nothing can be committed without
committing the block's partial work, so the few statements that would roll back more
than the block (`ROLLBACK`, `OR ROLLBACK`) or defer constraints past it are refused as
a harness error: the run becomes INVALID with the reason, never a wrong verdict.
Worlds whose own schema can roll back or defer (`ON CONFLICT ROLLBACK`,
`RAISE(ROLLBACK, ...)`, `DEFERRABLE`) are never pooled.
"""

from __future__ import annotations

import itertools
import sqlite3
import threading
import weakref
from collections.abc import Callable
from typing import Any

from kaudit.errors import SubstrateError
from kaudit.substrate._capture import CHANGE_LOG
from kaudit.substrate._gate import CHECK_SQL, INSIDE_ATOMIC, TOOL_SQL, Mode, gate_of
from kaudit.substrate._schema import drop_temporary
from kaudit.substrate._statement import needs_reading, read_statement

_TEMPORARY = ("trigger", "view", "table")
"""Every kind of temp object SQL can make; a fresh sandbox has none."""
IDLE_PER_WORLD = 8
"""Idle connections kept per template (a local campaign runs 8 sandboxes at once)."""
IDLE_IN_PROCESS = 16
"""Idle connections kept over every template of the process, to bound memory."""
FULL_CHECK_EVERY = 16
"""Of a pool's releases after runs that wrote nothing, one in this many compares bytes."""


def poolable(conn: sqlite3.Connection) -> bool:
    """Whether a template's own schema keeps autocommit semantics inside a transaction."""
    rows = conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL").fetchall()
    return not any(read_statement(sql).rolls_back_or_defers for (sql,) in rows)


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
        self._unwritten = itertools.count()
        self.compared = 0
        """Releases whose image was compared with the template (for tests and benches)."""
        with _BUDGET:
            _POOLS.add(self)

    def compare_unwritten(self) -> bool:
        """Whether this release of a run that wrote nothing compares the bytes anyway."""
        return (next(self._unwritten) + 1) % FULL_CHECK_EVERY == 0

    def take(self) -> Idle | None:
        """The idle connection given back last that holds no guard script, or None.

        Whether the run will ask for a guard script is known only once its gateway is
        built, and one that does moves to a connection holding it (`take_holding`). So
        a connection holding a script is handed out here only when the pool is full,
        to be dropped; otherwise the run seeds a fresh connection and the pool grows,
        keeping each boundary's scope triggers for the next run that needs them.
        """
        with _BUDGET:
            idle = self._pop_newest(None)
            if idle is None and len(self._idle) >= IDLE_PER_WORLD:
                idle = self._idle.pop(0)
        return idle

    def take_holding(self, script: str) -> Idle | None:
        """The idle connection given back last that holds guard script `script`, or None.

        A run that needs a boundary's scope triggers moves to a connection that already
        has them rather than dropping another script and installing its own (about
        2 ms each way for the built-in world); runs of several cells interleave, so the
        connection `take` gave is often another cell's.
        """
        with _BUDGET:
            return self._pop_newest(script)

    def _pop_newest(self, script: str | None) -> Idle | None:
        """The idle connection given back last that holds `script` (under `_BUDGET`)."""
        for i in range(len(self._idle) - 1, -1, -1):
            if self._idle[i][1] == script:
                return self._idle.pop(i)
        return None

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


def register_function(
    conn: sqlite3.Connection, name: str, narg: int, fn: Callable[..., int | float | str | None]
) -> None:
    """Offer SQL on `conn` the function `name` until the run ends (`StatementGate.bind`).

    A pooled connection would otherwise offer the next run an earlier run's function
    (a boundary's, holding that run's identity).
    """
    gate_of(conn).bind(conn, name, narg, fn)


class StatementRules:
    """Runs a tool's statements under the connection's gate, pooled or not.

    A statement the gate refuses makes the run INVALID: the `SubstrateError` stops the
    run, and `broken` keeps its dump from being labeled even if a tool swallowed it.
    `touched` notes a PRAGMA, ATTACH or DETACH (VACUUM attaches too), after which the
    final state is read on a fresh connection instead of the run's own; `created` a
    table or view, after which temporary ones are looked for (see `SqliteSandbox.dump`).
    """

    def __init__(self, conn: sqlite3.Connection, run_id: str) -> None:
        self.conn = conn
        self.gate = gate_of(conn)
        self.gate.begin()
        self.run_id = run_id
        self.broken: str | None = None

    @property
    def touched(self) -> bool:
        """Whether the run's SQL may have left state on the connection."""
        return self.gate.touched

    @property
    def created(self) -> bool:
        """Whether the run's SQL made a table or view (a temporary one may shadow `main`)."""
        return self.gate.created

    def _break(self, reason: str) -> None:
        self.broken = f"run {self.run_id}: {reason}"
        raise SubstrateError(self.broken)

    def _check(self) -> None:
        if self.broken is not None:
            raise SubstrateError(self.broken)

    def open(self, depth: int) -> None:
        """Nothing to open outside a pool; a refused run stays refused."""
        self._check()

    def run(self, sql: str, params: tuple[Any, ...], depth: int) -> sqlite3.Cursor:
        """Run a tool's `sql` under the gate; a statement it refuses breaks the run."""
        self._check()
        return self._execute(sql, params, depth, pending=False)

    def _execute(
        self, sql: str, params: tuple[Any, ...], depth: int, *, pending: bool
    ) -> sqlite3.Cursor:
        gate = self.gate
        mode = gate.tool(depth, pending)
        prefix = CHECK_SQL if mode is Mode.FROZEN else TOOL_SQL  # after the dump: reads only
        try:
            return self.conn.execute(prefix + sql, params)
        except sqlite3.Error:
            if gate.reason is None:
                raise
        finally:
            gate.mode = mode
        shown = repr(sql.strip()[:60])
        if gate.reason == INSIDE_ATOMIC:
            self._break(f"a pooled sandbox cannot run {shown} {INSIDE_ATOMIC}")
        self._break(f"a sandbox cannot run {shown}: {gate.reason}")
        raise AssertionError("unreachable")  # pragma: no cover


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
        super().__init__(conn, run_id)
        self.pool = pool
        self._template = template
        self._opened = False
        self._left = False
        self._script = script
        self._script_cookie = -1
        """`temp`'s schema cookie once the script's objects were in place (-1: no script)."""
        if script is not None:
            with self.gate.trusted():
                self._script_cookie = _temp_cookie(conn)
        self._holds_script = False
        self._changes = conn.total_changes
        self._cookie = int.from_bytes(template[40:44], "big")  # the header's schema cookie

    def hold_script(self, script: str) -> None:
        """Make the temp schema hold exactly what `script` creates, reusing it when it does.

        Called before the run's first statement; the script runs outside the run's
        transaction, so rolling the run back keeps what it made.
        """
        if self._opened:
            raise SubstrateError(f"run {self.run_id}: a guard script after the run began")
        if not self.holds(script):
            with self.gate.trusted():
                drop_temporary(self.conn, _TEMPORARY)
                self.conn.executescript(script)
                self._script_cookie = _temp_cookie(self.conn)
            self._script = script
        self._holds_script = True

    def holds(self, script: str) -> bool:
        """Whether the connection's temp schema already holds what `script` makes."""
        return self._script == script

    @property
    def script(self) -> str | None:
        """The guard script the connection came from the pool holding (None: nothing)."""
        return self._script

    def settle(self) -> None:
        """Drop a guard script an earlier run left that this run did not ask for."""
        if self._script is not None and not self._holds_script:
            with self.gate.trusted():
                drop_temporary(self.conn, _TEMPORARY)
            self._script = None
            self._script_cookie = -1

    @property
    def pending(self) -> bool:
        """Whether the run's work sits in the open transaction (not committed)."""
        return self._opened and not self._left

    def open(self, depth: int) -> None:
        """Open the run's transaction before its first statement; check it still holds."""
        self._check()
        if self._left:
            return
        if not self._opened:
            self.settle()
            self.conn.execute("BEGIN")
            self._opened = True
        elif not self.conn.in_transaction:
            self._break("the run's transaction ended outside kaudit; its writes may be lost")

    def run(self, sql: str, params: tuple[Any, ...], depth: int) -> sqlite3.Cursor:
        """Run a tool's `sql` in the run's transaction, leaving the pool first when it must.

        The gate sorts what the authorizer reports while compiling (and asks for the
        statement to run again after leaving); what it never reports is read first.
        """
        self.open(depth)
        if self.pending:
            self._sort_unreported(sql, depth)
        try:
            try:
                return self._execute(sql, params, depth, pending=self.pending)
            except sqlite3.Error:
                if not self.gate.leave:
                    raise
            self.commit()
            return self._execute(sql, params, depth, pending=False)
        finally:
            self._after()

    def _sort_unreported(self, sql: str, depth: int) -> None:
        """Leave or refuse on what the authorizer never reports, before `sql` runs.

        A connection doomed inside a block leaves at the next top-level statement: a
        statement compiled inside the block would run again unasked, in the transaction.
        """
        if depth == 0 and self.gate.doomed:
            self.commit()
            return
        if not needs_reading(sql):
            return
        statement = read_statement(sql)
        if statement.rolls_back_or_defers:
            if depth:
                self._break(f"a pooled sandbox cannot run {sql.strip()[:60]!r} {INSIDE_ATOMIC}")
            self.commit()
        elif statement.vacuums:
            if depth == 0:
                self.commit()
            self.gate.doomed = True

    def _after(self) -> None:
        """A transaction that ended is fine only after COMMIT; anything else lost writes."""
        if self.pending and not self.conn.in_transaction:
            if not self.gate.ends:
                self._break("a statement rolled back the run's transaction")
            self._left = True

    def commit(self) -> None:
        """Commit the run's work and go on in autocommit; the connection is not pooled again."""
        self.settle()  # a run that leaves before its first statement: no earlier guard script
        if self.pending:
            self.conn.execute("COMMIT")
        self._left = True

    def release(self, conn: sqlite3.Connection) -> None:
        """Roll the run back and pool the connection if it is the template again, else close it."""
        gate = self.gate
        reusable = not (self._left or gate.doomed or gate.touched or self.broken)
        script = self._script if self._holds_script else None
        try:
            with gate.trusted():
                gate.disarm()
                compare = reusable and (self._wrote(conn) or self.pool.compare_unwritten())
                opened = conn.in_transaction
                if opened:
                    if reusable:
                        _reset_counters(conn)
                    conn.execute("ROLLBACK")
                if script is not None and _temp_cookie(conn) != self._script_cookie:
                    script = None  # the run's SQL changed what the script made outside kaudit
                keep = script is not None
                reusable = reusable and self._pristine(
                    conn, counted=opened, keep_temporary=keep, compare=compare
                )
        except sqlite3.Error:
            reusable = False
        if reusable:
            self.pool.give_back(conn, script)
        else:
            conn.close()

    def _wrote(self, conn: sqlite3.Connection) -> bool:
        """Whether the run may have written a page of `main` (read before its rollback).

        The cookie is read inside the run's transaction, where DDL it rolls back still
        shows; committed DDL shows after, too.
        """
        return (
            conn.total_changes != self._changes
            or self.gate.rewrote
            or _schema_cookie(conn) != self._cookie
        )

    def _pristine(
        self, conn: sqlite3.Connection, *, counted: bool, keep_temporary: bool, compare: bool
    ) -> bool:
        """Whether `conn` shows the next run what a fresh sandbox would (but a guard script).

        `counted`: the counters were just reset (`_reset_counters`). `keep_temporary`
        keeps the temp schema a guard script made (checked unchanged by the caller); the
        next run drops it unless it asks for the same script. `compare`: the image is
        compared with the template (else the run provably wrote none of it, `_wrote`).
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
        if not compare:
            return True
        # The SeedDriftError guarantee, checked when the connection comes back.
        self.pool.compared += 1
        return conn.serialize() == self._template


def _schema_cookie(conn: sqlite3.Connection) -> int:
    """`main`'s schema cookie: it moves with every DDL (no sandbox may set it by hand)."""
    return int(conn.execute("PRAGMA main.schema_version").fetchone()[0])


def _temp_cookie(conn: sqlite3.Connection) -> int:
    """`temp`'s schema cookie: any DDL on a temporary object moves it, a rollback restores it.

    Read instead of the temp schema's rows (a scope script's triggers are long SQL): a
    run's rolled-back temporary objects leave it as it was, and anything else moves it
    for good (no sandbox may set a cookie by hand).
    """
    return int(conn.execute("PRAGMA temp.schema_version").fetchone()[0])
