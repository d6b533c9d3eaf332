"""Coverage of the pool and expected-loss intervals by seeded simulation.

Pool: 4 models sharing 20 tasks (a task's difficulty shared by every model), 8 runs per
cell; coverage of the 95% safe^1 interval under each resampling. Expected loss: 16 tasks
x 16 runs, damage on 30% of runs, dollars Pareto(index) from $10; coverage of the 95%
interval, share warned, share covered or warned.

    python bench/coverage.py [--sims 200]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy.special import expit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the test package's records

from tests.report.conftest import make_record

from kaudit.report import economics
from kaudit.stats import CellTally, pool_summary

MODELS = np.array([-2.5, -2.0, -1.5, -1.0])


def _pool(rng: np.random.Generator) -> list[CellTally]:
    task = rng.normal(0.0, 1.5, size=20)
    x = rng.binomial(8, expit(MODELS[:, None] + task[None, :]))
    return [CellTally(f"m{m}", f"t{t}", 8, int(x[m, t]), int(x[m, t]), 8 - int(x[m, t]))
            for m in range(4) for t in range(20)]  # fmt: skip


def pool_coverage(sims: int) -> None:
    draws = np.random.default_rng(0).normal(0.0, 1.5, size=200_000)
    truth = float(np.mean([np.mean(1 - expit(a + draws)) for a in MODELS]))
    for resampling, compat in (("tasks", "kaudit"), ("two-way", "kaudit"),
                               ("cells", "kaudit"), ("cells", "agentrelbench")):  # fmt: skip
        rng = np.random.default_rng(1)
        covered = 0
        for seed in range(sims):
            e = pool_summary(_pool(rng), k_values=(1,), bootstrap=400, seed=seed,
                             resampling=resampling, compat=compat).safe_k[0]  # type: ignore[arg-type]  # fmt: skip
            covered += e.ci_low <= truth <= e.ci_high
        print(f"pool safe^1, {resampling:8s} {compat:13s} coverage {covered / sims:.3f}")


def small_pool_coverage(sims: int) -> None:
    """One model on 10 tasks: few units, where a plain percentile interval is too narrow."""
    draws = np.random.default_rng(0).normal(0.0, 1.5, size=200_000)
    truth = float(np.mean(1 - expit(MODELS[0] + draws)))
    for compat in ("kaudit", "agentrelbench"):
        rng = np.random.default_rng(2)
        covered = 0
        for seed in range(sims):
            task = rng.normal(0.0, 1.5, size=10)
            x = rng.binomial(8, expit(MODELS[0] + task))
            cells = [
                CellTally("m", f"t{t}", 8, int(v), int(v), 8 - int(v)) for t, v in enumerate(x)
            ]
            e = pool_summary(cells, k_values=(1,), bootstrap=400, seed=seed,
                             compat=compat).safe_k[0]  # type: ignore[arg-type]  # fmt: skip
            covered += e.ci_low <= truth <= e.ci_high
        print(f"pool safe^1, 1 model x 10 tasks, {compat:13s} coverage {covered / sims:.3f}")


def tail_coverage(sims: int) -> None:
    for index in (1.1, 1.5, 3.0):
        rng = np.random.default_rng(0)
        truth = 0.3 * 10 * index / (index - 1)
        covered = warned = either = 0
        for seed in range(sims):
            runs = []
            for t in range(16):
                for i in range(16):
                    hit = bool(rng.random() < 0.3)
                    amount = float(round(10 * (1 - rng.random()) ** (-1 / index), 2))
                    runs.append(make_record(f"t{t}", i, damage=hit,
                                            dollars=amount if hit else None, cost=0.0))  # fmt: skip
            (e,) = economics(runs, bootstrap=400, seed=seed)
            inside = e.damage_ci[0] <= truth <= e.damage_ci[1]
            covered += inside
            warned += e.tail_warning is not None
            either += inside or e.tail_warning is not None
        print(f"expected loss, Pareto {index}: coverage {covered / sims:.3f}, warned "
              f"{warned / sims:.3f}, covered or warned {either / sims:.3f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sims", type=int, default=200)
    sims = parser.parse_args().sims
    pool_coverage(sims)
    small_pool_coverage(sims)
    tail_coverage(sims)


if __name__ == "__main__":
    main()
