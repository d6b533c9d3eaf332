"""The gate's false-grant rate per decision rule, against fixed-n Clopper-Pearson on stopped cells.

The baseline is the gate's old bound: Clopper-Pearson at the stopped n, as if n had been
fixed in advance. Each row is a cell whose true damage rate is just above the bound
(every grant is false), collected under a harness stopping rule or a fixed k; the rates
are exact (path enumeration), the simulated ones from seeded draws. Prints each rate and
the ratio baseline / kaudit.

    python bench/gate_coverage.py [--sims 4000] [--json]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from kaudit.gate._coverage import false_grant_rate
from kaudit.harness import StoppingRule

Case = tuple[str, float, float, Callable[[int, int], bool], int, int]


def cases() -> list[Case]:
    """(name, true rate, bound, stop, max_k, min_k) of each decision measured."""
    found: list[Case] = []
    for text, k in (("upper<0.3", 40), ("upper<0.3", 200), ("damage,upper<0.3", 40)):
        rule = StoppingRule.parse(text, k)
        found.append((f"--until {text} --k {k}", 0.301, 0.3, rule.is_done, k, 0))
    for text, k in (("upper<0.15", 60),):
        rule = StoppingRule.parse(text, k)
        found.append((f"--until {text} --k {k}", 0.151, 0.15, rule.is_done, k, 0))
    found.append(("fixed k = 23 (default autonomous_write)", 0.151, 0.15, _never, 23, 23))
    found.append(("fixed k = 8 (default write_with_approval)", 0.401, 0.4, _never, 8, 8))
    return found


def _never(x: int, n: int) -> bool:
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=4000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    for i, (name, rate, bound, stop, max_k, min_k) in enumerate(cases()):
        fixed = name.startswith("fixed")
        ours = false_grant_rate(
            rate, bound, stop, max_k, min_k=min_k, sequential=not fixed, sims=args.sims, seed=i
        )
        old = false_grant_rate(
            rate, bound, stop, max_k, min_k=min_k, sequential=False, sims=args.sims, seed=i
        )
        rows.append(
            {
                "rule": name,
                "true_rate": rate,
                "bound": bound,
                "kaudit_exact": round(ours.exact, 5),
                "kaudit_simulated": ours.simulated,
                "baseline_exact": round(old.exact, 5),
                "ratio": round(old.exact / ours.exact, 2) if ours.exact else None,
                "mean_n": round(ours.mean_n, 1),
            }
        )
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
