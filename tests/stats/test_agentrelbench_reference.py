"""kaudit's statistics against the installed `agentrelbench` package, on random pools.

Every pool has cells of unequal size, because equal-n pools hide the one estimator where
the two readings differ (the method-of-moments mean). The reference is the package
itself, called through its public functions; nothing of it is copied here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from agentrelbench import estimators as arb
from hypothesis import example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.stats import CellTally, fit_moments, summarize

TOL = 1e-9
KS = (1, 2)
BOOT = 200


@st.composite
def pools(draw: st.DrawFn, min_cells: int = 2) -> list[CellTally]:
    """Cells with n in 2..20 (unequal), and x, s, x_upper consistent with n."""
    cells = []
    for i in range(draw(st.integers(min_cells, 12))):
        n = draw(st.integers(2, 20))
        x = draw(st.integers(0, n))
        upper = draw(st.integers(x, n))
        success = draw(st.integers(0, n - x))
        cells.append(CellTally("m", f"t{i}", n, x, upper, success))
    return cells


def reference(cells: list[CellTally]) -> dict[str, arb.TaskStats]:
    return {
        c.task: arb.TaskStats(n=c.n, x=c.damage, s=c.success, x_upper=c.damage_upper) for c in cells
    }


def assert_close(actual: float | None, expected: float) -> None:
    assert actual is not None
    assert actual == pytest.approx(expected, abs=TOL, rel=TOL)


def test_moments_icc_equals_fit_beta_binomial_on_a_pool_of_unequal_n() -> None:
    """Fails if the moment fit centres p̂ on its unweighted mean instead of Σx/Σn."""
    x, n = [1, 7, 0, 3], [4, 16, 8, 5]
    want = arb.fit_beta_binomial(
        reference(
            [CellTally("m", f"t{i}", b, a, a, 0) for i, (a, b) in enumerate(zip(x, n, strict=True))]
        )
    )
    fit = fit_moments(x, n)
    assert_close(fit.icc_raw, want.icc_raw)
    assert_close(fit.icc, want.icc)
    assert_close(fit.lr_p, want.overdispersion_pvalue)


@settings(max_examples=150, deadline=None)
@given(pools())
# A search once drew this pool: rho is 1 but for rounding, and a prior taken from the
# unheld rho (alpha 7e-17) departs from the package's (rho held at 0.999, alpha 3.3e-4).
@example([CellTally("m", "t0", 15, 0, 0, 0), CellTally("m", "t1", 15, 10, 10, 0)])
def test_beta_binomial_fit_equals_the_reference(cells: list[CellTally]) -> None:
    """Fails if the moment fit used the unweighted mean of p̂, its own n̄, no cap at 1,
    or took its prior from a rho above the 0.999 the package holds it to."""
    fit = fit_moments([c.damage for c in cells], [c.n for c in cells])
    total_x, total_n = sum(c.damage for c in cells), sum(c.n for c in cells)
    want = arb.fit_beta_binomial(reference(cells))
    if total_x in (0, total_n):
        # Not identified: kaudit says so; the package reports a floored 0.
        assert fit.icc is None and want.icc == 0.0
        return
    assert_close(fit.icc, want.icc)
    assert_close(fit.icc_raw, want.icc_raw)
    assert_close(fit.lr_p, want.overdispersion_pvalue)
    if 0.0 < want.icc_raw < 1.0:
        assert_close(fit.alpha, want.alpha)
        assert_close(fit.beta, want.beta)


@settings(max_examples=60, deadline=None)
@given(pools(), st.integers(0, 2**31))
def test_every_estimator_of_the_summary_equals_the_reference(
    cells: list[CellTally], seed: int
) -> None:
    """Fails on any departure: a biased pass^k/safe^k, an event weight of 1, a CP bound
    from a normal approximation, a stochastic rule with <= instead of <, or a bootstrap
    that draws its resamples from another generator than the package's."""
    summary = summarize(cells, k_values=KS, bootstrap=BOOT, seed=seed, compat="agentrelbench")
    ref = reference(cells)
    for k, pool in zip(KS, summary.safe_k, strict=True):
        want = arb.safe_pow_k(ref, k)
        assert_close(pool.mean, want.value)
        low, high = arb.cluster_bootstrap(
            lambda s, k=k: arb.safe_pow_k(s, k).value, ref, BOOT, seed
        )
        assert_close(pool.ci_low, low)
        assert_close(pool.ci_high, high)
    for k, pool in zip(KS, summary.safe_k_upper, strict=True):
        assert_close(pool.mean, arb.safe_pow_k(ref, k, upper=True).value)
    for k, pool in zip(KS, summary.pass_k, strict=True):
        assert_close(pool.mean, arb.pass_pow_k(ref, k).value)
        low, high = arb.cluster_bootstrap(
            lambda s, k=k: arb.pass_pow_k(s, k).value, ref, BOOT, seed
        )
        assert_close(pool.ci_low, low)
        assert_close(pool.ci_high, high)
    for cell in summary.cells:
        task = cell.tally.task
        lo, hi = arb.clopper_pearson(cell.tally.damage, cell.tally.n)
        assert_close(cell.ci_low, lo)
        assert_close(cell.ci_high, hi)
        assert_close(dict(cell.safe_k)[1], arb.safe_pow_k(ref, 1).per_task[task])
    stochastic = arb.demonstrably_stochastic(ref)
    assert {c.tally.task for c in summary.cells if c.stochastic} == stochastic.tasks
    if any(c.damage for c in cells):
        assert_close(summary.miss.pair, arb.audit_miss_rate(ref, "pair"))
        assert_close(summary.miss.event, arb.audit_miss_rate(ref, "event"))
        assert_close(summary.stochastic_share, stochastic.damage_share)


def verdict_lines(cells: list[CellTally]) -> str:
    """An AgentRelBench verdicts file holding exactly these tallies."""
    lines = []
    for c in cells:
        for i in range(c.n):
            damage, upper, success = (
                i < c.damage,
                i < c.damage_upper,
                c.damage <= i < c.damage + c.success,
            )
            outcome = "FAIL_DAMAGE" if damage else "PASS" if success else "FAIL_SAFE"
            row: dict[str, Any] = {
                "task_id": c.task, "run": f"run_{i + 1}", "outcome": outcome,
                "sub_label": "errored_clean" if upper and not damage else None,
                "counts_as_damage": damage, "counts_as_damage_upper": upper,
                "eog_success": success, "severity": None, "dollars": None, "deltas": [],
            }  # fmt: skip
            lines.append(json.dumps(row))
    return "\n".join(lines) + "\n"


@settings(max_examples=15, deadline=None)
@given(pools(min_cells=3), st.integers(0, 1000))
def test_stats_cli_on_agentrelbench_files_equals_the_reference(
    tmp_path_factory: pytest.TempPathFactory, cells: list[CellTally], seed: int
) -> None:
    """Fails if `--format agentrelbench` did not switch on the published conventions
    (moment fit about Σx/Σn, resamples drawn as the package draws them)."""
    path = Path(tmp_path_factory.mktemp("arb")) / "m.jsonl"
    path.write_text(verdict_lines(cells))
    args = ["stats", "--format", "agentrelbench", "--model-file", f"m={path}", "--json"]
    result = CliRunner().invoke(
        app, [*args, "--k", "1", "--bootstrap", str(BOOT), "--seed", str(seed)]
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    ref = reference(cells)
    moments = out["beta_binomial"]["moments"]
    want = arb.fit_beta_binomial(ref)
    if moments["icc"] is not None:
        assert_close(moments["icc"], want.icc)
        assert_close(moments["lr_p"], want.overdispersion_pvalue)
    low, high = arb.cluster_bootstrap(lambda s: arb.safe_pow_k(s, 1).value, ref, BOOT, seed)
    assert_close(out["safe_k"]["1"]["ci_low"], low)
    assert_close(out["safe_k"]["1"]["ci_high"], high)
    assert_close(out["pass_k"]["1"]["mean"], arb.pass_pow_k(ref, 1).value)
    if any(c.damage for c in cells):
        assert_close(out["audit_miss_rate"]["pair"], arb.audit_miss_rate(ref, "pair"))
        assert_close(out["audit_miss_rate"]["event"], arb.audit_miss_rate(ref, "event"))
    assert not math.isnan(out["safe_k"]["1"]["mean"])
