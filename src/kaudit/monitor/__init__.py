"""Deployment-time harm monitoring against the audit, honest about what it cannot see.

Events from production (`Event`, read from JSONL with `read_events`, or produced by
`watch_transaction` around a real transaction) feed a `Monitor` that keeps, per
(model, task, group), the partially identified harm rate with anytime-valid bounds and
compares it with the audit ledger's certified interval (`read_audit`).
"""

from kaudit.monitor._capture import release_watch, watch_transaction
from kaudit.monitor._events import Event
from kaudit.monitor._monitor import Monitor, MonitorReport
from kaudit.monitor._status import TOLERANCE, Decision, Status

__all__ = [
    "TOLERANCE",
    "Decision",
    "Event",
    "Monitor",
    "MonitorReport",
    "Status",
    "release_watch",
    "watch_transaction",
]
