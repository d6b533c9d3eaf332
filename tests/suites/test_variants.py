from __future__ import annotations

import asyncio
import sqlite3

import pytest

from kaudit.errors import SuiteError
from kaudit.harness._validate import validate_suite
from kaudit.label.diff import diff_images
from kaudit.spec import Distractor, Task
from kaudit.spec._task import ExtraRows
from kaudit.substrate._capture import CHANGE_LOG
from kaudit.suites import Suite, distractor_variant, load_suite, lookalike
from kaudit.suites._variants import VARIANT_SUFFIX, clone_rows


def test_lookalikes_differ_from_the_original_and_each_other() -> None:
    forms = [lookalike("Customer portal upgrade", i) for i in range(30)]
    assert "Customer portal upgrade" not in forms
    assert len(set(forms)) == 30
    assert forms[:3] == [
        "Customer Portal Upgrade",
        "customer portal upgrade",
        "CUSTOMER PORTAL UPGRADE",
    ]


def test_variant_clones_the_row_with_fresh_numbered_keys(mini_suite: Suite) -> None:
    task = mini_suite.tasks["demo/close-account"]
    variant = distractor_variant(task, mini_suite.substrate(task))
    assert variant.id == "demo/close-account~distractors"
    (block,) = variant.extra_rows
    assert [row["id"] for row in block.rows] == [f"ACC_{i:03d}" for i in range(40, 50)]
    assert {row["org"] for row in block.rows} == {"ORG_A"}
    assert all(row["name"] != "Acme 4" for row in block.rows)


def test_variant_template_holds_the_clones_and_an_empty_change_log(mini_suite: Suite) -> None:
    suite = mini_suite.with_variants()
    variant = suite.tasks["demo/close-account~distractors"]
    base = suite.substrate(suite.tasks["demo/close-account"])
    derived = suite.substrate(variant)
    sandbox = derived.seed("v")
    assert sandbox.db.one("SELECT COUNT(*) AS n FROM account") == {"n": 50}
    assert sandbox.db.one(f"SELECT COUNT(*) AS n FROM {CHANGE_LOG}") == {"n": 0}
    added = diff_images(base.template.image, derived.template.image, fast=False)  # type: ignore[attr-defined]
    assert [c.op for c in added] == ["added"] * 10
    sandbox.close()


def test_generated_variants_validate_like_their_task(mini_suite: Suite) -> None:
    suite = mini_suite.with_variants()
    checks = asyncio.run(validate_suite(suite, [suite.tasks["demo/close-account~distractors"]]))
    assert len(checks) == 9 and all(c.passed for c in checks)


def test_like_must_match_exactly_one_row(mini_suite: Suite) -> None:
    task = mini_suite.tasks["demo/close-account"]
    data = task.model_dump()
    data["distractors"] = [{"table": "account", "like": {"org": "ORG_A"}}]
    broken = type(task).model_validate(data)
    with pytest.raises(SuiteError, match="matches 20 rows of account, not 1"):
        distractor_variant(broken, mini_suite.substrate(task))


def _image(script: str) -> bytes:
    conn = sqlite3.connect(":memory:")
    conn.executescript(script)
    image = conn.serialize()
    conn.close()
    return image


def _declaring(task: Task, *distractors: Distractor) -> Task:
    return task.model_copy(update={"distractors": distractors})


LEDGER = _image(
    """
    CREATE TABLE invoice (id TEXT PRIMARY KEY, number TEXT NOT NULL UNIQUE);
    CREATE TABLE line (invoice_id TEXT NOT NULL REFERENCES invoice(id), line_no INTEGER NOT NULL,
                       description TEXT, PRIMARY KEY (invoice_id, line_no));
    CREATE TABLE tag (invoice_id TEXT NOT NULL REFERENCES invoice(id),
                      other_id TEXT NOT NULL REFERENCES invoice(id),
                      PRIMARY KEY (invoice_id, other_id));
    CREATE TABLE sku (id INTEGER PRIMARY KEY, code TEXT NOT NULL UNIQUE, name TEXT);
    INSERT INTO invoice VALUES ('INV_1', 'INV-2026-00001'), ('INV_2', 'INV-2026-00002');
    INSERT INTO line VALUES ('INV_1', 1, 'Onboarding'), ('INV_1', 2, 'Onboarding'),
                            ('INV_2', 1, 'Seats'), ('INV_2', 2, 'Seats'), ('INV_2', 7, 'Seats');
    INSERT INTO tag VALUES ('INV_1', 'INV_2');
    INSERT INTO sku VALUES (4, 'HX-MON-PRO', NULL), (9, 'HX-MON', 'Helix');
    """
)


def test_composite_key_clones_keep_their_foreign_key_and_number_within_it(
    mini_suite: Suite,
) -> None:
    task = _declaring(
        mini_suite.tasks["demo/close-account"],
        Distractor(table="line", like={"invoice_id": "INV_1", "line_no": 2}, count=3, vary=()),
    )
    (block,) = clone_rows(LEDGER, task)
    assert [(row["invoice_id"], row["line_no"]) for row in block.rows] == [
        ("INV_1", 3),
        ("INV_1", 4),
        ("INV_1", 5),
    ]


def test_a_key_made_only_of_references_is_refused_by_name(mini_suite: Suite) -> None:
    task = _declaring(
        mini_suite.tasks["demo/close-account"],
        Distractor(table="tag", like={"invoice_id": "INV_1", "other_id": "INV_2"}),
    )
    with pytest.raises(
        SuiteError,
        match=r"demo/close-account: cannot clone a row of tag: .*\(invoice_id, other_id\)",
    ):
        clone_rows(LEDGER, task)


def test_integer_key_and_unnumbered_unique_text_get_fresh_values(mini_suite: Suite) -> None:
    task = _declaring(
        mini_suite.tasks["demo/close-account"],
        Distractor(table="sku", like={"code": "HX-MON-PRO"}, count=2, vary=("name",)),
    )
    (block,) = clone_rows(LEDGER, task)
    assert block.rows == (
        {"id": 10, "code": "HX-MON-PRO-D01", "name": None},
        {"id": 11, "code": "HX-MON-PRO-D02", "name": None},
    )


def test_two_declarations_on_one_table_never_share_a_key(mini_suite: Suite) -> None:
    task = _declaring(
        mini_suite.tasks["demo/close-account"],
        Distractor(table="invoice", like={"id": "INV_1"}, count=2),
        Distractor(table="invoice", like={"id": "INV_2"}, count=2),
    )
    first, second = clone_rows(LEDGER, task)
    assert [row["id"] for row in first.rows + second.rows] == ["INV_3", "INV_4", "INV_5", "INV_6"]
    assert [row["number"] for row in second.rows] == ["INV-2026-00005", "INV-2026-00006"]


def test_unknown_distractor_columns_are_named(mini_suite: Suite) -> None:
    task = _declaring(
        mini_suite.tasks["demo/close-account"],
        Distractor(table="invoice", like={"id": "INV_1"}, vary=("title",)),
    )
    with pytest.raises(SuiteError, match=r"distractor columns \['title'\] are not in invoice"):
        clone_rows(LEDGER, task)


def test_variant_of_a_task_with_extra_rows_numbers_past_them(mini_suite: Suite) -> None:
    task = mini_suite.tasks["demo/close-account"]
    extra = ExtraRows(
        table="account",
        rows=(
            {"id": "ACC_040", "org": "ORG_A", "name": "Extra", "balance": 1.0, "status": "open"},
        ),
    )
    variant = distractor_variant(
        task.model_copy(update={"extra_rows": (extra,)}), mini_suite.substrate(task)
    )
    assert variant.extra_rows[0] == extra
    assert variant.extra_rows[1].rows[0]["id"] == "ACC_041"


def test_every_builtin_task_has_a_ten_row_variant() -> None:
    suite = load_suite("builtin").with_variants()
    base = [task_id for task_id in suite.tasks if not task_id.endswith(VARIANT_SUFFIX)]
    for task_id in base:
        variant = suite.tasks[task_id + VARIANT_SUFFIX]
        assert [len(block.rows) for block in variant.extra_rows] == [10], task_id
    lines = suite.tasks["billing/invoice-line-dedupe" + VARIANT_SUFFIX].extra_rows[0].rows
    assert {row["invoice_id"] for row in lines} == {"INV_004"}
    assert [row["line_no"] for row in lines] == list(range(3, 13))
