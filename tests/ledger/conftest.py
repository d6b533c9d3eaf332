"""Ledgers written by a real `kaudit run` on the mini suite, and an attacker's re-chain."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.ledger import record_hash
from kaudit.ledger._anchor import GENESIS
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


def rechain(
    path: Path, table: str = "runs", hash_of: Callable[[str, str], str] = record_hash
) -> None:
    """Recompute every prev/record hash of `table`, as someone rewriting history would."""
    conn = sqlite3.connect(path)
    prev = GENESIS
    for seq, body in conn.execute(f"SELECT seq, record FROM {table} ORDER BY seq").fetchall():
        digest = hash_of(prev, body)
        conn.execute(
            f"UPDATE {table} SET prev_hash = ?, record_hash = ? WHERE seq = ?", (prev, digest, seq)
        )
        prev = digest
    conn.commit()
    conn.close()


def execute(path: Path, sql: str, *params: object) -> None:
    conn = sqlite3.connect(path)
    conn.execute(sql, params)
    conn.commit()
    conn.close()
