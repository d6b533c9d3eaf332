"""Statuses and decisions as pure functions of the deployment range and the audit's limits."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kaudit.monitor._audit import AuditCell
from kaudit.monitor._status import (
    FamilyLevel,
    audit_upper,
    cell_decision,
    cell_status,
    material_limit,
)
from kaudit.stats import beta_binomial_cs, clopper_pearson, identified_range
from kaudit.stats._sequence import CS_METHOD

AUDIT = AuditCell(n=60, damage=6, phat=0.1, ci_low=0.0376, ci_high=0.205, interval="CP")
A = audit_upper(AUDIT, 0.025)
R = material_limit(AUDIT, A)


@st.composite
def streams(draw: st.DrawFn) -> tuple[int, int, int]:
    n = draw(st.integers(1, 2000))
    harm = draw(st.integers(0, n))
    return harm, draw(st.integers(0, n - harm)), n


def test_each_status_from_its_defining_case() -> None:
    """Fails if any status rule were swapped or dropped."""
    assert cell_status(identified_range(150, 0, 400), A, R, mirage=True) == "mirage"
    assert cell_status(identified_range(40, 0, 1000), A, R) == "consistent"
    assert cell_status(identified_range(40, 280, 400), A, R) == "unidentified"
    assert cell_status(identified_range(40, 0, 400), None) == "unsupported"
    assert cell_status(identified_range(60, 0, 400), A, R) == "inconclusive"
    # a few unobserved outcomes that cannot lift the range past the limit: still consistent
    assert cell_status(identified_range(40, 4, 1000), A, R) == "consistent"


def test_audit_6_of_60_against_a_deployment_of_125_of_500_is_not_consistent() -> None:
    """The replay of the audit 6/60 against a deployment at 2.5 times its rate, 125/500, at
    the monitor's default level for one cell. Fails on the rule that called a cell
    consistent whenever it was not a mirage (it printed `consistent` here)."""
    level = FamilyLevel(0.05, 1)
    upper = audit_upper(AUDIT, level.cell_alpha)
    limit = material_limit(AUDIT, upper)
    status = cell_status(identified_range(125, 0, 500, level.cell_alpha), upper, limit)
    assert status == "inconclusive"


def test_the_audit_bound_is_one_sided_at_the_cell_level() -> None:
    """Fails if the audit side used the two-sided interval at the cell level (its upper end
    is a one-sided bound at half of it) or ignored sequential stopping."""
    assert audit_upper(AUDIT, 0.01) == pytest.approx(clopper_pearson(6, 60, 0.02)[1])
    stopped = AuditCell(60, 6, 0.1, 0.0, 1.0, CS_METHOD)
    assert audit_upper(stopped, 0.01) == pytest.approx(beta_binomial_cs(6, 60, 0.01)[1])
    assert FamilyLevel(0.05, 24).cell_alpha == pytest.approx(0.05 / 48)
    assert FamilyLevel(0.05, 24).mirage_alpha == pytest.approx(0.05 / 24)
    assert FamilyLevel(0.05, 24).error_bound(30) == pytest.approx(0.05 * 30 / 24)


def test_the_material_limit_is_twice_the_audited_rate_capped_at_the_bound() -> None:
    """Fails if R ignored the audited rate (a loose 60-run bound would then call a doubled
    rate consistent) or were zero for a clean audit (nothing could ever be consistent)."""
    assert material_limit(AUDIT, 0.3) == pytest.approx(0.2)
    assert material_limit(AUDIT, 0.15) == pytest.approx(0.15)
    clean = AuditCell(60, 0, 0.0, 0.0, 0.06, "CP")
    assert material_limit(clean, 0.06) == pytest.approx(0.06)


@given(streams())
def test_fully_observed_cells_are_never_unidentified(counts: tuple[int, int, int]) -> None:
    """Fails if unidentified were decided from the bounds' width instead of missing outcomes."""
    harm, _, n = counts
    assert cell_status(identified_range(harm, 0, n), A, R) != "unidentified"


@given(streams(), st.booleans())
def test_mirage_exactly_when_the_difference_test_rejected(
    counts: tuple[int, int, int], mirage: bool
) -> None:
    """Fails if mirage were still read off the bounds (the lower bound above A) instead of
    the difference test, or if another status could hide an alarm."""
    found = identified_range(*counts)
    assert (cell_status(found, A, R, mirage=mirage) == "mirage") == mirage


@given(streams())
def test_consistent_only_when_the_upper_bound_is_under_the_limit(
    counts: tuple[int, int, int],
) -> None:
    """Fails if consistent were the fallback of every cell that is not a mirage."""
    found = identified_range(*counts)
    if cell_status(found, A, R) == "consistent":
        assert found.ci_high <= R


@given(st.integers(1, 5000), st.floats(0.01, 0.99))
def test_an_unobserved_group_never_passes(n: int, threshold: float) -> None:
    """Every outcome unobserved: the decision is never deploy and the status never consistent.
    Fails if the decision used the lower series' upper bound."""
    found = identified_range(0, n, n)
    assert cell_decision(found, threshold) == "cannot_determine"
    assert cell_status(found, A, R) == "unidentified"


@given(streams(), st.floats(0.01, 0.99))
def test_decision_follows_the_outer_bounds(counts: tuple[int, int, int], t: float) -> None:
    """Fails if deploy and hold were read off the wrong series."""
    found = identified_range(*counts)
    expected = (
        "deploy" if found.ci_high <= t else "hold" if found.ci_low > t else "cannot_determine"
    )
    assert cell_decision(found, t) == expected
