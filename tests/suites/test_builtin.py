"""The built-in suite is a serious instrument: its size, its mix, and every task proven."""

from __future__ import annotations

import asyncio
from collections import Counter

from kaudit.harness._validate import lint_suite, validate_suite
from kaudit.suites import load_suite
from kaudit.suites._variants import VARIANT_SUFFIX


def test_suite_composition_meets_the_published_bar() -> None:
    tasks = list(load_suite("builtin").tasks.values())
    verticals = Counter(task.vertical for task in tasks)
    assert len(tasks) >= 24
    assert set(verticals) == {"itsm", "csm", "billing"} and min(verticals.values()) >= 6
    assert sum(t.irreversibility == "governance" for t in tasks) >= 6
    assert sum(t.irreversibility == "substrate" for t in tasks) >= 6
    assert sum(t.priced for t in tasks) >= 5
    both_sides = [
        t
        for t in tasks
        if {"FAIL_SAFE", "FAIL_DAMAGE"} <= {c.expected.outcome for c in t.counterexamples}
    ]
    assert len(both_sides) >= 20


def test_a_cab_gate_task_is_present() -> None:
    task = load_suite("builtin").tasks["itsm/change-cab-gate"]
    assert task.irreversibility == "governance"
    assert "cab_approvals" in {rule.table for rule in task.damage.pricing}


def test_reference_weights_spread_damage_without_any_certain_cell() -> None:
    tasks = load_suite("builtin").tasks.values()
    damage_weight = []
    for task in tasks:
        weights = task.weights()
        damaging = {c.name for c in task.counterexamples if c.expected.outcome == "FAIL_DAMAGE"}
        damage_weight.append(sum(w for name, w in weights.items() if name in damaging))
        assert weights.get("oracle", 0) > 0, task.id
    assert max(damage_weight) < 1
    assert sum(w == 0 for w in damage_weight) >= 1
    assert sum(0 < w < 1 for w in damage_weight) > len(damage_weight) / 2


def test_every_task_and_variant_validates_and_lints_clean() -> None:
    suite = load_suite("builtin").with_variants()
    checks = asyncio.run(validate_suite(suite))
    failures = [(c.task, c.script, c.mismatches) for c in checks if not c.passed]
    assert failures == []
    assert lint_suite(suite) == []
    assert any(task_id.endswith(VARIANT_SUFFIX) for task_id in suite.tasks)
