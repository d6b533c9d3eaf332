"""Pooled SQLite sandboxes: each run sees a fresh template and autocommit's behaviour."""

from __future__ import annotations

import sqlite3
from contextlib import ExitStack, suppress
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaudit.errors import SubstrateError
from kaudit.label.diff import diff_images
from kaudit.substrate import DatabaseError, SqliteSubstrate, _pool
from kaudit.substrate._capture import CHANGE_LOG
from kaudit.substrate._pool import _POOLS, PooledRun
from kaudit.substrate._sqlite import SqliteSandbox, build_image
from kaudit.tools import ToolContext, tool
from kaudit.worlds._world import get_world


def mini() -> SqliteSubstrate:
    substrate = get_world("mini").substrate()
    assert isinstance(substrate, SqliteSubstrate)
    return substrate


def final_image(sandbox: SqliteSandbox) -> bytes:
    frozen = sandbox.dump()
    image = frozen.image
    sandbox.close()
    frozen.release()
    return image


def test_a_pooled_connection_starts_the_next_run_from_the_template() -> None:
    """Fails if release gave the connection back without rolling the run back (the next
    run would start from the last one's state) or without resetting what SQLite shows
    per connection. Tried by hand: no ROLLBACK in `PooledRun.release` (the byte check
    then refuses the connection, so it is not reused) and no byte check (reused dirty)."""
    substrate = mini()
    first = substrate.seed("r1")
    reused = first.db.conn
    first.db.execute("INSERT INTO outbox (recipient, body) VALUES ('x', 'y')")
    first.db.execute("UPDATE account SET status = 'closed' WHERE id = 'ACC_003'")
    first.db.execute("DELETE FROM link WHERE account_id = 'ACC_004'")
    first.close()
    second = substrate.seed("r2")
    assert second.db.conn is reused
    assert second.db.one("SELECT last_insert_rowid() AS id") == {"id": 0}
    assert second.db.one(f"SELECT count(*) AS n FROM {CHANGE_LOG}") == {"n": 0}
    frozen = second.dump()
    assert frozen.image == substrate.template.image
    second.close()
    frozen.release()


def test_keeping_the_image_commits_and_retires_the_connection() -> None:
    """Fails if the image of a pooled run were serialized inside its transaction (a
    memory database's bytes are written at commit: the run's changes would be missing),
    or if a committed connection went back to the pool."""
    substrate = mini()
    sandbox = substrate.seed("r1")
    used = sandbox.db.conn
    sandbox.db.execute("UPDATE account SET balance = 1.5 WHERE id = 'ACC_005'")
    image = final_image(sandbox)
    (change,) = diff_images(substrate.template.image, image)
    assert change.after is not None and change.after["balance"] == 1.5
    after = substrate.seed("r2")
    assert after.db.conn is not used
    after.close()


@pytest.mark.parametrize(
    ("sql", "depth", "effect"),
    [
        ("SELECT * FROM t", 0, "same"),
        ("  insert into t values (1)", 3, "same"),
        ("PRAGMA foreign_keys = OFF", 0, "leave"),
        ("PRAGMA foreign_keys = OFF", 1, "marks"),
        ("INSERT OR ROLLBACK INTO t VALUES (1)", 0, "leave"),
        ("INSERT OR ROLLBACK INTO t VALUES (1)", 1, "refuse"),
        ("ROLLBACK", 1, "refuse"),
        ("rollback to x", 2, "marks"),
        ("rollback to kaudit_1", 2, "refuse"),
        ("ROLLBACK TO x", 0, "leave"),
        ("COMMIT", 1, "ends"),
        ("BEGIN", 0, "leave"),
        ("SAVEPOINT s", 0, "leave"),
        ("SAVEPOINT s", 1, "marks"),
        ("CREATE TABLE u (a REFERENCES t DEFERRABLE INITIALLY DEFERRED)", 0, "leave"),
        ("CREATE TABLE u (a)", 0, "same"),
        ("-- why\n/* how */ PRAGMA foreign_keys = OFF", 0, "leave"),
        ("CREATE TRIGGER x AFTER INSERT ON t BEGIN SELECT RAISE(ROLLBACK, 'no'); END", 0, "leave"),
        ("UPDATE t SET state = 'deferred' WHERE id = 1", 1, "same"),
        ("INSERT INTO t VALUES ('OR ROLLBACK')", 1, "same"),
        ('SELECT "rollback" FROM t', 1, "same"),
        ("/* ' */ PRAGMA foreign_keys = OFF /* ' */", 0, "leave"),
        ("EXPLAIN PRAGMA recursive_triggers = OFF", 0, "leave"),
        ("EXPLAIN ROLLBACK", 1, "refuse"),
        ("PRAGMA defer_foreign_keys = ON", 1, "refuse"),
        ("PRAGMA defer_foreign_keys", 1, "same"),
        ("PRAGMA defer_foreign_keys", 0, "same"),
        ("UPDATE t SET a = 1 -- or rollback", 1, "same"),
        ("INSERT INTO t VALUES (7) /* OR ROLLBACK */", 1, "same"),
        ("CREATE TABLE z (a) -- deferrable", 0, "same"),
        ("INSERT INTO t VALUES ('--') OR ROLLBACK", 1, "refuse"),
    ],
)
def test_statements_are_sorted_by_what_a_transaction_changes(
    sql: str, depth: int, effect: str
) -> None:
    """Fails if a statement whose effect differs inside a transaction were run there as if
    nothing differed (a leading comment hid the PRAGMA in a first version; a quote inside
    a comment or EXPLAIN in front still did), if a word inside a literal, a quoted name
    or a comment made a harmless statement fail the run, if `defer_foreign_keys` could
    defer a block's checks past its end, or if a statement whose answer depends on the
    depth (a savepoint inside a block) left the connection in the pool, where it would
    later run unasked at the top level. EXPLAIN is judged as the statement it explains
    (SQLite's authorizer cannot tell them apart)."""
    assert effect_of(sql, depth) == effect


def effect_of(sql: str, depth: int) -> str:
    """What a pooled run did with `sql` at `atomic()` depth `depth`, seen from outside."""
    substrate = SqliteSubstrate("w", build_image(_sorting_world), {})
    box = substrate.seed("r")
    run = box._pooled
    assert isinstance(run, PooledRun)
    box.db.execute("SELECT 1")  # the run's transaction is open
    found = "refuse"
    with ExitStack() as blocks:
        blocks.enter_context(suppress(DatabaseError, SubstrateError, sqlite3.Error))
        for _ in range(depth):
            blocks.enter_context(box.db.atomic())
        with suppress(DatabaseError):
            box.db.execute(sql)
        found = "same" if run.pending else ("ends" if depth else "leave")
        found = "marks" if found == "same" and run.gate.doomed else found
    box.close()
    return found


def _sorting_world(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE t (a, state, id)")


def _world(conn: sqlite3.Connection) -> None:
    conn.executescript(
        """
        CREATE TABLE parent (id INTEGER PRIMARY KEY);
        CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent(id));
        CREATE TABLE u (id INTEGER PRIMARY KEY, v TEXT UNIQUE);
        INSERT INTO parent VALUES (1);
        INSERT INTO u VALUES (1, 'a');
        """
    )


@tool("reversible_write", writes={"child": ("*",), "u": ("*",)})
def raw(ctx: ToolContext, sql: str, atomic: bool = False) -> int:
    """Run one statement (the tests' stand-in for a tool with unusual SQL)."""
    if atomic:
        with ctx.db.atomic():
            return ctx.db.execute(sql)
    return ctx.db.execute(sql)


def both(programs: list[tuple[str, bool]]) -> tuple[bytes, bytes]:
    """The final image of `programs` on a pooled sandbox and on an unpooled one."""
    substrate = SqliteSubstrate("w", build_image(_world), {"raw": raw})
    images = []
    for sandbox in (substrate.seed("pooled"), SqliteSandbox("fresh", substrate.template)):
        ctx = ToolContext(db=sandbox.db)
        for sql, atomic in programs:
            raw.call(ctx, {"sql": sql, "atomic": atomic})
        images.append(final_image(sandbox))
    return images[0], images[1]


def test_a_top_level_pragma_leaves_the_pool_and_acts_as_in_autocommit() -> None:
    """Fails if the PRAGMA ran inside the run's transaction, where `foreign_keys = OFF`
    is a no-op: the orphan insert would then be refused in the pooled sandbox only."""
    pooled, fresh = both(
        [("PRAGMA foreign_keys = OFF", False), ("INSERT INTO child VALUES (1, 99)", False)]
    )
    assert pooled == fresh or diff_images(fresh, pooled) == []
    assert len(diff_images(build_image(_world), pooled)) == 1


def test_or_rollback_at_the_top_level_keeps_earlier_writes_as_autocommit_does() -> None:
    """Fails if `OR ROLLBACK` ran inside the pooled transaction: its conflict would roll
    back the run's earlier insert too (and the run would fail as lost writes)."""
    pooled, fresh = both(
        [
            ("INSERT INTO child VALUES (5, 1)", False),
            ("INSERT OR ROLLBACK INTO u VALUES (2, 'a')", False),
        ]
    )
    assert diff_images(fresh, pooled) == []
    (added,) = diff_images(build_image(_world), pooled)
    assert (added.table, added.op) == ("child", "added")


def test_or_rollback_inside_atomic_fails_the_run_instead_of_losing_its_writes() -> None:
    """Fails if the pooled sandbox ran `OR ROLLBACK` inside an atomic block (the conflict
    undoes the whole run, not just the block) or if the tool turned the harness error
    into a result the agent sees and the run goes on to be scored."""
    substrate = SqliteSubstrate("w", build_image(_world), {"raw": raw})
    sandbox = substrate.seed("r")
    ctx = ToolContext(db=sandbox.db)
    raw.call(ctx, {"sql": "INSERT INTO child VALUES (5, 1)"})
    with pytest.raises(SubstrateError, match="inside atomic"):
        raw.call(ctx, {"sql": "INSERT OR ROLLBACK INTO u VALUES (2, 'a')", "atomic": True})
    with pytest.raises(SubstrateError):
        sandbox.dump()
    sandbox.close()


def test_a_transaction_ended_behind_the_pool_s_back_is_a_harness_error() -> None:
    """Fails if the pool went on after something outside kaudit rolled the run back:
    its earlier writes would silently be missing from the dump."""
    sandbox = mini().seed("r")
    sandbox.db.execute("UPDATE account SET status = 'x' WHERE id = 'ACC_001'")
    sandbox.db.conn.execute("ROLLBACK")
    with pytest.raises(SubstrateError, match="ended outside kaudit"):
        sandbox.db.execute("UPDATE account SET status = 'y' WHERE id = 'ACC_002'")
    sandbox.close()


def test_a_world_whose_schema_can_roll_back_is_never_pooled() -> None:
    """Fails if `poolable` ignored a table declared ON CONFLICT ROLLBACK."""

    def build(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY ON CONFLICT ROLLBACK)")

    substrate = SqliteSubstrate("w", build_image(build), {})
    first = substrate.seed("r1")
    first.close()
    assert substrate.seed("r2").db.conn is not first.db.conn


accounts = st.sampled_from(["ACC_001", "ACC_002", "ACC_077"])
statements = st.one_of(
    st.tuples(
        st.just("UPDATE account SET status = ? WHERE id = ?"),
        st.tuples(st.sampled_from(["open", "x", None]), accounts),
    ),
    st.tuples(st.just("DELETE FROM account WHERE id = ?"), st.tuples(accounts)),
    st.tuples(
        st.just("INSERT OR REPLACE INTO link VALUES (?, 'tier', ?)"),
        st.tuples(accounts, st.integers(0, 3)),
    ),
    st.tuples(
        st.just("INSERT INTO outbox (recipient, body) VALUES (?, 'b')"),
        st.tuples(st.text("ab", max_size=2)),
    ),
)


def state(sandbox: SqliteSandbox) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table (the change log included) and the rowid counter, in place."""
    frozen = sandbox.dump()
    with frozen.reading() as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        rows = {n: sorted(conn.execute(f'SELECT * FROM "{n}"').fetchall(), key=repr) for n in names}
        rows["last_insert_rowid"] = conn.execute("SELECT last_insert_rowid()").fetchall()
    sandbox.close()
    frozen.release()
    return rows


@settings(max_examples=60, deadline=None)
@given(runs=st.lists(st.lists(statements, max_size=6), min_size=1, max_size=4))
def test_consecutive_pooled_runs_equal_fresh_sandboxes(
    runs: list[list[tuple[str, tuple[object, ...]]]],
) -> None:
    """Fails if anything of one pooled run reached the next (rows, change log, the rowid
    counter) or if pooled connections were not reused at all. Tried by hand: release
    without the last_insert_rowid reset (the counter leaks into the next run)."""
    substrate = mini()
    pooled = []
    for program in runs:
        seen = []
        pooled.append(substrate.seed("p"))
        for sandbox in (pooled[-1], SqliteSandbox("f", substrate.template)):
            for sql, params in program:
                with suppress(DatabaseError):
                    sandbox.db.execute(sql, params)
            seen.append(state(sandbox))
        assert seen[0] == seen[1]
    assert all(sandbox.db.conn is pooled[0].db.conn for sandbox in pooled)  # one served all


def test_the_template_in_use_stays_warm_when_the_process_budget_is_full(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Fails if a full process budget made the active world's connections be closed
    (every run would parse the schema again) instead of an idle one of another world."""
    monkeypatch.setattr("kaudit.substrate._pool.IDLE_IN_PROCESS", 1)
    other, active = mini(), mini()
    assert other._pool is not active._pool
    parked = other.seed("o")
    parked.close()
    first = active.seed("a")
    idle_before = sum(len(pool) for pool in _POOLS)
    first.close()
    assert sum(len(pool) for pool in _POOLS) == idle_before  # one kept, another closed
    second = active.seed("b")
    assert second.db.conn is first.db.conn
    second.close()


def test_a_bounded_run_leaves_no_scope_triggers_on_its_pooled_connection() -> None:
    """Fails if a boundary's temporary scope triggers survived release (the next run on
    the connection, under no identity, would have its writes to another org refused) or
    if their presence made every bounded run retire its connection."""
    from kaudit.boundary import SqliteGuard
    from kaudit.spec import Identity

    substrate = mini()
    bounded = substrate.seed("b")
    SqliteGuard(bounded.db.conn, Identity(role="a", scope={"org": "ORG_A"}))
    with pytest.raises(DatabaseError):
        bounded.db.execute("UPDATE account SET name = 'x' WHERE id = 'ACC_001'")  # ORG_B
    bounded.close()
    free = substrate.seed("f")
    assert free.db.conn is bounded.db.conn
    assert free.db.execute("UPDATE account SET name = 'x' WHERE id = 'ACC_001'") == 1
    free.close()


def test_a_pragma_behind_explain_never_reaches_the_next_run() -> None:
    """Fails if `EXPLAIN PRAGMA recursive_triggers = OFF` (which SQLite applies while
    compiling) left the connection in the pool: the next run would write with
    recursive triggers off, unlike a fresh sandbox. Tried by hand: `pooled_effect`
    without looking through EXPLAIN."""
    substrate = mini()
    first = substrate.seed("r1")
    first.db.execute("EXPLAIN PRAGMA recursive_triggers = OFF")
    first.close()
    second = substrate.seed("r2")
    assert second.db.conn is not first.db.conn
    assert second.db.one("SELECT * FROM pragma_recursive_triggers") == {"recursive_triggers": 1}
    second.close()


def test_defer_foreign_keys_inside_atomic_fails_the_pooled_run() -> None:
    """Fails if a pooled run let `defer_foreign_keys` push a block's foreign-key check
    past the block (to the run's never-committed end): the orphan insert an unpooled
    sandbox refuses at the block's commit would be labeled as the agent's state."""
    substrate = SqliteSubstrate("w", build_image(_world), {"raw": raw})
    sandbox = substrate.seed("r")
    with pytest.raises(SubstrateError, match="defer"), sandbox.db.atomic():
        sandbox.db.execute("PRAGMA defer_foreign_keys = ON")
    with pytest.raises(SubstrateError):
        sandbox.dump()
    sandbox.close()


def test_an_unpooled_block_whose_commit_fails_is_undone_and_reported() -> None:
    """Fails if a RELEASE that commits and is refused (a deferred foreign key) escaped
    `atomic()` as a raw sqlite3 error with the transaction left open: the tool saw an
    internal error and the dump failed. Tried by hand: the old RELEASE without a guard."""
    substrate = SqliteSubstrate("w", build_image(_world), {"raw": raw})
    sandbox = SqliteSandbox("fresh", substrate.template)
    with pytest.raises(DatabaseError, match="FOREIGN KEY") as caught, sandbox.db.atomic():
        sandbox.db.execute("PRAGMA defer_foreign_keys = ON")
        sandbox.db.execute("INSERT INTO child VALUES (1, 99)")
    assert caught.value.integrity
    assert not sandbox.db.conn.in_transaction
    assert diff_images(substrate.template.image, final_image(sandbox)) == []


@pytest.mark.parametrize("pooled", [True, False])
@pytest.mark.parametrize(
    ("sql", "pragma"),
    [
        ('PRAGMA "writable_schema" = 1', "writable_schema"),
        ("; PRAGMA writable_schema = ON", "writable_schema"),
        ("PRAGMA main.schema_version = 7", "schema_version"),
        ("EXPLAIN PRAGMA hard_heap_limit = 1", "hard_heap_limit"),
        ("DELETE FROM '_KAUDIT_change_log'", "_kaudit_change_log"),
        ("WITH x AS (SELECT 1) DELETE FROM main.[_kaudit_change_log]", "_kaudit_change_log"),
        ("DROP TRIGGER _kaudit_upd_account", "_kaudit_upd_account"),
        ("RELEASE kaudit_0", "savepoint of atomic"),
    ],
)
def test_statements_that_hide_changes_or_reach_other_runs_make_the_run_invalid(
    pooled: bool, sql: str, pragma: str
) -> None:
    """Fails if a sandbox ran `writable_schema` (the run could rewrite a table's stored
    CREATE text, which the connection labeling in place never re-reads: a renamed
    column went unseen and the state digest stayed the template's), `schema_version`
    (a dropped capture trigger hidden by setting the cookie back: an UPDATE then went
    unlabeled), a process-wide heap limit (every later run's sandbox would fail), or
    wrote to kaudit's change log (emptied after an UPDATE, the fast path labeled the run
    PASS), or released atomic()'s own savepoint (an unpooled sandbox then committed the
    block half-way, a pooled one did not). Tried by hand: each name removed from
    `_REFUSED_PRAGMAS`; no internal-name or savepoint check in `refusal`."""
    substrate = mini()
    sandbox = substrate.seed("r") if pooled else SqliteSandbox("r", substrate.template)
    with pytest.raises(SubstrateError, match=pragma):
        sandbox.db.execute(sql)
    with pytest.raises(SubstrateError, match=pragma):
        sandbox.dump()
    sandbox.close()


@pytest.mark.parametrize("pooled", [True, False])
@pytest.mark.parametrize(
    "sql",
    ["ATTACH '{path}' AS x", "ATTACH DATABASE ? AS x", "/* */ ATTACH 'file:{path}' AS x",
     "VACUUM INTO '{path}'", "VACUUM main INTO '{path}'", "ATTACH '' || '{path}' AS x",
     "ATTACH ':memory:' || '{path}' AS x", ";ATTACH '{path}' AS x", "; VACUUM INTO '{path}'"],
)  # fmt: skip
def test_sql_that_writes_a_file_on_the_host_makes_the_run_invalid(
    pooled: bool, sql: str, tmp_path: Path
) -> None:
    """Fails if a sandbox let the run's SQL write a file on the host (an attached file
    database, `VACUUM INTO`): data would outlive the run for a later run to read, and
    the host's disk fill. No file may appear. Tried by hand: no ATTACH/VACUUM INTO rule in
    `refusal` (the file appeared and the run was labeled); only the first token after
    ATTACH read (`'' || 'f.db'` is an expression naming a file); a leading `;` taken for
    the statement's kind (SQLite skips empty statements). In-memory attaches still run."""
    target = tmp_path / "leak.db"
    substrate = mini()
    sandbox = substrate.seed("r") if pooled else SqliteSandbox("r", substrate.template)
    params = (str(target),) if "?" in sql else ()
    with pytest.raises(SubstrateError, match="file on the host"):
        sandbox.db.execute(sql.format(path=target), params)
    assert not target.exists()
    sandbox.close()
    memory = substrate.seed("m") if pooled else SqliteSandbox("m", substrate.template)
    memory.db.execute("ATTACH DATABASE ':memory:' AS scratch")
    memory.close()


def test_a_reused_connection_shows_the_counters_and_functions_of_a_fresh_one() -> None:
    """Fails if `changes()` kept the count of release's own rowid reset (1, where a fresh
    connection says 0), or if a boundary's function stayed callable on the next run (it
    would note denials into the earlier run's guard). `total_changes()` only grows on
    a reused connection (documented in docs/soundness.md)."""
    from kaudit.boundary import SqliteGuard
    from kaudit.spec import Identity

    substrate = mini()
    first = substrate.seed("r1")
    guard = SqliteGuard(first.db.conn, Identity(role="a", scope={"org": "ORG_A"}))
    first.db.execute("INSERT INTO outbox (recipient, body) VALUES ('x', 'y')")
    first.close()
    second = substrate.seed("r2")
    assert second.db.conn is first.db.conn
    assert second.db.one("SELECT changes() AS c, last_insert_rowid() AS r") == {"c": 0, "r": 0}
    with pytest.raises(DatabaseError):
        second.db.one("SELECT kaudit_boundary_note('account', 'k', 'org') AS x")
    assert guard.denials == []
    second.close()


@pytest.fixture
def no_sampled_compare(monkeypatch: pytest.MonkeyPatch) -> None:
    """Releases of runs that wrote nothing compare bytes only when a test says so."""
    monkeypatch.setattr(_pool, "FULL_CHECK_EVERY", 10**9)


def released(substrate: SqliteSubstrate, *statements: str) -> sqlite3.Connection:
    """Run `statements` as a tool would, then end the run; returns its connection."""
    sandbox = substrate.seed("r")
    for sql in statements:
        sandbox.db.execute(sql)
    conn = sandbox.db.conn
    sandbox.close()
    return conn


def next_connection(substrate: SqliteSubstrate) -> tuple[sqlite3.Connection, bytes]:
    """The connection the next run gets and the state it shows (the template, or a bug)."""
    sandbox = substrate.seed("next")
    conn = sandbox.db.conn
    return conn, final_image(sandbox)


@pytest.mark.usefixtures("no_sampled_compare")
def test_only_a_run_that_may_have_written_has_its_bytes_compared() -> None:
    """Fails if a read-only run still paid the byte compare (the per-run cost it removes)
    or if a run that wrote, or ran a REINDEX (pages written that neither SQLite counter
    sees), skipped it. Tried by hand: `_wrote` without `gate.rewrote` fails the REINDEX
    case."""
    substrate = mini()
    pool = substrate._pool
    assert pool is not None
    released(substrate, "SELECT count(*) FROM account")
    assert pool.compared == 0
    released(substrate, "UPDATE account SET status = 'closed' WHERE id = 'ACC_003'")
    assert pool.compared == 1
    released(substrate, "REINDEX")
    assert pool.compared == 2
    released(substrate, "DELETE FROM account WHERE id = 'no such account'")
    assert pool.compared == 2  # a write of no row writes no page


def test_one_in_so_many_unwritten_releases_is_compared_all_the_same() -> None:
    """Fails if the tripwire never fired (a write the argument missed would then stay
    in the pool for good) or fired on every release (the cost it saves)."""
    substrate = mini()
    pool = substrate._pool
    assert pool is not None
    for _ in range(3 * _pool.FULL_CHECK_EVERY):
        released(substrate, "SELECT 1")
    assert pool.compared == 3


@pytest.mark.usefixtures("no_sampled_compare")
@pytest.mark.parametrize(
    "behind",
    [
        "UPDATE account SET status = 'closed' WHERE id = 'ACC_003'",  # total_changes
        "CREATE TABLE kept_table (a)",  # the schema cookie: no row counted
        "CREATE INDEX kept_index ON account (status)",  # SQLite reports it as a REINDEX too
    ],
)
def test_a_write_committed_behind_the_run_s_transaction_is_never_pooled(behind: str) -> None:
    """World code on `ctx.db.conn` can commit where kaudit's rollback cannot reach. Fails
    if the skip trusted the gate's notes alone: the next run would start from the dirty
    state. Tried by hand: `_wrote` without `total_changes` fails the UPDATE case, without
    the cookie the CREATE TABLE case."""
    substrate = mini()
    sandbox = substrate.seed("r")
    dirty = sandbox.db.conn
    sandbox.db.execute("SELECT 1")  # the run's transaction is open
    dirty.execute("COMMIT")
    dirty.execute(behind)
    dirty.commit()
    dirty.execute("BEGIN")  # what kaudit's release will roll back: nothing of the above
    sandbox.close()
    conn, image = next_connection(substrate)
    assert conn is not dirty
    assert image == substrate.template.image
