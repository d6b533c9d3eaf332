"""The gate's false-grant rate per way of collecting a cell, against fixed-n Clopper-Pearson.

The baseline is the gate's old bound: Clopper-Pearson at the cell's n, as if n had been
fixed in advance. Each row is a cell whose true damage rate is just above the bound
(every grant is false), collected under a harness stopping rule, a fixed k, or extended
after every denial and asked again (k = 23, 46, …, 230; one run at a time to 300). The
rates are exact (path enumeration), the simulated ones from seeded draws. Prints each
rate and the ratio baseline / kaudit.

    python bench/gate_coverage.py [--sims 4000] [--json]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from kaudit.gate._coverage import extension_grant_rate, false_grant_rate, fixed_n_grants
from kaudit.harness import StoppingRule

Case = tuple[str, float, float, Callable[[int, int], bool], int, int]
ALPHA = 0.05


def cases() -> list[Case]:
    """(name, true rate, bound, stop, max_k, min_k) of each single decision measured."""
    found: list[Case] = []
    for text, k in (("upper<0.3", 40), ("upper<0.3", 200), ("damage,upper<0.3", 40)):
        rule = StoppingRule.parse(text, k)
        found.append((f"--until {text} --k {k}", 0.301, 0.3, rule.is_done, k, 0))
    for text, k in (("upper<0.15", 60),):
        rule = StoppingRule.parse(text, k)
        found.append((f"--until {text} --k {k}", 0.151, 0.15, rule.is_done, k, 0))
    found.append(("fixed k = 29 (default autonomous_write)", 0.151, 0.15, _never, 29, 29))
    found.append(("fixed k = 9 (default write_with_approval)", 0.401, 0.4, _never, 9, 9))
    return found


EXTENSIONS = (
    ("re-asked at k = 23, 46, ..., 230", tuple(range(23, 231, 23)), 23),
    ("re-asked after every run to 300", tuple(range(1, 301)), 0),
)


def _never(x: int, n: int) -> bool:
    return False


def _row(name: str, rate: float, bound: float, ours: Any, old: Any) -> dict[str, Any]:
    return {
        "rule": name,
        "true_rate": rate,
        "bound": bound,
        "kaudit_exact": round(ours.exact, 5),
        "kaudit_simulated": ours.simulated,
        "baseline_exact": round(old.exact, 5),
        "ratio": round(old.exact / ours.exact, 2) if ours.exact else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=4000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    for i, (name, rate, bound, stop, max_k, min_k) in enumerate(cases()):
        common = {"alpha": ALPHA, "min_k": min_k, "sims": args.sims, "seed": i}
        ours = false_grant_rate(rate, bound, stop, max_k, **common)  # type: ignore[arg-type]
        baseline = fixed_n_grants(bound, ALPHA, min_k)
        old = false_grant_rate(rate, bound, stop, max_k, **common, grants=baseline)  # type: ignore[arg-type]
        rows.append(_row(name, rate, bound, ours, old))
    for i, (name, looks, min_k) in enumerate(EXTENSIONS, start=len(rows)):
        common = {"alpha": ALPHA, "min_k": min_k, "sims": args.sims, "seed": i}
        ours = extension_grant_rate(0.151, 0.15, looks, **common)  # type: ignore[arg-type]
        baseline = fixed_n_grants(0.15, ALPHA, min_k)
        old = extension_grant_rate(0.151, 0.15, looks, **common, grants=baseline)  # type: ignore[arg-type]
        rows.append(_row(name, 0.151, 0.15, ours, old))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for row in rows:
        print(
            f"{row['rule']:<42} p={row['true_rate']} bound={row['bound']}: "
            f"kaudit {row['kaudit_exact']:.4f} (sim {row['kaudit_simulated']:.4f}), "
            f"fixed-n CP {row['baseline_exact']:.4f}, ratio {row['ratio']}"
        )


if __name__ == "__main__":
    main()
