"""One verified read of a ledger, the handle every reader takes.

`open_ledger` (public as `kaudit.open`) opens the file read-only, checks the file's
physical form, the hash chain, the grades chain and the anchor (and its signature)
once, and keeps each counted run's summary and the hash of every row it read. Report,
stats, gate, monitor, export and budgets take the handle and never open the file
themselves. A later read of full records (an export, the run viewer, a refereed
suite's own checks) walks the rows by `seq`, up to the anchored record, each checked
against the hash the verified walk read: what it gives is what was verified, and no
read lock is held between chunks (a slow `kaudit export | less` never locks a campaign
out of its ledger). `verify_ledger`, `read_tallies` and `ledger_head` are that read (or
the file's head alone) in one call, for a caller holding a path.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kaudit._run_key import RunKey
from kaudit.errors import InputError, LedgerError
from kaudit.ledger._anchor import GENESIS, Anchor
from kaudit.ledger._grades import GradeChain, grades_of
from kaudit.ledger._parse import record_data, run_record
from kaudit.ledger._reader_anchor import reader_anchor
from kaudit.ledger._record import RunRecord
from kaudit.ledger._stack import StackHealth, stack_health
from kaudit.ledger._store import Ledger
from kaudit.ledger._summary import LedgerRuns, RunSummary, read_runs
from kaudit.ledger._tally import tallies_from_records
from kaudit.ledger._verify import VerifyReport, check_anchor_signature
from kaudit.stats import CellKey, CellTally

__all__ = ["Snapshot", "ledger_head", "open_ledger", "open_rows", "read_tallies", "verify_ledger"]


class Snapshot:
    """A ledger as one verified read saw it; close it (or use `with`) when done.

    Attributes:
        path: The ledger file.
        verified: Whether the physical form, the chains and the anchor were checked.
        verify_error: With `lenient`, what failed the check (the runs are then read
            unverified, for a caller that reports the failure beside them).
        verify_problem: The error `verify_error` words (a `PastAnchorError` says which
            entry came after the anchor), None when the check passed.
        anchor: The anchor the chains were checked against, if any.
        signed: Whether the anchor's signature was checked against a public key.
        records: Rows in the runs chain, superseded attempts (and in the anchored prefix
            the records left out) included.
        head: Hash of the last row (GENESIS when empty).
        anchored_records: With an anchor, how many records it pins; only their runs count.
        anchored_prefix: Whether records after the anchor were left out rather than
            refused (`open_ledger(..., anchored_prefix=True)`).
        identity: The first record's hash: two files with the same first record hold the
            same ledger (a copy, a hard link) and are never counted together.
        grades: The grades chain, checked with the runs.
    """

    def __init__(
        self,
        ledger: Ledger,
        read: LedgerRuns,
        grades: GradeChain,
        *,
        anchor: Anchor | None,
        signed: bool,
        verify_problem: LedgerError | None,
        identity: str,
        anchored_prefix: bool = False,
    ) -> None:
        self._ledger = ledger
        self.is_open = True
        self._read = read
        self.path = ledger.path
        self.verified = read.verified
        self.verify_problem = verify_problem
        self.verify_error = None if verify_problem is None else str(verify_problem)
        self.anchor = anchor
        self.signed = signed
        self.records = read.records
        self.head = read.head
        self.anchored_records = read.anchored_records
        self.anchored_prefix = anchored_prefix and self.anchor is not None
        self.identity = identity
        self.grades = grades
        self._manifests: dict[str, dict[str, Any] | None] = {}
        self.stored_campaigns = tuple(ledger.campaigns())
        """Campaign names as the campaigns table lists them (outside the chain)."""

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the file (a second close does nothing)."""
        if not self.is_open:
            return
        self.is_open = False
        self._ledger.close()

    @property
    def campaigns(self) -> tuple[str, ...]:
        """Campaigns of the counted runs, in chain order of their first record."""
        return self._read.campaigns

    @property
    def row_hashes(self) -> tuple[bytes, ...]:
        """Each row's hash as the verified walk computed it, by `seq` (empty: unverified)."""
        return self._read.hashes if self.verified else ()

    @property
    def upto(self) -> int | None:
        """The last record a reader may take: the anchored one, else the head (verified)."""
        if not self.verified:
            return None
        return self.records if self.anchored_records is None else self.anchored_records

    def runs(self, campaign: str | None = None) -> tuple[RunSummary, ...]:
        """Each counted run once (its verdict, else its last INVALID attempt), in order."""
        if campaign is None:
            return self._read.runs
        return tuple(run for run in self._read.runs if run.campaign == campaign)

    def cells(self, campaign: str | None = None) -> list[CellTally]:
        """Each cell's tally of the counted runs, by `CellKey` (model, task, version)."""
        return tallies_from_records(self.runs(campaign))

    def stopping_rules(self, campaign: str | None = None) -> dict[str, str]:
        """Each campaign's stopping rule sentence, as its last counted run records it."""
        return {run.campaign: run.stopping_rule for run in self.runs(campaign) if run.stopping_rule}

    def stack_health(self, campaign: str | None = None) -> dict[CellKey, StackHealth]:
        """Per cell, the serving stack's API errors and tool-less runs (`stack_health`)."""
        return stack_health(self.runs(campaign))

    def require_campaign(self, name: str | None) -> None:
        """Raise LedgerError unless `name` is None or a campaign of this ledger."""
        if name is None:
            return
        held = list(dict.fromkeys([*self.stored_campaigns, *self.campaigns]))
        if name not in held:
            holds = f"it holds {', '.join(map(repr, held))}" if held else "it holds none"
            raise LedgerError(f"{self.path}: no campaign {name!r}; {holds}")

    def manifest(self, name: str) -> dict[str, Any] | None:
        """A campaign's provenance manifest (outside the chain), as the snapshot holds it."""
        if name not in self._manifests:
            self._manifests[name] = self._ledger.manifest(name)
        return self._manifests[name]

    def full_records(
        self, campaign: str | None = None, *, all_attempts: bool = False
    ) -> Iterator[RunRecord]:
        """The counted records in full, read again by `seq`, up to `upto`.

        `all_attempts` gives superseded attempts too. Each row is checked against the
        hash the verified walk read (LedgerError if it changed since), and none appended
        after the check (or after the anchor) is ever given.
        """
        for seq, body in self._bodies(campaign, all_attempts):
            yield run_record(self.path, seq, record_data(self.path, seq, body))

    def documents(self, campaign: str | None = None) -> Iterator[tuple[dict[str, Any], int]]:
        """The counted records' stored JSON and its length, as `Ledger.documents` gives."""
        for seq, body in self._bodies(campaign, False):
            yield record_data(self.path, seq, body), len(body)

    def _bodies(self, campaign: str | None, all_attempts: bool) -> Iterator[tuple[int, str]]:
        """Stored rows by `seq` up to `upto`, each checked against the hash verified."""
        return self._ledger.checked_bodies(campaign, all_attempts, self.upto, self.row_hashes)

    def final_image(self, key: RunKey) -> bytes | None:
        """A run's stored final dump, when the campaign kept dumps."""
        return self._ledger.final_image(key)

    def head_anchor(self) -> Anchor:
        """The ledger's head in this snapshot, as `kaudit ledger head` prints it."""
        return self._ledger.head()


def open_ledger(
    path: str | Path,
    *,
    head: str | Anchor | None = None,
    pubkey: str | Path | None = None,
    verify: bool = True,
    lenient: bool = False,
    anchored_prefix: bool = False,
) -> Snapshot:
    """Open the ledger at `path` read-only in one snapshot and verify it once.

    Checks the file's physical form (`kaudit.ledger._physical`), every record and grade
    as `kaudit ledger verify` does, and with `head` (a head hex, `kaudit ledger head
    --json` output, its file, or an `Anchor`) that the chains still hold it, signed by
    the `pubkey` PEM when given. A record or grade after the anchored one raises
    `PastAnchorError` naming it: nothing outside the file vouches for it. With
    `anchored_prefix` such entries are checked but left out: the snapshot then holds
    the anchored prefix alone. The first problem raises LedgerError naming it, unless
    `lenient`: then the runs are read unverified and the problem is kept in
    `verify_error` (the gate denies on it and still lists what else fails).
    `verify=False` skips every check. Raises KauditError for a missing file.
    """
    target = Path(path)
    if not target.is_file():
        raise LedgerError(f"{target}: no such ledger file")
    if not verify and (head is not None or pubkey is not None):
        raise InputError(
            "head" if head is not None else "pubkey",
            "cannot be combined with `verify=False`: an anchor is checked on a verified chain",
        )
    if anchored_prefix and head is None:
        raise InputError("anchored_prefix", "needs `head`: it reads what an anchor pins")
    anchor: Anchor | None = None
    problem: LedgerError | None = None
    try:
        anchor = reader_anchor(head, pubkey, not verify)
    except LedgerError as exc:
        if not lenient:
            raise
        problem = exc
    ledger = Ledger(target, readonly=True)
    try:
        read, grades, error = _read(ledger, verify, anchor, problem, lenient, anchored_prefix)
        return Snapshot(
            ledger, read, grades, anchor=anchor if read.verified else None,
            signed=pubkey is not None and read.verified, verify_problem=error,
            identity=read.hashes[0].decode() if read.hashes else GENESIS,
            anchored_prefix=anchored_prefix,
        )  # fmt: skip
    except BaseException:
        ledger.close()
        raise


def _read(
    ledger: Ledger,
    verify: bool,
    anchor: Anchor | None,
    problem: LedgerError | None,
    lenient: bool,
    anchored_prefix: bool,
) -> tuple[LedgerRuns, GradeChain, LedgerError | None]:
    """Runs, grades and the first problem: verified, or (leniently) unverified after it."""
    if verify and problem is None:
        try:
            read = read_runs(
                ledger, None, verify=True, anchor=anchor, anchored_prefix=anchored_prefix
            )
            grades = grades_of(ledger, verify=True, anchor=anchor, anchored_prefix=anchored_prefix)
            return read, grades, None
        except LedgerError as exc:
            if not lenient:
                raise
            problem = exc
    try:
        read = read_runs(ledger, None, verify=False)
        return read, grades_of(ledger, verify=False), problem
    except LedgerError:
        if problem is not None:
            raise problem from None  # what verification found first is what is named
        raise


def open_rows(path: str | Path) -> Ledger:
    """The file opened read-only without any check, for a reader pinning rows itself.

    Only for the run viewer built beside a read (`kaudit.report._viewer_build`), whose
    rows are kept only when the head it read is the head this module verified.
    """
    return Ledger(path, readonly=True)


def verify_ledger(
    path: Path | str,
    anchor: Anchor | None = None,
    public_key: Path | None = None,
    *,
    anchored_prefix: bool = False,
) -> VerifyReport:
    """Verify the ledger file at `path` read-only; raises LedgerError on the first problem.

    With `anchor` the anchored record (and the anchored grade, when the anchor pins
    grades) must still be in its chain at its position, and no record or grade may
    follow it (`PastAnchorError`) unless `anchored_prefix`; with `public_key` the anchor
    must also carry a valid ed25519 signature by that key, so an anchor stored next to
    the ledger cannot be forged along with a recomputed chain.
    """
    check_anchor_signature(anchor, public_key)
    with open_ledger(
        path, head=anchor, pubkey=public_key, anchored_prefix=anchored_prefix
    ) as snapshot:
        grades = snapshot.grades
        return VerifyReport(
            records=snapshot.records,
            head=snapshot.head,
            anchored=anchor is not None,
            signed=public_key is not None,
            anchored_records=snapshot.anchored_records,
            grades=grades.count,
            grades_head=grades.head,
            anchored_grades=grades.anchored,
        )


def ledger_head(path: Path | str) -> Anchor:
    """The current (record count, head hash) of a ledger, read-only, without the chains.

    The file's physical form is checked first (no trigger, view or index kaudit did not
    make, SQLite's integrity check): the head is what an operator signs and keeps, and a
    file that can hide rows from a read must not be signed as intact.
    """
    with Ledger(path, readonly=True) as ledger:
        ledger.check_physical()
        return ledger.head()


def read_tallies(
    path: str | Path, campaign: str | None = None, *, verify: bool = True
) -> list[CellTally]:
    """Tallies of every cell in the ledger file at `path`, opened read-only.

    The chain is verified first (LedgerError on a broken one) unless `verify` is False:
    numbers from a rewritten ledger are not evidence.
    """
    with open_ledger(path, verify=verify) as snapshot:
        return tallies_from_records(snapshot.runs(campaign))
