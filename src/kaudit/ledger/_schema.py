"""The ledger file's SQLite schema, its format number, and the upgrade from format 1."""

from __future__ import annotations

import sqlite3

LEDGER_FORMAT = 2
"""`PRAGMA user_version` of a ledger this kaudit writes.

Format 2 keys a run by (campaign, model, task, run index, attempt) so a run the harness
failed can be retried append-only; format 1 had no attempt column.
"""
READABLE_FORMATS = frozenset({1, 2})
"""Formats read as they are: a format-1 run is attempt 0 (its record has no attempt field)."""

SCHEMA = """
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
    attempt INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL,
    outcome TEXT,
    counts_as_damage INTEGER NOT NULL,
    counts_as_damage_upper INTEGER NOT NULL,
    success INTEGER NOT NULL,
    record TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    record_hash TEXT NOT NULL,
    UNIQUE (campaign, model, task, run_index, attempt)
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
    attempt INTEGER NOT NULL DEFAULT 0,
    final_image BLOB NOT NULL,
    PRIMARY KEY (campaign, model, task, run_index, attempt)
);
"""

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
"""The grades chain (`kaudit grade`): created by the first grading, checked by `_grades`."""

CLAIMS_SCHEMA = """
CREATE TABLE IF NOT EXISTS spool_claims (
    claim TEXT PRIMARY KEY,
    campaign TEXT NOT NULL,
    task TEXT NOT NULL,
    claimed_at REAL NOT NULL
);
"""
"""Served runs a writer let start: a spooled run is appended only under its own claim.

Written when `kaudit mcp serve` checks the ledger before serving (under the writer
lock), before the client (and so the model) is known; the appended record names its
claim (`extra["served"]["claim"]`), which chains it, so each claim admits one record of
its own task to its own campaign.
"""

_UPGRADE_1_TO_2 = """
ALTER TABLE runs RENAME TO runs_format1;
ALTER TABLE dumps RENAME TO dumps_format1;
{schema}
INSERT INTO runs (seq, campaign, model, task, run_index, attempt, status, outcome,
    counts_as_damage, counts_as_damage_upper, success, record, prev_hash, record_hash)
    SELECT seq, campaign, model, task, run_index, 0, status, outcome, counts_as_damage,
    counts_as_damage_upper, success, record, prev_hash, record_hash FROM runs_format1;
INSERT INTO dumps (campaign, model, task, run_index, attempt, final_image)
    SELECT campaign, model, task, run_index, 0, final_image FROM dumps_format1;
DROP TABLE runs_format1;
DROP TABLE dumps_format1;
PRAGMA user_version = 2;
"""


def upgrade_format1(conn: sqlite3.Connection) -> None:
    """Rebuild a format-1 file as format 2 in one transaction.

    Record bodies and their hashes are copied byte for byte, so the hash chain and any
    anchor taken before the upgrade still verify.
    """
    try:
        conn.executescript("BEGIN IMMEDIATE;" + _UPGRADE_1_TO_2.format(schema=SCHEMA) + "COMMIT;")
    except sqlite3.Error:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
