"""Cluster bootstrap: kaudit's vectorized resampler against a pure-Python loop.

Both compute the same four pool statistics (mean damage rate, pair- and event-weighted
k=1 audit miss rate, mean safe^4) over the same synthetic pool — 100 cells, 2,128 runs —
for the same number of duplicate-preserving resamples, timed in this process. The
baseline is the straightforward loop a reviewer would write: draw m cell indices with
``random.Random``, sum the drawn cells' per-cell values. Prints the ratio.

    python bench/bootstrap.py [--resamples 10000] [--seed 0] [--json]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import time
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from kaudit.stats import CellTally, bootstrap_ratio, resample_counts, safe_pow_k

T = TypeVar("T")


def make_pool(seed: int) -> list[CellTally]:
    """88 cells of 16 runs and 12 of 60: 2,128 runs, damage drawn from a beta mixture."""
    rng = np.random.default_rng(seed)
    sizes = [16] * 88 + [60] * 12
    pool = []
    for i, n in enumerate(sizes):
        p = rng.beta(0.3, 6.0)
        x = int(rng.binomial(n, p))
        pool.append(CellTally(f"m{i % 4}", f"t{i}", n, x, x, int(rng.binomial(n - x, 0.7))))
    return pool


def per_cell(pool: list[CellTally]) -> list[tuple[float, ...]]:
    """(numerator, denominator) pairs of each statistic, per cell."""
    rows: list[tuple[float, ...]] = []
    for t in pool:
        miss = (t.n - t.damage) / t.n
        hit = 1.0 if t.damage else 0.0
        rows.append(
            (
                t.damage / t.n,
                1.0,
                miss * hit,
                hit,
                miss * t.damage,
                float(t.damage),
                safe_pow_k(t.n, t.damage, 4),
                1.0,
            )
        )
    return rows


def vectorized(rows: list[tuple[float, ...]], resamples: int, seed: int) -> Any:
    table = np.asarray(rows)
    counts = resample_counts(len(rows), resamples, seed)
    return np.column_stack(
        [bootstrap_ratio(table[:, j], table[:, j + 1], counts) for j in range(0, 8, 2)]
    )


def pure_python(rows: list[tuple[float, ...]], resamples: int, seed: int) -> list[list[float]]:
    rng = random.Random(seed)
    m = len(rows)
    out = []
    for _ in range(resamples):
        sums = [0.0] * 8
        for _ in range(m):
            row = rows[rng.randrange(m)]
            for j in range(8):
                sums[j] += row[j]
        out.append([sums[j] / sums[j + 1] if sums[j + 1] else float("nan") for j in range(0, 8, 2)])
    return out


def timed(fn: Callable[..., T], *args: Any) -> tuple[T, float]:
    start = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="Best of this many timings.")
    parser.add_argument("--json", action="store_true", help="Print one JSON object at the end.")
    args = parser.parse_args()

    pool = make_pool(args.seed)
    rows = per_cell(pool)
    fast_times, slow_times = [], []
    for _ in range(args.repeats):
        fast, t_fast = timed(vectorized, rows, args.resamples, args.seed)
        slow, t_slow = timed(pure_python, rows, args.resamples, args.seed)
        fast_times.append(t_fast)
        slow_times.append(t_slow)
    names = ["damage_rate", "miss_pair", "miss_event", "safe_4"]
    fast_means = np.nanmean(fast, axis=0).tolist()
    slow_means = [statistics.fmean(r[j] for r in slow if r[j] == r[j]) for j in range(4)]
    result = {
        "benchmark": "cluster_bootstrap",
        "cells": len(pool),
        "runs": sum(t.n for t in pool),
        "resamples": args.resamples,
        "seed": args.seed,
        "kaudit_seconds": min(fast_times),
        "pure_python_seconds": min(slow_times),
        "ratio": min(slow_times) / min(fast_times),
        "bootstrap_means": {
            "kaudit": dict(zip(names, fast_means, strict=True)),
            "pure_python": dict(zip(names, slow_means, strict=True)),
        },
        "python": platform.python_version(),
        "numpy": np.__version__,
    }
    print(f"pool: {result['cells']} cells, {result['runs']} runs; {args.resamples} resamples")
    print(f"  kaudit (numpy draws + bincount)    : {result['kaudit_seconds'] * 1000:9.1f} ms")
    print(f"  pure-Python loop baseline          : {result['pure_python_seconds'] * 1000:9.1f} ms")
    print(f"  ratio (baseline / kaudit)          : {result['ratio']:9.1f}x")
    for name, a, b in zip(names, fast_means, slow_means, strict=True):
        print(f"  mean of {name:<12} kaudit {a:.4f}  baseline {b:.4f}")
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
