"""The PostgreSQL substrate against the real server: round trip, isolation, keys, leftovers."""

from __future__ import annotations

import signal
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaudit.errors import SubstrateError
from kaudit.label.diff import diff_images
from kaudit.postgres._db import pg_placeholders
from kaudit.postgres._dump import first_difference
from kaudit.postgres._substrate import PostgresSubstrate, split_reset
from kaudit.substrate import Blueprint, DatabaseError, SqliteSubstrate, StateDump
from kaudit.substrate._choice import open_substrate
from kaudit.substrate._sqlite import SqliteSandbox, build_image
from kaudit.tools import ToolContext
from tests.pg import databases, entry, holder, wait_orphaned
from tests.postgres import pg_world

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def pg(pg_url: str) -> PostgresSubstrate:
    substrate = open_substrate(pg_url, pg_world.blueprint())
    assert isinstance(substrate, PostgresSubstrate)
    return substrate


@pytest.fixture(scope="module")
def lite() -> SqliteSubstrate:
    substrate = open_substrate("sqlite", pg_world.blueprint())
    assert isinstance(substrate, SqliteSubstrate)
    return substrate


def call(sandbox: object, name: str, **arguments: object) -> dict[str, object]:
    result = pg_world.TOOLS[name].call(ToolContext(db=sandbox.db), arguments)  # type: ignore[attr-defined]
    return result.to_json()


def test_placeholders_outside_quotes_become_psycopg_ones() -> None:
    """Bug caught: a `?` inside a literal replaced, or a LIKE `%` left for psycopg to misread."""
    assert pg_placeholders("SELECT '?', \"a?\" FROM t WHERE x = ? AND y LIKE 'a%'") == (
        "SELECT '?', \"a?\" FROM t WHERE x = %s AND y LIKE 'a%%'"
    )
    assert pg_placeholders("WHERE a IS ? AND b is not  ? AND c = ?") == (
        "WHERE a IS NOT DISTINCT FROM %s AND b IS DISTINCT FROM %s AND c = %s"
    )


def test_a_fresh_run_database_dumps_to_the_template_exactly(pg: PostgresSubstrate) -> None:
    """Bug caught: float8 printed short, COPY escapes (\\N, tabs) misread, int64s/blobs mangled."""
    sandbox = pg.seed("kaudit_i14_rt/m/t/0")
    try:
        dump = sandbox.dump()
    finally:
        sandbox.close()
    assert first_difference(pg.template, dump.image) is None
    assert diff_images(pg.template.image, dump.image, fast=False) == []
    conn = dump.open()
    notes = [r[0] for r in conn.execute("SELECT note FROM payment ORDER BY id")]
    amounts = [r[0] for r in conn.execute("SELECT amount FROM payment ORDER BY id")]
    kinds = {r[0] for r in conn.execute("SELECT DISTINCT typeof(paid_at) FROM payment")}
    assert sorted(notes) == sorted(pg_world.TRICKY_TEXT)
    assert set(amounts) <= set(pg_world.TRICKY_REAL) and 5e-324 in amounts
    assert kinds == {"text", "null"}


def test_a_run_database_is_dropped_on_close(pg: PostgresSubstrate) -> None:
    """Bug caught: close() leaves the cloned database on the server."""
    sandbox = pg.seed("kaudit_i14_drop/m/t/0")
    assert sandbox.database in databases("kaudit_r_")
    sandbox.close()
    pg.pool().settle()  # the drop runs on the pool's worker, off the run's path
    assert sandbox.database not in databases("kaudit_r_")


def _same_calls(sandbox: object) -> list[dict[str, object]]:
    return [
        call(sandbox, "pay", payment_id="P2"),
        call(sandbox, "delete_payment", payment_id="P3"),
        call(sandbox, "add_line", invoice="P1", n=7, qty=0.1),
        call(sandbox, "add_line", invoice="P1", n=7, qty=0.2),  # duplicate composite key
        call(sandbox, "retag", a="x", b=1, c="new", note_on="P0"),
        call(sandbox, "retag", a="x", b=2, c="never", note_on="nope"),  # rolled back
        call(sandbox, "find", text="O'BR"),
        call(sandbox, "kinds"),
    ]


def test_tools_and_labels_agree_with_sqlite(pg: PostgresSubstrate, lite: SqliteSubstrate) -> None:
    """Bug caught: a cascade, composite key, rollback or error result differs by substrate."""
    pg_box, lite_box = pg.seed("kaudit_i14_same/m/t/0"), lite.seed("kaudit_i14_same/m/t/0")
    try:
        pg_results, lite_results = _same_calls(pg_box), _same_calls(lite_box)
        pg_final, lite_final = pg_box.dump(), lite_box.dump()
    finally:
        pg_box.close()
        lite_box.close()
    assert [r["ok"] for r in pg_results] == [True, True, True, False, True, False, True, True]
    assert pg_results[3]["error"].startswith("database error")  # type: ignore[union-attr]
    assert [r.get("content") for r in pg_results] == [r.get("content") for r in lite_results]
    pg_changes = diff_images(pg.template.image, pg_final.image, fast=False)
    lite_changes = diff_images(lite.template.image, lite_final.image, fast=False)
    assert pg_changes == lite_changes
    keys = {(c.table, tuple(v for _, v in c.key), c.op) for c in pg_changes}
    assert ("line", ("P3", 1), "removed") in keys  # cascaded from the deleted payment
    assert ("line", ("P1", 7), "added") in keys
    assert ("tagged", (1, "x"), "modified") in keys  # composite key in key order (b, a)
    assert first_difference(StateDump.of(lite_final.image), pg_final.image) is None


def _null_key_calls(sandbox: object) -> list[dict[str, object]]:
    return [
        call(sandbox, "add_payment", payment_id=None, amount=1.0),
        call(sandbox, "add_payment", payment_id="NEW", amount=2.0),
        call(sandbox, "rekey", payment_id="NEW", new_id=None),
        call(sandbox, "add_payment", payment_id=None, amount=3.0),  # a second NULL key
    ]


def test_a_null_primary_key_is_refused_alike_on_both_substrates(
    pg: PostgresSubstrate, lite: SqliteSubstrate
) -> None:
    """Bug caught: SQLite's legacy NULL in a TEXT PRIMARY KEY accepted (the call succeeds
    and the rows appear, keyed by rowid) while PostgreSQL refuses it, so one agent's run
    gets two verdicts."""
    pg_box, lite_box = pg.seed("kaudit_nullkey/m/t/0"), lite.seed("kaudit_nullkey/m/t/0")
    try:
        pg_results, lite_results = _null_key_calls(pg_box), _null_key_calls(lite_box)
        pg_final, lite_final = pg_box.dump(), lite_box.dump()
    finally:
        pg_box.close()
        lite_box.close()
    for results in (pg_results, lite_results):
        assert [r["ok"] for r in results] == [False, True, False, False]
        assert all("database error" in str(r["error"]) for r in results if not r["ok"])
    pg_changes = diff_images(pg.template.image, pg_final.image, fast=False)
    lite_changes = diff_images(lite.template.image, lite_final.image)  # the change log's path
    assert pg_changes == lite_changes
    assert [(c.table, c.key, c.op) for c in lite_changes] == [
        ("payment", (("id", "NEW"),), "added")
    ]
    assert first_difference(StateDump.of(lite_final.image), pg_final.image) is None


def test_a_refused_write_raises_the_neutral_database_error(pg: PostgresSubstrate) -> None:
    """Bug caught: psycopg's own exception escapes to tool code instead of DatabaseError."""
    sandbox = pg.seed("kaudit_i14_err/m/t/0")
    try:
        with pytest.raises(DatabaseError) as caught:
            sandbox.db.execute("INSERT INTO line VALUES (?, ?, ?)", ("P0", 1, 1.0))
        assert caught.value.integrity
    finally:
        sandbox.close()


def test_dump_inside_an_open_transaction_is_refused(pg: PostgresSubstrate) -> None:
    """Bug caught: a dump that silently reads around uncommitted agent writes."""
    sandbox = pg.seed("kaudit_i14_tx/m/t/0")
    try:
        with sandbox.db.atomic(), pytest.raises(SubstrateError, match="inside a transaction"):
            sandbox.dump()
    finally:
        sandbox.close()


ROW = st.tuples(
    st.floats(allow_nan=False, allow_infinity=False),
    st.one_of(
        st.none(),
        st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00")),
    ),
    st.one_of(st.none(), st.integers(min_value=-(2**63), max_value=2**63 - 1)),
    st.one_of(st.none(), st.binary(max_size=16)),
)


@pytest.fixture(scope="module")
def pair(pg: PostgresSubstrate, lite: SqliteSubstrate):  # type: ignore[no-untyped-def]
    # An unpooled SQLite sandbox: the test snapshots it between writes, which a dump
    # (it freezes the state) and a pooled run (its bytes are written at commit) do not allow.
    boxes = pg.seed("kaudit_i14_prop/m/t/0"), SqliteSandbox("kaudit_i14_prop/m/t/0", lite.template)
    yield boxes
    for box in boxes:
        box.close()


_counter = iter(range(10**9))


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=st.lists(ROW, min_size=1, max_size=4))
def test_random_values_written_by_tools_dump_alike(pair, rows) -> None:  # type: ignore[no-untyped-def]
    """Bug caught: a value (float, text, int64, blob, NULL) the PostgreSQL dump changes."""
    pg_box, lite_box = pair
    for amount, note, big, raw in rows:
        key = f"H{next(_counter)}"
        for box in (pg_box, lite_box):
            box.db.execute(
                "INSERT INTO payment (id, amount, note, big, raw) VALUES (?, ?, ?, ?, ?)",
                (key, amount, note, big, raw),
            )
    snapshot = StateDump.of(lite_box.db.conn.serialize())
    assert first_difference(snapshot, pg_box.dump().image) is None


def test_concurrent_runs_are_isolated(pg: PostgresSubstrate) -> None:
    """Bug caught: two runs sharing one database (a name clash) or one connection."""
    pg.ensure_template()
    barrier = threading.Barrier(4)
    finals: dict[int, list[object]] = {}

    def run(i: int) -> None:
        sandbox = pg.seed(f"kaudit_i14_iso/m/t/{i}")
        try:
            barrier.wait(timeout=60)
            sandbox.db.execute("UPDATE payment SET note = ? WHERE id = 'P0'", (f"run {i}",))
            sandbox.db.execute("INSERT INTO tagged VALUES (?, 9, NULL)", (f"run{i}",))
            barrier.wait(timeout=60)
            finals[i] = diff_images(pg.template.image, sandbox.dump().image, fast=False)
        finally:
            sandbox.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(finals) == [0, 1, 2, 3]
    for i, changes in finals.items():
        assert {(c.table, tuple(v for _, v in c.key)) for c in changes} == {
            ("payment", ("P0",)),
            ("tagged", (9, f"run{i}")),
        }
        note = next(c for c in changes if c.table == "payment")
        assert note.after is not None and note.after["note"] == f"run {i}"


def test_a_killed_process_leftovers_are_reclaimed_but_a_live_ones_are_not(
    pg: PostgresSubstrate, pg_url: str
) -> None:
    """Bug caught: databases named by run id alone (the second process's clone drops the
    first's), reclaim dropping a live process's databases of the same campaign, or a
    SIGKILLed one's staying forever."""
    run = "kaudit_i14_killed/m/t/3"
    pg.reclaim("kaudit_i14_killed")  # what an earlier, interrupted session of this test left
    with holder(pg_url, run) as (_, live), holder(pg_url, run) as (victim, dead):
        assert live != dead and {live, dead} <= set(databases("kaudit_r_"))
        mine = pg.seed(run)
        assert mine.database not in (live, dead)
        assert entry(pg, "kaudit_i14_killed", live) is not None
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        gone = wait_orphaned(pg, "kaudit_i14_killed", dead)
        assert gone.orphaned and gone.run_id == run and gone.pid == victim.pid
        kept = entry(pg, "kaudit_i14_killed", live)
        assert kept is not None and kept.owner_live and not kept.orphaned
        assert pg.reclaim("kaudit_i14_killed") == 1
        names = set(databases("kaudit_r_"))
        assert dead not in names and {live, mine.database} <= names
        assert first_difference(pg.template, mine.dump().image) is None
        mine.close()
    wait_orphaned(pg, "kaudit_i14_killed", live)
    assert pg.reclaim("kaudit_i14_killed") == 1  # the live one, once it too was killed


def test_the_same_run_seeded_again_in_one_process_reuses_and_replaces_its_name(
    pg: PostgresSubstrate,
) -> None:
    """Bug caught: a restarted run in the same process that cannot find its own leftover
    (a fresh name per seed), so a crashed attempt's database is never dropped."""
    # Without clones made ahead: a clone made ahead is named by a serial, not by its run.
    pg = open_substrate(pg.choice + "?ahead=0", pg_world.blueprint())  # type: ignore[assignment]
    first = pg.seed("kaudit_i14_again/m/t/0")
    first.db.conn.close()  # the attempt "crashes": its database stays
    second = pg.seed("kaudit_i14_again/m/t/0")
    try:
        assert second.database == first.database
        assert databases("kaudit_r_").count(second.database) == 1
        assert first_difference(pg.template, second.dump().image) is None
    finally:
        second.close()


@pytest.mark.parametrize(
    ("ddl", "reason"),
    [
        ("CREATE TABLE t (a TEXT)", "no declared primary key"),
        ("CREATE TABLE t (a TEXT PRIMARY KEY, b REAL CHECK (b > 0))", "CHECK constraint"),
        ("CREATE TABLE t (a TEXT PRIMARY KEY); CREATE VIEW v AS SELECT a FROM t", "a view"),
    ],
)
def test_what_cannot_be_carried_over_is_refused(pg_url: str, ddl: str, reason: str) -> None:
    """Bug caught: a constraint silently dropped, so PostgreSQL accepts what SQLite refuses."""
    image = build_image(lambda conn: conn.executescript(ddl))
    substrate = open_substrate(pg_url, Blueprint("refused", image))
    with pytest.raises(SubstrateError, match=reason):
        substrate.seed("kaudit_i14_refused/m/t/0")


def test_an_unreachable_server_is_a_substrate_error() -> None:
    """Bug caught: psycopg's OperationalError escaping as a traceback."""
    substrate = open_substrate("postgresql://nobody@127.0.0.1:1/none", pg_world.blueprint())
    with pytest.raises(SubstrateError, match="cannot connect to PostgreSQL"):
        substrate.seed("kaudit_i14_down/m/t/0")


def test_a_password_in_the_url_never_reaches_a_message() -> None:
    """Bug caught: `--substrate postgresql://user:secret@...` echoing the secret in an error."""
    url = "postgresql://nobody:s3cret@127.0.0.1:1/none"
    substrate = open_substrate(url, pg_world.blueprint())
    with pytest.raises(SubstrateError) as caught:
        substrate.seed("kaudit_i14_secret/m/t/0")
    assert "s3cret" not in str(caught.value)
    assert "postgresql://nobody:***@127.0.0.1:1/none" in str(caught.value)


def test_the_reset_mode_is_read_from_the_url_and_checked() -> None:
    """Bug caught: `?reset=` passed on to libpq (which refuses it) or a typo taken as clone."""
    assert split_reset("postgresql://u@h:5432/db?reset=rollback&sslmode=disable") == (
        "postgresql://u@h:5432/db?sslmode=disable",
        "rollback",
    )
    assert split_reset("postgresql://u@h/db") == ("postgresql://u@h/db", "clone")
    with pytest.raises(SubstrateError, match="reset='rolback'"):
        split_reset("postgresql://u@h/db?reset=rolback")


def test_the_other_url_parameters_pass_through_as_written() -> None:
    """Bug caught: the query decoded and re-encoded as a form, so `%20` came back as `+`,
    which libpq does not read as a space (the server then refused `+statement_timeout`)."""
    url = "postgresql://u@h/db?options=-c%20statement_timeout%3D5000&reset=rollback&x=a+b"
    assert split_reset(url) == (
        "postgresql://u@h/db?options=-c%20statement_timeout%3D5000&x=a+b",
        "rollback",
    )


def test_a_hostless_url_stays_a_url() -> None:
    """Bug caught: the URL rebuilt by `urlunsplit`, which writes `postgresql:///db` (a Unix
    socket, `PGHOST` or a service file) as `postgresql:/db`, a string libpq refuses."""
    assert split_reset("postgresql:///?service=kr&reset=rollback") == (
        "postgresql:///?service=kr",
        "rollback",
    )
    assert split_reset("postgresql:///kaudit") == ("postgresql:///kaudit", "clone")


@pytest.fixture(scope="module")
def pooled(pg_url: str) -> PostgresSubstrate:
    substrate = open_substrate(pg_url + "?reset=rollback", pg_world.blueprint())
    assert isinstance(substrate, PostgresSubstrate) and substrate.reset == "rollback"
    return substrate


def test_rollback_runs_label_like_sqlite_and_leave_the_template(
    pooled: PostgresSubstrate, lite: SqliteSubstrate
) -> None:
    """Bug caught: a failed statement aborting the run's transaction (every later call then
    fails), or a rolled-back database that is not the template for the next run."""
    first = pooled.seed("kaudit_i14_pool/m/t/0")
    lite_box = lite.seed("kaudit_i14_pool/m/t/0")
    pg_results, lite_results = _same_calls(first), _same_calls(lite_box)
    pg_final, lite_final = first.dump(), lite_box.dump()
    first.close()
    lite_box.close()
    pooled.pool().settle()  # the rollback runs on the pool's worker
    existing = databases("kaudit_r_")
    assert [r.get("content") for r in pg_results] == [r.get("content") for r in lite_results]
    assert [r["ok"] for r in pg_results] == [r["ok"] for r in lite_results]
    assert first_difference(StateDump.of(lite_final.image), pg_final.image) is None
    second = pooled.seed("kaudit_i14_pool/m/t/1")
    try:
        assert second.database in existing  # reused, not cloned again
        assert first_difference(pooled.template, second.dump().image) is None
    finally:
        second.close()


def test_a_run_that_commits_gets_its_database_dropped(pooled: PostgresSubstrate) -> None:
    """Bug caught: a database whose run committed going back to the pool, so the next run
    starts from the previous run's state."""
    sandbox = pooled.seed("kaudit_i14_commit/m/t/0")
    sandbox.db.conn.execute("UPDATE payment SET note = 'kept' WHERE id = 'P0'")
    sandbox.db.conn.execute("COMMIT")
    database = sandbox.database
    assert "kept" in str(sandbox.dump().open().execute("SELECT note FROM payment").fetchall())
    sandbox.close()
    pooled.pool().settle()
    assert database not in databases("kaudit_r_")
    fresh = pooled.seed("kaudit_i14_commit/m/t/1")
    try:
        assert fresh.database != database
        assert first_difference(pooled.template, fresh.dump().image) is None
    finally:
        fresh.close()


def test_a_substrate_pickles_without_its_connections(pooled: PostgresSubstrate) -> None:
    """Bug caught: an executor (Ray) cannot ship a substrate that holds a pool of open
    connections, or the copy shares the original's pool."""
    from ray import cloudpickle as pickle  # what the Ray executor ships work with

    sandbox = pooled.seed("kaudit_i14_pickle/m/t/0")
    sandbox.close()  # the pool now holds one idle database and its connection
    copy = pickle.loads(pickle.dumps(pooled))
    assert copy.url == pooled.url and copy.reset == "rollback"
    assert copy.template_database == pooled.template_database
    other = copy.seed("kaudit_i14_pickle/m/t/1")
    try:
        assert other.database != sandbox.database  # its own pool, not the original's
    finally:
        other.close()
