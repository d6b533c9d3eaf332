"""When the change log may be trusted: only for a final state that carries it."""

from __future__ import annotations

import sqlite3

from kaudit.label import diff_images
from kaudit.substrate import build_image


def _world(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE acct (id TEXT PRIMARY KEY, bal INTEGER)")
    conn.execute("INSERT INTO acct VALUES ('a', 1), ('b', 2)")


def test_a_final_image_without_the_log_is_diffed_in_full_even_at_an_equal_cookie() -> None:
    """A PostgreSQL full dump is a fresh SQLite image with the world's tables only, its
    schema cookie the count of what it created. Fails if equal cookies were taken to mean
    the final state still holds the template's change log: with as many extra tables as
    make the cookies equal, the labeler queried a log that is not there and raised
    `no such table` (a damaging run became INVALID). Tried by hand with the log looked for
    only after the cookie moved."""
    initial = build_image(_world)
    template = sqlite3.connect(":memory:")
    template.deserialize(initial)
    cookie = template.execute("PRAGMA schema_version").fetchone()[0]
    final = sqlite3.connect(":memory:")
    final.execute("CREATE TABLE acct (id TEXT PRIMARY KEY, bal INTEGER)")
    final.execute("INSERT INTO acct VALUES ('a', 1), ('b', 999)")
    for i in range(cookie - 1):
        final.execute(f"CREATE TABLE extra{i} (x)")
    final.commit()
    assert final.execute("PRAGMA schema_version").fetchone()[0] == cookie
    changes = diff_images(initial, final.serialize())
    assert ("acct", "modified") in {(c.table, c.op) for c in changes}
