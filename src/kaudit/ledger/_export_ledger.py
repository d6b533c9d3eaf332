"""A ledger's verified records written out, as rows for a dataframe or as stored records.

The chain is verified (and an anchor checked) before the first record is written, so an
export is never taken from a ledger that was edited; the result carries the ledger's
head, which ties the export to the file it came from.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from kaudit._atomic import write_atomic
from kaudit.errors import InputError
from kaudit.ledger._anchor import Anchor
from kaudit.ledger._export import write_export
from kaudit.ledger._import import export_records
from kaudit.ledger._outputs import refuse_sqlite_output
from kaudit.ledger._reader_anchor import reader_anchor
from kaudit.ledger._record import RunRecord
from kaudit.ledger._snapshot import Snapshot, open_ledger

__all__ = ["Exported", "export_ledger"]

Shape = Literal["rows", "records"]


@dataclass(frozen=True)
class Exported:
    """What one `export_ledger` call wrote.

    Attributes:
        runs: Records written: each run once, or every attempt with `all_attempts`.
        text: The export itself when it went neither to a file nor to a stream.
        verified: Whether the hash chain was checked before any record was written.
        records: Rows in the chain when it was verified (0 unverified).
        anchored_records: With an anchor, how many records it pins; only those are written
            (with the anchored prefix; else no record may follow them).
        head: The ledger's head as it was read, to tie the export to its ledger.
    """

    runs: int
    text: str | None
    verified: bool
    records: int
    anchored_records: int | None
    head: Anchor


def export_ledger(
    ledger: str | Path | Snapshot,
    to: str = "jsonl",
    out: str | Path | None = None,
    *,
    stream: IO[str] | None = None,
    shape: Shape = "rows",
    campaign: str | None = None,
    all_attempts: bool = False,
    verify: bool = True,
    head: str | Anchor | None = None,
    pubkey: str | Path | None = None,
    anchored_prefix: bool = False,
) -> Exported:
    """Write each counted run of `ledger` to `out`, else to `stream`, else into the result.

    `ledger` is a file (opened with `kaudit.open`: verified unless `verify` is False,
    with `head` and `pubkey` as every reader takes them) or an open `Snapshot`.
    `shape="rows"` is one flat row per run, every field (`to`: parquet, csv or jsonl;
    parquet needs `out`); `shape="records"` is the stored records whole (`to="jsonl"`)
    or their scalar columns (`to="csv"`). A broken chain raises `LedgerError` naming the
    first bad record; with an anchor a ledger holding records after it is refused, and
    with `anchored_prefix` too only the anchored records are written. `out` may not be
    the ledger or any other SQLite file. A file is written whole or not at all.
    """
    if shape == "records" and to not in ("jsonl", "csv"):
        raise InputError("to", f"names an unknown format {to!r} for records; use jsonl or csv")
    if isinstance(ledger, Snapshot):
        return _export(ledger, to, out, stream, shape, campaign, all_attempts)
    reader_anchor(head, pubkey, not verify)
    with open_ledger(
        ledger, head=head, pubkey=pubkey, verify=verify, anchored_prefix=anchored_prefix
    ) as snapshot:
        return _export(snapshot, to, out, stream, shape, campaign, all_attempts)


def _export(
    snapshot: Snapshot,
    to: str,
    out: str | Path | None,
    stream: IO[str] | None,
    shape: Shape,
    campaign: str | None,
    all_attempts: bool,
) -> Exported:
    if out is not None:
        refuse_sqlite_output(Path(out), snapshot.path)
    snapshot.require_campaign(campaign)
    counter = _Counter()
    records = counter.count(snapshot.full_records(campaign, all_attempts=all_attempts))
    if shape == "rows":
        text = write_export(records, to, None if out is None else Path(out), stream)
    else:
        text = _write_records(records, to, out, stream)
    return Exported(
        runs=counter.seen,
        text=text,
        verified=snapshot.verified,
        records=snapshot.records if snapshot.verified else 0,
        anchored_records=snapshot.anchored_records,
        head=snapshot.head_anchor(),
    )


def _write_records(
    records: Iterable[RunRecord], to: str, out: str | Path | None, stream: IO[str] | None
) -> str | None:
    text = export_records(records, to)
    if out is not None:
        write_atomic(Path(out), text)
    elif stream is not None:
        stream.write(text)
    else:
        return text
    return None


class _Counter:
    """Counts the records an export consumed, as they stream past."""

    def __init__(self) -> None:
        self.seen = 0

    def count(self, records: Iterable[RunRecord]) -> Iterator[RunRecord]:
        for record in records:
            self.seen += 1
            yield record
