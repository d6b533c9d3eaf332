"""The state digest identifies the final state; labeling in place equals labeling the image."""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import suppress

from hypothesis import given, settings
from hypothesis import strategies as st

from kaudit.label import RunMeta, Verdict, final_state_digest, label_run
from kaudit.spec import DamageSpec
from kaudit.spec._task import Check
from kaudit.substrate import DatabaseError, FrozenState, SqliteSubstrate
from kaudit.substrate._capture import CHANGE_LOG
from kaudit.substrate._schema import INTERNAL_PREFIX
from kaudit.substrate._sqlite import SqliteSandbox
from tests.label.conftest import Mutate
from tests.label.test_diff_properties import statements

SPEC = DamageSpec.model_validate(
    {"allowed": [{"table": "item", "op": "modified", "columns": ["qty"]}], "volatile": {}}
)
CHECKS = (Check(name="qty", sql="SELECT qty FROM item WHERE id = 1", expected=1),)
VOLATILE = {"item": ("ts",)}


def digest(template: bytes, final: bytes) -> str | None:
    verdict = label_run(template, final, SPEC, (), {}, RunMeta(), volatile=VOLATILE, digest=True)
    return verdict.final_digest


def test_an_unchanged_or_restored_state_keeps_the_initial_digest(
    template: bytes, mutate: Mutate
) -> None:
    """Fails if touched-but-unchanged rows entered the digest (an update undone by a
    second one would then look like another state)."""
    initial = hashlib.sha256(template).hexdigest()
    assert digest(template, template) == initial
    undone = mutate(
        template, "UPDATE item SET qty = 9 WHERE id = 1; UPDATE item SET qty = 1 WHERE id = 1"
    )
    assert digest(template, undone) == initial


def test_a_state_without_kaudit_s_change_log_is_the_same_state(
    template: bytes, mutate: Mutate
) -> None:
    """Fails if the change log and its capture triggers counted as the world's schema: a
    state dumped from PostgreSQL carries neither, so an untouched PostgreSQL run would never
    keep the initial digest, and a changed one would differ from SQLite's (tried: both)."""
    conn = sqlite3.connect(":memory:")
    conn.deserialize(template)
    entries = conn.execute("SELECT type, name FROM sqlite_master").fetchall()
    internal = [(kind, name) for kind, name in entries if name.startswith(INTERNAL_PREFIX)]
    conn.close()
    assert ("table", CHANGE_LOG) in internal and len(internal) > 1
    bare = mutate(template, "".join(f'DROP {kind.upper()} "{name}";' for kind, name in internal))
    assert digest(template, bare) == hashlib.sha256(template).hexdigest()
    update = "UPDATE item SET qty = 5 WHERE id = 1;"
    assert digest(template, mutate(bare, update)) == digest(template, mutate(template, update))


def test_every_difference_of_state_changes_the_digest(template: bytes, mutate: Mutate) -> None:
    """Fails if the digest were taken over the labeler's masked changes (a change of the
    volatile `ts` alone would keep the initial digest), ignored storage classes (1 and
    1.0), or left out the schema (a new index changes no row)."""
    finals = [
        template,
        mutate(template, "UPDATE item SET ts = 't1' WHERE id = 1"),
        mutate(template, "UPDATE item SET qty = 1.0 WHERE id = 1"),
        mutate(template, "UPDATE item SET qty = '1' WHERE id = 1"),
        mutate(template, "CREATE INDEX by_name ON item (name)"),
        mutate(template, "DELETE FROM plain WHERE a = 3"),
        mutate(template, "UPDATE member SET role = x'00' WHERE person = 'P1'"),
    ]
    digests = [digest(template, final) for final in finals]
    assert len(set(digests)) == len(finals)
    assert digests == [digest(template, final) for final in finals]  # deterministic


@settings(max_examples=80, deadline=None)
@given(program=st.lists(statements, max_size=10))
def test_in_place_labeling_and_its_digest_equal_the_image_s_full_diff(
    template: bytes, program: list[tuple[str, tuple[object, ...]]]
) -> None:
    """Fails if labeling the frozen connection (fast path, on a pooled sandbox whose run
    is still an open transaction) saw anything else than the committed image does with
    the full diff: another verdict, or another state digest."""
    substrate = SqliteSubstrate("t", template, {}, VOLATILE)
    pooled = []
    for _ in range(2):  # the second run reuses the first one's pooled connection
        sandbox, fresh = substrate.seed("r"), SqliteSandbox("f", substrate.template)
        pooled.append(sandbox.db.conn)
        for box in (sandbox, fresh):
            for sql, params in program:
                with suppress(DatabaseError):
                    box.db.execute(sql, params)
        frozen = sandbox.dump()
        live = label(template, frozen, digest=True)
        sandbox.close()
        frozen.release()
        image = fresh.dump().image
        fresh.close()
        assert live.to_json() == label(template, image, fast=False).to_json()
        assert live.final_digest == final_state_digest(template, image)
    assert pooled[0] is pooled[1]


def label(template: bytes, final: bytes | FrozenState, **options: bool) -> Verdict:
    return label_run(template, final, SPEC, CHECKS, {}, RunMeta(), volatile=VOLATILE, **options)
