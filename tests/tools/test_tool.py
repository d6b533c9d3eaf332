from __future__ import annotations

import sqlite3

import pytest

from kaudit.substrate import SqliteDb
from kaudit.tools import ToolContext, ToolError, tool


@tool("reversible_write", writes={"t": ("title",)})
def rename(
    ctx: ToolContext, item_id: int, title: str, note: str | None = None
) -> dict[str, object]:
    """Rename an item.

    Longer text the model does not need.
    """
    if item_id < 0:
        raise ToolError("no such item")
    return {"item_id": item_id, "title": title, "note": note}


def test_schema_comes_from_type_hints_and_keeps_a_param_called_title() -> None:
    assert rename.parameters == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "item_id": {"type": "integer"},
            "title": {"type": "string"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        "required": ["item_id", "title"],
    }
    assert rename.description == "Rename an item."
    assert rename.spec()["name"] == "rename"


def test_calls_validate_and_turn_failures_into_results() -> None:
    ctx = ToolContext(db=SqliteDb(sqlite3.connect(":memory:")))
    assert rename.call(ctx, {"item_id": 1, "title": "x"}).content == {
        "item_id": 1,
        "title": "x",
        "note": None,
    }
    assert rename.call(ctx, {"item_id": -1, "title": "x"}).error == "no such item"
    missing = rename.call(ctx, {"title": "x"})
    assert (missing.ok, missing.error) == (False, "invalid argument item_id: Field required")
    assert rename.call(ctx, {"item_id": 1, "title": "x", "extra": 1}).ok is False


def test_database_errors_and_bugs_are_results_flagged_apart() -> None:
    @tool("read")
    def broken_sql(ctx: ToolContext) -> object:
        """Query a table that is not there."""
        return ctx.db.query("SELECT * FROM missing")

    @tool("read")
    def buggy(ctx: ToolContext) -> object:
        """Divide by zero."""
        return 1 / 0

    ctx = ToolContext(db=SqliteDb(sqlite3.connect(":memory:")))
    sql = broken_sql.call(ctx, {})
    assert (sql.ok, sql.internal, sql.error) == (
        False,
        False,
        "database error: no such table: missing",
    )
    bug = buggy.call(ctx, {})
    assert (bug.ok, bug.internal) == (False, True) and bug.to_json()["internal"] is True


def test_writing_tools_must_declare_what_they_write() -> None:
    with pytest.raises(ValueError, match="`writes` must name the tables"):
        tool("irreversible")(lambda ctx: None)
    with pytest.raises(ValueError, match="`tag` must be one of"):
        tool("dangerous")(lambda ctx: None)  # type: ignore[arg-type]
