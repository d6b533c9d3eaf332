"""The statement gate of a SQLite sandbox: SQLite's own authorizer, installed once per connection.

SQLite asks the authorizer about every action of a statement while compiling it, and
about the statements `VACUUM` runs inside itself while running: it asks about the
compiled statement, so comments, literals, `EXPLAIN`, empty statements before it
(`;ATTACH ...`) and bound parameters (`ATTACH ?` names no literal file) are already
resolved. A compiled statement stays in sqlite3's statement cache and runs again
without asking, so on a pooled connection the gate costs nothing for SQL a tool
repeats run after run. The answer is kept with the compiled statement, so the policy
(`Mode`, the run's depth and transaction, an identity's `Grant`) may change between
statements only in ways no kept answer depends on:

- tool SQL is compiled under the prefix `TOOL_SQL`, a check's under `CHECK_SQL`.
  sqlite3 keys its cache by the exact text, so a statement compiled for kaudit itself
  (atomic()'s savepoints, release's ROLLBACK, the labeler's reads) is never reused for
  a tool's or a check's SQL, which would run it unasked.
- a grant other than the one every cached statement was compiled under expires the
  cache once (`arm`): a campaign's runs share one identity, so they share the cache.
- a statement whose answer depends on the `atomic()` depth (a PRAGMA, a savepoint, a
  transaction statement inside a block) dooms the connection: it is never pooled again,
  and the run leaves the pool at its next top-level statement, where the kept
  statement would otherwise run inside the run's transaction.

What SQLite's authorizer never reports is read from the text (`substrate._statement`):
a conflict clause (`OR ROLLBACK`), a constraint's `DEFERRABLE`, and `VACUUM`, which
asks nothing while compiling.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import Enum
from typing import Protocol

from kaudit.substrate._schema import INTERNAL_PREFIX

TOOL_SQL = "/*tool*/"
"""Prefix of every statement a tool runs through `SqliteDb`: its own statement cache keys."""
CHECK_SQL = "/*check*/"
"""Prefix of every statement a task's check runs: its own statement cache keys."""

FILE_FUNCTIONS = frozenset(
    {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", "lsmode", "fsdir"}
)
"""SQL functions that reach the host's files; never allowed on a frozen state."""

_OK, _DENY = sqlite3.SQLITE_OK, sqlite3.SQLITE_DENY
_READS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE})
_LEAVES = frozenset({sqlite3.SQLITE_PRAGMA, sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH,
                     sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT})  # fmt: skip
"""Actions whose effect differs inside the pooled run's transaction."""
_TOUCHES = frozenset({sqlite3.SQLITE_PRAGMA, sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH})
_CREATES = frozenset({sqlite3.SQLITE_CREATE_TABLE, sqlite3.SQLITE_CREATE_TEMP_TABLE,
                      sqlite3.SQLITE_CREATE_VIEW, sqlite3.SQLITE_CREATE_TEMP_VIEW,
                      sqlite3.SQLITE_CREATE_VTABLE})  # fmt: skip
"""The only actions that make a table or view, which could shadow a main table."""
_REWRITES = frozenset({sqlite3.SQLITE_REINDEX, sqlite3.SQLITE_ANALYZE})
"""Actions that write pages without a row change or a schema change SQLite counts."""
_MEMORY = frozenset({"", ":memory:"})
_CHANGES = frozenset(
    {getattr(sqlite3, f"SQLITE_{name}") for name in (
        "INSERT", "UPDATE", "DELETE", "ALTER_TABLE", "CREATE_INDEX", "CREATE_TABLE",
        "CREATE_TRIGGER", "CREATE_VIEW", "DROP_INDEX", "DROP_TABLE", "DROP_TRIGGER",
        "DROP_VIEW", "REINDEX", "ANALYZE")}
)  # fmt: skip
"""Actions that change a database's rows or schema."""
_SCHEMA_TABLES = frozenset({"sqlite_master", "sqlite_schema"})
_ATOMIC_SAVEPOINT = re.compile(r"kaudit_\d+")
_PROCESS_WIDE = "changes a limit of the whole process, every later run's sandbox included"
REFUSED_PRAGMAS = {
    "writable_schema": "lets SQL rewrite the stored schema behind the engine's back, so the "
    "labeler could read another schema than the one stored",
    "schema_version": "sets the schema cookie by hand, which can hide DDL (a dropped "
    "change-capture trigger) from the labeler",
    "hard_heap_limit": _PROCESS_WIDE,
    "soft_heap_limit": _PROCESS_WIDE,
    "threads": _PROCESS_WIDE,
}
"""PRAGMAs no sandbox may set, and why."""
INSIDE_ATOMIC = "inside atomic(): it would roll back or defer past the block"
_ACTION_NAMES = {
    getattr(sqlite3, f"SQLITE_{name}"): name
    for name in ["ALTER_TABLE", "ANALYZE", "ATTACH", "CREATE_INDEX", "CREATE_TABLE",
                 "CREATE_TEMP_TABLE", "CREATE_TRIGGER", "CREATE_VIEW", "CREATE_VTABLE",
                 "DELETE", "DETACH", "DROP_TABLE", "DROP_TRIGGER", "DROP_VIEW", "FUNCTION",
                 "INSERT", "PRAGMA", "REINDEX", "SAVEPOINT", "TRANSACTION", "UPDATE"]
}  # fmt: skip


SqlFunction = Callable[..., int | float | str | None]
"""A Python function SQL may call (`create_function`)."""


class Mode(Enum):
    """Whose statement is being compiled, which decides what the gate asks of it."""

    TRUSTED = "trusted"
    """kaudit's own statements (the pool's reset, a guard's set-up, the labeler): all pass."""
    RUN = "run"
    """During a run, outside a tool's statement (atomic()'s savepoints, world code on
    `ctx.db.conn`): only the identity's grant applies; what touches the connection is noted."""
    TOOL = "tool"
    """A tool's statement: the sandbox rules, the pooled run's, then the grant."""
    FROZEN = "frozen"
    """The frozen final state: reads only (`ReadOnlyGuard`)."""
    LABEL = "label"
    """kaudit's labeler on the frozen state: anything but changing `main`."""


class Grant(Protocol):
    """An identity's table grant on one connection (`boundary.SqliteGuard`)."""

    def __call__(
        self, action: int, arg1: str | None, arg2: str | None, db: str | None, source: str | None
    ) -> int:
        """SQLITE_OK or SQLITE_DENY for one action; a denial is noted by the grant itself."""
        ...


class ReadOnlyGuard:
    """An SQLite authorizer allowing SELECT, table reads, CTEs and non-file functions.

    Every other action is denied and noted in `denied`, so a caller can tell a refused
    statement from an ordinary SQL error. While `trusted` is set (kaudit's own labeler,
    never SQL from a task file) everything is allowed.
    """

    def __init__(self) -> None:
        self.denied: list[str] = []
        self.trusted = False

    def __call__(self, action: int, arg1: str | None, arg2: str | None, *_: object) -> int:
        if self.trusted or action in _READS:
            return _OK
        if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() not in FILE_FUNCTIONS:
            return _OK
        what = _ACTION_NAMES.get(action, str(action))
        self.denied.append(" ".join(x for x in (what, arg1, arg2) if x))
        return _DENY


class StatementGate:
    """The one authorizer of a sandbox connection, and the policy it applies.

    Per tool statement (`tool`): `reason` says why the sandbox refused it, `leave` that
    a pooled run must commit and run it again in autocommit, `ends` that it is a COMMIT
    inside a block. Per run (`begin`): `touched` (a PRAGMA, ATTACH or DETACH: the final
    state is read on a fresh copy), `created` (a table or view: temporary ones are
    dropped before the checks), `doomed` (the connection is not pooled again),
    `rewrote` (REINDEX or ANALYZE: pages written that neither `total_changes` nor the
    schema cookie counts, so the pool compares the bytes at release).
    """

    def __init__(self) -> None:
        self.mode = Mode.RUN
        self.read_only = ReadOnlyGuard()
        self.grant: Grant | None = None
        self._armed: object = None
        self._functions: dict[tuple[str, int], SqlFunction] = {}
        self._created: set[tuple[str, int]] = set()
        self.depth = 0
        self.pending = False
        self.reason: str | None = None
        self.leave = False
        self.ends = False
        self.touched = False
        self.created = False
        self.doomed = False
        self.rewrote = False
        self._dropping: str | None = None

    def install(self, conn: sqlite3.Connection) -> None:
        """Make this gate `conn`'s authorizer (which also expires what `conn` compiled)."""
        conn.set_authorizer(self)

    def begin(self) -> None:
        """A new run on the connection: nothing noted yet, no grant, outside any tool."""
        self.mode = Mode.RUN
        self.grant = None
        self._functions.clear()
        self.touched = self.created = self.doomed = self.rewrote = False
        self.reason = None
        self.leave = self.ends = self.pending = False

    def arm(self, conn: sqlite3.Connection, grant: Grant | None, key: object) -> None:
        """Apply `grant` (identified by `key`) to the run's statements from now on.

        Statements compiled under another grant, or none, are expired once, so each
        is compiled (and asked about) again under this one.
        """
        self.grant = grant
        if key != self._armed:
            self._armed = key
            self.install(conn)

    def disarm(self) -> None:
        """The run is over: statements compiled from now on see no grant."""
        if self.grant is None:
            self._armed = None  # the cache now holds statements no grant was asked about
        self.grant = None
        self._functions.clear()

    def tool(self, depth: int, pending: bool) -> Mode:
        """A tool's statement at `atomic()` depth `depth` is about to be compiled.

        Returns the mode to restore afterwards. A frozen state stays frozen: a tool that
        runs after the dump may only read.
        """
        mode = self.mode
        if mode is Mode.RUN:
            self.mode = Mode.TOOL
        self._dropping = None
        self.depth = depth
        self.pending = pending
        self.reason = None
        self.leave = self.ends = False
        return mode

    @contextmanager
    def trusted(self, mode: Mode = Mode.TRUSTED) -> Iterator[None]:
        """The harness's own statements inside the block: every action passes.

        Under `Mode.LABEL` (the labeler), every action but a change to `main` passes.
        """
        mode, self.mode = self.mode, mode
        try:
            yield
        finally:
            self.mode = mode

    def bind(self, conn: sqlite3.Connection, name: str, narg: int, fn: SqlFunction) -> None:
        """Offer SQL the function `name` for this run only (`begin` withdraws it).

        The function is created on the connection once, as a stand-in that calls the
        run's `fn`: replacing a function expires every compiled statement, and a later
        run must not call an earlier run's (it would note into that run's guard).
        """
        key = (name, narg)
        if key not in self._created:
            conn.create_function(name, narg, self._stand_in(key))
            self._created.add(key)
        self._functions[key] = fn

    def _stand_in(self, key: tuple[str, int]) -> SqlFunction:
        def call(*args: object) -> int | float | str | None:
            fn = self._functions.get(key)
            if fn is None:
                raise sqlite3.OperationalError(f"no such function: {key[0]}")
            return fn(*args)

        return call

    def __call__(
        self, action: int, arg1: str | None, arg2: str | None, db: str | None, source: str | None
    ) -> int:
        mode = self.mode
        if mode is Mode.TRUSTED:
            return _OK
        if mode is Mode.FROZEN:
            return self.read_only(action, arg1, arg2)
        if mode is Mode.LABEL:  # a table-valued PRAGMA declares itself as writing the schema
            changes = action in _CHANGES and db == "main" and arg1 not in _SCHEMA_TABLES
            return _DENY if changes else _OK
        if action not in _READS and not (action == sqlite3.SQLITE_PRAGMA and arg2 is None):
            # A PRAGMA without a value reads a setting: the change capture's triggers read
            # `pragma_recursive_triggers` on every write, which asks while running.
            if mode is Mode.TOOL:
                if self.reason is not None or self.leave:
                    return _DENY  # already refused: ask nothing more of this statement
                if self._sandbox(action, arg1, arg2, db, source) != _OK:
                    return _DENY
            else:
                self._note(action)
        grant = self.grant
        return _OK if grant is None else grant(action, arg1, arg2, db, source)

    def _note(self, action: int) -> None:
        if action in _TOUCHES:
            self.touched = True
        elif action in _CREATES:
            self.created = True
        elif action in _REWRITES:
            self.rewrote = True

    def _sandbox(
        self, action: int, arg1: str | None, arg2: str | None, db: str | None, source: str | None
    ) -> int:
        """What every sandbox refuses, then what a pooled run's transaction changes."""
        if action == sqlite3.SQLITE_DROP_TABLE:
            self._dropping = arg1  # its triggers, the change capture's included, go with it
        elif action == sqlite3.SQLITE_DROP_TRIGGER and arg2 is not None and arg2 == self._dropping:
            return _OK
        reason = refusal(action, arg1, arg2, db, source)
        if reason is not None:
            self.reason = reason
            return _DENY
        self._note(action)
        if self.pending and action in _LEAVES:
            return self._pooled(action, arg1, arg2)
        return _OK

    def _pooled(self, action: int, arg1: str | None, arg2: str | None) -> int:
        """A statement that acts otherwise inside the pooled run's transaction.

        At the top level the run leaves the pool and runs it again in autocommit. Inside
        a block, ROLLBACK and deferring foreign keys would reach past the block (the run
        fails), COMMIT ends the run's transaction, and anything else runs nested as an
        unpooled sandbox runs it, but dooms the connection (its answer is kept).
        """
        if self.depth == 0:
            self.leave = True
            return _DENY
        op = (arg1 or "").upper()
        pragma = (arg1 or "").lower() if action == sqlite3.SQLITE_PRAGMA else None
        if (action == sqlite3.SQLITE_TRANSACTION and op == "ROLLBACK") or (
            pragma == "defer_foreign_keys" and arg2 is not None
        ):
            self.reason = INSIDE_ATOMIC
            return _DENY
        self.ends = action == sqlite3.SQLITE_TRANSACTION and op == "COMMIT"
        self.doomed = True
        return _OK


def refusal(
    action: int, arg1: str | None, arg2: str | None, db: str | None, source: str | None
) -> str | None:
    """Why no sandbox, pooled or not, may run a tool statement asking for this action.

    A PRAGMA that rewrites the schema, sets the schema cookie or a process-wide limit;
    a savepoint of atomic() itself; an ATTACH of anything but a memory database (a file
    would outlive the run; `VACUUM INTO` attaches its target too); a write or DDL on
    kaudit's own objects in `main` or `temp` (emptying the change log would hide the
    run's writes; a temp table of that name would answer for it), unless one of
    kaudit's own triggers does it.
    """
    if action == sqlite3.SQLITE_PRAGMA:
        name = (arg1 or "").lower()
        if arg2 is not None and name in REFUSED_PRAGMAS:
            return f"PRAGMA {name} {REFUSED_PRAGMAS[name]}"
        return None
    if action == sqlite3.SQLITE_SAVEPOINT:
        if _ATOMIC_SAVEPOINT.fullmatch((arg2 or "").lower()):
            return "it ends or rolls back a savepoint of atomic() itself, behind its back"
        return None
    if action == sqlite3.SQLITE_ATTACH:
        if arg1 is None or arg1 not in _MEMORY:
            return "it attaches a file on the host (only ':memory:' or '' may be attached)"
        return None
    if action in (sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_DETACH, sqlite3.SQLITE_FUNCTION):
        return None
    if db not in (None, "main", "temp") or (source or "").startswith(INTERNAL_PREFIX):
        return None  # VACUUM's own copy (`vacuum_db`), or the change-capture triggers
    for named in (arg1, arg2):
        if named is not None and named.lower().startswith(INTERNAL_PREFIX):
            return f"it names kaudit's own {named.lower()} (the change log the labeler trusts)"
    return None


def gated_connect() -> tuple[sqlite3.Connection, StatementGate]:
    """An empty in-memory connection with its gate installed (mode RUN, no grant)."""
    conn = sqlite3.connect(":memory:", check_same_thread=False, factory=GatedConnection)
    return conn, conn.gate


class GatedConnection(sqlite3.Connection):
    """A sqlite3 connection that carries its statement gate, installed at creation."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.gate = StatementGate()
        self.gate.install(self)


def gate_of(conn: sqlite3.Connection) -> StatementGate:
    """The gate of `conn`: its own, or a new one installed on a plain connection."""
    if isinstance(conn, GatedConnection):
        return conn.gate
    gate = StatementGate()
    gate.install(conn)
    return gate
