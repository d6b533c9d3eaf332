"""Checking a ledger: every hash, link and indexed column, every record, an outside anchor.

`chain_rows` is the one walk: every reader (`kaudit ledger verify` too) reads its runs
from it through `kaudit.open`, so what one of them refuses the others refuse, with the
same message. It sits above the store and takes it: the store only holds rows, and a
writer checks the chain with `walk_chain(ledger)` before it appends.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kaudit.errors import InputError, LedgerError
from kaudit.ledger._anchor import GENESIS, Anchor, AnchorCheck
from kaudit.ledger._parse import (
    SummaryView,
    record_data,
    run_record,
    summary_view,
    with_inclusive,
)
from kaudit.ledger._record import RunRecord
from kaudit.ledger._store import Ledger, record_hash

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
    """A chain that verified: its size and head, and what else was checked.

    `anchored_records` is how many records, from the first, the anchor pins (None
    without an anchor); records after them are vouched for by nothing outside the file,
    so they are refused, or with the anchored prefix checked and left out.
    """

    records: int
    head: str
    anchored: bool = False
    signed: bool = False
    anchored_records: int | None = None
    grades: int = 0
    """Grades in the grades chain (`kaudit grade`), each checked as the runs are."""
    grades_head: str = GENESIS
    anchored_grades: int | None = None
    """With an anchor, how many grades it pins; grades after them are left out."""

    @property
    def grade_anchor(self) -> tuple[int, int | None]:
        """(grades, anchored grades), as `anchor_json` and the anchor note take them."""
        return self.grades, self.anchored_grades

    def to_json(self) -> dict[str, Any]:
        """The `kaudit ledger verify --json` document (grade fields only with grades)."""
        data: dict[str, Any] = {
            "records": self.records,
            "head": self.head,
            "anchored": self.anchored,
            "signed": self.signed,
        }
        if self.anchored_records is not None:
            data["unanchored"] = unanchored_json(self.records, self.anchored_records)
        if self.grades:
            data |= {"grades": self.grades, "grades_head": self.grades_head}
            if self.anchored_grades is not None:
                data["unanchored_grades"] = unanchored_json(
                    self.grades, self.anchored_grades, "grades"
                )
        return data


def unanchored_json(records: int, anchored_records: int, noun: str = "records") -> dict[str, Any]:
    """Entries after the anchor: how many and their first and last numbers.

    Record numbers are positions in the chain (verify checks that `seq` equals them);
    `noun` names the count (`records`, or `grades` for the grades chain).
    """
    count = records - anchored_records
    first, last = (anchored_records + 1, records) if count else (None, None)
    return {noun: count, "first": first, "last": last}


def _check_columns(path: Path, seq: int, columns: tuple[Any, ...], data: dict[str, Any]) -> None:
    """The columns resume and counting read must say what the hashed record says.

    Without this, `UPDATE runs SET run_index = ...` leaves every hash intact while
    making the next resume re-run a finished key.
    """
    data = with_inclusive(data)
    for name, stored in zip(_COLUMNS, columns, strict=True):
        hashed = data.get(name, 0 if name == "attempt" else None)
        if isinstance(hashed, bool):
            hashed = int(hashed)
        if stored != hashed:
            raise LedgerError(
                f"{path}: record {seq}: column {name} is {stored!r} but the hashed record "
                f"says {hashed!r}"
            )


def _hashed_columns(data: dict[str, Any]) -> tuple[Any, ...]:
    """The record's values of the indexed columns, in `_COLUMNS` order.

    Equal to the stored columns as a tuple exactly when `_check_columns` passes: a
    bool equals its int, and a missing attempt is 0 (format 1 has none).
    """
    get = data.get
    return (
        get("campaign"),
        get("model"),
        get("task"),
        get("run_index"),
        get("attempt", 0),
        get("status"),
        get("outcome"),
        get("counts_as_damage"),
        get("counts_as_damage_upper", get("counts_as_damage")),
        get("success"),
    )


@dataclass(frozen=True, slots=True)
class ChainRow:
    """One stored row as the chain walk saw it: its position, key columns, hash and fields.

    `key` is the (campaign, model, task, run_index) of the indexed columns and `attempt`
    the attempt column (0 in format 1); when the walk verifies, both equal the record's.
    `record` is checked as a `RunRecord`, but may be a `SummaryView` that holds only what
    a `RunSummary` reads of the free-form fields: summarize it, do not keep it.
    """

    seq: int
    key: tuple[str, str, str, int]
    attempt: int
    record_hash: str
    record: RunRecord | SummaryView
    anchored: bool = True
    """False for a row after the anchor: checked, but pinned by nothing outside the file."""


class _FinishedRuns:
    """A run's records: attempts 0, 1, 2 … each after an INVALID one, none after a verdict.

    kaudit retries only a run the harness left INVALID and never records a finished
    run again, so a record that follows a counted verdict of its run (a forged "retry"
    with a higher attempt, a forged INVALID, a second verdict) is refused, whatever its
    hash: without this, one appended record could replace a finished run's verdict in
    every count.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.runs: dict[tuple[str, str, str, int], tuple[int, int | None]] = {}
        """Per run: its last attempt and the record of its verdict (None while INVALID)."""

    def row(self, seq: int, key: tuple[str, str, str, int], attempt: int, status: str) -> None:
        last = self.runs.get(key)
        expected = 0
        if last is not None:
            if last[1] is not None:
                raise LedgerError(
                    f"{self.path}: record {seq}: run {_run_name(key)} already has a counted "
                    f"verdict (record {last[1]}); a finished run is never recorded again, "
                    "only an INVALID one is retried"
                )
            expected = last[0] + 1
        if attempt != expected:
            raise LedgerError(
                f"{self.path}: record {seq}: run {_run_name(key)} is attempt {attempt} where "
                f"attempt {expected} is due: attempts are numbered 0, 1, 2 … in chain order"
            )
        self.runs[key] = (attempt, seq if status == "labeled" else None)


def _run_name(key: tuple[str, str, str, int]) -> str:
    campaign, model, task, index = key
    return f"{campaign}/{model}/{task} #{index}"


def _checked_record(
    path: Path, seq: int, body: str, columns: tuple[Any, ...] | None
) -> RunRecord | SummaryView:
    """Row `seq`'s record, checked as a `RunRecord` and, given `columns`, against them.

    The fast view when it reads the body; else (or when a column differs, to word the
    error) the reference reading, whose verdict and message stand.
    """
    view = summary_view(body)
    if view is not None and (columns is None or view.hashed_columns() == columns):
        return view
    data = record_data(path, seq, body)
    if columns is not None and _hashed_columns(data) != columns:
        _check_columns(path, seq, columns, data)
    return run_record(path, seq, data)


def chain_rows(
    ledger: Ledger,
    *,
    verify: bool = True,
    anchor: Anchor | None = None,
    anchored_prefix: bool = False,
) -> Iterator[ChainRow]:
    """Every row in chain order, each checked before it is yielded.

    With `verify` (the whole of `kaudit ledger verify` for one row): the hash over the
    previous hash and the stored JSON, the link to the previous row, its `seq` against
    its position, every indexed column against the hashed JSON, and its run's history
    (`_FinishedRuns`); with `anchor`, the anchored record at its position (and, once the
    walk ends, that it was there), and no record after it (`PastAnchorError`) unless
    `anchored_prefix`, which marks each row `anchored` or not instead. Whether verifying
    or not, every row must be a JSON object that validates as a `RunRecord`. The first
    bad row raises LedgerError naming it. Each body is parsed once, here, for every
    reader.
    """
    path = ledger.path
    if verify:
        ledger.check_physical()
    check = None
    if anchor is not None:
        check = AnchorCheck(path, anchor.records, anchor.head, prefix_only=anchored_prefix)
    runs = _FinishedRuns(path)
    prev, count = GENESIS, 0
    for row in ledger.rows():
        seq, body, stored_prev, stored = row[0], row[11], row[12], row[13]
        if verify and (stored_prev != prev or record_hash(prev, body) != stored):
            raise LedgerError(f"{path}: hash chain broken at record {seq}")
        if verify and seq != count + 1:
            # Rows are only ever appended, so record N is row N; renumbered rows would
            # move every record number an error, an anchor range or a reader names.
            raise LedgerError(
                f"{path}: record {seq} is row {count + 1} of the chain: rows were renumbered"
            )
        record = _checked_record(path, seq, body, row[1:11] if verify else None)
        if verify:
            runs.row(seq, row[1:5], row[5], record.status)
        prev, count = stored, count + 1
        anchored = True
        if check is not None:
            anchored = not check.seen
            check.row(count, stored)
        yield ChainRow(seq, row[1:5], row[5], stored, record, anchored)
    if check is not None:
        check.end(count)


def walk_chain(
    ledger: Ledger, anchor: Anchor | None = None, *, anchored_prefix: bool = False
) -> VerifyReport:
    """Check every row as `chain_rows` does, and the anchor if one is given.

    Raises LedgerError naming the first bad record, or the anchor's missing record, or
    (`PastAnchorError`) the first record after the anchor unless `anchored_prefix`.
    """
    head, count, pinned = GENESIS, 0, 0
    for row in chain_rows(ledger, anchor=anchor, anchored_prefix=anchored_prefix):
        head, count = row.record_hash, count + 1
        pinned += row.anchored
    return VerifyReport(
        records=count,
        head=head,
        anchored=anchor is not None,
        anchored_records=pinned if anchor is not None else None,
    )


def check_anchor_signature(anchor: Anchor | None, public_key: Path | None) -> None:
    """With `public_key`, the anchor must carry a valid ed25519 signature by that key."""
    if public_key is None:
        return
    if anchor is None:
        raise InputError("pubkey", "needs `head`: a signature is checked on an anchor")
    from kaudit.ledger._sign import check_signature

    check_signature(anchor, public_key)
