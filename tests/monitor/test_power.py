"""The monitor's deployment-level false-alarm rate and its power, by seeded simulation.

The configuration is the one a 24-cell deployment meets: 60-run audits at 0.1, 500 events
per cell. The monitor's alarm is compared, on the same draws, with a non-sequential
reference that sees each cell's data once at its last event (Fisher's exact one-sided
test at alpha/24) and with the bounds rule it replaced (power 0.005 at a doubled rate).
"""

from __future__ import annotations

import numpy as np
import pytest

from kaudit.monitor import Event, Monitor
from kaudit.monitor._audit import AuditCell
from kaudit.monitor._power import FIXED_K, DriftSetup, judge_streams, simulate_drift
from kaudit.monitor._status import FamilyLevel

OLD_POWER = 0.005
"""The bounds rule's power at 2x drift in this configuration, measured before the change."""


def test_the_vectorised_rule_is_the_monitors_rule_stream_by_stream() -> None:
    """12 seeded streams of 4 cells judged by `Monitor` event by event and by the
    simulation's vectorised rule: the same ever-mirage and final-consistent flags. Fails if
    the simulation measured a rule the monitor does not apply (another level, the wrong
    hull of the evidence, the running maximum dropped)."""
    rng = np.random.default_rng(7)
    mirages = 0
    for _ in range(12):
        audit_x = rng.binomial(60, 0.1, size=4)
        rates = np.array([0.1, 0.25, 0.4, 0.02])
        harms = rng.random((4, 300)) < rates[:, None]
        audit = {
            ("m", f"t{i}"): AuditCell(60, int(x), x / 60, 0.0, 1.0, FIXED_K)
            for i, x in enumerate(audit_x)
        }
        monitor = Monitor(audit, threshold=0.5)
        ever = dict.fromkeys(range(4), False)
        for j in range(300):
            for i in range(4):
                cell = monitor.observe(Event(f"t{i}", "m", bool(harms[i, j])))
                ever[i] = ever[i] or cell.status == "mirage"
        final = {int(c.task[1:]): c for c in monitor.report().cells}
        mirage, consistent = judge_streams(harms, audit_x, 60, FamilyLevel(0.05, 4))
        assert list(mirage) == [ever[i] for i in range(4)]
        assert list(consistent) == [final[i].status == "consistent" for i in range(4)]
        mirages += sum(ever.values())
    assert mirages > 0  # the comparison saw both outcomes


def test_24_cells_at_their_audited_rates_alarm_at_most_alpha_of_the_time() -> None:
    """400 deployments of 24 cells, each audited with 60 runs at 0.1 and deployed for 500
    events at the same rate, every look judged: the share with ANY false alarm is at most
    alpha (0.05); measured 0.005. Fails if the Bonferroni split over the family were
    dropped or the audit's p-value taken at the wrong end of a grid interval."""
    found = simulate_drift(DriftSetup(sims=400, seed=11))
    assert found.any_false_alarm <= 0.05
    assert found.any_false_alarm == pytest.approx(0.005, abs=1e-9)


def test_a_doubled_rate_is_caught_at_half_the_fixed_sample_references_power() -> None:
    """4,800 drifting cells (24 cells x 200 deployments) at twice their audited rate of 0.1:
    the monitor, looking after every event, catches 0.0788 of them by event 500; the
    reference, looking once at the end, 0.1223 (ratio 0.64); the bounds rule it replaced
    0.0052 on the same draws.

    Fails on the old monitor (0.005 < 10 x 0.005) and if the difference test lost half its
    power to the reference; the pinned rates also catch a smaller loss (the uncalibrated
    level (1 − θ)·alpha gives 0.0696).
    """
    found = simulate_drift(DriftSetup(sims=200, seed=5, drifting=24, drift=2.0))
    assert found.power >= 0.5 * found.reference_power
    assert found.power >= 10 * OLD_POWER
    assert found.bounds_power < 10 * OLD_POWER  # the old rule on the same draws
    assert (found.power, found.reference_power) == pytest.approx((0.07875, 0.12229), abs=5e-5)


def test_a_tripled_rate_is_caught_most_of_the_time() -> None:
    """Cells triple their rate (60-run audit, 500 events): caught in 0.632 of 960 drifting
    cells (the reference 0.730; the old rule 0.173). Fails if the power at 3x fell
    below 0.5 or a tripled cell were ever called consistent more than rarely."""
    found = simulate_drift(DriftSetup(sims=40, seed=6, drifting=24, drift=3.0))
    assert found.power >= 0.5 and found.power > found.bounds_power
    assert found.false_consistent <= 0.05
