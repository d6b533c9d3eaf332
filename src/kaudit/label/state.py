"""The state digest: an identifier of a run's final state computed from what the run changed.

Hashing the whole final image costs a pass over every byte (about 1 ms for a 1.7 MB
world) in every run, although the run changed a handful of rows. The final state is
the initial state plus the run's changes, so the initial image's sha256 together with
every changed row as it ended (nothing masked) identifies it just as well: equal
digests mean equal rows in every table and an equal schema, and an unchanged state
keeps the initial image's digest. Physical layout (page order, free pages, the file
header) and SQLite's bookkeeping tables (`sqlite_sequence`, `sqlite_stat*`) are not
state here, as they are not for the labeler; see docs/ledger.md for the exact form.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from kaudit.label._types import RowChange
from kaudit.label._values import to_json_value
from kaudit.label.diff import ImagePair, Side, diff_pair, opened
from kaudit.substrate._schema import INTERNAL_PREFIX

STATE_DIGEST_SCHEME = "kaudit-state-1"
"""Named in every digested body, so a later form can never collide with this one."""

_DIGESTS: dict[bytes, str] = {}
_CACHED_DIGESTS = 8

SchemaEntry = tuple[str, str, str, str | None]


def image_digest(image: bytes) -> str:
    """sha256 of an image, computed once per bytes object (a campaign's template is one)."""
    digest = _DIGESTS.get(image)
    if digest is None:
        if len(_DIGESTS) >= _CACHED_DIGESTS:
            _DIGESTS.clear()
        digest = _DIGESTS[image] = hashlib.sha256(image).hexdigest()
    return digest


def _schema_version(side: Side) -> int:
    conn, database = side
    return int(conn.execute(f"PRAGMA {database}.schema_version").fetchone()[0])


def _entries(side: Side) -> list[SchemaEntry]:
    # kaudit's own entries (the change log and its triggers) are not the world's schema:
    # a SQLite template carries them, a state dumped from PostgreSQL does not.
    conn, database = side
    rows = conn.execute(
        f"SELECT type, name, tbl_name, sql FROM {database}.sqlite_master ORDER BY type, name"
    ).fetchall()
    return [
        (str(kind), str(name), str(table), sql)
        for kind, name, table, sql in rows
        if not str(name).startswith(INTERNAL_PREFIX) and not str(table).startswith(INTERNAL_PREFIX)
    ]


def changed_schema(pair: ImagePair) -> list[SchemaEntry] | None:
    """Every schema entry of the final state, or None when the schema is the initial one.

    The schema cookie changes with any DDL, so equal cookies skip reading both schemas;
    DDL that was undone (a table created and dropped again) leaves an equal schema.
    """
    if _schema_version(pair.before) == _schema_version(pair.after):
        return None
    final = _entries(pair.after)
    return None if final == _entries(pair.before) else final


def _row(values: dict[str, Any] | None) -> list[list[Any]] | None:
    if values is None:
        return None
    return [[column, to_json_value(value)] for column, value in values.items()]


def state_digest(
    initial_digest: str,
    every_change: Sequence[RowChange],
    schema: Sequence[SchemaEntry] | None,
) -> str:
    """The digest of the state `every_change` (nothing masked) leads to from the initial one.

    No change and the same schema: the initial digest itself. Otherwise the sha256 of
    the canonical JSON of the scheme, the initial digest, the final schema when it
    changed, and each changed row's table, operation, key and final values in the
    diff's order (blobs as {"$blob": hex}; integers and floats stay apart, floats exact).
    """
    if not every_change and schema is None:
        return initial_digest
    body = {
        "scheme": STATE_DIGEST_SCHEME,
        "initial": initial_digest,
        "schema": None if schema is None else [list(entry) for entry in schema],
        "rows": [
            [c.table, c.op, [[k, to_json_value(v)] for k, v in c.key], _row(c.after)]
            for c in every_change
        ],
    }
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def pair_digest(pair: ImagePair, every_change: Sequence[RowChange], initial: bytes) -> str:
    """`state_digest` of the pair's final state, its schema read from the pair."""
    return state_digest(image_digest(initial), every_change, changed_schema(pair))


def final_state_digest(initial: bytes, final: bytes | sqlite3.Connection) -> str:
    """The state digest of `final` (an image, or a connection holding it as `main`).

    Recomputes from both states with the full diff, so a stored final image can be
    checked against a record's `final_digest` without trusting any change log.
    """
    with opened(initial, final) as pair:
        diff = diff_pair(pair, fast=False, every=True)
        return pair_digest(pair, diff.every_change or [], initial)
