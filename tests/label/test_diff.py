from __future__ import annotations

from kaudit.label.diff import diff_images
from tests.label.conftest import Mutate


def both(template: bytes, final: bytes, volatile: dict[str, tuple[str, ...]] | None = None):  # type: ignore[no-untyped-def]
    fast = diff_images(template, final, volatile)
    full = diff_images(template, final, volatile, fast=False)
    assert fast == full
    return fast


def test_untouched_database_has_empty_diff(template: bytes) -> None:
    assert both(template, template) == []


def test_composite_key_rows_are_matched_on_every_key_column(
    template: bytes, mutate: Mutate
) -> None:
    final = mutate(template, "UPDATE member SET role = 'lead' WHERE team = 'T1' AND person = 'P1';")
    (change,) = both(template, final)
    assert change.table == "member"
    assert change.op == "modified"
    assert change.key == (("team", "T1"), ("person", "P1"))
    assert change.changed == ("role",)
    assert change.before is not None and change.before["role"] == "dev"
    assert change.after is not None and change.after["role"] == "lead"


def test_storage_type_change_is_a_change(template: bytes, mutate: Mutate) -> None:
    final = mutate(
        template, "UPDATE item SET qty = 3.0 WHERE id = 3; UPDATE plain SET b = 4 WHERE a = 4;"
    )
    changes = both(template, final)
    assert [(c.table, c.changed) for c in changes] == [("item", ("qty",)), ("plain", ("b",))]
    assert changes[0].after is not None and type(changes[0].after["qty"]) is float
    assert changes[1].before is not None and changes[1].before["b"] == "4"


def test_money_values_are_compared_exactly(template: bytes, mutate: Mutate) -> None:
    final = mutate(template, "UPDATE item SET price = 30.750000000000004 WHERE id = 3;")
    (change,) = both(template, final)
    assert change.before is not None and change.before["price"] == 30.75
    assert change.after is not None and change.after["price"] == 30.750000000000004


def test_volatile_columns_are_masked(template: bytes, mutate: Mutate) -> None:
    final = mutate(
        template,
        "UPDATE item SET ts = 't1' WHERE id < 5;"
        "UPDATE item SET name = 'x', ts = 't2' WHERE id = 7;",
    )
    changes = both(template, final, {"item": ("ts",)})
    assert [(c.key, c.changed) for c in changes] == [((("id", 7),), ("name",))]


def test_added_and_removed_rows_carry_the_row(template: bytes, mutate: Mutate) -> None:
    final = mutate(
        template,
        "DELETE FROM item WHERE id = 2; INSERT INTO item VALUES (99, 'A', 'new', 1.5, 1, 't0');",
    )
    added, removed = both(template, final)
    assert (added.op, added.key, added.after) == (
        "added",
        (("id", 99),),
        {"id": 99, "org": "A", "name": "new", "price": 1.5, "qty": 1, "ts": "t0"},
    )
    assert (removed.op, removed.key) == ("removed", (("id", 2),))
    assert removed.before is not None and removed.before["price"] == 20.5


def test_insert_or_replace_shows_as_modification(template: bytes, mutate: Mutate) -> None:
    final = mutate(template, "INSERT OR REPLACE INTO member VALUES ('T0', 'P0', 'owner');")
    (change,) = both(template, final)
    assert (change.op, change.changed) == ("modified", ("role",))


def test_update_then_revert_leaves_no_change(template: bytes, mutate: Mutate) -> None:
    final = mutate(
        template,
        "UPDATE item SET name = 'tmp' WHERE id = 1; UPDATE item SET name = 'item 1' WHERE id = 1;",
    )
    assert both(template, final) == []


def test_primary_key_change_is_a_removal_and_an_addition(template: bytes, mutate: Mutate) -> None:
    final = mutate(template, "UPDATE item SET id = 500 WHERE id = 5;")
    assert [(c.op, c.key) for c in both(template, final)] == [
        ("added", (("id", 500),)),
        ("removed", (("id", 5),)),
    ]


def test_dropped_table_is_a_schema_change_with_its_rows_removed(
    template: bytes, mutate: Mutate
) -> None:
    final = mutate(template, "DROP TABLE plain;")
    changes = both(template, final)
    assert changes[0].op == "removed" and changes[-1].op == "schema"
    assert sum(c.op == "removed" for c in changes) == 30


def test_table_without_primary_key_is_keyed_by_rowid(template: bytes, mutate: Mutate) -> None:
    final = mutate(template, "UPDATE plain SET b = 'z' WHERE a = 0;")
    (change,) = both(template, final)
    assert change.key == (("rowid", 1),)
