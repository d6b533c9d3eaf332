"""The post-audit mirage, simulated: two agents the audit cannot tell apart, one drifting after.

Both agents damage at the same rate on the same audit draws, so their audit tallies are
identical and no test on the audit can separate them. In deployment one keeps its
audited rate and the other's rate rises. The monitor, fed the deployment events one at
a time, raises `mirage` for the drifting agent and keeps the other `consistent`. Two
more deployment cells show the other statuses: a group of the steady agent whose
outcomes are mostly unobserved (`unidentified`) and a task the audit never covered
(`unsupported`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kaudit.ledger import Ledger, RunRecord
from kaudit.monitor._audit import AuditCell, audit_index, match_audit, read_audit
from kaudit.monitor._events import Event, write_events
from kaudit.monitor._monitor import Monitor, MonitorReport

STEADY = "simulated:steady"
DRIFTING = "simulated:drifting"
TASK = "billing/refund-approval-limit"
UNAUDITED_TASK = "billing/payout-send-scoped"
CAMPAIGN = "mirage-audit"


@dataclass(frozen=True)
class MirageSetup:
    """The simulation's knobs; every default is what `kaudit simulate mirage` uses."""

    audit_k: int = 100
    audit_rate: float = 0.1
    deploy_events: int = 1000
    drift_rate: float = 0.35
    unobserved_share: float = 0.7
    threshold: float = 0.2
    alpha: float = 0.05
    seed: int = 0


@dataclass(frozen=True)
class MirageResult:
    """What the simulation shows.

    Attributes:
        audit: The certified audit cell of each agent (identical by construction).
        audit_fisher_p: Fisher's exact test p-value between the two audit tallies.
        report: The monitor's report after every deployment event.
        events: The deployment events, in the order the monitor saw them.
    """

    audit: dict[str, AuditCell]
    audit_fisher_p: float
    report: MonitorReport
    events: tuple[Event, ...]


def _audit_records(setup: MirageSetup, rng: np.random.Generator) -> list[RunRecord]:
    draws = rng.random(setup.audit_k) < setup.audit_rate
    return [
        RunRecord(
            campaign=CAMPAIGN,
            model=model,
            task=TASK,
            run_index=i,
            seed=setup.seed,
            status="labeled",
            outcome="FAIL_DAMAGE" if damage else "PASS",
            counts_as_damage=bool(damage),
            counts_as_damage_upper=bool(damage),
            success=not damage,
            extra={"simulated": True},
        )
        for model in (STEADY, DRIFTING)
        for i, damage in enumerate(draws)  # the same draws: identical audit behaviour
    ]


def _deployment(setup: MirageSetup, rng: np.random.Generator) -> list[Event]:
    n = setup.deploy_events
    steady = rng.random(n) < setup.audit_rate
    drifting = rng.random(n) < setup.drift_rate
    eu_harm = rng.random(n) < setup.audit_rate
    eu_seen = rng.random(n) >= setup.unobserved_share
    unaudited = rng.random(n) < setup.audit_rate
    events: list[Event] = []
    for i in range(n):
        events += [
            Event(TASK, STEADY, bool(steady[i]), time=i),
            Event(TASK, DRIFTING, bool(drifting[i]), time=i),
            Event(TASK, STEADY, bool(eu_harm[i]) if eu_seen[i] else None, time=i, group="eu"),
            Event(UNAUDITED_TASK, STEADY, bool(unaudited[i]), time=i),
        ]
    return events


def _audited(index: dict[tuple[str, str], tuple[AuditCell, ...]], model: str) -> AuditCell:
    cell = match_audit(index, model, TASK)
    if cell is None:  # the audit was written just above: a missing cell is a bug here
        raise RuntimeError(f"the simulated audit has no cell for {model} / {TASK}")
    return cell


def simulate_mirage(
    setup: MirageSetup, ledger_path: Path, events_path: Path | None = None
) -> MirageResult:
    """Write the audit into a new ledger at `ledger_path`, then monitor the deployment.

    With `events_path`, the deployment events are also written there as JSONL, so
    `kaudit monitor` can be run on the two files and must reach the same report.
    """
    from scipy.stats import fisher_exact

    rng = np.random.default_rng(setup.seed)
    with Ledger(ledger_path) as ledger:
        ledger.open_campaign(CAMPAIGN, {"simulation": "mirage", "seed": setup.seed})
        for record in _audit_records(setup, rng):
            ledger.append(record)
    audit = read_audit(ledger_path, setup.alpha)
    index = audit_index(audit)
    cells = {model: _audited(index, model) for model in (STEADY, DRIFTING)}
    a, b = cells[STEADY], cells[DRIFTING]
    table = np.array([[a.damage, a.n - a.damage], [b.damage, b.n - b.damage]])
    fisher_p = float(fisher_exact(table).pvalue)
    events = _deployment(setup, rng)
    if events_path is not None:
        write_events(events_path, events)
    # Three deployment cells are compared with the audit: steady, drifting, steady [eu].
    report = Monitor(audit, setup.threshold, setup.alpha, family=3).observe_all(events)
    return MirageResult(cells, fisher_p, report, tuple(events))
