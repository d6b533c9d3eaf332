"""Seed parsing, registries, type inference, shape classification and id schemes.

These use small hand-made inputs, so they run without the published data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kaudit.errors import SpecError
from kaudit.worlds.eog import TableInfo, classify, load_registry, read_seed, resolve_table
from kaudit.worlds.eog._tables import declared_affinity
from kaudit.worlds.eog._tools import arguments_model


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_seed_keeps_comments_inside_statements_and_merges_column_lists(tmp_path: Path) -> None:
    seed = read_seed(
        _write(
            tmp_path / "s.sql",
            "-- header\nINSERT INTO t (a, b) VALUES\n-- a comment; with a semicolon\n(1, 'x;y'),\n"
            "(2, datetime('2024-01-01 08:00:00'));\nINSERT INTO t (a, c) VALUES (3, 4);\n",
        )
    )
    assert [s.table for s in seed.statements] == ["t", "t"]
    assert seed.columns == {"t": ("a", "b", "c")}


@pytest.mark.parametrize(
    "sql",
    ["DROP TABLE t;", "INSERT INTO t (a) VALUES (1); DELETE FROM t;", "UPDATE t SET a = 1;"],
)
def test_seed_refuses_anything_but_insert(tmp_path: Path, sql: str) -> None:
    with pytest.raises(SpecError, match="only INSERT statements"):
        read_seed(_write(tmp_path / "s.sql", sql))


def _registry(tmp_path: Path, keys: dict[str, Any], note: str = "") -> Path:
    eog = tmp_path / "data" / "eog"
    _write(
        eog / "primary-keys-d.json", json.dumps({"primary_keys": keys, "composite_pk_note": note})
    )
    _write(
        eog / "volatile-columns-d.json",
        json.dumps({"volatile_columns": {"t.updated_on": {"table": "t", "column": "updated_on"}}}),
    )
    _write(eog / "tool-inventory-d.json", "[]")
    _write(eog / "tool-tags-d.json", json.dumps({"tags": [{"name": "x", "tag": "compensable"}]}))
    return tmp_path


def test_composite_key_note_widens_the_registered_first_column(tmp_path: Path) -> None:
    root = _registry(
        tmp_path,
        {"role_permission": "role_id", "user_role": "user_id", "other": "id"},
        "role_permission (role_id,perm_id) and user_role (user_id,role_id,org_id) are composite",
    )
    registry = load_registry(root, "d")
    assert registry.primary_keys == {
        "role_permission": ("role_id", "perm_id"),
        "user_role": ("user_id", "role_id", "org_id"),
        "other": ("id",),
    }
    assert registry.volatile == {"t": ("updated_on",)}
    assert registry.tags["x"].tag == "compensable"


def test_a_missing_registry_names_its_file(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"primary-keys-nope\.json"):
        load_registry(tmp_path, "nope")


@pytest.mark.parametrize(
    ("evidence", "storage", "affinity"),
    [
        ({"integer"}, {"text"}, "INTEGER"),  # a foreign key quoted '3' in the seed
        (set(), {"integer", "real"}, "REAL"),
        (set(), {"text", "null"}, "TEXT"),
        (set(), {"integer", "text"}, ""),  # mixed classes keep every value as seeded
        ({"integer", "string"}, {"integer"}, "INTEGER"),  # schemas disagree: the seed decides
        ({"boolean"}, {"integer"}, "INTEGER"),
        (set(), {"null"}, ""),
    ],
)
def test_declared_affinity(evidence: set[str], storage: set[str], affinity: str) -> None:
    assert declared_affinity(evidence, storage) == affinity


def _spec(
    name: str, description: str, inputs: dict[str, Any], output: Any = None
) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": inputs},
        "outputSchema": output,
    }


@pytest.mark.parametrize(
    ("spec", "shape"),
    [
        (_spec("find_incident_by_id", "Returns a single incident object.", {}), "lookup"),
        (_spec("find_incident_slas", "List Incident SLA records.", {}), "list"),
        (_spec("find_change_request_mappings_for_incident", "Retrieve all mappings.", {}), "list"),
        (_spec("get_accounts", "Accounts.", {}, {"type": "array", "items": {}}), "list"),
        (_spec("count_case_by_state", "Count cases grouped by state.", {}), "count"),
        (_spec("update_case", "Update a case.", {}), "update"),
        (_spec("set_case_assignment_group", "Set the group.", {}), "update"),
        (_spec("add_new_entitlement", "Create a new entitlement.", {}), "create"),
        (_spec("add_child_incident", "Create a parent-child relationship.", {}), "link"),
        (_spec("map_change_request", "Create a mapping between a change and ...", {}), "link"),
        (_spec("remove_child_incident", "Remove a child incident mapping.", {}), "unlink"),
        (_spec("delete_notifications", "Delete by filters.", {}), "delete"),
        (_spec("send_notification", "Create and send a notification.", {}), "send"),
        (_spec("avg_reopen_per_group", "Average.", {}), None),
    ],
)
def test_shape_follows_verb_output_and_description(spec: dict[str, Any], shape: str | None) -> None:
    assert classify(spec) == shape


def test_table_is_the_best_covered_then_the_verbs_object() -> None:
    tables = {
        "incident": TableInfo("incident", ("incident_id", "parent_incident"), ("incident_id",)),
        "notification": TableInfo(
            "notification", ("notification_id", "incident_id"), ("notification_id",)
        ),
        "child_incident": TableInfo(
            "child_incident", ("id", "parent_incident", "child_incident"), ("id",)
        ),
    }
    sent = _spec("find_notifications_sent_for_incident", "x", {"incident_id": {"type": "string"}})
    parent = _spec("find_parent_incident", "x", {"child_incident": {"type": "string"}})
    link = _spec("add_child_incident", "x", {"parent_incident": {}, "child_incident": {}})
    assert resolve_table(sent, tables) == "notification"
    assert resolve_table(parent, tables) == "child_incident"
    assert resolve_table(link, tables) == "child_incident"


def test_arguments_follow_the_input_schema() -> None:
    model = arguments_model(
        "t",
        {
            "properties": {
                "id": {"type": "integer"},
                "state": {"type": ["string", "null"], "enum": ["a", "b"]},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["id"],
        },
    )
    assert model.model_validate({"id": "7", "state": "a"}).model_dump() == {
        "id": 7,
        "state": "a",
        "tags": None,
    }
    for bad in ({}, {"id": 1, "state": "c"}, {"id": 1, "extra": 1}):
        with pytest.raises(ValueError):
            model.model_validate(bad)
