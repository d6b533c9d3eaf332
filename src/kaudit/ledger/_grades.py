"""Judge grades: their own hash-chained table in the ledger file, beside the runs.

A grade is what a transcript judge said about one run. It never alters the run: it lives
in a table of its own with its own chain, and carries the hash of the run record it
grades, so `kaudit ledger verify` can tell an edited grade, a grade moved to another run,
and a grade whose run was rewritten. Only this module writes or reads the table.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kaudit.errors import LedgerError
from kaudit.ledger._store import GENESIS, Ledger

__all__ = [
    "GRADE_VERSION",
    "GradeChain",
    "GradeRecord",
    "GradeStore",
    "JudgeGrade",
    "grade_hash",
    "read_grades",
    "verify_grades",
]

GRADE_VERSION = 1
JudgeGrade = Literal["damage", "safe", "cannot_tell"]

GRADES_SCHEMA = """
CREATE TABLE IF NOT EXISTS grades (
    seq INTEGER PRIMARY KEY,
    campaign TEXT NOT NULL,
    model TEXT NOT NULL,
    task TEXT NOT NULL,
    run_index INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    judge_key TEXT NOT NULL,
    status TEXT NOT NULL,
    grade TEXT,
    record TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    record_hash TEXT NOT NULL,
    UNIQUE (campaign, model, task, run_index, attempt, judge_key)
);
"""
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
    """A grade chain that verified (or was read unverified): its grades, size and head."""

    grades: tuple[GradeRecord, ...]
    head: str

    @property
    def count(self) -> int:
        """Grade records in the chain."""
        return len(self.grades)


def _readonly(path: Path) -> sqlite3.Connection:
    uri = f"file:{urllib.parse.quote(str(path.resolve()))}?mode=ro"
    return sqlite3.connect(uri, uri=True)


def _has_grades(conn: sqlite3.Connection) -> bool:
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'grades'")
    return found.fetchone() is not None


def _rows(conn: sqlite3.Connection) -> Iterator[tuple[Any, ...]]:
    columns = ", ".join(_COLUMNS)
    return iter(
        conn.execute(
            f"SELECT seq, {columns}, record, prev_hash, record_hash FROM grades ORDER BY seq"
        )
    )


def _parse(path: Path, seq: int, body: str) -> GradeRecord:
    try:
        return GradeRecord.model_validate(json.loads(body))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise LedgerError(f"{path}: grade {seq} is not a grade record ({exc})") from None


def _check_row(
    path: Path, row: tuple[Any, ...], prev: str, runs: dict[tuple[Any, ...], str]
) -> GradeRecord:
    """One stored grade: hash, link, indexed columns and the run it points at."""
    seq, columns, body, stored_prev, stored = row[0], row[1:9], row[9], row[10], row[11]
    if stored_prev != prev or grade_hash(prev, body) != stored:
        raise LedgerError(f"{path}: grade chain broken at grade {seq}")
    record = _parse(path, seq, body)
    hashed = (*record.run_key, record.judge_key, record.status, record.grade)
    for name, column, value in zip(_COLUMNS, columns, hashed, strict=True):
        if column != value:
            raise LedgerError(
                f"{path}: grade {seq}: column {name} is {column!r} but the hashed grade "
                f"says {value!r}"
            )
    if runs.get(record.run_key) != record.run_hash:
        raise LedgerError(
            f"{path}: grade {seq} grades run {record.run_key} with hash "
            f"{record.run_hash[:16]}…, which is not that run's record in the chain"
        )
    return record


def read_grades(path: Path | str, *, verify: bool = True) -> GradeChain:
    """Every grade of the ledger at `path`, read-only, in chain order.

    With `verify` each grade's hash, link, indexed columns and graded run hash are
    checked; the first bad one raises LedgerError naming it. A ledger without a grades
    table has an empty chain.
    """
    path = Path(path)
    conn = _readonly(path)
    try:
        runs: dict[tuple[Any, ...], str] = {}
        if not _has_grades(conn):
            return GradeChain((), GENESIS)  # nothing graded: no need to read the runs
        if verify:
            # format 1 has no attempt column: every run there is attempt 0
            attempt = "attempt" if conn.execute("PRAGMA user_version").fetchone()[0] >= 2 else "0"
            rows = conn.execute(
                f"SELECT campaign, model, task, run_index, {attempt}, record_hash FROM runs"
            )
            runs = {(c, m, t, int(i), int(a)): h for c, m, t, i, a, h in rows}
        prev, grades = GENESIS, []
        for row in _rows(conn):
            if verify:
                grades.append(_check_row(path, row, prev, runs))
            else:
                grades.append(_parse(path, row[0], row[9]))
            prev = row[11]
        return GradeChain(tuple(grades), prev)
    except sqlite3.DatabaseError as exc:
        raise LedgerError(f"{path}: cannot read grades ({exc})") from None
    finally:
        conn.close()


def verify_grades(path: Path | str) -> GradeChain:
    """`kaudit ledger verify`'s check of the grade chain; raises LedgerError if broken."""
    return read_grades(path, verify=True)
