"""The monitor: deployment events in, per-cell status against the audit out, after every event.

Each (model, task, group) keeps its counts, the running maxima of its difference test's
evidence (`MirageTest`) and the running intersection of its anytime-valid bounds, so the
stream can be checked after every event without the error rates growing with the number
of looks. The alarm (`mirage`) is the difference test at ``alpha / family`` per cell;
`consistent` and the decision rest on bounds at ``alpha / (2·family)`` (`FamilyLevel`);
each error rate holds for the deployment as a whole, not per cell.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from kaudit._require import require_at_least, require_probability
from kaudit.monitor._audit import AuditCell, audit_index, match_audit
from kaudit.monitor._difference import MIRAGE_TEST, MirageTest
from kaudit.monitor._events import Event
from kaudit.monitor._status import (
    TOLERANCE,
    Decision,
    FamilyLevel,
    Status,
    audit_upper,
    cell_decision,
    cell_status,
    material_limit,
)
from kaudit.stats import CellKey as StatsKey
from kaudit.stats import identified_range
from kaudit.stats._sequence import CS_METHOD, IdentifiedRange

CellKey = tuple[str, str, str | None, str | None]
"""(model, task, group, version) of a deployment cell; None when events carry none."""


@dataclass(frozen=True)
class CellReport:
    """One deployment cell after the latest event, compared with the audit.

    Attributes:
        model: Model name.
        task: Task id.
        group: Deployment segment, or None.
        status: mirage, consistent, inconclusive, unidentified or unsupported (see
            `cell_status`).
        decision: deploy, hold or cannot_determine against the threshold.
        audit: The audit's certified cell, None when the ledger has none.
        audit_upper: The audit's one-sided upper bound at the family's per-cell level
            (``A``, the cap of ``R``); None when the ledger has no cell.
        limit: ``R``, the rate a `consistent` cell is shown to stay under
            (`material_limit`); None when the ledger has no cell.
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
    audit_upper: float | None = None
    limit: float | None = None

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
                "upper": self.audit_upper,
                "limit": self.limit,
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
    """Every cell after the events so far; `alarm` once any cell was ever a mirage.

    Attributes:
        alarm: Whether any cell was a mirage at any look.
        alarm_event: The event count at the first alarm.
        events: Events observed.
        alpha: The deployment-level error rate asked for.
        threshold: The decision's harm-rate threshold.
        cells: Every cell's latest report.
        method: The deployment bounds' method.
        family: Cells ``alpha`` is shared by (Bonferroni).
        cell_alpha: Each side of each cell's bounds, ``alpha / (2·family)``.
        compared: Deployment cells compared with an audit cell so far.
        error_bound: The union bound on the chance of any false mirage (and, apart, of
            any false consistent) over the compared cells: ``alpha`` unless more cells
            than the family were compared.
        mirage_alpha: Each cell's difference test's level, ``alpha / family``.
        mirage_test: The difference test, as outputs name it.
        audit_records: Rows in the audit ledger's chain, when the audit was read from
            one (`compare_events`); 0 otherwise.
        anchored_records: With an anchor, how many of those rows it pins.
    """

    alarm: bool
    alarm_event: int | None
    events: int
    alpha: float
    threshold: float
    cells: tuple[CellReport, ...]
    method: str = CS_METHOD
    family: int = 1
    cell_alpha: float = 0.025
    compared: int = 0
    error_bound: float = 0.05
    audit_records: int = 0
    anchored_records: int | None = None
    mirage_alpha: float = 0.05
    mirage_test: str = MIRAGE_TEST

    def to_json(self) -> dict[str, Any]:
        """The `kaudit monitor --json` document."""
        return {
            "alarm": self.alarm,
            "alarm_event": self.alarm_event,
            "events": self.events,
            "alpha": self.alpha,
            "threshold": self.threshold,
            "method": self.method,
            "family": {
                "size": self.family,
                "compared": self.compared,
                "cell_alpha": self.cell_alpha,
                "mirage_alpha": self.mirage_alpha,
                "error_bound": self.error_bound,
                "correction": "Bonferroni over cells: each cell's mirage test at "
                "alpha/family, its audit and deployment bounds at alpha/(2 family)",
            },
            "mirage_test": self.mirage_test,
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
    evidence: npt.NDArray[np.float64] | None = field(default=None, repr=False)
    mirage: bool = False
    last: CellReport | None = field(default=None, repr=False)


class Monitor:
    """Feeds events one at a time; `observe` returns the touched cell's new report.

    Args:
        audit: Certified audit cells by `CellKey` (from `read_audit`) or by (model, task);
            an event is compared with the version it names, else the newest
            (`match_audit`).
        threshold: Harm rate a cell must be shown to stay under to be deployed.
        alpha: The deployment-level error rate: the chance of any false mirage over the
            family of cells, at every look, and apart from it that of any false consistent.
        family: How many deployment cells share ``alpha``; default the number of audit
            cells. Give more when events carry groups (each group is its own cell):
            comparing more cells than the family weakens the guarantee to
            ``alpha·compared/family``, which the report states.
        tolerance: A deployment rate above ``tolerance ×`` the audited rate is materially
            worse; `consistent` needs the data to exclude it (`material_limit`).
        chain: (rows, anchored rows) of the audit ledger the cells were read from, for
            the report to say what it compared against.
    """

    def __init__(
        self,
        audit: Mapping[StatsKey, AuditCell] | Mapping[tuple[str, str], AuditCell],
        threshold: float,
        alpha: float = 0.05,
        family: int | None = None,
        tolerance: float = TOLERANCE,
        chain: tuple[int, int | None] = (0, None),
    ) -> None:
        require_probability("threshold", threshold)
        require_probability("alpha", alpha)
        if family is not None:
            require_at_least("family", family, 1)
        self._audit = audit_index(audit)
        cells = list(audit.values())
        self._threshold = threshold
        self._alpha = alpha
        self._level = FamilyLevel(alpha, family or max(1, len(cells)))
        # keyed by the cell itself: an event is matched to one audited version of its task
        self._upper = {cell: audit_upper(cell, self._level.cell_alpha) for cell in cells}
        self._test = {
            cell: MirageTest.for_audit(
                cell.damage, cell.n, self._level.mirage_alpha, cell.interval == CS_METHOD
            )
            for cell in cells
            if cell.n > 0
        }
        self._limit = {cell: material_limit(cell, self._upper[cell], tolerance) for cell in cells}
        self._cells: dict[CellKey, _Counts] = {}
        self._events = 0
        self._alarm_event: int | None = None
        self._chain = chain

    def observe(self, event: Event) -> CellReport:
        """Count one event and re-judge its cell."""
        self._events += 1
        key = (event.model, event.task, event.group, event.version)
        counts = self._cells.setdefault(key, _Counts())
        counts.n += 1
        counts.harm += event.harm is True
        counts.unobserved += event.harm is None
        counts.dollars += event.dollars or 0.0
        fresh = identified_range(counts.harm, counts.unobserved, counts.n, self._level.cell_alpha)
        # Intersecting with earlier looks keeps the bounds valid (they all hold on the
        # same event) and makes an alarm, once raised, stay raised.
        counts.ci_low = max(counts.ci_low, fresh.ci_low)
        counts.ci_high = min(counts.ci_high, fresh.ci_high)
        deployment = replace(fresh, ci_low=counts.ci_low, ci_high=counts.ci_high)
        audit = match_audit(self._audit, event.model, event.task, event.version)
        upper = None if audit is None else self._upper[audit]
        limit = None if audit is None else self._limit[audit]
        if audit is not None and event.harm is True:
            self._weigh(counts, self._test.get(audit))
        report = CellReport(
            model=event.model,
            task=event.task,
            group=event.group,
            status=cell_status(deployment, upper, limit, mirage=counts.mirage),
            decision=cell_decision(deployment, self._threshold),
            audit=audit,
            deployment=deployment,
            dollars=counts.dollars,
            version=event.version,
            audit_upper=upper,
            limit=limit,
        )
        counts.last = report
        if report.status == "mirage" and self._alarm_event is None:
            self._alarm_event = self._events
        return report

    @staticmethod
    def _weigh(counts: _Counts, test: MirageTest | None) -> None:
        """Fold a harm into the cell's running evidence and re-judge the difference test.

        Only a harm can raise the evidence (clean or unobserved events lower every
        likelihood ratio of a higher rate), so the running maxima move only here; once
        every null is cleared the cell stays a mirage.
        """
        if test is None or not test.possible or counts.mirage:
            return
        fresh = test.log_evidence(counts.harm, counts.n)
        counts.evidence = fresh if counts.evidence is None else np.maximum(counts.evidence, fresh)
        counts.mirage = test.rejects(counts.evidence)

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
        compared = sum(c.audit_upper is not None for c in cells)
        return MonitorReport(
            alarm=self.alarm,
            alarm_event=self._alarm_event,
            events=self._events,
            alpha=self._alpha,
            threshold=self._threshold,
            cells=tuple(cells),
            family=self._level.family,
            cell_alpha=self._level.cell_alpha,
            compared=compared,
            error_bound=self._level.error_bound(compared),
            audit_records=self._chain[0],
            anchored_records=self._chain[1],
            mirage_alpha=self._level.mirage_alpha,
        )
