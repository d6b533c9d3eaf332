from __future__ import annotations

import asyncio

import pytest

from kaudit.errors import SuiteError
from kaudit.harness import validate_suite
from kaudit.label import diff_images
from kaudit.substrate import CHANGE_LOG
from kaudit.suites import Suite, distractor_variant, lookalike


def test_lookalikes_differ_from_the_original_and_each_other() -> None:
    forms = [lookalike("Customer portal upgrade", i) for i in range(30)]
    assert "Customer portal upgrade" not in forms
    assert len(set(forms)) == 30
    assert forms[:3] == ["Customer Portal Upgrade", "customer portal upgrade", "CUSTOMER PORTAL UPGRADE"]


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
