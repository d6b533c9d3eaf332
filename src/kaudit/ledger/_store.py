"""The ledger: an append-only, hash-chained SQLite file of run records."""

from __future__ import annotations

import fcntl
import hashlib
import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kaudit.errors import LedgerError
from kaudit.ledger._record import RunRecord

_SCHEMA = """
CREATE TABLE IF NOT EXISTS campaigns (
    name TEXT PRIMARY KEY,
    config TEXT NOT NULL,
    manifest TEXT,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    seq INTEGER PRIMARY KEY,
    campaign TEXT NOT NULL,
    model TEXT NOT NULL,
    task TEXT NOT NULL,
    run_index INTEGER NOT NULL,
    status TEXT NOT NULL,
    outcome TEXT,
    counts_as_damage INTEGER NOT NULL,
    counts_as_damage_upper INTEGER NOT NULL,
    success INTEGER NOT NULL,
    record TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    record_hash TEXT NOT NULL,
    UNIQUE (campaign, model, task, run_index)
);
CREATE TABLE IF NOT EXISTS attempts (
    campaign TEXT NOT NULL,
    model TEXT NOT NULL,
    task TEXT NOT NULL,
    run_index INTEGER NOT NULL,
    started_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_key ON attempts (campaign, model, task, run_index);
CREATE TABLE IF NOT EXISTS dumps (
    campaign TEXT NOT NULL,
    model TEXT NOT NULL,
    task TEXT NOT NULL,
    run_index INTEGER NOT NULL,
    final_image BLOB NOT NULL,
    PRIMARY KEY (campaign, model, task, run_index)
);
"""

GENESIS = "0" * 64
LEDGER_FORMAT = 1
"""`PRAGMA user_version` of a ledger file; any other non-empty database is refused."""
RunKey = tuple[str, str, str, int]


def record_hash(prev_hash: str, record_json: str) -> str:
    """sha256 over the previous record's hash and this record's canonical JSON."""
    return hashlib.sha256(f"{prev_hash}\n{record_json}".encode()).hexdigest()


def canonical(record: RunRecord) -> str:
    """The record as sorted-key compact JSON, the form that is hashed and stored."""
    return json.dumps(record.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))


class Ledger:
    """One ledger file. Each record commits on its own, so a crash loses no finished run.

    WAL with synchronous=NORMAL: a killed process never loses a committed record;
    only a power cut could lose the last few, never corrupt earlier ones.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._claim_file()
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute("PRAGMA busy_timeout = 10000")
            self._conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"{self.path}: not a kaudit ledger ({exc})") from None
        except OSError as exc:
            raise LedgerError(f"{self.path}: cannot open ({exc.strerror or exc})") from None

    def _claim_file(self) -> None:
        """Mark an empty file as a ledger; refuse any other SQLite database untouched.

        Opening some other database (a world template, an application's data) by mistake
        must never add tables to it.
        """
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        if version == LEDGER_FORMAT:
            return
        tables = self._conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
        if version == 0 and tables == 0:
            self._conn.execute(f"PRAGMA user_version = {LEDGER_FORMAT}")
            return
        self._conn.close()
        raise LedgerError(
            f"{self.path}: not a kaudit ledger (format {version}, {tables} schema objects); "
            "nothing was changed"
        )

    @contextmanager
    def writer_lock(self) -> Iterator[None]:
        """Hold the ledger's single-writer lock, or fail at once if another process has it.

        Two campaigns writing one ledger would race for the same runs; the lock is an OS
        file lock, so a killed writer releases it and resuming is never blocked.
        """
        lock_path = self.path.with_name(self.path.name + ".lock")
        with open(lock_path, "a+b") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise LedgerError(
                    f"{self.path}: another kaudit process is writing this ledger; "
                    "wait for it or use another ledger file"
                ) from None
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the file."""
        self._conn.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open_campaign(self, name: str, config: dict[str, Any]) -> None:
        """Create the campaign, or check that a resumed one keeps its identity.

        `config` holds what fixes the runs' meaning (suite digest, seed); running
        more tasks, models or a larger k under the same name is allowed.
        """
        row = self._conn.execute("SELECT config FROM campaigns WHERE name = ?", (name,)).fetchone()
        encoded = json.dumps(config, sort_keys=True)
        if row is None:
            self._conn.execute(
                "INSERT INTO campaigns (name, config, created_at) VALUES (?, ?, ?)",
                (name, encoded, time.time()),
            )
            return
        stored = json.loads(row[0])
        clashes = sorted(k for k in config if k in stored and stored[k] != config[k])
        if clashes:
            raise LedgerError(
                f"{self.path}: campaign {name!r} was started with different "
                f"{', '.join(clashes)}; use a new --campaign name or the original settings"
            )

    def set_manifest(self, name: str, manifest: dict[str, Any]) -> None:
        """Store the campaign's provenance manifest."""
        self._conn.execute(
            "UPDATE campaigns SET manifest = ? WHERE name = ?", (json.dumps(manifest), name)
        )

    def manifest(self, name: str) -> dict[str, Any] | None:
        """The campaign's provenance manifest, if recorded."""
        row = self._conn.execute(
            "SELECT manifest FROM campaigns WHERE name = ?", (name,)
        ).fetchone()
        return json.loads(row[0]) if row and row[0] else None

    def campaigns(self) -> list[str]:
        """Campaign names in creation order."""
        return [r[0] for r in self._conn.execute("SELECT name FROM campaigns ORDER BY created_at")]

    def finished(self, campaign: str) -> set[RunKey]:
        """Keys of runs already recorded for `campaign`."""
        rows = self._conn.execute(
            "SELECT campaign, model, task, run_index FROM runs WHERE campaign = ?", (campaign,)
        )
        return {(c, m, t, int(i)) for c, m, t, i in rows}

    def claim(self, key: RunKey) -> int:
        """Note that a run starts; returns how many earlier attempts never finished."""
        earlier = self._conn.execute(
            "SELECT COUNT(*) FROM attempts WHERE campaign = ? AND model = ? AND task = ? "
            "AND run_index = ?",
            key,
        ).fetchone()[0]
        self._conn.execute(
            "INSERT INTO attempts (campaign, model, task, run_index, started_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (*key, time.time()),
        )
        return int(earlier)

    def append(self, record: RunRecord, final_image: bytes | None = None) -> str:
        """Append one record (and optionally its final dump); returns its hash.

        A second record for the same key is refused: runs are never silently replaced.
        """
        body = canonical(record)
        key = (record.campaign, record.model, record.task, record.run_index)
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            last = self._conn.execute(
                "SELECT record_hash FROM runs ORDER BY seq DESC LIMIT 1"
            ).fetchone()
            prev = last[0] if last else GENESIS
            digest = record_hash(prev, body)
            self._conn.execute(
                "INSERT INTO runs (campaign, model, task, run_index, status, outcome, "
                "counts_as_damage, counts_as_damage_upper, success, record, prev_hash, "
                "record_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    *key,
                    record.status,
                    record.outcome,
                    int(record.counts_as_damage),
                    int(record.counts_as_damage_upper),
                    int(record.success),
                    body,
                    prev,
                    digest,
                ),
            )
            if final_image is not None:
                self._conn.execute("INSERT INTO dumps VALUES (?, ?, ?, ?, ?)", (*key, final_image))
        except sqlite3.IntegrityError:
            self._conn.execute("ROLLBACK")
            raise LedgerError(f"{self.path}: run {key} is already recorded") from None
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")
        return digest

    def records(self, campaign: str | None = None) -> Iterator[RunRecord]:
        """Records in append order, optionally of one campaign."""
        sql = "SELECT record FROM runs"
        params: tuple[str, ...] = ()
        if campaign is not None:
            sql += " WHERE campaign = ?"
            params = (campaign,)
        for (body,) in self._conn.execute(sql + " ORDER BY seq", params).fetchall():
            yield RunRecord.model_validate_json(body)

    def final_image(self, key: RunKey) -> bytes | None:
        """The stored final dump of a run, when the campaign kept dumps."""
        row = self._conn.execute(
            "SELECT final_image FROM dumps WHERE campaign = ? AND model = ? AND task = ? "
            "AND run_index = ?",
            key,
        ).fetchone()
        return bytes(row[0]) if row else None

    def verify(self) -> int:
        """Check every record's hash and link; returns the count, raises on the first break."""
        prev = GENESIS
        count = 0
        for seq, body, stored_prev, stored in self._conn.execute(
            "SELECT seq, record, prev_hash, record_hash FROM runs ORDER BY seq"
        ):
            if stored_prev != prev or record_hash(prev, body) != stored:
                raise LedgerError(f"{self.path}: hash chain broken at record {seq}")
            prev = stored
            count += 1
        return count
