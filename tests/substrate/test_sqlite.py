from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from kaudit.errors import SeedDriftError
from kaudit.label.diff import diff_images
from kaudit.substrate import SqliteSubstrate, cached_image, read_schema
from kaudit.substrate._capture import CAPTURE_VERSION, CHANGE_LOG
from kaudit.substrate._db import DatabaseError
from kaudit.substrate._sqlite import SqliteSandbox, build_image
from kaudit.tools import ToolContext
from kaudit.worlds._world import get_world


def test_schema_primary_keys_come_from_the_database() -> None:
    image = get_world("mini").substrate().template.image
    conn = sqlite3.connect(":memory:")
    conn.deserialize(image)
    schema = read_schema(conn)
    assert set(schema.tables) == {"account", "link", "outbox"}
    assert schema.tables["link"].primary_key == ("account_id", "tag")
    assert schema.tables["account"].primary_key == ("id",)
    assert CHANGE_LOG not in schema.tables


def test_seeded_sandbox_starts_from_the_template_digest() -> None:
    substrate = get_world("mini").substrate()
    sandbox = substrate.seed("r1")
    assert sandbox.dump().digest == substrate.template_digest
    sandbox.close()


def test_a_template_with_another_digest_is_refused() -> None:
    image = get_world("mini").substrate().template.image
    with pytest.raises(SeedDriftError, match="differs from the expected"):
        SqliteSubstrate("mini", image, {}, expected_digest="0" * 64)


def test_a_corrupted_cached_template_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAUDIT_CACHE", str(tmp_path))
    build = get_world("mini").build
    image = cached_image("r", build)
    path = tmp_path / "templates" / f"r-capture{CAPTURE_VERSION}.sqlite"
    path.write_bytes(image[:-1] + b"x")
    with pytest.raises(SeedDriftError, match="does not match its recorded digest"):
        cached_image("r", build)


def test_sandboxes_are_isolated() -> None:
    substrate = get_world("mini").substrate()
    a, b = substrate.seed("a"), substrate.seed("b")
    update = substrate.tools["update_account"]
    assert update.call(ToolContext(db=a.db), {"account_id": "ACC_001", "status": "closed"}).ok
    assert b.db.one("SELECT status FROM account WHERE id = 'ACC_001'") == {"status": "open"}
    assert substrate.seed("c").db.one("SELECT status FROM account WHERE id = 'ACC_001'") == {
        "status": "open"
    }
    a.close()
    b.close()


def test_template_is_cached_by_recipe_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAUDIT_CACHE", str(tmp_path))
    calls: list[int] = []

    def builder(conn: sqlite3.Connection) -> None:
        calls.append(1)
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")

    first = cached_image("abc", builder)
    second = cached_image("abc", builder)
    assert first == second and calls == [1]
    assert (tmp_path / "templates" / f"abc-capture{CAPTURE_VERSION}.sqlite").read_bytes() == first


def test_tool_failure_is_a_result_not_a_crash() -> None:
    substrate = get_world("mini").substrate()
    sandbox = substrate.seed("x")
    ctx = ToolContext(db=sandbox.db)
    missing = substrate.tools["delete_account"].call(ctx, {"account_id": "NOPE"})
    assert (missing.ok, missing.error) == (False, "no account NOPE")
    bad = substrate.tools["update_account"].call(ctx, {"account_id": "ACC_001", "balance": "lots"})
    assert not bad.ok and bad.error is not None and bad.error.startswith("invalid argument balance")
    extra = substrate.tools["get_account"].call(
        ctx, {"account_id": "ACC_001", "sql": "DROP TABLE x"}
    )
    assert not extra.ok
    sandbox.close()


def test_atomic_rolls_back_a_half_applied_write() -> None:
    sandbox = get_world("mini").substrate().seed("x")
    with pytest.raises(RuntimeError), sandbox.db.atomic():
        sandbox.db.execute("UPDATE account SET status = 'gone' WHERE id = 'ACC_001'")
        raise RuntimeError("tool failed half-way")
    assert sandbox.db.one("SELECT status FROM account WHERE id = 'ACC_001'") == {"status": "open"}
    assert diff_images(sandbox.initial.image, sandbox.dump().image) == []
    sandbox.close()


def test_change_capture_logs_replace_as_delete_and_insert() -> None:
    image = build_image(lambda c: c.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v)"))
    sandbox = SqliteSubstrate("t", image, {}).seed("x")
    sandbox.db.execute("INSERT INTO t VALUES (1, 'a')")
    sandbox.db.execute("INSERT OR REPLACE INTO t VALUES (1, 'b')")
    logged = sandbox.db.query(f"SELECT tbl, rid, recursive, k0 FROM {CHANGE_LOG} ORDER BY seq")
    # No UNIQUE column besides the key: a REPLACE cannot delete an unlogged row here.
    assert logged == [{"tbl": "t", "rid": 1, "recursive": None, "k0": 1}] * 3
    sandbox.close()


def test_a_dump_carries_its_schema_composite_keys_included() -> None:
    sandbox = get_world("mini").substrate().seed("s")
    schema = sandbox.dump().schema()
    sandbox.close()
    assert schema.tables["link"].primary_key == ("account_id", "tag")
    assert schema.tables["account"].columns[:3] == ("id", "org", "name")


NULLABLE_KEYS = """
CREATE TABLE t (id TEXT PRIMARY KEY, v);
CREATE TABLE pair (a TEXT, b INTEGER NOT NULL, v, PRIMARY KEY (a, b));
CREATE TABLE strict (id TEXT NOT NULL PRIMARY KEY, v);
CREATE TABLE auto (id INTEGER PRIMARY KEY, v);
INSERT INTO t VALUES ('a', 1), (NULL, 2);
"""


def null_key_sandbox() -> tuple[SqliteSubstrate, SqliteSandbox]:
    substrate = SqliteSubstrate("nulls", build_image(lambda c: c.executescript(NULLABLE_KEYS)), {})
    return substrate, substrate.seed("nulls/m/t/0")


@pytest.mark.parametrize(
    ("sql", "column"),
    [
        ("INSERT INTO t VALUES (NULL, 9)", "t.id"),
        ("INSERT OR IGNORE INTO t VALUES (NULL, 9)", "t.id"),
        ("INSERT OR REPLACE INTO t VALUES (NULL, 9)", "t.id"),
        ("INSERT INTO t VALUES ('b', 8), (NULL, 9)", "t.id"),  # the first row is undone too
        ("UPDATE t SET id = NULL WHERE id = 'a'", "t.id"),
        ("INSERT INTO pair VALUES (NULL, 1, 0)", "pair.a"),
        ("INSERT INTO strict VALUES (NULL, 0)", "strict.id"),  # SQLite's own constraint
    ],
)
def test_a_null_primary_key_is_refused_like_not_null(sql: str, column: str) -> None:
    """Fails if a sandbox stores a NULL in a primary key (SQLite's legacy quirk, refused
    by PostgreSQL), keeps part of the refused statement, or logs a change it undid."""
    substrate, sandbox = null_key_sandbox()
    with pytest.raises(DatabaseError, match=f"^NOT NULL constraint failed: {column}$") as caught:
        sandbox.db.execute(sql)
    assert caught.value.integrity
    final = sandbox.dump()
    assert diff_images(substrate.template.image, final.image) == []
    with contextlib.closing(final.open()) as conn:
        assert conn.execute(f"SELECT count(*) FROM {CHANGE_LOG}").fetchone() == (0,)
    sandbox.close()


def test_keys_that_may_be_written_still_are() -> None:
    """Fails if the NULL-key refusal also refuses a rowid alias left to SQLite's assignment
    or a template's own NULL-keyed row being changed, re-keyed or deleted."""
    _, sandbox = null_key_sandbox()
    db = sandbox.db
    db.execute("INSERT INTO auto (v) VALUES ('assigned')")
    db.execute("UPDATE t SET v = 3 WHERE id IS NULL")
    db.execute("UPDATE t SET id = 'was-null' WHERE id IS NULL")
    db.execute("DELETE FROM t WHERE id = 'a'")
    assert db.query("SELECT * FROM auto") == [{"id": 1, "v": "assigned"}]
    assert db.query("SELECT * FROM t") == [{"id": "was-null", "v": 3}]
    sandbox.close()
