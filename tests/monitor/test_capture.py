"""Events from a real transaction on a real SQLite file, labeled by the audit's labeler."""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaudit.errors import KauditError
from kaudit.label import RunMeta, label_run
from kaudit.monitor import Event, release_watch, watch_transaction
from kaudit.spec import DamageSpec, Task
from kaudit.suites import Suite, load_yaml_suite
from tests.conftest import FIXTURES
from tests.mini_world import build

VOLATILE = {"account": ("updated_at",)}


@pytest.fixture
def task(mini_suite: Suite) -> Task:
    (found,) = mini_suite.tasks.values()
    return found


def _production(directory: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(directory / "prod.sqlite")
    build(conn)
    conn.commit()
    return conn


def test_allowed_change_is_no_harm_and_the_held_account_is(task: Task, tmp_path: Path) -> None:
    """Fails if the watch labeled without the task's spec or missed the second update."""
    conn = _production(tmp_path)
    with watch_transaction(conn, task, model="m", group="eu", volatile=VOLATILE) as ok:
        conn.execute("UPDATE account SET status = 'closed', updated_at = 'x' WHERE id = 'ACC_002'")
    assert ok.event == Event("demo/close-account", "m", False, group="eu")
    with watch_transaction(conn, task, model="m", volatile=VOLATILE) as bad:
        conn.execute("UPDATE account SET status = 'closed' WHERE id = 'ACC_004'")
        conn.execute("DELETE FROM account WHERE id = 'ACC_006'")
    assert bad.event is not None and bad.event.harm is True
    assert bad.verdict is not None
    assert [(d.table, d.op, d.key) for d in bad.verdict.deltas] == [
        ("account", "modified", (("id", "ACC_004"),)),
        ("account", "removed", (("id", "ACC_006"),)),
    ]
    assert bad.event.dollars == pytest.approx(100.0 + 6 * 10.5)  # the deleted balance
    assert conn.execute("SELECT status FROM account WHERE id = 'ACC_004'").fetchone() == ("closed",)


def test_a_raising_block_rolls_back_and_leaves_no_event_or_copy(task: Task, tmp_path: Path) -> None:
    """Fails if the watch committed a failed block, kept a copy, or stayed active after it;
    `release_watch` then removes every trigger and table it installed."""
    conn = _production(tmp_path)
    with (
        pytest.raises(RuntimeError),
        watch_transaction(conn, task, model="m") as watch,
    ):
        conn.execute("DELETE FROM account WHERE id = 'ACC_004'")
        raise RuntimeError("boom")
    assert watch.event is None
    assert conn.execute("SELECT COUNT(*) FROM account").fetchone() == (40,)
    assert conn.execute("SELECT active FROM _kaudit_mon_state").fetchone() == (0,)
    conn.execute("DELETE FROM account WHERE id = 'ACC_008'")  # outside a watch: not copied
    conn.commit()
    copies = [
        conn.execute(f"SELECT COUNT(*) FROM {name}").fetchone()[0]
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_temp_master WHERE type = 'table' AND name LIKE '%mon_%'"
        ).fetchall()
        if not name.endswith("state")
    ]
    assert copies and set(copies) == {0}
    with watch_transaction(conn, task, model="m") as again:  # the installed triggers reused
        conn.execute("DELETE FROM account WHERE id = 'ACC_004'")
    assert again.event is not None and again.event.harm is True
    release_watch(conn)
    assert conn.execute("SELECT COUNT(*) FROM sqlite_temp_master").fetchone() == (0,)


def test_an_open_transaction_is_refused(task: Task, tmp_path: Path) -> None:
    """Fails if the watch joined a transaction it cannot bound (its before-copies would be
    wrong)."""
    conn = _production(tmp_path)
    conn.execute("UPDATE account SET name = 'x' WHERE id = 'ACC_001'")
    with (
        pytest.raises(KauditError, match="already in a transaction"),
        watch_transaction(conn, task, model="m"),
    ):
        pass


Op = Callable[[sqlite3.Connection], object]
OPS: list[Op] = [
    lambda c: c.execute("UPDATE account SET status = 'closed' WHERE id = 'ACC_002'"),
    lambda c: c.execute("UPDATE account SET status = 'closed' WHERE id = 'ACC_004'"),
    lambda c: c.execute("UPDATE account SET balance = balance + 1 WHERE org = 'ORG_B'"),
    lambda c: c.execute("DELETE FROM account WHERE id = 'ACC_010'"),
    lambda c: c.execute(
        "INSERT OR IGNORE INTO account VALUES ('NEW_1', 'ORG_A', 'n', 1.0, 'open', NULL)"
    ),
    lambda c: c.execute(
        "INSERT OR REPLACE INTO account VALUES ('ACC_005', 'ORG_B', 'r', 9.0, 'open', NULL)"
    ),
    lambda c: c.execute("UPDATE account SET balance = 2.0 WHERE id = 'NEW_1'"),
    lambda c: c.execute("DELETE FROM account WHERE id = 'NEW_1'"),
    lambda c: c.execute("INSERT OR REPLACE INTO link VALUES ('ACC_003', 'tier', 'gold')"),
    lambda c: c.execute("INSERT OR REPLACE INTO link VALUES ('ACC_003', 'vip', 'yes')"),
    lambda c: c.execute("INSERT INTO outbox (recipient, body) VALUES ('a', 'b')"),
    lambda c: c.execute("UPDATE account SET updated_at = 'later' WHERE id = 'ACC_020'"),
    lambda c: c.execute("UPDATE account SET status = 'open' WHERE id = 'ACC_002'"),
]


@given(st.lists(st.integers(0, len(OPS) - 1), max_size=8))
@settings(max_examples=40, deadline=None)
def test_verdict_equals_the_labeler_on_whole_database_images(choice: list[int]) -> None:
    """Differential: the touched-rows images give the same deltas and outcome as labeling
    full before/after images of the file. Fails if a REPLACE, an insert-then-update or
    an update-then-delete row were copied at the wrong moment."""

    (task,) = load_yaml_suite(FIXTURES / "mini_suite", "mini").tasks.values()
    with tempfile.TemporaryDirectory(prefix="kaudit_i12_") as directory:
        conn = _production(Path(directory))
        before = conn.serialize()
        with watch_transaction(conn, task, model="m", volatile=VOLATILE) as watch:
            for index in choice:
                OPS[index](conn)
        after = conn.serialize()
        conn.close()
    reference = label_run(
        before, after, task.damage, (), task.params, RunMeta(), volatile=VOLATILE, fast=False
    )
    assert watch.verdict is not None and watch.event is not None
    assert watch.verdict.deltas == reference.deltas
    assert watch.event.harm == reference.counts_as_damage


def test_tables_without_a_declared_key_are_matched_by_rowid(task: Task, tmp_path: Path) -> None:
    """Fails if the before-copy of a rowid-keyed row lost its rowid (the diff would see an
    added and a removed row instead of one modified row)."""
    conn = sqlite3.connect(tmp_path / "notes.sqlite")
    conn.executescript("CREATE TABLE note (body TEXT); INSERT INTO note VALUES ('a'), ('b');")
    conn.commit()
    bare = task.model_copy(update={"damage": DamageSpec(), "params": {}})
    with watch_transaction(conn, bare, model="m") as watch:
        conn.execute("UPDATE note SET body = 'z' WHERE body = 'b'")
    assert watch.verdict is not None
    assert [(d.op, d.key, d.before, d.after) for d in watch.verdict.deltas] == [
        ("modified", (("rowid", 2),), {"body": "b"}, {"body": "z"})
    ]
