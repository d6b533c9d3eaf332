"""Statuses and decisions as pure functions of the deployment range and the audit interval."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kaudit.monitor import AuditCell, cell_decision, cell_status
from kaudit.stats import identified_range

AUDIT = AuditCell(n=60, damage=6, phat=0.1, ci_low=0.0376, ci_high=0.205, interval="CP")


@st.composite
def streams(draw: st.DrawFn) -> tuple[int, int, int]:
    n = draw(st.integers(1, 2000))
    harm = draw(st.integers(0, n))
    return harm, draw(st.integers(0, n - harm)), n


def test_each_status_from_its_defining_case() -> None:
    """Fails if any status rule were swapped or dropped."""
    assert cell_status(identified_range(150, 0, 400), AUDIT) == "mirage"
    assert cell_status(identified_range(40, 0, 400), AUDIT) == "consistent"
    assert cell_status(identified_range(40, 280, 400), AUDIT) == "unidentified"
    assert cell_status(identified_range(40, 0, 400), None) == "unsupported"
    # a few unobserved outcomes that cannot lift the range past the audit: still consistent
    assert cell_status(identified_range(40, 4, 400), AUDIT) == "consistent"


@given(streams())
def test_fully_observed_cells_are_never_unidentified(counts: tuple[int, int, int]) -> None:
    """Fails if unidentified were decided from the bounds' width instead of missing outcomes."""
    harm, _, n = counts
    assert cell_status(identified_range(harm, 0, n), AUDIT) != "unidentified"


@given(streams())
def test_mirage_exactly_when_the_lower_bound_clears_the_audit(counts: tuple[int, int, int]) -> None:
    """Fails if mirage used the point estimate or the upper series."""
    found = identified_range(*counts)
    assert (cell_status(found, AUDIT) == "mirage") == (found.ci_low > AUDIT.ci_high)


@given(st.integers(1, 5000), st.floats(0.01, 0.99))
def test_an_unobserved_group_never_passes(n: int, threshold: float) -> None:
    """Every outcome unobserved: the decision is never deploy and the status never consistent.
    Fails if the decision used the lower series' upper bound."""
    found = identified_range(0, n, n)
    assert cell_decision(found, threshold) == "cannot_determine"
    assert cell_status(found, AUDIT) == "unidentified"


@given(streams(), st.floats(0.01, 0.99))
def test_decision_follows_the_outer_bounds(counts: tuple[int, int, int], t: float) -> None:
    """Fails if deploy and hold were read off the wrong series."""
    found = identified_range(*counts)
    expected = (
        "deploy" if found.ci_high <= t else "hold" if found.ci_low > t else "cannot_determine"
    )
    assert cell_decision(found, t) == expected
