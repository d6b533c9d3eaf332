"""The emulated schema and template built from the published seeds and registries."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import pytest

import kaudit.worlds.eog._world as world_module
from kaudit.substrate import StateDump, read_schema
from kaudit.worlds.eog import EogWorld

pytestmark = pytest.mark.agentrelbench

CSM_ROWS = {
    "location": 906, "user_group": 80, "user": 802, "account": 52, "product": 240,
    "contact": 124, "installed_product": 300, "contract": 153, "entitlement": 431,
    "sla_definition": 12, "user_group_member": 959, "customer_case": 1232, "case_sla": 2464,
    "knowledge": 369, "case_knowledge": 527, "notification": 733, "interaction": 1232,
}  # fmt: skip
ITSM_ROWS = {
    "organization": 2, "role": 4, "permission": 36, "role_permission": 72, "location": 3,
    "users": 10, "user_group": 4, "user_group_member": 5, "user_role": 10,
    "incident_template": 3, "knowledge": 5, "configuration_item": 4, "service": 4,
    "service_offering": 4, "sla_definition": 10, "incident": 23, "problem": 2, "change": 3,
    "change_request_mapping": 5, "incident_sla": 10, "incident_affected_cis": 3,
    "incident_knowledge": 5, "notification": 7, "child_incident": 7,
}  # fmt: skip


def _open(world: EogWorld) -> sqlite3.Connection:
    return StateDump.of(world.image).open()


def _counts(conn: sqlite3.Connection) -> dict[str, int]:
    tables = read_schema(conn).tables
    return {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}


@pytest.mark.parametrize(("domain", "expected"), [("csm", CSM_ROWS), ("itsm", ITSM_ROWS)])
def test_row_counts_match_the_seed_inserts(
    domain: str, expected: dict[str, int], request: pytest.FixtureRequest
) -> None:
    world: EogWorld = request.getfixturevalue(domain)
    conn = _open(world)
    try:
        assert _counts(conn) == expected
    finally:
        conn.close()


def test_the_key_registry_is_honoured_with_composite_keys(itsm: EogWorld, csm: EogWorld) -> None:
    conn = _open(itsm)
    try:
        schema = read_schema(conn).tables
    finally:
        conn.close()
    assert schema["role_permission"].primary_key == ("role_id", "perm_id")
    assert schema["user_role"].primary_key == ("user_id", "role_id", "org_id")
    assert schema["child_incident"].primary_key == ("child_incident_mapping_id",)
    assert all(schema[t].primary_key == itsm.registry.primary_keys[t] for t in ITSM_ROWS)
    assert csm.tables["case_knowledge"].primary_key == ("case_kb_id",)


def test_columns_keep_their_natural_storage_class(csm: EogWorld, itsm: EogWorld) -> None:
    conn = _open(csm)
    try:
        # quoted '3' in the seed, an integer in every tool schema: stored as an integer
        assert conn.execute("SELECT DISTINCT typeof(account_id) FROM contract").fetchall() == [
            ("integer",)
        ]
        assert conn.execute("SELECT typeof(product_price) FROM product LIMIT 1").fetchone() == (
            "integer",
        )
        assert conn.execute(
            "SELECT COUNT(*) FROM contract WHERE account_id = "
            "(SELECT account_id FROM account WHERE name = 'Acme Systems')"
        ).fetchone() == (4,)
    finally:
        conn.close()
    conn = _open(itsm)
    try:
        assert conn.execute(
            "SELECT cost, typeof(cost) FROM configuration_item "
            "WHERE configuration_item_id = 'CI_002'"
        ).fetchone() == (800.0, "real")
        assert conn.execute(
            "SELECT created_at FROM organization WHERE org_id = 'ORG_001'"
        ).fetchone() == ("2024-01-01 08:00:00",)  # the seed's datetime() calls, evaluated once
    finally:
        conn.close()


def test_template_is_cached_by_a_digest_over_seed_registries_and_version(
    csm: EogWorld, itsm: EogWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    digest = csm.recipe_digest()
    assert csm.recipe_digest() != itsm.recipe_digest()
    # the same inputs give the same digest
    assert EogWorld(csm.domain, csm.seed_file, csm.registry).recipe_digest() == digest
    # one changed byte of the seed (a comment, so the seed still parses) changes it
    raw = bytearray(csm.seed_file.read_bytes())
    assert raw[:4] == b"-- D"
    raw[3:4] = b"d"
    copy = tmp_path / csm.seed_file.name
    copy.write_bytes(bytes(raw))
    edited = EogWorld(csm.domain, copy, csm.registry)
    assert edited.seed.columns == csm.seed.columns
    assert len(edited.seed.statements) == len(csm.seed.statements)
    assert edited.recipe_digest() != digest
    # other registry bytes change it
    other = dataclasses.replace(csm.registry, digest=itsm.registry.digest)
    assert EogWorld(csm.domain, csm.seed_file, other).recipe_digest() != digest
    # so does a new emulation version
    monkeypatch.setattr(world_module, "EMULATION_VERSION", world_module.EMULATION_VERSION + "+1")
    assert EogWorld(csm.domain, csm.seed_file, csm.registry).recipe_digest() != digest


def test_the_image_is_built_once_per_world(csm: EogWorld) -> None:
    assert csm.image is csm.image
    assert csm.substrate(["create_new_account"]).template.image is csm.image


def test_the_caller_acts_within_their_organization(itsm: EogWorld, csm: EogWorld) -> None:
    assert itsm.caller(StateDump.of(itsm.image), "USER_001").org_id == "ORG_001"
    assert csm.caller(StateDump.of(csm.image), 1).org_id is None  # csm users carry no organization
