"""Under an organization scope, state equals running only the in-scope calls unbounded."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kaudit.boundary import BoundaryLayer, SqliteGuard
from kaudit.gateway import ToolGateway
from kaudit.spec import Identity
from kaudit.tools import ToolContext
from kaudit.worlds._world import get_world

ACCOUNTS = [f"ACC_{i:03d}" for i in range(8)]  # even ids are ORG_A, odd ORG_B

calls = st.lists(
    st.one_of(
        st.tuples(
            st.just("update_account"),
            st.fixed_dictionaries(
                {"account_id": st.sampled_from(ACCOUNTS), "status": st.sampled_from(["x", "y"])}
            ),
        ),
        st.tuples(
            st.just("delete_account"),
            st.fixed_dictionaries({"account_id": st.sampled_from(ACCOUNTS)}),
        ),
        st.tuples(
            st.just("set_link"),
            st.fixed_dictionaries(
                {"account_id": st.sampled_from(ACCOUNTS), "tag": st.just("t"), "note": st.just("n")}
            ),
        ),
    ),
    max_size=12,
)


def in_scope(arguments: dict[str, Any]) -> bool:
    return int(arguments["account_id"][-3:]) % 2 == 0


def final_digest(sequence: list[tuple[str, dict[str, Any]]], bounded: bool) -> tuple[str, int]:
    box = get_world("mini").substrate().seed("property")
    try:
        tools = get_world("mini").tools
        if bounded:
            identity = Identity(role="a", scope={"org": "ORG_A"})
            layer = BoundaryLayer(box.db, SqliteGuard(box.db.conn, identity))
            gateway = ToolGateway(tools, ToolContext(db=box.db, identity=identity), [layer])
        else:
            gateway = ToolGateway(tools, ToolContext(db=box.db))
        for i, (name, arguments) in enumerate(sequence):
            gateway.call(str(i), name, arguments)
        return box.dump().digest, len(layer.attempts) if bounded else 0
    finally:
        box.close()


@settings(max_examples=40, deadline=None)
@given(calls)
def test_the_scope_keeps_exactly_the_in_scope_calls(
    sequence: list[tuple[str, dict[str, Any]]],
) -> None:
    """Fails if an out-of-scope write lands, or an in-scope one is refused or half-applied.

    `link` has no `org` column, so `set_link` is never refused: the scope binds only tables
    that carry the scoped column. The oracle is SQLite itself, running only the calls the
    scope must allow, with no boundary at all.
    """
    allowed = [(n, a) for n, a in sequence if n == "set_link" or in_scope(a)]
    bounded, attempts = final_digest(sequence, bounded=True)
    unbounded, _ = final_digest(allowed, bounded=False)
    assert bounded == unbounded
    # An ORG_B row is never deleted, so every out-of-scope call meets it: one attempt each.
    refused = [(n, a) for n, a in sequence if n != "set_link" and not in_scope(a)]
    assert attempts == len(refused)
