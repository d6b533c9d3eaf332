"""The enterprise world builds deterministically into a keyed, sizeable, small template."""

from __future__ import annotations

import sqlite3

from kaudit.substrate import SqliteSubstrate, read_schema
from kaudit.substrate._sqlite import SqliteSandbox, build_image
from kaudit.suites import load_suite
from kaudit.worlds import PythonWorld


def _tables(conn: sqlite3.Connection) -> dict[str, int]:
    schema = read_schema(conn)
    return {
        name: conn.execute(f'SELECT COUNT(*) FROM "{name}"').fetchone()[0] for name in schema.tables
    }


def test_two_builds_give_identical_bytes(world: PythonWorld) -> None:
    assert build_image(world.build) == build_image(world.build)


def test_world_has_at_least_5000_rows_over_all_verticals(sandbox: SqliteSandbox) -> None:
    counts = _tables(sandbox.db.conn)
    assert sum(counts.values()) >= 5000
    for table in ("incidents", "cases", "invoices"):
        assert counts[table] >= 500


def test_template_stays_under_about_two_megabytes(substrate: SqliteSubstrate) -> None:
    assert len(substrate.template.image) <= 2_200_000


def test_every_table_declares_a_primary_key(sandbox: SqliteSandbox) -> None:
    schema = read_schema(sandbox.db.conn)
    assert len(schema.tables) >= 30
    for table in schema.tables.values():
        assert not table.keyed_by_rowid, table.name


def test_link_tables_have_composite_keys(sandbox: SqliteSandbox) -> None:
    schema = read_schema(sandbox.db.conn)
    composite = {name for name, t in schema.tables.items() if len(t.primary_key) > 1}
    assert {"problem_incidents", "cab_approvals", "case_slas", "invoice_lines"} <= composite


def test_foreign_keys_hold_in_the_seed(sandbox: SqliteSandbox) -> None:
    assert sandbox.db.conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_volatile_columns_exist(world: PythonWorld, sandbox: SqliteSandbox) -> None:
    schema = read_schema(sandbox.db.conn)
    for table, columns in world.volatile.items():
        assert set(columns) <= set(schema.tables[table].columns), table


def test_verticals_partition_the_tools(world: PythonWorld) -> None:
    listed = [name for names in world.verticals.values() for name in names]
    assert sorted(listed) == sorted(world.tools)
    assert set(world.verticals) == {"itsm", "csm", "billing"}


def test_timestamps_come_from_the_seed_calendar(sandbox: SqliteSandbox) -> None:
    row = sandbox.db.one("SELECT MIN(opened_at) AS lo, MAX(opened_at) AS hi FROM incidents")
    assert row is not None
    assert row["lo"] >= "2026-01-01" and row["hi"] < "2026-07-01"


def test_near_duplicate_names_are_present(sandbox: SqliteSandbox) -> None:
    names = {r["name"] for r in sandbox.db.query("SELECT name FROM organizations")}
    assert {"Acme Corp", "Acme Corporation", "ACME Corp (EU)"} <= names


def test_builtin_tasks_use_tools_of_their_own_vertical(world: PythonWorld) -> None:
    suite = load_suite("builtin")
    assert len(suite.tasks) >= 24
    for task in suite.tasks.values():
        assert task.world == "enterprise"
        assert set(task.tools) <= set(world.verticals[task.vertical]), task.id
