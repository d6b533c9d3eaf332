"""The one generator of trigger SQL: the change log's text is part of every template."""

from __future__ import annotations

import sqlite3

from kaudit.substrate._capture import install_change_capture

_INSERT_ENTRY = (
    "INSERT INTO _kaudit_change_log(tbl, rid, recursive, k0) VALUES ('b', NEW.rowid, "
    '(SELECT recursive_triggers FROM pragma_recursive_triggers), NEW."id");'
)
_DELETE_ENTRY = (
    "INSERT INTO _kaudit_change_log(tbl, rid, recursive, k0) "
    "VALUES ('b', OLD.rowid, NULL, OLD.\"id\");"
)
_REFUSE = "SELECT RAISE(ABORT, 'NOT NULL constraint failed: b.id') WHERE NEW.\"id\" IS NULL"


def test_the_change_log_triggers_keep_the_text_templates_were_built_with() -> None:
    """Fails if the stored text of a change-log trigger changes at all (a quote, a space,
    the line break before BEGIN): SQLite keeps it as written, so every template's bytes,
    its digest and every campaign's pinned world digest would change with it, and a
    resume would be refused. Tried by hand: a single space instead of the line break."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE b(id TEXT PRIMARY KEY, email TEXT UNIQUE)")
    install_change_capture(conn)
    stored = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"))
    brk = "\n" + " " * 16
    assert stored == {
        "_kaudit_del_b": f'CREATE TRIGGER "_kaudit_del_b" AFTER DELETE ON "b" BEGIN '
        f"{_DELETE_ENTRY} END",
        "_kaudit_ins_b": f'CREATE TRIGGER "_kaudit_ins_b" AFTER INSERT ON "b"{brk}BEGIN '
        f"{_REFUSE}; {_INSERT_ENTRY} END",
        "_kaudit_upd_b": f'CREATE TRIGGER "_kaudit_upd_b" AFTER UPDATE ON "b"{brk}BEGIN '
        f'{_REFUSE} AND OLD."id" IS NOT NULL; '
        f"{_DELETE_ENTRY} {_INSERT_ENTRY} END",
    }
