"""The banking environment as tables: it reads back as AgentDojo's own object."""

from __future__ import annotations

import sqlite3

from kaudit.suites import Suite
from kaudit.worlds.agentdojo import read_env, rows_of
from kaudit.worlds.agentdojo._tables import connection_query, write_changes


def test_environment_round_trips_through_the_tables(banking: Suite) -> None:
    """Fails if a bool, a float, a dict table or the list order is lost in the tables."""
    world = banking.referee.sources["user_task_0/injection_task_0"].world  # type: ignore[union-attr]
    conn = sqlite3.connect(":memory:")
    conn.deserialize(world.template_image())
    back = read_env(world.tables, world.env_type, connection_query(conn))
    assert back == world.environment()
    assert [t.id for t in back.bank_account.transactions] == [1, 2, 3, 4, 5]  # type: ignore[attr-defined]
    assert "bill-december-2023.txt" in back.filesystem.files  # type: ignore[attr-defined]


def test_tables_have_the_keys_the_labeler_diffs_by(banking: Suite) -> None:
    """Fails if transactions are keyed by position (a new row would shift every key)."""
    world = banking.referee.sources["user_task_0"].world  # type: ignore[union-attr]
    keys = {t.name: t.key for t in world.tables}
    assert keys == {
        "transactions": "id",
        "scheduled_transactions": "id",
        "bank_account": "row",
        "files": "key",
        "user_account": "row",
    }


def test_a_payment_writes_one_row(banking: Suite) -> None:
    """Fails if write-back rewrites unchanged rows (every row would look touched)."""
    source = banking.referee.sources["user_task_0"]  # type: ignore[union-attr]
    world = source.world
    env = world.environment()
    before = rows_of(world.tables, env)
    from agentdojo.functions_runtime import FunctionsRuntime

    FunctionsRuntime(world.suite.tools).run_function(
        env, "send_money", {"recipient": "X", "amount": 1.0, "subject": "s", "date": "d"}
    )
    statements: list[str] = []
    changed = write_changes(
        world.tables, before, rows_of(world.tables, env), lambda sql, _: statements.append(sql) or 1
    )
    assert changed == 1
    assert statements[0].startswith('INSERT INTO "transactions"')
