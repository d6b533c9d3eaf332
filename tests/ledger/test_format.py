"""Ledger formats and read-only opening: readers never create, claim or convert a file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.errors import LedgerError
from kaudit.ledger import Ledger, ledger_head, verify_ledger
from kaudit.ledger._store import migrate_ledger

runner = CliRunner()

FORMAT1 = """
CREATE TABLE campaigns (name TEXT PRIMARY KEY, config TEXT NOT NULL, manifest TEXT,
    created_at REAL NOT NULL);
CREATE TABLE runs (seq INTEGER PRIMARY KEY, campaign TEXT NOT NULL, model TEXT NOT NULL,
    task TEXT NOT NULL, run_index INTEGER NOT NULL, status TEXT NOT NULL, outcome TEXT,
    counts_as_damage INTEGER NOT NULL, counts_as_damage_upper INTEGER NOT NULL,
    success INTEGER NOT NULL, record TEXT NOT NULL, prev_hash TEXT NOT NULL,
    record_hash TEXT NOT NULL, UNIQUE (campaign, model, task, run_index));
CREATE TABLE attempts (campaign TEXT NOT NULL, model TEXT NOT NULL, task TEXT NOT NULL,
    run_index INTEGER NOT NULL, started_at REAL NOT NULL);
CREATE TABLE dumps (campaign TEXT NOT NULL, model TEXT NOT NULL, task TEXT NOT NULL,
    run_index INTEGER NOT NULL, final_image BLOB NOT NULL,
    PRIMARY KEY (campaign, model, task, run_index));
PRAGMA user_version = 1;
"""


def format1_copy(source: Path, target: Path) -> Path:
    """The same records in a format-1 file: no attempt column, no attempt in the bodies."""
    conn = sqlite3.connect(target)
    conn.executescript(FORMAT1)
    old = sqlite3.connect(source)
    from kaudit.ledger import record_hash
    from kaudit.ledger._anchor import GENESIS

    prev = GENESIS
    for row in old.execute(
        "SELECT campaign, model, task, run_index, status, outcome, counts_as_damage, "
        "counts_as_damage_upper, success, record FROM runs ORDER BY seq"
    ):
        body = json.loads(row[-1])
        del body["attempt"], body["task_digest"]
        body.pop("suite_tasks_digest", None)  # newer than format 1, as its manifest check
        text = json.dumps(body, sort_keys=True, separators=(",", ":"))
        digest = record_hash(prev, text)
        conn.execute(
            "INSERT INTO runs (campaign, model, task, run_index, status, outcome, "
            "counts_as_damage, counts_as_damage_upper, success, record, prev_hash, record_hash) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*row[:-1], text, prev, digest),
        )
        prev = digest
    conn.commit()
    conn.close()
    old.close()
    return target


def test_a_format1_ledger_is_read_as_is_and_upgraded_only_on_request(
    ledger_path: Path, tmp_path: Path
) -> None:
    """Reading must not need the attempt column; writing must not silently convert."""
    old = format1_copy(ledger_path, tmp_path / "old.sqlite")
    before = old.read_bytes()
    anchor = ledger_head(old)
    assert verify_ledger(old, anchor).records == 4
    report = runner.invoke(app, ["report", str(old), "--json"])
    assert report.exit_code == 0, report.output
    assert json.loads(report.stdout)["cells"][0]["n"] == 4
    assert old.read_bytes() == before
    with pytest.raises(LedgerError, match="kaudit ledger migrate"):
        Ledger(old)
    assert old.read_bytes() == before
    assert migrate_ledger(old) is True
    assert verify_ledger(old, anchor).records == 4  # every hash survived the upgrade
    assert migrate_ledger(old) is False
    with Ledger(old) as ledger:
        assert [r.attempt for r in ledger.records()] == [0, 0, 0, 0]


@pytest.mark.parametrize("content", [b"", b"not a database at all"])
def test_report_on_an_empty_or_foreign_file_is_a_clean_error_and_leaves_it(
    tmp_path: Path, content: bytes
) -> None:
    """`report` used to claim an empty file as a ledger (writing a schema into it)."""
    path = tmp_path / "x.sqlite"
    path.write_bytes(content)
    result = runner.invoke(app, ["report", str(path)])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "not a kaudit ledger" in result.stderr
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.sqlite"]


def test_read_only_commands_never_create_a_file(tmp_path: Path) -> None:
    """A reader opened read-write would create the missing file (and its WAL)."""
    missing = tmp_path / "missing.sqlite"
    for args in (
        ["ledger", "verify", str(missing)],
        ["ledger", "head", str(missing)],
        ["ledger", "export", str(missing)],
        ["stats", str(missing)],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, args
    assert list(tmp_path.iterdir()) == []


def test_a_foreign_sqlite_database_is_refused_untouched(tmp_path: Path) -> None:
    """Opening another application's database must not add tables to it."""
    path = tmp_path / "app.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (a)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(LedgerError, match="not a kaudit ledger"):
        Ledger(path, readonly=True)
    with pytest.raises(LedgerError, match="not a kaudit ledger"):
        Ledger(path)
    assert path.read_bytes() == before


def test_readers_of_a_ledger_at_rest_create_no_files(ledger_path: Path) -> None:
    """A WAL-mode file makes even a mode=ro reader create -wal and -shm beside it."""
    before = sorted(p.name for p in ledger_path.parent.iterdir())
    content = ledger_path.read_bytes()
    for args in (
        ["report", str(ledger_path)],
        ["stats", str(ledger_path)],
        ["ledger", "verify", str(ledger_path)],
        ["ledger", "head", str(ledger_path)],
        ["ledger", "export", str(ledger_path)],
    ):
        assert runner.invoke(app, args).exit_code == 0, args
    assert sorted(p.name for p in ledger_path.parent.iterdir()) == before
    assert ledger_path.read_bytes() == content
