from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaudit.stats import CellTally, pool_summary, summarize

POOL = [
    CellTally("a", "t1", 8, 3, 4, 2),
    CellTally("a", "t2", 8, 0, 0, 8),
    CellTally("b", "t1", 16, 12, 12, 1),
    CellTally("b", "t2", 4, 1, 1, 3),
]


def test_json_has_the_command_contract() -> None:
    out = summarize(POOL, bootstrap=200).to_json()
    cell_keys = {
        "model",
        "task",
        "n",
        "damage",
        "damage_upper",
        "success",
        "phat",
        "ci_low",
        "ci_high",
        "stochastic",
        "miss_k1",
    }
    assert cell_keys <= set(out["cells"][0])
    assert {"pair", "event", "pairs"} <= set(out["audit_miss_rate"])
    assert {"icc", "icc_raw", "alpha", "beta", "overdispersion_p"} <= set(
        out["beta_binomial"]["moments"]
    )
    assert {"icc", "icc_ci", "alpha", "beta", "lr_p"} <= set(out["beta_binomial"]["mle"])
    assert set(out["safe_k"]) == set(out["pass_k"]) == {"1", "2", "4", "8"}
    json.loads(json.dumps(out, allow_nan=False))  # strict JSON: no NaN anywhere


def test_undefined_pool_values_become_null() -> None:
    out = summarize(POOL, bootstrap=200).to_json()
    # k = 8 is undefined for the 4-run cell, so it stands on 3 cells.
    assert out["safe_k"]["8"]["cells"] == 3
    assert out["cells"][3]["safe_k"]["8"] is None


def test_cell_values() -> None:
    out = summarize(POOL, bootstrap=200).to_json()
    first = out["cells"][0]
    assert first["phat"] == 3 / 8
    assert (first["ci_low"], first["ci_high"]) == pytest.approx((0.0852, 0.7551), abs=5e-5)
    assert first["stochastic"] is True and first["miss_k1"] == 5 / 8
    assert out["audit_miss_rate"]["pairs"] == 3


def test_same_seed_same_summary() -> None:
    assert summarize(POOL, seed=3, bootstrap=300) == summarize(POOL, seed=3, bootstrap=300)
    assert summarize(POOL, seed=3, bootstrap=300) != summarize(POOL, seed=4, bootstrap=300)


@st.composite
def pools(draw: st.DrawFn) -> list[CellTally]:
    cells = []
    for i in range(draw(st.integers(0, 6))):
        n = draw(st.integers(0, 12))
        damage = draw(st.integers(0, n))
        upper = draw(st.integers(damage, n))
        cells.append(CellTally(f"m{i % 2}", f"t{i}", n, damage, upper, draw(st.integers(0, n))))
    return cells


@settings(max_examples=40, deadline=None)
@given(pools(), st.sampled_from(["kaudit", "agentrelbench"]), st.integers(0, 3))
def test_pool_summary_is_exactly_the_pool_part_of_summarize(
    cells: list[CellTally], compat: str, seed: int
) -> None:
    """The report shows `pool_summary`, `stats` shows `summarize`: one number each way.

    Fails if `summarize` stops forwarding an argument to `pool_summary` (compat picks the
    resample generator) or computes its pool means some other way.
    """
    args = {"alpha": 0.1, "k_values": (4, 1, 2), "bootstrap": 60, "seed": seed}
    pool = pool_summary(cells, compat=compat, **args)  # type: ignore[arg-type]
    full = summarize(cells, compat=compat, **args)  # type: ignore[arg-type]
    fields = ("miss", "miss_pair_ci", "miss_event_ci", "safe_k", "safe_k_upper", "pass_k",
              "pass_at_k")  # fmt: skip
    # repr: NaN (an undefined mean) is not equal to itself
    assert [repr(getattr(pool, f)) for f in fields] == [repr(getattr(full, f)) for f in fields]


def test_the_cli_starts_without_scipy_optimize() -> None:
    """Only the beta-binomial fit and sequential intervals need it; `report` of a fixed-k
    campaign never does. Fails if a module imports scipy.optimize at import time again
    (it costs about 0.1 s of every command's start); every command module is loaded."""
    code = (
        "import sys; from kaudit.cli.main import eager_app; eager_app(); "
        "print('scipy.optimize' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_wilson_option_changes_cell_interval_not_the_rule() -> None:
    cp = summarize(POOL, bootstrap=100).cells[0]
    w = summarize(POOL, bootstrap=100, interval="wilson").cells[0]
    assert w.ci_low > cp.ci_low and w.stochastic == cp.stochastic


@pytest.mark.agentrelbench
def test_dev_pool_reproduces_published_numbers(dev_pool: list[CellTally]) -> None:
    order = ["llama-3.1-8b", "qwen3-14b", "qwen3-32b", "llama-3.3-70b"]
    out = summarize(dev_pool, model_order=order).to_json()
    assert len(out["cells"]) == 80
    assert out["audit_miss_rate"]["pairs"] == 13
    assert round(out["audit_miss_rate"]["pair"], 3) == 0.798
    assert round(out["beta_binomial"]["moments"]["icc"], 3) == 0.124
    assert out["gradient"]["counts"] == [7, 2, 2, 2]
    assert out["always_fail"] == {
        "observed": 0,
        "cells": 13,
        "upper": pytest.approx(0.2058, abs=1e-4),
    }


def _two_models() -> list[CellTally]:
    """A careless model (damage in every cell, often) and a careful one (rarely, in few)."""
    careless = [CellTally("careless", f"t{i}", 8, 4 + i % 4, 4 + i % 4, 0) for i in range(20)]
    careful = [CellTally("careful", f"t{i}", 8, int(i < 8), int(i < 8), 0) for i in range(20)]
    return careless + careful


def test_the_population_miss_rate_is_fitted_per_model_as_plan_fits_it() -> None:
    """Two models of clearly different damage rates get their own populations, and the
    same ones `kaudit plan` plans from (`population_plans`). Fails if `summarize` fits one
    population over both (it once did): that mixture says one run misses 0.555 of
    damage-producing cells, outside both models' bounds (0.313 and 0.950 alone)."""
    from kaudit.stats import population_miss, population_plans

    cells = _two_models()
    summary = summarize(cells, bootstrap=0)
    assert list(summary.population) == ["careless", "careful"]
    for model, fit in summary.population.items():
        own = [t for t in cells if t.model == model]
        alone = population_miss([t.damage for t in own], [t.n for t in own])
        assert (fit.miss, fit.interval) == (alone.miss, alone.interval)
    planned = {plan.model: plan.fit for plan in population_plans(cells)}
    assert {m: f.interval for m, f in planned.items()} == {
        m: f.interval for m, f in summary.population.items()
    }
    careless, careful = summary.population["careless"], summary.population["careful"]
    assert careless.miss == pytest.approx(0.3125, abs=1e-3)
    assert careful.miss == pytest.approx(0.95, abs=1e-3)
    pooled = population_miss([t.damage for t in cells], [t.n for t in cells])
    assert careless.interval is not None and careful.interval is not None
    assert pooled.miss is not None and careless.interval[1] < pooled.miss < careful.interval[0]
    out = summary.to_json()["audit_miss_rate"]["population"]
    assert [(e["model"], e["cells"]) for e in out] == [("careless", 20), ("careful", 20)]
