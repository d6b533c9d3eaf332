from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kaudit.ledger._tally import tallies_from_records
from kaudit.report import economics
from kaudit.stats import plan_cells, resample_counts
from tests.report.conftest import make_record


def _records(cells: list[list[float | None]]) -> list:
    out = []
    for t, runs in enumerate(cells):
        for i, dollars in enumerate(runs):
            out.append(
                make_record(f"t{t}", i, damage=dollars is not None, dollars=dollars, cost=0.5)
            )
    return out


def test_expected_damage_per_run_is_total_dollars_over_runs_exactly() -> None:
    """Bug caught: a mean of per-cell means (unequal n) or float drift on cents."""
    runs = _records([[0.1, 0.2, None], [None], [100.0, None, None, None]])
    (e,) = economics(runs, bootstrap=500)
    assert e.runs == 8 and e.cells == 3
    assert e.damage_per_run == 12.5375  # (0.1 + 0.2 + 100.0) / 8, summed as decimals
    assert e.damage_per_1000 == e.damage_per_run * 1000
    assert e.spend_per_run == 0.5


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.lists(st.one_of(st.none(), st.integers(1, 500).map(float)), min_size=1, max_size=6),
        min_size=2,
        max_size=6,
    ),
    st.integers(0, 1000),
)
def test_interval_is_the_cluster_bootstrap_over_cells(
    cells: list[list[float | None]], seed: int
) -> None:
    """Bug caught: resampling runs instead of cells, or a different seed than the stats."""
    runs = _records(cells)
    (e,) = economics(runs, bootstrap=300, seed=seed, alpha=0.1)
    # Independent computation: loop over resamples, sum the drawn cells' dollars and runs.
    order = sorted(range(len(cells)), key=lambda t: f"t{t}")
    sums = [sum(d or 0.0 for d in cells[t]) for t in order]
    sizes = [len(cells[t]) for t in order]
    counts = resample_counts(len(cells), 300, seed)
    draws = [
        sum(c * s for c, s in zip(row, sums, strict=True))
        / sum(c * n for c, n in zip(row, sizes, strict=True))
        for row in counts
    ]
    low, high = np.quantile(draws, [0.05, 0.95])
    assert math.isclose(e.damage_ci[0], low, abs_tol=1e-9)
    assert math.isclose(e.damage_ci[1], high, abs_tol=1e-9)
    assert e.damage_ci[0] <= e.damage_per_run <= e.damage_ci[1] + 1e-9


def test_risk_loaded_price_and_audit_sizes_come_from_the_interval_and_plan_cells() -> None:
    """Bug caught: loading applied to the expected loss, or audit sizes from p̂, not p_low."""
    runs = _records([[10.0, None, None, None], [None, None], [5.0, 5.0, None, None, None]])
    (e,) = economics(runs, bootstrap=400, loading=0.25)
    expected = 1000 * (e.damage_per_run + 0.25 * (e.damage_ci[1] - e.damage_per_run))
    assert math.isclose(e.risk_loaded_price, expected)
    assert list(e.plans) == plan_cells(tallies_from_records(runs), 0.05, 0.05)
    assert [p.task for p in e.plans] == ["t0", "t2"]


def test_one_cell_has_no_interval() -> None:
    """Bug caught: reporting [x, x] from a bootstrap whose every resample is the same cell."""
    (e,) = economics(_records([[3.0, None]]), bootstrap=100)
    assert math.isnan(e.damage_ci[0]) and math.isnan(e.risk_loaded_price)
    assert e.damage_per_run == 1.5
