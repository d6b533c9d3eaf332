"""False alarms and power of `kaudit monitor`, by simulation, beside two other rules.

Prints, for 24 cells audited at 0.1, the share of deployments with any false alarm (no
cell drifts) and the share of drifted cells caught (every cell at 2x or 3x, so each
deployment contributes 24 drifting cells), for the monitor's difference test, the
non-sequential reference that sees each cell's data once at the end (Fisher's exact
one-sided test at alpha/24) and the bounds rule the monitor had (the baseline). All three
judge the same draws.

    python bench/monitor_power.py [--sims 1000]
"""

from __future__ import annotations

import argparse

from kaudit.monitor._power import DriftSetup, simulate_drift


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sims", type=int, default=1000)
    sims = parser.parse_args().sims
    print("audit_n events drift  monitor  reference  old-bounds  ratio  false_consistent")
    for audit_n, events in ((60, 500), (300, 2000)):
        for drift in (1.0, 2.0, 3.0):
            null = drift == 1.0
            runs = sims if null else max(1, sims // 24)
            found = simulate_drift(
                DriftSetup(audit_n=audit_n, events=events, drift=drift,
                           drifting=0 if null else 24, sims=runs, seed=0)
            )  # fmt: skip
            ours, ref, old = (
                (found.any_false_alarm, found.reference_false_alarm, found.bounds_false_alarm)
                if null
                else (found.power, found.reference_power, found.bounds_power)
            )
            ratio = ours / ref if ref else float("nan")
            print(f"{audit_n:7d} {events:6d} {drift:5.1f}  {ours:7.3f}  {ref:9.3f}  {old:10.3f}  "
                  f"{ratio:5.2f}  {found.false_consistent:16.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
