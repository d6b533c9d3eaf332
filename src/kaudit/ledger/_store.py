"""The ledger: an append-only, hash-chained SQLite file of run records."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import sqlite3
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from kaudit._run_key import RunKey
from kaudit.errors import LedgerError
from kaudit.ledger._anchor import GENESIS, Anchor
from kaudit.ledger._floats import finite_floats
from kaudit.ledger._parse import record_data, run_record
from kaudit.ledger._physical import check_physical
from kaudit.ledger._record import RunRecord
from kaudit.ledger._schema import (
    CLAIMS_SCHEMA,
    LEDGER_FORMAT,
    READABLE_FORMATS,
    SCHEMA,
    upgrade_format1,
)

_CHUNK = 500
"""Records read per statement when walking a ledger."""
_LATEST = (
    "SELECT {columns} FROM (SELECT *, {attempt} AS att, ROW_NUMBER() OVER (PARTITION BY "
    "campaign, model, task, run_index ORDER BY status = 'labeled' DESC, "
    "CASE WHEN status = 'labeled' THEN seq ELSE -seq END) AS newest FROM runs{where}) "
    "WHERE newest = 1 ORDER BY seq"
)
"""Each run's counted record: its first verdict, else its last INVALID attempt.

A verdict, once recorded, is never replaced by a later record of the same run, even in
a ledger read without verifying (where such a record was not refused).
"""


def record_hash(prev_hash: str, record_json: str) -> str:
    """sha256 over the previous record's hash and this record's canonical JSON."""
    return hashlib.sha256(f"{prev_hash}\n{record_json}".encode()).hexdigest()


def canonical(record: RunRecord) -> str:
    """The record as sorted-key compact JSON, the form that is hashed and stored.

    orjson encodes it about nine times faster than `json.dumps` (the whole call, model
    dump included, about three times), which matters for a run whose tool results fill
    its record. Both read back to the same record; where orjson
    would not (a non-finite typed float, which it writes as null; a lone surrogate,
    deep nesting or an integer past 64 bits, which it refuses), `json.dumps` writes it.
    The record's `Any` fields hold plain data (every writer builds them from dicts and
    lists), where the dump turns a non-finite float into None for both writers; a
    pydantic model put there would keep its NaN and lose it to orjson's null.
    """
    data = record.model_dump(mode="json")
    if finite_floats(record):
        try:
            return orjson.dumps(data, option=orjson.OPT_SORT_KEYS).decode()
        except orjson.JSONEncodeError:
            pass
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


class Ledger:
    """One ledger file. Each record commits on its own, so a crash loses no finished run.

    WAL with synchronous=NORMAL: a killed process never loses a committed record;
    only a power cut could lose the last few, never corrupt earlier ones. With
    `readonly=True` the file is opened with SQLite's `mode=ro`: a reader never creates,
    claims or upgrades a file, whatever it holds.
    """

    def __init__(self, path: Path | str, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self._lock_fd: int | None = None
        self._in_batch = False
        try:
            self._conn = self._open_readonly() if readonly else self._open_writable()
            self.format = int(self._conn.execute("PRAGMA user_version").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise LedgerError(
                    f"{self.path}: locked by another process for too long ({exc}); retry"
                ) from None
            code = getattr(exc, "sqlite_errorname", "")
            if code.startswith("SQLITE_READONLY"):  # a read-only file, directory or disk
                raise LedgerError(
                    f"{self.path}: read-only, the ledger cannot be written ({exc})"
                ) from None
            if code.startswith("SQLITE_CANTOPEN"):
                raise LedgerError(f"{self.path}: cannot open ({exc})") from None
            raise LedgerError(f"{self.path}: not a kaudit ledger ({exc})") from None
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"{self.path}: not a kaudit ledger ({exc})") from None
        except OSError as exc:
            raise LedgerError(f"{self.path}: cannot open ({exc.strerror or exc})") from None
        # Format-1 files have no attempt column: every run there is attempt 0.
        self._attempt = "attempt" if self.format >= 2 else "0"

    def _open_readonly(self) -> sqlite3.Connection:
        if not self.path.is_file():
            raise LedgerError(f"{self.path}: no such ledger file")
        uri = f"file:{urllib.parse.quote(str(self.path.resolve()))}?mode=ro"
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version not in READABLE_FORMATS:
            raise LedgerError(f"{self.path}: not a kaudit ledger ({_what_it_is(version, conn)})")
        return conn

    def _open_writable(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._claim_file(conn)
        try:
            conn.execute("PRAGMA busy_timeout = 10000")  # first: switching to WAL may wait
            if conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]:
                # Before anything is written: a trigger or a lying index would change
                # what every append does, with the chain still valid.
                check_physical(conn, self.path, LEDGER_FORMAT)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.executescript(SCHEMA)
        except BaseException:
            conn.close()
            raise
        return conn

    def _claim_file(self, conn: sqlite3.Connection) -> None:
        """Mark an empty file as a ledger; refuse any other SQLite database untouched.

        Opening some other database (a world template, an application's data) by mistake
        must never add tables to it; an older ledger is upgraded only on request.
        """
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == LEDGER_FORMAT:
            return
        tables = conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
        if version == 0 and tables == 0:
            conn.execute(f"PRAGMA user_version = {LEDGER_FORMAT}")
            return
        conn.close()
        if version == 1:
            raise LedgerError(
                f"{self.path}: ledger format 1 is read-only here; upgrade it once with "
                f"`kaudit ledger migrate {self.path}` (every record and hash is kept)"
            )
        raise LedgerError(
            f"{self.path}: not a kaudit ledger (format {version}, {tables} schema objects); "
            "nothing was changed"
        )

    @contextmanager
    def writer_lock(self) -> Iterator[None]:
        """Hold the ledger's single-writer lock, or fail at once if another process has it.

        The lock is an OS `flock` on the ledger file itself, so every path that reaches the
        same file (a symlink, a hard link, `..` spellings) meets the same lock, and a killed
        writer releases it. The descriptor stays open until `close()`, after SQLite's own
        connection: closing a second descriptor of a database file would drop SQLite's
        POSIX locks on it.
        """
        if self._lock_fd is None:
            self._lock_fd = os.open(self.path, os.O_RDONLY)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LedgerError(
                f"{self.path}: another kaudit process is writing this ledger; "
                "wait for it or use another ledger file"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the file (SQLite first, then the lock descriptor).

        A writer leaves the file in rollback-journal mode when it is the last one out, so
        a read-only reader at rest needs no `-wal` / `-shm` files and creates none; with
        another connection open the switch is refused and WAL simply stays.
        """
        if not self.readonly:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("PRAGMA journal_mode = DELETE")
        self._conn.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def check_physical(self) -> None:
        """Raise LedgerError unless the file holds only kaudit's schema, intact.

        See `kaudit.ledger._physical`: no foreign trigger, view, index or table, and
        every index in step with its table.
        """
        check_physical(self._conn, self.path, self.format)

    def _write(self, sql: str, params: tuple[Any, ...]) -> None:
        """One autocommitted write; a full disk or a read-only file becomes a LedgerError."""
        try:
            self._conn.execute(sql, params)
        except sqlite3.OperationalError as exc:
            raise LedgerError(f"{self.path}: cannot write ({exc})") from None

    def campaign_config(self, name: str) -> dict[str, Any] | None:
        """The identity a campaign was started with, or None for a new campaign."""
        row = self._conn.execute("SELECT config FROM campaigns WHERE name = ?", (name,)).fetchone()
        return json.loads(row[0]) if row else None

    def open_campaign(self, name: str, config: dict[str, Any]) -> None:
        """Create the campaign, or check that a resumed one keeps its identity.

        `config` holds what fixes the runs' meaning (seed, suite digest, and per world or
        task a digest as a nested mapping); a resumed campaign must agree on every fact
        both name. Running more tasks, models or a larger k under the same name is
        allowed: new nested entries are added to the stored identity.
        """
        stored = self.campaign_config(name)
        if stored is None:
            self._write(
                "INSERT INTO campaigns (name, config, created_at) VALUES (?, ?, ?)",
                (name, json.dumps(config, sort_keys=True), time.time()),
            )
            return
        clash = _first_clash(stored, config)
        if clash is not None:
            what, old, new = clash
            raise LedgerError(
                f"{self.path}: campaign {name!r} was started with {what} {old}, this run has "
                f"{new}; use a new `campaign` name or the original settings"
            )
        merged = {
            key: stored[key] | value
            if isinstance(value, dict) and isinstance(stored.get(key), dict)
            else stored.get(key, value)
            for key, value in config.items()
        }
        if merged != {key: stored.get(key) for key in config}:
            self.set_config(name, stored | merged)

    def set_config(self, name: str, config: dict[str, Any]) -> None:
        """Replace a campaign's stored identity (after `open_campaign` accepted the change)."""
        self._write(
            "UPDATE campaigns SET config = ? WHERE name = ?",
            (json.dumps(config, sort_keys=True), name),
        )

    def set_manifest(self, name: str, manifest: dict[str, Any]) -> None:
        """Store the campaign's provenance manifest."""
        self._write(
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

    def require_campaign(self, name: str | None) -> None:
        """Raise LedgerError unless `name` is None (every campaign) or a campaign here.

        A reader asked for a campaign the ledger lacks would otherwise print an empty
        result and succeed, which reads as "nothing happened" instead of "wrong name".
        """
        if name is None:
            return
        held = self.campaigns()
        if name not in held:
            holds = f"it holds {', '.join(map(repr, held))}" if held else "it holds none"
            raise LedgerError(f"{self.path}: no campaign {name!r}; {holds}")

    def latest(self, campaign: str) -> dict[RunKey, tuple[int, str]]:
        """(attempt, status) of each run's newest attempt in `campaign`."""
        sql = _LATEST.format(
            columns="campaign, model, task, run_index, att, status",
            attempt=self._attempt,
            where=" WHERE campaign = ?",
        )
        rows = self._conn.execute(sql, (campaign,))
        return {RunKey(c, m, t, int(i)): (int(a), s) for c, m, t, i, a, s in rows}

    def finished(self, campaign: str) -> set[RunKey]:
        """Keys of runs whose newest attempt has a verdict."""
        return {key for key, (_, status) in self.latest(campaign).items() if status == "labeled"}

    def claim(self, key: RunKey) -> int:
        """Note that a run starts; returns how many earlier attempts never got a record."""
        started = self._conn.execute(
            "SELECT COUNT(*) FROM attempts WHERE campaign = ? AND model = ? AND task = ? "
            "AND run_index = ?",
            key,
        ).fetchone()[0]
        recorded = self._conn.execute(
            "SELECT COUNT(*) FROM runs WHERE campaign = ? AND model = ? AND task = ? "
            "AND run_index = ?",
            key,
        ).fetchone()[0]
        self._write(
            "INSERT INTO attempts (campaign, model, task, run_index, started_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (*key, time.time()),
        )
        return max(0, int(started) - int(recorded))

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction: every read inside sees the file as the first one saw it.

        For a reader that must pair what it reads with a hash it reads first (the run
        viewer of a page, checked against the verified head); appends go on meanwhile.
        """
        self._conn.execute("BEGIN")
        try:
            yield
        finally:
            self._conn.execute("COMMIT")

    def stored_hash(self, seq: int) -> str | None:
        """Record `seq`'s stored chain hash, as written (unverified), or None."""
        row = self._conn.execute("SELECT record_hash FROM runs WHERE seq = ?", (seq,)).fetchone()
        return None if row is None else str(row[0])

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Append many records in one transaction: all of them are kept, or none.

        An import of several files must not leave the first files committed when a later
        one is refused.
        """
        self._conn.execute("BEGIN IMMEDIATE")
        self._in_batch = True
        try:
            yield
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        else:
            self._conn.execute("COMMIT")
        finally:
            self._in_batch = False

    def spooled_record(self, cell: tuple[str, str, str], spool_id: str) -> RunRecord | None:
        """The cell's record that came from spool entry `spool_id`, if it was appended."""
        where = "campaign = ? AND model = ? AND task = ? AND "
        return self._served_record(where, cell, "spool", spool_id)

    def issue_claim(self, campaign: str, task: str) -> str:
        """Let one served run of `task` in `campaign` be appended later from the spool.

        Returns the claim's id, which the spooled run carries; see `kaudit.ledger._spool`.
        """
        claim = uuid.uuid4().hex
        try:
            self._conn.executescript(CLAIMS_SCHEMA)
        except sqlite3.OperationalError as exc:
            raise LedgerError(f"{self.path}: cannot write ({exc})") from None
        self._write(
            "INSERT INTO spool_claims (claim, campaign, task, claimed_at) VALUES (?, ?, ?, ?)",
            (claim, campaign, task, time.time()),
        )
        return claim

    def claim_cell(self, claim: str) -> tuple[str, str] | None:
        """(campaign, task) a claim admits, or None when the ledger issued no such claim."""
        has = self._conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'spool_claims'"
        ).fetchone()
        if has is None:
            return None
        row = self._conn.execute(
            "SELECT campaign, task FROM spool_claims WHERE claim = ?", (claim,)
        ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def claimed_record(self, claim: str) -> RunRecord | None:
        """The chained record a claim was used by (`extra["served"]["claim"]`), if any."""
        return self._served_record("", (), "claim", claim)

    def _served_record(
        self, where: str, params: tuple[str, ...], name: str, value: str
    ) -> RunRecord | None:
        """The first record whose `extra["served"][name]` is `value` (text search first)."""
        rows = self._conn.execute(
            f"SELECT seq, record FROM runs WHERE {where}instr(record, ?) > 0 ORDER BY seq",
            (*params, value),
        ).fetchall()
        for seq, body in rows:
            record = self._record(seq, body)
            if (record.extra.get("served") or {}).get(name) == value:
                return record
        return None

    def record(self, key: RunKey) -> RunRecord | None:
        """The newest attempt of one run, or None when the run has no record."""
        row = self._conn.execute(
            "SELECT seq, record FROM runs WHERE campaign = ? AND model = ? AND task = ? "
            f"AND run_index = ? ORDER BY {self._attempt} DESC LIMIT 1",
            key,
        ).fetchone()
        return self._record(*row) if row else None

    def _record(self, seq: int, body: str) -> RunRecord:
        """One stored record, read as `kaudit ledger verify` reads it (LedgerError if bad)."""
        return run_record(self.path, seq, record_data(self.path, seq, body))

    def append(self, record: RunRecord, final_image: bytes | None = None) -> str:
        """Append one record (and optionally its final dump); returns its hash.

        A second record for the same key and attempt is refused: runs are never silently
        replaced; a retry is a new attempt that supersedes the old one in every count.
        """
        body = canonical(record)
        key = (record.campaign, record.model, record.task, record.run_index, record.attempt)
        if self._in_batch:
            return self._insert(key, record, body, final_image)
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            digest = self._insert(key, record, body, final_image)
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")
        return digest

    def _insert(
        self,
        key: tuple[str, str, str, int, int],
        record: RunRecord,
        body: str,
        final_image: bytes | None,
    ) -> str:
        self._check_retry(key)
        last = self._conn.execute(
            "SELECT record_hash FROM runs ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        prev = last[0] if last else GENESIS
        digest = record_hash(prev, body)
        try:
            self._conn.execute(
                "INSERT INTO runs (campaign, model, task, run_index, attempt, status, outcome, "
                "counts_as_damage, counts_as_damage_upper, success, record, prev_hash, "
                "record_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                self._conn.execute(
                    "INSERT INTO dumps VALUES (?, ?, ?, ?, ?, ?)", (*key, final_image)
                )
        except sqlite3.IntegrityError:
            raise LedgerError(f"{self.path}: run {key} is already recorded") from None
        except sqlite3.OperationalError as exc:
            # A full disk or a read-only file: one clear line, the transaction rolls back.
            raise LedgerError(f"{self.path}: cannot write ({exc})") from None
        self._check_landed(key, digest)
        return digest

    def _check_landed(self, key: tuple[str, str, str, int, int], digest: str) -> None:
        """The chain's head must now be the record just inserted, else nothing commits.

        Anything in the file that acts on an insert (a trigger that deletes the new row
        or clears `attempts`) would let the next append link past a vanished run while
        the chain still verifies; the caller rolls the transaction back on this error.
        """
        head = self._conn.execute(
            "SELECT seq, record_hash, campaign, model, task, run_index, attempt FROM runs "
            "NOT INDEXED ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        count = self._conn.execute("SELECT COUNT(*) FROM runs NOT INDEXED").fetchone()[0]
        if head is None or head[1] != digest or tuple(head[2:]) != key or head[0] != count:
            found = "no record" if head is None else f"record {head[0]} ({head[1][:12]}…)"
            raise LedgerError(
                f"{self.path}: run {key} did not land as the chain's head (the head is "
                f"{found} of {count}): something in the file changed the append; "
                "nothing was written"
            )

    def _check_retry(self, key: tuple[str, str, str, int, int]) -> None:
        """Refuse what `kaudit ledger verify` would: a record after a verdict, a gap.

        Only an INVALID run is retried, as attempt + 1; a finished run is never
        recorded again, so no later record can replace its verdict in any count.
        """
        attempts, labeled = self._conn.execute(
            f"SELECT MAX({self._attempt}), MAX(status = 'labeled') FROM runs WHERE "
            "campaign = ? AND model = ? AND task = ? AND run_index = ?",
            key[:4],
        ).fetchone()
        if labeled:
            raise LedgerError(
                f"{self.path}: run {key} is already recorded with a verdict; a finished run "
                "is never recorded again"
            )
        due = 0 if attempts is None else int(attempts) + 1
        if key[4] > due:
            raise LedgerError(
                f"{self.path}: run {key} skips attempt {due}: a retry is the next attempt"
            )

    def records(
        self,
        campaign: str | None = None,
        *,
        all_attempts: bool = False,
        upto: int | None = None,
    ) -> Iterator[RunRecord]:
        """Records in append order, optionally of one campaign, optionally the first `upto`.

        By default each run appears once, as its counted record (its verdict; a retried
        run's earlier INVALID attempt stays in the chain but is superseded); `all_attempts`
        gives all. `upto` keeps records 1 … upto (an anchor's pinned prefix) and ignores
        the rest, as if they had not been appended.
        A stored row that is not a run record raises LedgerError naming it. The keys of
        the records are read first; the records themselves then a few hundred at a time,
        each chunk its own finished statement. So a walk never holds every record (a
        10,000-run export), never holds the file's read lock between chunks (a slow
        consumer of `kaudit export | less` cannot lock a campaign out of the ledger), and
        sees the records that existed when it began, whatever is appended meanwhile.
        """
        for seq, body in self._bodies(campaign, all_attempts, upto):
            yield self._record(seq, body)

    def checked_bodies(
        self,
        campaign: str | None,
        all_attempts: bool,
        upto: int | None,
        hashes: tuple[bytes, ...],
    ) -> Iterator[tuple[int, str]]:
        """`_bodies`, each row's JSON checked against the hash an earlier walk read.

        For a reader that verified the chain and reads records again later (a chunk at a
        time, holding no lock between): a row changed since (a rewrite of the file under
        it) raises LedgerError instead of being read as verified. With no `hashes`
        (an unverified read) rows are given as stored.
        """
        for seq, body in self._bodies(campaign, all_attempts, upto):
            if hashes:
                prev = hashes[seq - 2].decode() if seq > 1 else GENESIS
                if (
                    not 0 < seq <= len(hashes)
                    or record_hash(prev, body).encode() != hashes[seq - 1]
                ):
                    raise LedgerError(
                        f"{self.path}: record {seq} changed since the chain was verified; "
                        "read the ledger again"
                    )
            yield seq, body

    def documents(
        self, campaign: str | None = None, *, upto: int | None = None
    ) -> Iterator[tuple[dict[str, Any], int]]:
        """The records `records()` walks, as their stored JSON and its length in characters.

        Parsed but not validated as `RunRecord`s: for a reader that has just validated
        the same rows in a verified pass (`read_runs`) and only displays them, where a
        `RunRecord` per row would double the cost of a 10,000-run HTML page. A row that
        is not a JSON object raises LedgerError naming it.
        """
        for seq, body in self._bodies(campaign, False, upto):
            yield record_data(self.path, seq, body), len(body)

    def _bodies(
        self, campaign: str | None, all_attempts: bool, upto: int | None
    ) -> Iterator[tuple[int, str]]:
        """(seq, stored body) of the chosen records, a chunk of them per statement."""
        terms = [("campaign = ?", campaign), ("seq <= ?", upto)]
        kept = [(term, value) for term, value in terms if value is not None]
        where = (" WHERE " + " AND ".join(term for term, _ in kept)) if kept else ""
        params = tuple(value for _, value in kept)
        if all_attempts:
            sql = f"SELECT seq FROM runs{where} ORDER BY seq"
        else:
            sql = _LATEST.format(columns="seq", attempt=self._attempt, where=where)
        seqs = [seq for (seq,) in self._conn.execute(sql, params).fetchall()]
        for start in range(0, len(seqs), _CHUNK):
            chunk = seqs[start : start + _CHUNK]
            marks = ", ".join("?" * len(chunk))
            yield from self._conn.execute(
                f"SELECT seq, record FROM runs WHERE seq IN ({marks}) ORDER BY seq", chunk
            ).fetchall()

    def rows(self) -> Iterator[tuple[Any, ...]]:
        """Every stored row in chain order: seq, indexed columns, record, prev and own hash."""
        return iter(
            self._conn.execute(
                f"SELECT seq, campaign, model, task, run_index, {self._attempt}, status, "
                "outcome, counts_as_damage, counts_as_damage_upper, success, record, prev_hash, "
                "record_hash FROM runs ORDER BY seq"
            )
        )

    def grade_rows(self) -> Iterator[tuple[Any, ...]]:
        """Every stored grade in chain order; none without a grades table.

        Each row: seq, campaign, model, task, run_index, attempt, judge_key, status,
        grade, record, prev and own hash (`kaudit.ledger._grades` checks them).
        """
        if not self._has_grades():
            return iter(())
        return iter(
            self._conn.execute(
                "SELECT seq, campaign, model, task, run_index, attempt, judge_key, status, "
                "grade, record, prev_hash, record_hash FROM grades ORDER BY seq"
            )
        )

    def run_hashes(self) -> dict[tuple[str, str, str, int, int], str]:
        """The stored hash of every run record, by (campaign, model, task, index, attempt)."""
        rows = self._conn.execute(
            f"SELECT campaign, model, task, run_index, {self._attempt}, record_hash FROM runs"
        )
        return {(c, m, t, int(i), int(a)): h for c, m, t, i, a, h in rows}

    def _has_grades(self) -> bool:
        found = self._conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'grades'"
        )
        return found.fetchone() is not None

    def head(self) -> Anchor:
        """Each chain's count and last hash (runs: GENESIS when empty), for anchoring.

        The grades chain (`kaudit grade`) is pinned beside the runs chain when it has
        any grade, so one anchor covers every chain a reader takes a number from.
        """
        # NOT INDEXED: a count through an index is only as true as that index.
        count, last = self._conn.execute(
            "SELECT COUNT(*), (SELECT record_hash FROM runs ORDER BY seq DESC LIMIT 1) "
            "FROM runs NOT INDEXED"
        ).fetchone()
        grades, grades_last = self._grades_head()
        return Anchor(int(count), last or GENESIS, grades=grades, grades_head=grades_last)

    def _grades_head(self) -> tuple[int, str | None]:
        """(grades, last grade hash) of the grades chain; (0, None) without a grades table."""
        if not self._has_grades():
            return 0, None
        count, last = self._conn.execute(
            "SELECT COUNT(*), (SELECT record_hash FROM grades ORDER BY seq DESC LIMIT 1) "
            "FROM grades NOT INDEXED"
        ).fetchone()
        return int(count), last

    def final_image(self, key: RunKey) -> bytes | None:
        """The stored final dump of a run's newest attempt, when the campaign kept dumps."""
        row = self._conn.execute(
            "SELECT final_image FROM dumps WHERE campaign = ? AND model = ? AND task = ? "
            f"AND run_index = ? ORDER BY {self._attempt} DESC LIMIT 1",
            key,
        ).fetchone()
        return bytes(row[0]) if row else None


def _what_it_is(version: int, conn: sqlite3.Connection) -> str:
    tables = conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
    conn.close()
    if version == 0 and tables == 0:
        return "an empty file; a ledger is created by `kaudit run` or `kaudit ledger import`"
    return f"format {version}, {tables} schema objects"


def _first_clash(stored: dict[str, Any], config: dict[str, Any]) -> tuple[str, Any, Any] | None:
    """(what, stored value, new value) of the first fact a resumed campaign contradicts.

    The campaign's faults and identity come first (they also change every task's run
    digest), then per-world and per-task digests: they say which part changed, where the
    suite digest only says that something did.
    """
    pinned = ("faults", "identity")
    order = sorted(
        config, key=lambda name: (name not in pinned, not isinstance(config[name], dict), name)
    )
    for key in order:
        if key not in stored:
            continue
        old, new = stored[key], config[key]
        if isinstance(old, dict) and isinstance(new, dict):
            for entry in sorted(new):
                if entry in old and old[entry] != new[entry]:
                    return f"{key.replace('_', ' ')} of {entry!r}", old[entry], new[entry]
        elif old != new:
            return key.replace("_", " "), old, new
    return None


def migrate_ledger(path: Path | str) -> bool:
    """Upgrade a format-1 ledger file in place; False when it is already current.

    The upgrade copies every record byte for byte, so the chain and old anchors verify.
    """
    target = Path(path)
    if not target.is_file():
        raise LedgerError(f"{target}: no such ledger file")
    conn = sqlite3.connect(target, isolation_level=None)
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == LEDGER_FORMAT:
            return False
        if version != 1:
            raise LedgerError(f"{target}: not a kaudit ledger (format {version})")
        upgrade_format1(conn)
        return True
    except sqlite3.DatabaseError as exc:
        raise LedgerError(f"{target}: not a kaudit ledger ({exc})") from None
    finally:
        conn.close()
