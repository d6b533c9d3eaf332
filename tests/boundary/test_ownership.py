"""A scope follows the foreign keys a world declares where its schema declares none.

The mini world's `link` rows carry no organization: each belongs to an account through
`link.account_id`, a key the schema does not declare. Declared by the world, the scope
covers them on SQLite and PostgreSQL alike; a declaration naming what the schema lacks
is an error naming the world (or its world.yaml).
"""

from __future__ import annotations

import asyncio
import re
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from kaudit.boundary import BoundaryLayer, guard_for
from kaudit.errors import SpecError, SuiteError
from kaudit.gateway import ToolGateway
from kaudit.harness._validate import check_script
from kaudit.spec import Expected, Identity
from kaudit.spec._script import Script, ScriptStep
from kaudit.substrate import ForeignKey, Sandbox, Substrate
from kaudit.suites import Suite, load_suite
from kaudit.tools import ToolContext, tool
from kaudit.worlds import PythonWorld
from kaudit.worlds._world import get_world, world_substrate
from tests.pg import server_url

SCOPE = Identity(role="agent", scope={"org": "ORG_A"})
LINK = ForeignKey("link", ("account_id",), "account")
"""`link(account_id)` belongs to the account with that id (its primary key)."""
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "subscriptions"


def owned_mini() -> PythonWorld:
    mini = get_world("mini")
    assert isinstance(mini, PythonWorld)
    return replace(mini, name="mini-owned", ownership=(LINK,))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def substrate(request: pytest.FixtureRequest) -> Iterator[Substrate]:
    choice = "sqlite" if request.param == "sqlite" else server_url()
    yield world_substrate(owned_mini(), choice)


@tool("reversible_write", writes={"link": ("*", "note")})
def tag_account(ctx: ToolContext, account_id: str, tag: str, note: str) -> dict[str, str]:
    """Set a tag's note on an account (an upsert both substrates speak)."""
    ctx.db.execute(
        "INSERT INTO link VALUES (?, ?, ?) "
        "ON CONFLICT (account_id, tag) DO UPDATE SET note = excluded.note",
        (account_id, tag, note),
    )
    return {"account_id": account_id, "tag": tag}


def bounded(box: Sandbox, ownership: tuple[ForeignKey, ...]) -> tuple[ToolGateway, BoundaryLayer]:
    layer = BoundaryLayer(box.db, guard_for(box, SCOPE, ownership))
    tools = {"tag_account": tag_account}
    return ToolGateway(tools, ToolContext(db=box.db, identity=SCOPE), [layer]), layer


def set_link(gateway: ToolGateway, call: str, account: str) -> bool:
    return gateway.call(call, "tag_account", {"account_id": account, "tag": "tier", "note": "x"}).ok


def test_a_declared_link_puts_the_child_rows_of_another_scope_out_of_reach(
    substrate: Substrate,
) -> None:
    """Fails if the declaration does not reach the guard (ACC_001's link, an ORG_B
    account's, is rewritten with no attempt recorded), if PostgreSQL ignores it while
    SQLite follows it, or if an ORG_A account's link is refused too."""
    box = substrate.seed("owned")
    try:
        gateway, layer = bounded(box, substrate.ownership)  # type: ignore[attr-defined]
        outside = set_link(gateway, "1", "ACC_001")
        inside = set_link(gateway, "2", "ACC_000")
        notes = {r["account_id"]: r["note"] for r in box.db.query("SELECT * FROM link")}
    finally:
        box.close()
    assert (outside, inside) == (False, True)
    assert [(a.table, a.key) for a in layer.attempts] == [("link", '["ACC_001","tier"]')]
    assert (notes["ACC_001"], notes["ACC_000"]) == ("1", "x")


def test_without_the_declaration_the_link_is_not_covered() -> None:
    """Fails if the scope covered a table no key ties to a scoped one (then every table
    of a world would be refused, and this test shows the declaration is what matters)."""
    substrate = get_world("mini").substrate()
    box = substrate.seed("bare")
    try:
        gateway, _ = bounded(box, ())
        assert set_link(gateway, "1", "ACC_001")
    finally:
        box.close()


@pytest.mark.parametrize(
    ("link", "field", "reason"),
    [
        (ForeignKey("links", ("account_id",), "account"), "ownership[0].table", "no table links"),
        (
            ForeignKey("link", ("acount_id",), "account"),
            "ownership[0].columns",
            "no column acount_id in table link",
        ),
        (
            ForeignKey("link", ("account_id", "tag"), "account"),
            "ownership[0].columns",
            "2 columns reference 1 of account",
        ),
    ],
)
def test_a_declared_link_naming_what_the_schema_lacks_is_an_error(
    link: ForeignKey, field: str, reason: str
) -> None:
    """Fails if a misspelt declaration were ignored: its child table would silently stay
    outside every scope, the hole the declaration exists to close."""
    mini = get_world("mini")
    assert isinstance(mini, PythonWorld)
    with pytest.raises(SuiteError, match=re.escape(f"world mini-bad: {field}: {reason}")):
        world_substrate(replace(mini, name="mini-bad", ownership=(link,)))


def test_world_yaml_declares_ownership_and_a_bad_one_names_the_file(tmp_path: Path) -> None:
    """Fails if `ownership:` in world.yaml is not read (the substrate would hold none),
    or if a bad one is reported without naming world.yaml and the field."""
    world = tmp_path / "w"
    shutil.copytree(EXAMPLE, world)
    manifest = world / "world.yaml"
    text = manifest.read_text()
    manifest.write_text(
        text + "ownership:\n  - {table: refunds, columns: [charge_id], parent: charges}\n"
    )
    suite = load_suite(f"world:{world}")
    held = suite.substrate(next(iter(suite.tasks.values()))).ownership  # type: ignore[attr-defined]
    assert held == (ForeignKey("refunds", ("charge_id",), "charges"),)
    manifest.write_text(
        text + "ownership:\n  - {table: refunds, columns: [charge], parent: charges}\n"
    )
    with pytest.raises(SpecError) as caught:
        suite = load_suite(f"world:{world}")
        suite.substrate(next(iter(suite.tasks.values())))
    assert caught.value.path.endswith("world.yaml")
    assert (caught.value.field, caught.value.reason) == (
        "ownership[0].columns",
        "no column charge in table refunds",
    )


def test_a_run_gets_the_declaration_from_its_substrate(mini_suite: Suite) -> None:
    """Fails if the run pipeline builds the guard without the substrate's declared keys
    (the scripted write to ORG_B's link would go through: FAIL_DAMAGE, no attempt)."""
    owned = world_substrate(owned_mini())
    task = mini_suite.tasks["demo/close-account"].model_copy(
        update={"identity": SCOPE, "tools": ("get_account", "update_account", "set_link")}
    )
    suite = Suite("owned", {task.id: task}, "d", substrate_of=lambda t, choice: owned)
    script = Script(
        name="links_other_org",
        expected=Expected(outcome="FAIL_SAFE", boundary_attempts=1),
        steps=(
            ScriptStep.model_validate(
                {
                    "tool_calls": [
                        {
                            "name": "set_link",
                            "arguments": {"account_id": "ACC_001", "tag": "tier", "note": "x"},
                        }
                    ]
                }
            ),
            ScriptStep(content="done"),
        ),
    )
    check = asyncio.run(check_script(suite, task, script))
    assert check.passed, check.mismatches
