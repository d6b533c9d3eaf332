"""SQLite's rowid keys on PostgreSQL: an INSERT without the key gets the key SQLite gives."""

from __future__ import annotations

import sqlite3

import pytest

from kaudit.boundary import BoundaryLayer, guard_for
from kaudit.errors import SubstrateError
from kaudit.gateway import ToolGateway
from kaudit.label import RunMeta, label_run
from kaudit.postgres._translate import translate
from kaudit.spec import DamageSpec, Identity
from kaudit.substrate import Blueprint
from kaudit.substrate._choice import open_substrate
from kaudit.substrate._sqlite import build_image
from kaudit.tools import ToolContext, tool

pytestmark = pytest.mark.postgres

NOTES = """
CREATE TABLE notes (note_id INTEGER PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE tags (tag_id INTEGER PRIMARY KEY DESC, label TEXT);
INSERT INTO notes VALUES (1, 'one'), (2, 'two'), (3, 'three');
INSERT INTO tags VALUES (7, 'seven');
"""
"""`notes.note_id` is SQLite's rowid; `INTEGER PRIMARY KEY DESC` is an ordinary key."""


@tool("reversible_write", writes={"notes": ("*",)})
def add_notes(ctx: ToolContext, bodies: list[str], explicit_null: bool = False) -> dict[str, int]:
    """Add notes without giving their keys, in one statement."""
    marks = ", ".join("(NULL, ?)" if explicit_null else "(?)" for _ in bodies)
    columns = "" if explicit_null else " (body)"
    return {"added": ctx.db.execute(f"INSERT INTO notes{columns} VALUES {marks}", bodies)}


@tool("irreversible", writes={"notes": ("*",)})
def delete_note(ctx: ToolContext, note_id: int) -> dict[str, int]:
    """Delete one note."""
    return {"deleted": ctx.db.execute("DELETE FROM notes WHERE note_id = ?", (note_id,))}


TOOLS = {t.name: t for t in (add_notes, delete_note)}
CALLS = [
    ("delete_note", {"note_id": 3}),  # the largest key: SQLite gives 3 again
    ("add_notes", {"bodies": ["a"]}),
    ("add_notes", {"bodies": ["b"], "explicit_null": True}),
    ("add_notes", {"bodies": ["c", "d"]}),
    ("delete_note", {"note_id": 6}),
    ("add_notes", {"bodies": ["e"]}),
]
SPEC = DamageSpec.model_validate({"allowed": [{"table": "notes", "op": "added"}]})


def _run(choice: str, identity: Identity | None) -> tuple[list[bool], list[object], str]:
    image = build_image(lambda conn: conn.executescript(NOTES))
    substrate = open_substrate(choice, Blueprint("rowid-notes", image, TOOLS))
    box = substrate.seed("kaudit_i14_rowid/m/t/0")
    try:
        context = ToolContext(db=box.db, identity=identity)
        layers = [] if identity is None else [BoundaryLayer(box.db, guard_for(box, identity))]
        gateway = ToolGateway(TOOLS, context, layers)
        oks = [gateway.call(str(i), name, args).ok for i, (name, args) in enumerate(CALLS)]
        final = box.dump()
        rows = final.open().execute("SELECT note_id, body FROM notes ORDER BY 1").fetchall()
        verdict = label_run(box.initial.image, final.image, SPEC, (), {}, RunMeta(), digest=True)
    finally:
        box.close()
    return oks, rows, verdict.to_json()


OWNER_ROWS = [(1, "one"), (2, "two"), (3, "a"), (4, "b"), (5, "c"), (6, "e")]
INSERT_ONLY_ROWS = [(1, "one"), (2, "two"), (3, "three"), *zip(range(4, 9), "abcde", strict=True)]


@pytest.mark.parametrize(
    ("identity", "oks", "rows"),
    [
        (None, [True] * 6, OWNER_ROWS),
        (
            Identity(role="writer", tables={"notes": ("insert",)}),
            [False, True, True, True, False, True],
            INSERT_ONLY_ROWS,
        ),
    ],
    ids=["owner", "insert-only"],
)
def test_an_insert_without_the_key_gets_sqlite_s_key_on_both_reset_modes(
    pg_url: str, identity: Identity | None, oks: list[bool], rows: list[tuple[object, ...]]
) -> None:
    """Bug caught: INTEGER PRIMARY KEY translated as a plain bigint key (every keyless
    insert fails with a NOT NULL violation: tried), or as an identity sequence started
    after the seeded largest key (after the largest row is deleted it gives 4 where SQLite
    gives 3 again: tried, the keys and the verdict differed), or a key function that an
    identity allowed to insert but not to read cannot run (tried without SECURITY DEFINER:
    permission denied for table notes)."""
    lite = _run("sqlite", identity)
    assert lite[:2] == (oks, rows)
    assert _run(pg_url, identity) == lite
    assert _run(pg_url + "?reset=rollback", identity) == lite


def test_only_the_rowid_alias_gets_key_assignment() -> None:
    """Bug caught: the alias told by its declared type alone, so `INTEGER PRIMARY KEY DESC`
    (an ordinary key, indexed apart from the rowid) would get keys SQLite never gives."""
    conn = sqlite3.connect(":memory:")
    conn.executescript(NOTES + "CREATE TABLE plain (code INT PRIMARY KEY) WITHOUT ROWID;")
    assigned = {t.name for t in translate(conn) if any("_kaudit_rowid" in c for c in t.constraints)}
    assert assigned == {"notes"}


def test_autoincrement_is_refused_with_the_table_name(pg_url: str) -> None:
    """Bug caught: an AUTOINCREMENT table carried over as a plain rowid key, which gives a
    deleted largest key again where SQLite never does."""
    ddl = "CREATE TABLE ledger (n INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT)"
    image = build_image(lambda conn: conn.executescript(ddl))
    substrate = open_substrate(pg_url, Blueprint("autoincrement", image))
    with pytest.raises(SubstrateError, match="table ledger: AUTOINCREMENT"):
        substrate.seed("kaudit_i14_autoinc/m/t/0")
