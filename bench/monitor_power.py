"""False alarms and power of `kaudit monitor`, by simulation, against the per-cell rule.

Prints, for 24 cells audited at 0.1, the share of deployments with any false alarm
(no cell drifts) and the share of drifted cells caught (one cell at 2x or 3x), for the
family-wise rule and for the per-cell rule it replaced (the baseline).

    python bench/monitor_power.py [--sims 1000]
"""

from __future__ import annotations

import argparse

from kaudit.monitor._power import DriftSetup, simulate_drift


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sims", type=int, default=1000)
    sims = parser.parse_args().sims
    print("audit_n events drift  rule       any_false_alarm  power  false_consistent")
    for audit_n, events in ((60, 500), (300, 2000)):
        for drift in (1.0, 2.0, 3.0):
            for per_cell in (False, True):
                found = simulate_drift(
                    DriftSetup(audit_n=audit_n, events=events, drift=drift,
                               drifting=0 if drift == 1.0 else 1, per_cell=per_cell,
                               sims=sims, seed=0)
                )  # fmt: skip
                rule = "per-cell" if per_cell else "family"
                print(f"{audit_n:7d} {events:6d} {drift:5.1f}  {rule:9s}  "
                      f"{found.any_false_alarm:15.3f}  {found.power:5.3f}  "
                      f"{found.false_consistent:16.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
