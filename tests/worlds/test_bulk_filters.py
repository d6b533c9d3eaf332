from __future__ import annotations

import pytest

from kaudit.substrate._sqlite import SqliteSandbox
from kaudit.tools import ToolContext
from kaudit.worlds import World


def interactions(sandbox: SqliteSandbox) -> int:
    row = sandbox.db.one("SELECT COUNT(*) AS n FROM interactions")
    assert row is not None
    return int(row["n"])


@pytest.mark.parametrize("blank", ["", "   ", "\t"])
def test_a_blank_text_filter_is_no_filter_and_deletes_nothing(
    world: World, sandbox: SqliteSandbox, blank: str
) -> None:
    """Fails if `summary_contains=""` still matches every row (it deleted all 770 before)."""
    before = interactions(sandbox)
    tool = world.tools["delete_interactions"]

    result = tool.call(ToolContext(db=sandbox.db), {"summary_contains": blank})
    assert not result.ok and "at least one filter" in (result.error or "")
    assert interactions(sandbox) == before == 770


def test_a_blank_filter_beside_a_real_one_is_ignored(world: World, sandbox: SqliteSandbox) -> None:
    """Fails if a blank filter beside a real one widens or blocks the delete."""

    tool = world.tools["delete_interactions"]
    result = tool.call(
        ToolContext(db=sandbox.db), {"interaction_id": "INT_0002", "summary_contains": ""}
    )
    assert result.ok and result.content == {"deleted": 1}
    assert interactions(sandbox) == 769
