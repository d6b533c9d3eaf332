"""The monitor's deployment-level false-alarm rate and its power, by seeded simulation."""

from __future__ import annotations

import numpy as np
import pytest

from kaudit.monitor import AuditCell, Event, Monitor
from kaudit.monitor._power import FIXED_K, DriftSetup, judge_streams, simulate_drift


def test_the_vectorised_rule_is_the_monitors_rule_stream_by_stream() -> None:
    """12 seeded streams of 4 cells judged by `Monitor` event by event and by the
    simulation's closed form: the same ever-mirage and final-consistent flags. Fails if
    the simulation measured a rule the monitor does not apply (e.g. another level)."""
    rng = np.random.default_rng(7)
    for _ in range(12):
        audit_x = rng.binomial(60, 0.1, size=4)
        rates = np.array([0.1, 0.2, 0.35, 0.02])
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
        upper = np.array([final[i].audit_upper for i in range(4)])
        limit = np.array([final[i].limit for i in range(4)])
        mirage, consistent = judge_streams(harms, upper, limit, monitor.report().cell_alpha)
        assert list(mirage) == [ever[i] for i in range(4)]
        assert list(consistent) == [final[i].status == "consistent" for i in range(4)]


def test_24_cells_at_their_audited_rates_alarm_at_most_alpha_of_the_time() -> None:
    """400 deployments of 24 cells, each audited with 60 runs at 0.1 and deployed for 500
    events at the same rate, every look judged: the share with ANY false alarm is at most
    alpha (0.05). The per-cell rule the monitor had (audit's two-sided 95% interval,
    deployment sequence at 0.05 per cell) is shown above it on the same draws. Fails if the
    Bonferroni split over the family were dropped."""
    family = simulate_drift(DriftSetup(sims=400, seed=11))
    per_cell = simulate_drift(DriftSetup(sims=400, seed=11, per_cell=True))
    assert family.any_false_alarm <= 0.05
    assert per_cell.any_false_alarm > 0.05


@pytest.mark.parametrize(("drift", "floor"), [(3.0, 0.9)])
def test_power_against_a_tripled_rate_with_a_300_run_audit(drift: float, floor: float) -> None:
    """One cell of 24 triples its rate; with 300 audit runs and 1,000 events it is caught
    in at least 90% of 200 deployments, and a drifted cell is never called consistent
    there. Fails if the family-wise split were applied twice or to the wrong side."""
    found = simulate_drift(
        DriftSetup(sims=200, seed=5, drifting=1, drift=drift, audit_n=300, events=1000)
    )
    assert found.power >= floor
    assert found.false_consistent == 0.0
