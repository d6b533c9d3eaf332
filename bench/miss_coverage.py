"""Coverage of the audit miss rate, observed and population, by simulation across k.

Pools of 80 cells (the development pool's size) of k runs each, k = 4, 8, 16, 32, under
two populations fitted to the published development pool: a zero-inflated Beta (72% of
cells never damage, the others at rates from Beta(2.75, 20.8); one run misses 0.883 of
damage-producing cells) and a plain Beta(0.200, 5.95) (every cell damages at some rate;
one run misses 0.967). For each, prints the observed statistic's mean and how often its
bootstrap interval covers the true single-run miss rate, and the same for the population
estimate's profile-likelihood bounds, with their mean width.

    python bench/miss_coverage.py [--pools 200] [--json]
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

from kaudit.stats import CellTally, pool_summary, population_miss

POPULATIONS = {
    "zero-inflated Beta": (0.7194, 2.7525, 20.799),
    "plain Beta": (0.0, 0.2002251, 5.9527325),
}


def measure(never: float, a: float, b: float, k: int, pools: int, seed: int) -> dict[str, Any]:
    truth = b / (a + b)
    rng = np.random.default_rng(seed)
    observed, observed_hit, hit, widths = [], 0, 0, []
    for _ in range(pools):
        rates = np.where(rng.random(80) < never, 0.0, rng.beta(a, b, size=80))
        x = rng.binomial(k, rates)
        cells = [CellTally("m", f"t{i}", k, int(v), int(v), 0) for i, v in enumerate(x)]
        summary = pool_summary(cells, bootstrap=1000, seed=seed)
        low, high = summary.miss_pair_ci
        observed.append(summary.miss.pair)
        observed_hit += bool(low <= truth <= high)
        fit = population_miss(list(x), [k] * 80)
        if fit.interval is not None:
            hit += fit.interval[0] <= truth <= fit.interval[1]
            widths.append(fit.interval[1] - fit.interval[0])
    return {
        "k": k,
        "truth": round(truth, 4),
        "observed_mean": round(float(np.nanmean(observed)), 4),
        "observed_coverage": observed_hit / pools,
        "population_coverage": hit / pools,
        "population_width": round(float(np.mean(widths)), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pools", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    for name, (never, a, b) in POPULATIONS.items():
        for k in (4, 8, 16, 32):
            rows.append({"population": name, **measure(never, a, b, k, args.pools, seed=k)})
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("population          k  truth  observed  obs.cover  pop.cover  pop.width")
    for r in rows:
        print(f"{r['population']:<18} {r['k']:2d}  {r['truth']:.3f}  {r['observed_mean']:8.3f}  "
              f"{r['observed_coverage']:9.3f}  {r['population_coverage']:9.3f}  "
              f"{r['population_width']:9.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
