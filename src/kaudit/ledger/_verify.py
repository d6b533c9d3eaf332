"""Checking a ledger: every hash, every link, every indexed column, and an outside anchor.

The library function `verify_ledger` is what `kaudit ledger verify`, `report`, `stats`
and the gate call before they trust a number from the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kaudit.errors import LedgerError
from kaudit.ledger._anchor import Anchor
from kaudit.ledger._store import GENESIS, Ledger, record_hash

_COLUMNS = (
    "campaign",
    "model",
    "task",
    "run_index",
    "attempt",
    "status",
    "outcome",
    "counts_as_damage",
    "counts_as_damage_upper",
    "success",
)
"""The indexed columns in `Ledger.rows` order; each must equal the hashed record's field."""


@dataclass(frozen=True)
class VerifyReport:
    """A chain that verified: its size and head, and what else was checked."""

    records: int
    head: str
    anchored: bool = False
    signed: bool = False

    def to_json(self) -> dict[str, Any]:
        """The `kaudit ledger verify --json` document."""
        return {
            "records": self.records,
            "head": self.head,
            "anchored": self.anchored,
            "signed": self.signed,
        }


def _check_columns(path: Path, seq: int, columns: tuple[Any, ...], data: dict[str, Any]) -> None:
    """The columns resume and counting read must say what the hashed record says.

    Without this, `UPDATE runs SET run_index = ...` leaves every hash intact while
    making the next resume re-run a finished key.
    """
    for name, stored in zip(_COLUMNS, columns, strict=True):
        hashed = data.get(name, 0 if name == "attempt" else None)
        if isinstance(hashed, bool):
            hashed = int(hashed)
        if stored != hashed:
            raise LedgerError(
                f"{path}: record {seq}: column {name} is {stored!r} but the hashed record "
                f"says {hashed!r}"
            )


def _parsed(path: Path, seq: int, body: str) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        raise LedgerError(f"{path}: record {seq} is not valid JSON") from None
    if not isinstance(data, dict):
        raise LedgerError(f"{path}: record {seq} is not a JSON object")
    return data


@dataclass(frozen=True)
class ChainRow:
    """One stored row as the chain walk saw it: its position, key columns, hash and JSON.

    `key` is the (campaign, model, task, run_index) of the indexed columns and `attempt`
    the attempt column (0 in format 1); when the walk verifies, both equal the record's.
    """

    seq: int
    key: tuple[str, str, str, int]
    attempt: int
    record_hash: str
    data: dict[str, Any]


def chain_rows(ledger: Ledger, *, verify: bool = True) -> Iterator[ChainRow]:
    """Every row in chain order, each checked before it is yielded (unless `verify` is False).

    The check is the whole of `kaudit ledger verify` for one row: the hash over the
    previous hash and the stored JSON, the link to the previous row, and every indexed
    column against the hashed JSON; the first bad row raises LedgerError naming it. The
    JSON is parsed once here, so a reader that also needs the record's fields pays for
    one parse, not two.
    """
    prev = GENESIS
    for seq, *columns, body, stored_prev, stored in ledger.rows():
        if verify and (stored_prev != prev or record_hash(prev, body) != stored):
            raise LedgerError(f"{ledger.path}: hash chain broken at record {seq}")
        data = _parsed(ledger.path, seq, body)
        if verify:
            _check_columns(ledger.path, seq, tuple(columns), data)
        prev = stored
        campaign, model, task, run_index, attempt = columns[:5]
        yield ChainRow(seq, (campaign, model, task, run_index), attempt, stored, data)


def walk_chain(ledger: Ledger, anchor: Anchor | None = None) -> VerifyReport:
    """Check hashes, links and columns in chain order, and the anchor if one is given.

    Raises LedgerError naming the first bad record, or the anchor's missing record.
    """
    head = GENESIS
    count = 0
    anchor_seen = anchor is not None and anchor.records == 0 and anchor.head == GENESIS
    for row in chain_rows(ledger):
        head = row.record_hash
        count += 1
        if anchor is not None and (anchor.records in (count, -1)) and head == anchor.head:
            anchor_seen = True
        elif anchor is not None and anchor.records == count:
            raise LedgerError(
                f"{ledger.path}: record {count} has head {head[:16]}… but the anchor says "
                f"{anchor.head[:16]}…: the chain was rewritten"
            )
    if anchor is not None and not anchor_seen:
        if anchor.records > count:
            raise LedgerError(
                f"{ledger.path}: truncated: the anchor's record {anchor.records} is missing "
                f"(the ledger has {count} records)"
            )
        raise LedgerError(
            f"{ledger.path}: the anchored head {anchor.head[:16]}… is not in the chain: "
            "its record was removed or rewritten"
        )
    return VerifyReport(records=count, head=head, anchored=anchor is not None)


def verify_ledger(
    path: Path | str, anchor: Anchor | None = None, public_key: Path | None = None
) -> VerifyReport:
    """Verify the ledger file at `path` read-only; raises LedgerError on the first problem.

    With `anchor` the anchored record must still be in the chain at its position; with
    `public_key` the anchor must also carry a valid ed25519 signature by that key, so an
    anchor stored next to the ledger cannot be forged along with a recomputed chain.
    """
    if public_key is not None:
        if anchor is None:
            raise LedgerError("--pubkey needs --head: a signature is checked on an anchor")
        from kaudit.ledger._sign import check_signature

        check_signature(anchor, public_key)
    with Ledger(path, readonly=True) as ledger:
        report = walk_chain(ledger, anchor)
    return VerifyReport(
        records=report.records,
        head=report.head,
        anchored=anchor is not None,
        signed=public_key is not None,
    )


def ledger_head(path: Path | str) -> Anchor:
    """The current (record count, head hash) of a ledger, read-only, without verifying."""
    with Ledger(path, readonly=True) as ledger:
        return ledger.head()
