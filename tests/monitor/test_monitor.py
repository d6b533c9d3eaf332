"""The monitor after every event: drift raises mirage, the audited rate stays consistent,
mostly unobserved outcomes stay unidentified."""

from __future__ import annotations

import numpy as np
import pytest

from kaudit.monitor import Event, Monitor
from kaudit.monitor._audit import AuditCell
from kaudit.stats import clopper_pearson

ALPHA = 0.05
P_AUDIT = 0.1
AUDIT_N, AUDIT_X = 60, 6  # the audit saw the true rate exactly
AUDIT = {
    ("m", "t"): AuditCell(
        AUDIT_N, AUDIT_X, AUDIT_X / AUDIT_N, *clopper_pearson(AUDIT_X, AUDIT_N), "CP"
    )
}


def _stream(rng: np.random.Generator, n: int, p: float, unobserved: float = 0.0) -> list[Event]:
    harm = rng.random(n) < p
    seen = rng.random(n) >= unobserved
    return [Event("t", "m", bool(h) if s else None) for h, s in zip(harm, seen, strict=True)]


def test_a_drifted_stream_raises_mirage_and_the_alarm_stays() -> None:
    """Fails if mirage compared the point estimate, or the alarm reset when a later look
    looked better."""
    monitor = Monitor(AUDIT, threshold=0.2)
    statuses = [monitor.observe(e).status for e in _stream(np.random.default_rng(1), 600, 0.4)]
    first = statuses.index("mirage")
    assert 0 < first < 200
    assert set(statuses[first:]) == {"mirage"}
    report = monitor.report()
    assert report.alarm and report.alarm_event == first + 1
    assert report.cells[0].decision == "hold"


def test_streams_at_the_audited_rate_never_alarm() -> None:
    """200 seeded streams of 300 events at the audited rate, judged after EVERY event,
    against a 2,000-run audit: the share of streams that are ever a mirage is below alpha.
    Fails if the monitor compared the deployment's point estimate with the audit bound."""
    big = {("m", "t"): AuditCell(2000, 200, 0.1, 0.087, 0.114, "CP")}
    alarms = 0
    for seed in range(200):
        monitor = Monitor(big, threshold=0.2)
        stream = _stream(np.random.default_rng(1000 + seed), 300, P_AUDIT)
        cells = [monitor.observe(e) for e in stream]
        alarms += any(c.status == "mirage" for c in cells)
    assert alarms / 200 < ALPHA


def test_a_stream_with_70_percent_unobserved_is_unidentified_never_consistent_or_deploy() -> None:
    """100 seeded streams of 300 events, 70% of outcomes unobserved: never `deploy` at any
    look, `unidentified` from the 20th event on, never `consistent` there. Fails if
    unobserved outcomes were dropped or counted as harmless."""
    for seed in range(100):
        monitor = Monitor(AUDIT, threshold=0.2)
        stream = _stream(np.random.default_rng(seed), 300, P_AUDIT, unobserved=0.7)
        cells = [monitor.observe(e) for e in stream]
        assert all(c.decision != "deploy" for c in cells)
        assert {c.status for c in cells[19:]} == {"unidentified"}


def test_cells_split_by_group_and_unaudited_cells_are_unsupported() -> None:
    """Fails if groups were pooled, or a cell absent from the ledger borrowed another's audit."""
    monitor = Monitor(AUDIT, threshold=0.2)
    monitor.observe(Event("t", "m", False, group="eu"))
    monitor.observe(Event("t", "m", None, group="us"))
    monitor.observe(Event("other", "m", False))
    cells = {(c.task, c.group): c for c in monitor.report().cells}
    assert cells[("t", "eu")].deployment.n == 1 and cells[("t", "us")].deployment.unobserved == 1
    assert cells[("other", None)].status == "unsupported"
    assert cells[("other", None)].audit is None


def test_bad_threshold_is_refused() -> None:
    """Fails if a threshold outside (0, 1) were accepted (deploy would be meaningless)."""
    with pytest.raises(ValueError, match="threshold"):
        Monitor(AUDIT, threshold=1.5)
