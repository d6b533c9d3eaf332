"""The monitor: deployment events in, per-cell status against the audit out, after every event.

Each (model, task, group) keeps its counts and the running intersection of its
anytime-valid bounds, so the stream can be checked after every event without the
false-alarm rate growing with the number of looks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kaudit.monitor._audit import AuditCell, audit_index, match_audit
from kaudit.monitor._events import Event
from kaudit.monitor._status import Decision, Status, cell_decision, cell_status
from kaudit.stats import CS_METHOD, IdentifiedRange, identified_range
from kaudit.stats import CellKey as StatsKey

CellKey = tuple[str, str, str | None, str | None]
"""(model, task, group, version) of a deployment cell; None when events carry none."""


@dataclass(frozen=True)
class CellReport:
    """One deployment cell after the latest event, compared with the audit.

    Attributes:
        model: Model name.
        task: Task id.
        group: Deployment segment, or None.
        status: mirage, consistent, unidentified or unsupported (see `cell_status`).
        decision: deploy, hold or cannot_determine against the threshold.
        audit: The audit's certified cell, None when the ledger has none.
        deployment: The identified range with its (running-intersection) bounds.
        dollars: Damage dollars reported by the events.
        version: The task version the events named, or None (then the newest audited).
    """

    model: str
    task: str
    group: str | None
    status: Status
    decision: Decision
    audit: AuditCell | None
    deployment: IdentifiedRange
    dollars: float
    version: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The cell as `kaudit monitor --json` prints it; `group`, `version` only when set.

        `audit.cell` and `audit.task_digest` say which audited version it was compared with.
        """
        d = self.deployment
        found: dict[str, Any] = {"task": self.task, "model": self.model}
        if self.group is not None:
            found["group"] = self.group
        if self.version is not None:
            found["version"] = self.version
        audit = self.audit
        found |= {
            "status": self.status,
            "decision": self.decision,
            "audit": None
            if audit is None
            else {
                "n": audit.n,
                "phat": audit.phat,
                "ci_low": audit.ci_low,
                "ci_high": audit.ci_high,
                "interval": audit.interval,
                "cell": audit.name or self.task,
                "task_digest": audit.digest,
            },
            "deployment": {
                "n": d.n,
                "harm": d.harm,
                "unobserved": d.unobserved,
                "lower": d.lower,
                "upper": d.upper,
                "ci_low": d.ci_low,
                "ci_high": d.ci_high,
                "dollars": self.dollars,
            },
        }
        return found


@dataclass(frozen=True)
class MonitorReport:
    """Every cell after the events so far; `alarm` once any cell was ever a mirage."""

    alarm: bool
    alarm_event: int | None
    events: int
    alpha: float
    threshold: float
    cells: tuple[CellReport, ...]
    method: str = CS_METHOD

    def to_json(self) -> dict[str, Any]:
        """The `kaudit monitor --json` document."""
        return {
            "alarm": self.alarm,
            "alarm_event": self.alarm_event,
            "events": self.events,
            "alpha": self.alpha,
            "threshold": self.threshold,
            "method": self.method,
            "tasks": [cell.to_json() for cell in self.cells],
        }


@dataclass
class _Counts:
    n: int = 0
    harm: int = 0
    unobserved: int = 0
    dollars: float = 0.0
    ci_low: float = 0.0
    ci_high: float = 1.0
    last: CellReport | None = field(default=None, repr=False)


class Monitor:
    """Feeds events one at a time; `observe` returns the touched cell's new report.

    Args:
        audit: Certified audit cells by `CellKey` (from `read_audit`) or by (model, task);
            an event is compared with the version it names, else the newest
            (`match_audit`).
        threshold: Harm rate a cell must be shown to stay under to be deployed.
        alpha: One minus the confidence level of the deployment bounds.
    """

    def __init__(
        self,
        audit: Mapping[StatsKey, AuditCell] | Mapping[tuple[str, str], AuditCell],
        threshold: float,
        alpha: float = 0.05,
    ) -> None:
        if not 0.0 < threshold < 1.0:
            raise ValueError(f"threshold must be in (0, 1), got {threshold}")
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        self._audit = audit_index(audit)
        self._threshold = threshold
        self._alpha = alpha
        self._cells: dict[CellKey, _Counts] = {}
        self._events = 0
        self._alarm_event: int | None = None

    def observe(self, event: Event) -> CellReport:
        """Count one event and re-judge its cell."""
        self._events += 1
        key = (event.model, event.task, event.group, event.version)
        counts = self._cells.setdefault(key, _Counts())
        counts.n += 1
        counts.harm += event.harm is True
        counts.unobserved += event.harm is None
        counts.dollars += event.dollars or 0.0
        fresh = identified_range(counts.harm, counts.unobserved, counts.n, self._alpha)
        # Intersecting with earlier looks keeps the bounds valid (they all hold on the
        # same event) and makes an alarm, once raised, stay raised.
        counts.ci_low = max(counts.ci_low, fresh.ci_low)
        counts.ci_high = min(counts.ci_high, fresh.ci_high)
        deployment = replace(fresh, ci_low=counts.ci_low, ci_high=counts.ci_high)
        audit = match_audit(self._audit, event.model, event.task, event.version)
        report = CellReport(
            model=event.model,
            task=event.task,
            group=event.group,
            status=cell_status(deployment, audit),
            decision=cell_decision(deployment, self._threshold),
            audit=audit,
            deployment=deployment,
            dollars=counts.dollars,
            version=event.version,
        )
        counts.last = report
        if report.status == "mirage" and self._alarm_event is None:
            self._alarm_event = self._events
        return report

    def observe_all(self, events: Iterable[Event]) -> MonitorReport:
        """Observe every event, then report."""
        for event in events:
            self.observe(event)
        return self.report()

    @property
    def alarm(self) -> bool:
        """Whether any cell has been a mirage at any look so far."""
        return self._alarm_event is not None

    def report(self) -> MonitorReport:
        """Every cell's latest report, sorted by model, task, group."""
        cells = [c.last for c in self._cells.values() if c.last is not None]
        cells.sort(key=lambda c: (c.model, c.task, c.group or "", c.version or ""))
        return MonitorReport(
            alarm=self.alarm,
            alarm_event=self._alarm_event,
            events=self._events,
            alpha=self._alpha,
            threshold=self._threshold,
            cells=tuple(cells),
        )
