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
from kaudit.errors import KauditError
from kaudit.ledger._anchor import Anchor
from kaudit.ledger._export import write_export
from kaudit.ledger._import import export_records
from kaudit.ledger._reader_anchor import reader_anchor
from kaudit.ledger._record import RunRecord
from kaudit.ledger._store import Ledger
from kaudit.ledger._verify import walk_chain

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
        anchored_records: With an anchor, how many records it pins; only those are written.
        head: The ledger's head as it was read, to tie the export to its ledger.
    """

    runs: int
    text: str | None
    verified: bool
    records: int
    anchored_records: int | None
    head: Anchor


def export_ledger(
    ledger: str | Path,
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
) -> Exported:
    """Write each counted run of `ledger` to `out`, else to `stream`, else into the result.

    `shape="rows"` is one flat row per run, every field (`to`: parquet, csv or jsonl;
    parquet needs `out`); `shape="records"` is the stored records whole (`to="jsonl"`)
    or their scalar columns (`to="csv"`). The chain is verified first (`LedgerError`
    naming the first bad record) unless `verify` is False; with `head` (and `pubkey`)
    only the anchored records are written. A file is written whole or not at all.
    """
    anchor = reader_anchor(head, pubkey, not verify)
    if shape == "records" and to not in ("jsonl", "csv"):
        raise KauditError(f"--format: unknown format {to!r}; use jsonl or csv")
    counter = _Counter()
    with Ledger(ledger, readonly=True) as store:
        store.require_campaign(campaign)
        checked = walk_chain(store, anchor) if verify else None
        upto = None if checked is None else checked.anchored_records
        records = counter.count(store.records(campaign, all_attempts=all_attempts, upto=upto))
        if shape == "rows":
            text = write_export(records, to, None if out is None else Path(out), stream)
        else:
            text = _write_records(records, to, out, stream)
        current = store.head()
    return Exported(
        runs=counter.seen,
        text=text,
        verified=verify,
        records=0 if checked is None else checked.records,
        anchored_records=None if checked is None else checked.anchored_records,
        head=current,
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
