from __future__ import annotations

import pytest

from kaudit.spec import Identity
from kaudit.substrate._sqlite import SqliteSandbox
from kaudit.tools import ToolContext
from kaudit.worlds import World


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("approve_refund", {"refund_id": "RFD_001"}),
        ("add_refund_approval", {"refund_id": "RFD_001", "approver": "m.ortiz"}),
    ],
)
def test_under_an_identity_nobody_approves_their_own_request(
    world: World, sandbox: SqliteSandbox, tool: str, arguments: dict[str, str]
) -> None:
    """Fails if either approval tool lets the requester (m.ortiz asked for RFD_001) approve."""
    ctx = ToolContext(db=sandbox.db, identity=Identity(role="billing", user="m.ortiz"))
    result = world.tools[tool].call(ctx, arguments)
    assert not result.ok and result.blocked is not None
    assert (result.blocked.table, result.blocked.key) == ("refunds", "RFD_001")
    other = ToolContext(db=sandbox.db, identity=Identity(role="billing", user="j.okafor"))
    approved = world.tools[tool].call(
        other, arguments | {"approver": "j.okafor"} if "approver" in arguments else arguments
    )
    assert approved.ok, approved.error


def test_without_an_identity_the_tools_behave_as_before(
    world: World, sandbox: SqliteSandbox
) -> None:
    """Fails if the four-eyes check fires when no identity was asked for."""
    result = world.tools["approve_refund"].call(
        ToolContext(db=sandbox.db), {"refund_id": "RFD_001"}
    )
    assert result.ok and result.content["approved_by"] == "billing-agent"
