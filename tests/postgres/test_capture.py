"""The PostgreSQL change-log dump against the full dump: same state, same verdicts, every trap."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaudit.agents import ScriptedAgent
from kaudit.errors import SubstrateError
from kaudit.harness import RunRequest, run_pipeline
from kaudit.postgres._dump import dump_image, first_difference
from kaudit.postgres._substrate import PostgresSubstrate
from kaudit.substrate import StateDump
from kaudit.substrate._choice import open_substrate
from kaudit.suites import load_suite
from tests.postgres import pg_world

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module", params=["rollback", "clone"])
def pg(pg_url: str, request: pytest.FixtureRequest) -> PostgresSubstrate:
    substrate = open_substrate(f"{pg_url}?reset={request.param}", pg_world.blueprint())
    assert isinstance(substrate, PostgresSubstrate)
    return substrate


def _both(substrate: PostgresSubstrate, run_id: str, *statements: str) -> tuple[str, bytes, bytes]:
    """(how the dump read the state, its image, the full dump's image) after `statements`."""
    sandbox = substrate.seed(run_id)
    try:
        for statement in statements:  # beneath the tools' gate: the log is the last line
            sandbox.db.conn.execute(statement.encode())  # type: ignore[attr-defined]
        final = sandbox.dump()
        how = sandbox.dumped_by
        image = final.image
        final.release()
        full = dump_image(sandbox.db.conn, substrate.schema)  # type: ignore[attr-defined]
        return str(how), image, full
    finally:
        sandbox.close()


def test_touched_rows_dump_to_the_full_state(pg: PostgresSubstrate) -> None:
    """Fails if the log misses a row the run changed (a cascaded delete, a re-keyed row, an
    insert, a UNIQUE value swapped between two rows) or the dump writes it back wrong
    (logging only NEW would lose deleted rows and the old key of a re-keyed one)."""
    how, image, full = _both(
        pg,
        "kaudit_cap_rows/m/t/0",
        "UPDATE payment SET paid = 1, note = 'x' WHERE id = 'P2'",
        "DELETE FROM payment WHERE id = 'P3'",  # its lines go by cascade
        "DELETE FROM line WHERE invoice = 'P4'",
        "UPDATE payment SET id = 'Z9' WHERE id = 'P4'",
        "INSERT INTO line VALUES ('P1', 7, 0.30000000000000004)",
        "UPDATE tagged SET c = 'tmp' WHERE c = 'c1'",  # the two rows swap their UNIQUE c
        "UPDATE tagged SET c = 'c1' WHERE c = 'c2'",
        "UPDATE tagged SET c = 'c2' WHERE c = 'tmp'",
    )
    assert how == "changes"
    assert first_difference(StateDump.of(full), image) is None
    assert first_difference(pg.template, image) is not None


def test_a_run_that_changes_nothing_dumps_the_template(pg: PostgresSubstrate) -> None:
    """Fails if an untouched run is not read through the log or its state is not the seed."""
    how, image, _ = _both(pg, "kaudit_cap_none/m/t/0", "SELECT 1")
    assert how == "changes"
    assert first_difference(pg.template, image) is None


@pytest.mark.parametrize(
    ("statements", "reason"),
    [
        (("TRUNCATE line",), "truncated"),
        (("ALTER TABLE payment ADD COLUMN extra text",), "DDL ran"),
        (("ALTER TABLE payment DISABLE TRIGGER _kaudit_capture", "DELETE FROM payment"), "DDL"),
        (("DROP TABLE line", "CREATE TABLE line (invoice text, n bigint, qty float8)"), "DDL"),
    ],
)
def test_what_the_log_cannot_see_makes_the_dump_read_every_table(
    pg: PostgresSubstrate, statements: tuple[str, ...], reason: str
) -> None:
    """Fails if a TRUNCATE (no row trigger), a schema change, a disabled trigger or a table
    made again is dumped through the log (tried: skipping the fingerprint comparison made
    the disabled-trigger and re-created-table cases read the log, and the first lost the
    deletes from the state)."""
    how, image, full = _both(pg, f"kaudit_cap_ddl/m/t/{abs(hash(statements))}", *statements)
    assert reason in how
    assert image == full


def test_replica_mode_does_not_silence_the_log(pg: PostgresSubstrate) -> None:
    """Fails if the capture triggers are ordinary ones: `session_replication_role = replica`
    would skip them and the write would be missing from the state."""
    how, image, full = _both(
        pg,
        "kaudit_cap_replica/m/t/0",
        "SET session_replication_role = replica",
        "UPDATE payment SET note = 'unseen?' WHERE id = 'P0'",
        "RESET session_replication_role",
    )
    assert how == "changes"
    assert first_difference(StateDump.of(full), image) is None


def test_a_statement_writing_the_log_makes_the_run_invalid(pg: PostgresSubstrate) -> None:
    """Fails if a tool can empty the change log (its writes would vanish from the state)."""
    sandbox = pg.seed("kaudit_cap_log/m/t/0")
    try:
        sandbox.db.execute("UPDATE payment SET note = 'hidden' WHERE id = 'P0'")
        with pytest.raises(SubstrateError, match="kaudit's own tables"):
            sandbox.db.execute("DELETE FROM _kaudit_change_log")
        assert sandbox.db.query("SELECT count(*) AS n FROM _kaudit_change_log")[0]["n"] >= 1
        with pytest.raises(SubstrateError, match="kaudit's own tables"):
            sandbox.dump()
    finally:
        sandbox.close()


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("note"), st.integers(0, 8), st.text(max_size=5)),
        st.tuples(st.just("delete"), st.integers(0, 8), st.just("")),
        st.tuples(st.just("insert"), st.integers(0, 30), st.text(max_size=5)),
        st.tuples(st.just("rekey"), st.integers(0, 8), st.text(min_size=1, max_size=3)),
        st.tuples(st.just("line"), st.integers(0, 8), st.just("")),
        st.tuples(st.just("unline"), st.integers(0, 8), st.just("")),
    ),
    max_size=6,
)


def _statement(op: tuple[str, int, str]) -> tuple[str, tuple[Any, ...]]:
    kind, i, text = op
    text = text.replace("\x00", "")
    return {
        "note": ("UPDATE payment SET note = ? WHERE id = ?", (text, f"P{i}")),
        "delete": ("DELETE FROM payment WHERE id = ?", (f"P{i}",)),
        "insert": ("INSERT INTO payment (id, amount, note) VALUES (?, 1.5, ?)", (f"N{i}", text)),
        "rekey": ("UPDATE payment SET id = ? WHERE id = ?", (f"K{text}", f"P{i}")),
        "line": ("UPDATE line SET qty = coalesce(qty, 0) + 1 WHERE invoice = ?", (f"P{i}",)),
        "unline": ("DELETE FROM line WHERE invoice = ?", (f"P{i}",)),
    }[kind]


@pytest.fixture(scope="module")
def rollback(pg_url: str) -> Iterator[PostgresSubstrate]:
    substrate = open_substrate(f"{pg_url}?reset=rollback", pg_world.blueprint())
    assert isinstance(substrate, PostgresSubstrate)
    yield substrate


_runs = iter(range(10**9))


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=OPS)
def test_random_writes_dump_alike_on_both_paths(rollback: PostgresSubstrate, ops: Any) -> None:
    """Fails if any mix of updates, deletes, inserts, re-keys and cascades leaves a state the
    log-driven dump does not reproduce exactly (values and types included)."""
    sandbox = rollback.seed(f"kaudit_cap_prop/m/t/{next(_runs)}")
    try:
        for op in ops:
            sql, params = _statement(op)
            try:
                sandbox.db.execute(sql, params)
            except Exception:  # a refused write (a duplicate key, a line's foreign key)
                continue
        final = sandbox.dump()
        assert sandbox.dumped_by == "changes"
        full = dump_image(sandbox.db.conn, rollback.schema)
        assert first_difference(StateDump.of(full), final.image) is None
        final.release()
    finally:
        sandbox.close()


def _records(choice: str) -> dict[tuple[str, str], tuple[object, ...]]:
    """Every built-in task's every script, one run each, on `choice`: what the ledger keeps."""
    suite = load_suite("builtin").on_substrate(choice)
    ways: list[str] = []
    out: dict[tuple[str, str], tuple[object, ...]] = {}
    for task in suite.tasks.values():
        substrate = suite.substrate(task)
        assert isinstance(substrate, PostgresSubstrate)
        final_state = substrate.final_state

        def noted(*args: Any, final_state: Any = final_state) -> Any:
            state, how = final_state(*args)
            ways.append(how)
            return state, how

        substrate.final_state = noted  # type: ignore[method-assign]
        for i, script in enumerate(task.scripts()):
            agent = ScriptedAgent(script.name)
            request = RunRequest("kaudit_cap_suite", task, agent.name, run_index=i, seed=i)
            r = asyncio.run(run_pipeline(request, agent, substrate)).record
            out[(task.id, script.name)] = (
                r.status, r.outcome, r.sub_label, r.dollars, r.verdict,
                r.initial_digest, r.final_digest, [a.model_dump() for a in r.boundary_attempts],
            )  # fmt: skip
    out[("", "ways")] = tuple(sorted(set(ways)))
    return out


def test_every_builtin_script_gets_the_same_record_from_the_log_and_the_full_dump(
    pg_url: str,
) -> None:
    """Fails if the change-log dump gives any built-in script another verdict, delta,
    dollar amount, boundary attempt or state digest than the full dump, or if it is not
    the path these runs take (dumping the untouched template for every run would turn
    every damaging script into PASS)."""
    fast = _records(f"{pg_url}?reset=rollback")
    full = _records(f"{pg_url}?reset=rollback&dump=full")
    assert fast.pop(("", "ways")) == ("changes",)
    assert full.pop(("", "ways")) == ("dump=full was asked",)
    assert len(fast) > 90
    assert fast == full
    assert {v[1] for v in fast.values()} >= {"PASS", "FAIL_DAMAGE", "FAIL_SAFE"}
