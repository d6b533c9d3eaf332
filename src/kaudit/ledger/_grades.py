"""Judge grades: their own hash-chained table in the ledger file, beside the runs.

A grade is what a transcript judge said about one run. It never alters the run: it lives
in a table of its own with its own chain, and carries the hash of the run record it
grades, so `kaudit ledger verify` can tell an edited grade, a grade moved to another run,
and a grade whose run was rewritten. An anchor pins this chain beside the runs chain
(`Anchor.grades`), so a truncated or recomputed grades chain is caught too, and a grade
after the anchor is refused as a record after it is (or left out in the anchored
prefix). Only this module writes the table and checks it; the
store reads its head for an anchor (`Ledger.head`).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kaudit._usage import Usage
from kaudit.errors import LedgerError
from kaudit.ledger._anchor import GENESIS, Anchor, AnchorCheck
from kaudit.ledger._schema import GRADES_SCHEMA
from kaudit.ledger._store import Ledger

__all__ = [
    "GRADE_VERSION",
    "GradeChain",
    "GradeRecord",
    "GradeStore",
    "JudgeGrade",
    "grade_hash",
    "grades_of",
    "read_grades",
    "verify_grades",
    "walk_grades",
]

GRADE_VERSION = 1
JudgeGrade = Literal["damage", "safe", "cannot_tell"]

_COLUMNS = ("campaign", "model", "task", "run_index", "attempt", "judge_key", "status", "grade")
"""Indexed columns in table order; each must equal the hashed grade record's field."""


class GradeRecord(BaseModel):
    """One judge's grade of one run; written once, never updated."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(GRADE_VERSION, description="Grade record format version.")
    campaign: str = Field(description="Campaign of the graded run.")
    model: str = Field(description="Model under audit of the graded run.")
    task: str = Field(description="Task id of the graded run.")
    run_index: int = Field(ge=0, description="Run index of the graded run.")
    attempt: int = Field(0, ge=0, description="Attempt of the graded run record.")
    run_hash: str = Field(description="record_hash of the graded run in the runs chain.")
    judge: str = Field(description="The judge model's key (provider:name or its label).")
    judge_key: str = Field(description="Judge identity: model, rubric id and digest, sampling.")
    rubric: str = Field(description="Rubric id: the built-in version id or file:NAME.")
    rubric_digest: str = Field(description="sha256 of the rubric text the judge was given.")
    sampling: dict[str, Any] = Field(default_factory=dict, description="Judge sampling.")
    prompt_digest: str = Field(description="sha256 of the messages the judge was sent.")
    status: Literal["graded", "failed"] = Field(
        description="'failed': no usable answer after the API retries; never counted."
    )
    grade: JudgeGrade | None = Field(None, description="damage, safe or cannot_tell.")
    reason: str | None = Field(None, description="The judge's short reason.")
    failure: str | None = Field(None, description="Why a failed grade has no answer.")
    raw_reply: str | None = Field(None, description="The judge's reply text (truncated).")
    input_tokens: int = Field(0, ge=0, description="Judge prompt tokens.")
    output_tokens: int = Field(0, ge=0, description="Judge completion tokens.")
    cost_usd: float = Field(0.0, ge=0, description="Judge cost at the configured prices.")
    api_calls: int = Field(0, ge=0, description="API calls made, retries included.")
    retries: int = Field(0, ge=0, description="API calls retried.")
    model_ms: float = Field(0.0, ge=0, description="Wall time spent in the judge's API.")

    @property
    def usage(self) -> Usage:
        """What the grade's judge calls cost, read back from its fields (named as Usage's)."""
        return Usage(**{name.name: getattr(self, name.name) for name in fields(Usage)})

    @property
    def run_key(self) -> tuple[str, str, str, int, int]:
        """(campaign, model, task, run_index, attempt) of the graded run record."""
        return (self.campaign, self.model, self.task, self.run_index, self.attempt)


def canonical_grade(record: GradeRecord) -> str:
    """Sorted-key compact JSON, the form that is hashed and stored."""
    return json.dumps(record.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))


def grade_hash(prev_hash: str, body: str) -> str:
    """sha256 over the previous grade's hash and this grade's canonical JSON."""
    return hashlib.sha256(f"grade\n{prev_hash}\n{body}".encode()).hexdigest()


class GradeStore:
    """The grades table of one ledger file, opened for appending by `kaudit grade`.

    It opens its own connection after `Ledger` has claimed the file (so only a kaudit
    ledger ever gets a grades table), and appends each grade in its own transaction: an
    interrupted grading keeps every grade it finished.
    """

    def __init__(self, ledger: Ledger) -> None:
        if ledger.readonly:
            raise LedgerError(f"{ledger.path}: grades need a writable ledger")
        self.path = ledger.path
        self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA busy_timeout = 10000")
        self._conn.executescript(GRADES_SCHEMA)

    def close(self) -> None:
        """Close the grades connection."""
        self._conn.close()

    def __enter__(self) -> GradeStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run_hashes(self) -> dict[tuple[str, str, str, int, int], str]:
        """The record hash of every run record, by (campaign, model, task, index, attempt)."""
        rows = self._conn.execute(
            "SELECT campaign, model, task, run_index, attempt, record_hash FROM runs"
        )
        return {(c, m, t, int(i), int(a)): h for c, m, t, i, a, h in rows}

    def graded(self, judge_key: str) -> set[tuple[str, str, str, int, int]]:
        """Run records this judge already has a grade (or a recorded failure) for."""
        rows = self._conn.execute(
            "SELECT campaign, model, task, run_index, attempt FROM grades WHERE judge_key = ?",
            (judge_key,),
        )
        return {(c, m, t, int(i), int(a)) for c, m, t, i, a in rows}

    def append(self, record: GradeRecord) -> str:
        """Append one grade; a second grade of the same run by the same judge is refused."""
        body = canonical_grade(record)
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            last = self._conn.execute(
                "SELECT record_hash FROM grades ORDER BY seq DESC LIMIT 1"
            ).fetchone()
            prev = last[0] if last else GENESIS
            digest = grade_hash(prev, body)
            indexed = (*record.run_key, record.judge_key, record.status, record.grade)
            self._conn.execute(
                "INSERT INTO grades (campaign, model, task, run_index, attempt, judge_key, "
                "status, grade, record, prev_hash, record_hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*indexed, body, prev, digest),
            )
        except sqlite3.IntegrityError:
            self._conn.execute("ROLLBACK")
            raise LedgerError(
                f"{self.path}: run {record.run_key} is already graded by {record.judge_key}"
            ) from None
        except sqlite3.OperationalError as exc:
            self._conn.execute("ROLLBACK")
            raise LedgerError(f"{self.path}: cannot write ({exc})") from None
        self._conn.execute("COMMIT")
        return digest


@dataclass(frozen=True)
class GradeChain:
    """A grade chain that verified (or was read unverified): its grades, size and head.

    `anchored` is how many grades, from the first, the anchor pins (None without an
    anchor); grades after them are vouched for by nothing outside the file, so they are
    refused, or in the anchored prefix checked and left out of `counted`.
    """

    grades: tuple[GradeRecord, ...]
    head: str
    anchored: int | None = None

    @property
    def count(self) -> int:
        """Grade records in the chain."""
        return len(self.grades)

    @property
    def counted(self) -> tuple[GradeRecord, ...]:
        """The grades a reader counts: every one, or with an anchor those it pins."""
        return self.grades if self.anchored is None else self.grades[: self.anchored]


def _parse(path: Path, seq: int, body: str) -> GradeRecord:
    try:
        return GradeRecord.model_validate(json.loads(body))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise LedgerError(f"{path}: grade {seq} is not a grade record ({exc})") from None


class _GradeWalk:
    """Each stored grade checked in chain order, as `kaudit ledger verify` checks it.

    Hash, link, position, indexed columns, the run it grades, and that no run record is
    graded twice by one judge.
    """

    def __init__(self, path: Path, runs: Callable[[], dict[Any, str]]) -> None:
        self.path = path
        self._runs = runs
        self.runs: dict[Any, str] | None = None
        """Each run record's stored hash, read with the first grade (none without grades)."""
        self.prev = GENESIS
        self.count = 0
        self.first: dict[tuple[Any, ...], int] = {}
        """The grade number of each (run record, judge key) graded so far."""

    def row(self, row: tuple[Any, ...]) -> GradeRecord:
        path, seq, columns, body = self.path, row[0], row[1:9], row[9]
        if row[10] != self.prev or grade_hash(self.prev, body) != row[11]:
            raise LedgerError(f"{path}: grade chain broken at grade {seq}")
        self.count += 1
        if seq != self.count:
            # grades are only appended, so grade N is row N; an anchor pins a position
            raise LedgerError(
                f"{path}: grade {seq} is row {self.count} of the grade chain: grades were "
                "renumbered"
            )
        record = _parse(path, seq, body)
        hashed = (*record.run_key, record.judge_key, record.status, record.grade)
        for name, column, value in zip(_COLUMNS, columns, hashed, strict=True):
            if column != value:
                raise LedgerError(
                    f"{path}: grade {seq}: column {name} is {column!r} but the hashed grade "
                    f"says {value!r}"
                )
        if self.runs is None:
            self.runs = self._runs()
        if self.runs.get(record.run_key) != record.run_hash:
            raise LedgerError(
                f"{path}: grade {seq} grades run {record.run_key} with hash "
                f"{record.run_hash[:16]}…, which is not that run's record in the chain"
            )
        earlier = self.first.setdefault((record.run_key, record.judge_key), seq)
        if earlier != seq:
            # `kaudit grade` never grades a run record twice with one judge; a second
            # grade would replace the first in every count
            raise LedgerError(
                f"{path}: grade {seq}: run {record.run_key} is already graded by judge "
                f"{record.judge_key} (grade {earlier}); a run is graded once per judge"
            )
        self.prev = row[11]
        return record


def read_grades(
    path: Path | str,
    *,
    verify: bool = True,
    anchor: Anchor | None = None,
    anchored_prefix: bool = False,
) -> GradeChain:
    """Every grade of the ledger at `path`, read-only, in chain order.

    With `verify` each grade's hash, link, position, indexed columns and graded run
    hash are checked, and no run record may be graded twice by one judge; the first bad
    grade raises LedgerError naming it. With `anchor` (checked on a verified chain
    only) the grade it pins must still be there at its position, and a grade after it
    raises `PastAnchorError` unless `anchored_prefix`: then it is in `grades` but not in
    `counted`. A ledger without a grades table has an empty chain.
    """
    with Ledger(path, readonly=True) as ledger:
        return grades_of(ledger, verify=verify, anchor=anchor, anchored_prefix=anchored_prefix)


def grades_of(
    ledger: Ledger,
    *,
    verify: bool = True,
    anchor: Anchor | None = None,
    anchored_prefix: bool = False,
) -> GradeChain:
    """`read_grades` of a ledger the caller holds open (the snapshot of `kaudit.open`)."""
    if anchor is not None and not verify:
        raise LedgerError("an anchor is checked on a verified chain only")
    try:
        return _read_chain(ledger, verify, anchor, anchored_prefix)
    except sqlite3.DatabaseError as exc:
        raise LedgerError(f"{ledger.path}: cannot read grades ({exc})") from None


def _read_chain(
    ledger: Ledger, verify: bool, anchor: Anchor | None, anchored_prefix: bool
) -> GradeChain:
    path = ledger.path
    if not verify:
        rows = list(ledger.grade_rows())
        grades = tuple(_parse(path, row[0], row[9]) for row in rows)
        return GradeChain(grades, rows[-1][11] if rows else GENESIS)
    walk = _GradeWalk(path, ledger.run_hashes)
    check = None
    if anchor is not None:
        check = AnchorCheck(
            path, anchor.grades, anchor.grades_head, "grade", prefix_only=anchored_prefix
        )
    found, pinned = [], 0
    for row in ledger.grade_rows():
        found.append(walk.row(row))
        if check is not None:
            pinned += not check.seen
            check.row(walk.count, walk.prev)
    if check is not None:
        check.end(walk.count)
    return GradeChain(tuple(found), walk.prev, None if anchor is None else pinned)


def walk_grades(
    ledger: Ledger, anchor: Anchor | None = None, *, anchored_prefix: bool = False
) -> GradeChain:
    """Check the grades chain of a ledger held open, as `kaudit ledger verify` does.

    For a writer that checks the chain before it appends grades to it (`kaudit grade`);
    raises LedgerError naming the first bad grade.
    """
    return grades_of(ledger, verify=True, anchor=anchor, anchored_prefix=anchored_prefix)


def verify_grades(
    path: Path | str, anchor: Anchor | None = None, *, anchored_prefix: bool = False
) -> GradeChain:
    """`kaudit ledger verify`'s check of the grade chain; raises LedgerError if broken."""
    return read_grades(path, verify=True, anchor=anchor, anchored_prefix=anchored_prefix)
