"""Ledgers written by a real `kaudit run` on the mini suite, and an attacker's re-chain."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.ledger import GENESIS, record_hash
from tests.conftest import FIXTURES


def run_ledger(path: Path, k: int = 4, campaign: str = "default") -> Path:
    """`kaudit run` of the mini suite with the reference agent into `path`."""
    args = ["run", "--suite", str(FIXTURES / "mini_suite"), "--k", str(k), "--ledger", str(path)]
    result = CliRunner().invoke(app, [*args, "--campaign", campaign])
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture
def ledger_path(tmp_path: Path) -> Path:
    return run_ledger(tmp_path / "audit.sqlite")


def rechain(path: Path) -> None:
    """Recompute every prev/record hash, as someone rewriting history would."""
    conn = sqlite3.connect(path)
    prev = GENESIS
    for seq, body in conn.execute("SELECT seq, record FROM runs ORDER BY seq").fetchall():
        digest = record_hash(prev, body)
        conn.execute(
            "UPDATE runs SET prev_hash = ?, record_hash = ? WHERE seq = ?", (prev, digest, seq)
        )
        prev = digest
    conn.commit()
    conn.close()


def execute(path: Path, sql: str) -> None:
    conn = sqlite3.connect(path)
    conn.execute(sql)
    conn.commit()
    conn.close()
