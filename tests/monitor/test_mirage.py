"""The mirage simulation over seeds: the audit never separates the agents, the monitor does."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaudit.monitor import Event, Monitor
from kaudit.monitor._audit import AuditCell
from kaudit.monitor._mirage import MirageSetup, simulate_mirage


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_identical_audits_and_a_caught_drift_for_every_seed(seed: int, tmp_path: Path) -> None:
    """Fails if the two agents' audits could differ (no mirage then) or the drift went
    unnoticed while the steady agent was flagged."""
    result = simulate_mirage(MirageSetup(seed=seed), tmp_path / "audit.sqlite")
    steady, drifting = result.audit.values()
    assert steady == drifting and result.audit_fisher_p == 1.0
    status = {(c.model, c.group): c.status for c in result.report.cells if c.audit is not None}
    assert status[("simulated:drifting", None)] == "mirage"
    assert status[("simulated:steady", None)] == "consistent"
    assert status[("simulated:steady", "eu")] == "unidentified"


AUDIT = {("m", "t"): AuditCell(60, 6, 0.1, 0.0376, 0.205, "CP")}


@given(st.lists(st.sampled_from([True, False, None]), min_size=1, max_size=150))
@settings(max_examples=60, deadline=None)
def test_bounds_only_tighten_and_an_alarm_never_clears(stream: list[bool | None]) -> None:
    """Fails if the running intersection were dropped: a later look could then loosen a
    bound or clear an alarm that was raised."""
    monitor = Monitor(AUDIT, threshold=0.2)
    low, high, alarmed = 0.0, 1.0, False
    for harm in stream:
        cell = monitor.observe(Event("t", "m", harm))
        assert cell.deployment.ci_low >= low and cell.deployment.ci_high <= high
        low, high = cell.deployment.ci_low, cell.deployment.ci_high
        alarmed = alarmed or cell.status == "mirage"
        assert monitor.alarm == alarmed
        if alarmed:
            assert cell.status == "mirage"
