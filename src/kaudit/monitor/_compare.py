"""The monitor as one call: an audit ledger and deployment events in, a report out."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from kaudit.errors import KauditError
from kaudit.ledger import Anchor, Snapshot
from kaudit.ledger._reader_anchor import reader_anchor
from kaudit.monitor._audit import read_checked_audit
from kaudit.monitor._events import Event, parse_event
from kaudit.monitor._follow import follow_lines
from kaudit.monitor._monitor import CellReport, Monitor, MonitorReport

Events = str | Path | Iterable[str | Event]
"""A JSONL file, lines of JSONL, or `Event` objects."""


def event_lines(path: Path, follow: bool = False) -> Iterable[str]:
    """The lines of an events file; with `follow`, tailed as a writer appends to it."""
    if not path.is_file():
        raise KauditError(f"{path}: no such events file")
    if follow:
        return follow_lines(path)
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise KauditError(f"{path}: not UTF-8 text (byte at offset {exc.start})") from None


def _events(items: Iterable[str | Event], source: str) -> Iterator[Event]:
    """Events as given, or parsed from JSONL lines numbered from 1; blank lines skipped."""
    for number, item in enumerate(items, start=1):
        if isinstance(item, Event):
            yield item
        elif item.strip():
            yield parse_event(item, number, source)


def compare_events(
    audit: str | Path | Snapshot,
    events: Events,
    *,
    threshold: float = 0.1,
    alpha: float = 0.05,
    campaign: str | None = None,
    family: int | None = None,
    head: str | Anchor | None = None,
    pubkey: str | Path | None = None,
    follow: bool = False,
    source: str | None = None,
    on_cell: Callable[[CellReport], None] | None = None,
) -> MonitorReport:
    """Compare deployment events with the audit ledger's certified cells.

    `audit` is the ledger file or a `Snapshot` of it (`kaudit.open`). The audit chain
    is verified first (`LedgerError` names the first bad record); with
    `head` (signed by the `pubkey` PEM when given) records after the anchor are not
    counted. `events` is a JSONL file (`follow`: tailed as it grows), JSONL lines or
    `Event` objects; `source` names lines in errors. `on_cell` sees each event's cell
    report; with `follow` the stream ends at the first alarm. Ctrl-C ends the stream
    too: the report covers the events seen so far.
    """
    anchor = reader_anchor(head, pubkey)
    ledger = audit if isinstance(audit, Snapshot) else Path(audit)
    audited, checked = read_checked_audit(ledger, alpha, campaign, anchor)
    monitor = Monitor(
        audited, threshold, alpha, family, chain=(checked.records, checked.anchored_records)
    )
    items: Iterable[str | Event]
    if isinstance(events, str | Path):
        source, items = str(events), event_lines(Path(events), follow)
    else:
        items = events
    try:
        for event in _events(items, source or "<events>"):
            cell = monitor.observe(event)
            if on_cell is not None:
                on_cell(cell)
            if follow and monitor.alarm:
                break
    except KeyboardInterrupt:
        pass
    return monitor.report()
