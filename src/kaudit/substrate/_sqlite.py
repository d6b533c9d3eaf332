"""The embedded SQLite substrate: every sandbox is a private copy of a template image."""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kaudit.errors import SeedDriftError, SubstrateError
from kaudit.spec import Identity
from kaudit.substrate._capture import CAPTURE_VERSION, install_change_capture
from kaudit.substrate._choice import SUBSTRATES, Blueprint
from kaudit.substrate._db import SqliteDb
from kaudit.substrate._dump import StateDump
from kaudit.substrate._frozen import FrozenState, shadows_dropped
from kaudit.substrate._gate import GatedConnection, gate_of, gated_connect
from kaudit.substrate._handover import HandedDatabase
from kaudit.substrate._pool import PooledRun, SandboxPool, StatementRules, poolable
from kaudit.substrate._readback import read_back
from kaudit.substrate._schema import ForeignKey
from kaudit.substrate._sqlite_guard import SqliteGuard

if TYPE_CHECKING:
    from kaudit.tools import Tool  # above this room: tools take a `Db`

Builder = Callable[[sqlite3.Connection], None]


def cache_dir() -> Path:
    """Where built templates are kept: `$KAUDIT_CACHE`, else `~/.cache/kaudit`."""
    root = os.environ.get("KAUDIT_CACHE") or Path.home() / ".cache" / "kaudit"
    return Path(root) / "templates"


def build_image(builder: Builder) -> bytes:
    """Run `builder` on an empty database, add change capture, and return the image."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        builder(conn)
        conn.commit()
        install_change_capture(conn)
        conn.commit()
        conn.execute("VACUUM")
        return conn.serialize()
    finally:
        conn.close()


def cached_image(recipe_digest: str, builder: Builder) -> bytes:
    """The template for `recipe_digest`, built once and cached on disk by that digest.

    The cache is written to a temporary file and renamed, so concurrent first builds
    never leave a torn template behind.
    """
    path = cache_dir() / f"{recipe_digest}-capture{CAPTURE_VERSION}.sqlite"
    sidecar = path.with_suffix(".sha256")
    if path.exists() and sidecar.exists():
        image = path.read_bytes()
        recorded = sidecar.read_text().strip()
        if StateDump.of(image).digest != recorded:
            raise SeedDriftError(
                f"cached template {path} does not match its recorded digest {recorded[:12]}; "
                "delete it to rebuild"
            )
        return image
    image = build_image(builder)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(path, image)
        _write_atomic(sidecar, StateDump.of(image).digest.encode())
    except OSError:
        pass  # a read-only cache costs a rebuild next time, never a wrong template
    return image


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


BUSY_TIMEOUT_S = 30.0
"""How long a tool's statement waits for a lock the agent's own code holds on the file."""


def file_connection(path: Path) -> sqlite3.Connection:
    """A gated connection over a world file another process may hold locks on."""
    return sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_S, check_same_thread=False, factory=GatedConnection
    )


def _write_private(path: Path, image: bytes) -> None:
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(image)


def seeded_connection(run_id: str, template: StateDump) -> sqlite3.Connection:
    """A private in-memory copy of the template, checked byte for byte, capture on.

    The connection carries its statement gate (`substrate._gate`) from here on.
    """
    conn, gate = gated_connect()
    conn.deserialize(template.image)
    with gate.trusted():
        conn.execute("PRAGMA recursive_triggers = ON")
        conn.execute("PRAGMA foreign_keys = ON")
    # The template's digest was checked once when it was loaded; byte equality with
    # it is digest equality, at memcmp speed instead of a sha256 per run.
    seeded = conn.serialize()
    if seeded != template.image:
        conn.close()
        raise SeedDriftError(
            f"run {run_id}: seeded state {StateDump.of(seeded).digest[:12]} differs from "
            f"template {template.digest[:12]}"
        )
    return conn


class SqliteSandbox:
    """A private in-memory copy of the template for one run.

    `dump()` freezes the state in place and hands the connection to the `FrozenState`
    it returns, so `close()` after a dump leaves the dumped state to its own `release()`.
    With a `pool`, the connection may be a pooled one and the run one transaction on it
    (`substrate._pool`); what the run sees and leaves is the same either way.
    """

    def __init__(
        self, run_id: str, template: StateDump, *, pool: SandboxPool | None = None
    ) -> None:
        self.run_id = run_id
        self.initial = template
        idle = pool.take() if pool is not None else None
        conn, script = idle if idle is not None else (seeded_connection(run_id, template), None)
        self._conn = conn
        self._frozen: FrozenState | None = None
        self._handed: Path | None = None
        self._pooled = (
            None if pool is None else PooledRun(conn, pool, template.image, run_id, script)
        )
        self._rules = self._pooled or StatementRules(conn, run_id)
        self.db = SqliteDb(conn, self._rules)

    def guard(self, identity: Identity, ownership: Sequence[ForeignKey] = ()) -> SqliteGuard:
        """SQLite's boundary for `identity` on this run's connection (`SqliteGuard`).

        Its scope triggers are installed through `hold_script`, so a pooled run keeps
        or finds a connection that already holds them.
        """
        return SqliteGuard(
            self.db.conn,
            identity,
            install=self.hold_script,
            template=self.initial.digest,
            ownership=ownership,
        )

    def hold_script(self, script: str) -> sqlite3.Connection:
        """Run the harness's own set-up `script` (temp objects only) before the run begins.

        A pooled connection that already holds it from an earlier run keeps it instead,
        and a run whose connection holds another one moves, before its first statement,
        to an idle connection that holds this one when the pool has it (the one it leaves
        goes back untouched). Returns the connection the run now has: `db` stays the
        same object, over that connection.
        """
        pooled = self._pooled
        if pooled is None:
            self._conn.executescript(script)
            return self._conn
        if not pooled.holds(script) and not pooled.pending and self.db.depth == 0:
            pooled = self._move_to(pooled, script)
        pooled.hold_script(script)
        return self._conn

    def _move_to(self, pooled: PooledRun, script: str) -> PooledRun:
        """Swap to an idle connection already holding `script`, if the pool has one.

        Returns the run's pooled connection after: the new one, or `pooled` unchanged.
        """
        idle = pooled.pool.take_holding(script)
        if idle is None:
            return pooled
        conn, held = idle
        left = self._conn
        moved = PooledRun(conn, pooled.pool, self.initial.image, self.run_id, held)
        self._conn, self._pooled, self._rules = conn, moved, moved
        self.db.conn, self.db.hooks = conn, moved
        pooled.pool.give_back(left, pooled.script)  # nothing ran on it: still pristine
        return moved

    def dump(self) -> FrozenState:
        """The state now, frozen read-only; an open transaction is an error, not a rollback.

        A second call returns the same frozen state: nothing can have changed it. Raises
        `SubstrateError` when the run was refused a statement or cannot be read soundly.
        """
        if self._frozen is None:
            pooled = self._pooled
            if self._rules.broken is not None:
                raise SubstrateError(self._rules.broken)
            pending = pooled is not None and pooled.pending
            if self.db.depth or (self._conn.in_transaction and not pending):
                raise SubstrateError(f"run {self.run_id}: dump requested inside a transaction")
            if pooled is not None and not pending:
                pooled.settle()  # a run with no statement: no earlier run's guard script
            try:
                self._frozen = self._freeze(pending)
            except sqlite3.Error as exc:
                raise SubstrateError(
                    f"run {self.run_id}: the final state cannot be frozen: {exc}"
                ) from exc
        return self._frozen

    def _freeze(self, pending: bool) -> FrozenState:
        """The final state frozen in place, or on a fresh copy when the run touched the connection.

        What the labeler and the checks read must be the main database alone, as a fresh
        connection shows it: an attached database or a PRAGMA the run set (`LIKE`'s case,
        the order of unordered rows) would change their answers, so such a state is
        copied out once; a temporary table or view (made only by a CREATE) would shadow
        a main table's name, so it is dropped (the run is over; the dump never held it).
        """
        pooled = self._pooled
        if self._rules.touched:
            if pooled is not None and pending:
                pooled.commit()  # a memory database's bytes are written at commit
            image = self._conn.serialize()
            self._release(self._conn)
            self._conn, _ = gated_connect()
            self._conn.deserialize(image)
            return FrozenState(self._conn, self.run_id)
        if self._rules.created:
            shadows_dropped(self._conn)
        return FrozenState(
            self._conn,
            self.run_id,
            before_image=pooled.commit if pooled is not None and pending else None,
            on_release=self._release,
        )

    def hand_over(self, directory: Path) -> HandedDatabase:
        """Move the world into `directory/world.sqlite`; tools then act on that file too.

        The run leaves its pool: its statements go through the same gate, on a connection
        over the file (waiting up to `BUSY_TIMEOUT_S` for the agent's own locks).
        """
        if self._frozen is not None or self.db.depth:
            raise SubstrateError(f"run {self.run_id}: the world is handed over before it runs")
        path = directory / "world.sqlite"
        pooled = self._pooled
        untouched = pooled is not None and not pooled.pending  # the template, byte for byte
        _write_private(path, self.initial.image if untouched else self.snapshot().image)
        self._use(file_connection(path))
        self._handed = path
        return HandedDatabase(path, f"sqlite:///{path}")

    def take_back(self) -> str | None:
        """Read the file at its path back into memory: the dump reads the copy.

        A write-ahead log the agent left is folded in first; a transaction it left open
        (a killed agent) is rolled back by SQLite, as for any crashed writer. Returns
        why the world is lost when the agent left no readable database there (the file
        deleted, replaced, not SQLite, corrupt): the sandbox then holds an empty
        database, every table of the seed gone (`kaudit.substrate._readback`).

        Raises `SubstrateError` when the file cannot be read for another reason.
        """
        if self._handed is None:
            raise SubstrateError(f"run {self.run_id}: no world was handed over to take back")
        self._release(self._conn)  # its handle may see a file no longer at the path
        found = read_back(self._handed, self.run_id)
        memory, _ = gated_connect()
        memory.deserialize(found.image)  # a memory database, as every sandbox's is
        self._use(memory)
        self._handed = None
        return found.lost

    def _use(self, conn: sqlite3.Connection) -> None:
        """Run on `conn` from now on, outside any pool; a refused statement stays refused."""
        broken = self._rules.broken
        with gate_of(conn).trusted():
            conn.execute("PRAGMA recursive_triggers = ON")
            conn.execute("PRAGMA foreign_keys = ON")
        self._release(self._conn)  # a pooled one goes back, rolled back if it ran anything
        self._conn, self._pooled = conn, None
        self._rules = StatementRules(conn, self.run_id)
        self._rules.broken = broken
        conn.isolation_level = None
        self.db.conn, self.db.hooks = conn, self._rules

    def snapshot(self) -> StateDump:
        """The state now as bytes, the sandbox left writable (to look at a run midway).

        Not the run's dump: `dump()` freezes the final state. A pooled run leaves the
        pool here, since a memory database's bytes are written only at commit.
        """
        if self._frozen is not None:
            return StateDump.of(self._frozen.image)
        if self._pooled is not None:
            self._pooled.commit()
        return StateDump.of(self._conn.serialize())

    def close(self) -> None:
        """Drop the in-memory database (or pool it again), unless a dump now holds it."""
        if self._frozen is None:
            self._release(self._conn)

    def _release(self, conn: sqlite3.Connection) -> None:
        if self._pooled is None:
            conn.close()
        else:
            self._pooled.release(conn)


class SqliteSubstrate:
    """A world on embedded SQLite: seed = deserialize the template bytes (~0.1 ms)."""

    def __init__(
        self,
        name: str,
        image: bytes,
        tools: Mapping[str, Tool],
        volatile: Mapping[str, tuple[str, ...]] | None = None,
        *,
        expected_digest: str | None = None,
        ownership: tuple[ForeignKey, ...] = (),
    ) -> None:
        self.name = name
        self.ownership = ownership
        self.template = StateDump.of(image)
        if expected_digest is not None and expected_digest != self.template.digest:
            raise SeedDriftError(
                f"{name}: template digest {self.template.digest[:12]} differs from the "
                f"expected {expected_digest[:12]}"
            )
        self.tools = dict(tools)
        self.volatile = dict(volatile or {})
        self._pool = self._new_pool()

    def _new_pool(self) -> SandboxPool | None:
        conn = self.template.open()
        try:
            return SandboxPool() if poolable(conn) else None
        finally:
            conn.close()

    def __getstate__(self) -> dict[str, object]:
        return {k: v for k, v in self.__dict__.items() if k != "_pool"}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._pool = self._new_pool()

    @property
    def template_digest(self) -> str:
        """sha256 of the template image every sandbox starts from."""
        return self.template.digest

    def seed(self, run_id: str) -> SqliteSandbox:
        """A fresh, isolated sandbox for `run_id` (on a pooled connection when one is idle)."""
        return SqliteSandbox(run_id, self.template, pool=self._pool)

    def derive(self, image: bytes) -> SqliteSubstrate:
        """The same tools and volatile columns over another template image."""
        return SqliteSubstrate(
            self.name, image, self.tools, self.volatile, ownership=self.ownership
        )

    def describe(self) -> dict[str, Any]:
        """The substrate for the campaign manifest: each run a fresh in-memory copy."""
        return {"reset": "copy"}

    def reclaim(self, campaign: str) -> int:
        """Nothing to reclaim: an in-memory sandbox dies with the process that held it."""
        return 0


@SUBSTRATES.register("sqlite")
def sqlite_substrate(choice: str, blueprint: Blueprint) -> SqliteSubstrate:
    """The embedded SQLite substrate (`choice` is just `sqlite`)."""
    if blueprint.source_database is not None:
        raise SubstrateError(
            f"world {blueprint.name} is read from PostgreSQL database "
            f"{blueprint.source_database}; run it with `substrate` postgresql://..."
        )
    return SqliteSubstrate(
        blueprint.name,
        blueprint.image,
        blueprint.tools,
        blueprint.volatile,
        ownership=blueprint.ownership,
    )
