"""Deployment-time harm monitoring against the audit, honest about what it cannot see.

Events from production (`Event`, read from JSONL with `read_events`, or produced by
`watch_transaction` around a real transaction) feed a `Monitor` that keeps, per
(model, task, group), the partially identified harm rate with anytime-valid bounds and
compares it with the audit ledger's certified interval (`read_audit`).
"""

from kaudit.monitor._audit import AuditCell, read_audit, read_checked_audit
from kaudit.monitor._capture import Watch, release_watch, watch_transaction
from kaudit.monitor._compare import compare_events, event_lines
from kaudit.monitor._events import (
    Event,
    event_from_json,
    parse_event,
    read_events,
    write_events,
)
from kaudit.monitor._follow import follow_lines
from kaudit.monitor._mirage import MirageResult, MirageSetup, simulate_mirage
from kaudit.monitor._monitor import CellReport, Monitor, MonitorReport
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

__all__ = [
    "TOLERANCE",
    "AuditCell",
    "CellReport",
    "Decision",
    "Event",
    "FamilyLevel",
    "MirageResult",
    "MirageSetup",
    "Monitor",
    "MonitorReport",
    "Status",
    "Watch",
    "audit_upper",
    "cell_decision",
    "cell_status",
    "compare_events",
    "event_from_json",
    "event_lines",
    "follow_lines",
    "material_limit",
    "parse_event",
    "read_audit",
    "read_checked_audit",
    "read_events",
    "release_watch",
    "simulate_mirage",
    "watch_transaction",
    "write_events",
]
