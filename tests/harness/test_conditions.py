"""One reading of campaign faults and identity, shared by campaigns and served runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from kaudit.errors import KauditError, SpecError
from kaudit.harness import CampaignPlan, run_conditions
from kaudit.harness._conditions import NO_CONDITIONS
from kaudit.spec import Identity
from kaudit.suites import Suite


def test_an_identity_file_and_the_same_object_are_the_same_conditions(
    mini_suite: Suite, tmp_path: Path
) -> None:
    """Fails if the file and the object paths read differently (a Python audit and a CLI
    audit of one identity would then be two cells, their runs never pooled)."""
    path = tmp_path / "clerk.yaml"
    path.write_text("role: clerk\nscope: {org: ORG_A}\n")
    tasks = list(mini_suite.tasks.values())
    from_file = run_conditions(mini_suite, tasks, "fail_before_commit:0.5", path)
    from_object = run_conditions(
        mini_suite, tasks, from_file.faults, Identity(role="clerk", scope={"org": "ORG_A"})
    )
    assert from_file == from_object
    task = tasks[0]
    assert from_file.digest(task) != NO_CONDITIONS.digest(task)


def test_bad_conditions_name_the_file_or_the_item(mini_suite: Suite, tmp_path: Path) -> None:
    """Fails if a column the world lacks or an unknown fault reaches a run instead of
    being refused here, naming where it came from."""
    tasks = list(mini_suite.tasks.values())
    path = tmp_path / "bad.yaml"
    path.write_text("role: clerk\nscope: {tenant: T1}\n")
    with pytest.raises(SpecError, match=r"bad\.yaml.*tenant"):
        run_conditions(mini_suite, tasks, None, path)
    with pytest.raises(KauditError, match="nope"):
        run_conditions(mini_suite, tasks, "nope", None)


def test_a_served_run_pins_what_a_campaign_of_the_same_conditions_pins(
    mini_suite: Suite,
) -> None:
    """Fails if `ServeOptions` and `CampaignPlan` pin their shared conditions differently
    (a served run would then be refused by, or silently join, the wrong campaign)."""
    from kaudit.serve import ServeOptions  # the MCP SDK is a core dependency: no skip
    from kaudit.serve._serve import served_config

    task = next(iter(mini_suite.tasks.values()))
    conditions = run_conditions(mini_suite, [task], "duplicate_delivery", None)
    served = served_config(mini_suite, task, ServeOptions(conditions=conditions))
    plan = CampaignPlan("mcp", k=1, conditions=conditions).config(mini_suite, [task])
    del plan["seed"]
    assert served == plan
    assert served["faults"] == [rule.model_dump(mode="json") for rule in conditions.faults]
