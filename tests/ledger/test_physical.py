"""The writer and every reader take only a file kaudit made: no foreign schema object.

A trigger planted before a campaign deletes each new damage row; the next append links
to the surviving row, so the chain stays valid while damage runs vanish (and a resume
re-runs them until they come out clean). The writer refuses such a file at open, and
checks after every append that the chain's head is the record it just wrote.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.errors import LedgerError
from kaudit.ledger import Ledger, verify_ledger
from tests.conftest import FIXTURES
from tests.ledger.conftest import execute
from tests.ledger.test_store import record

TRIGGER = (
    "CREATE TRIGGER vanish AFTER INSERT ON runs WHEN new.counts_as_damage = 1 BEGIN "
    "DELETE FROM runs WHERE seq = new.seq; DELETE FROM attempts; END"
)


def _bytes(path: Path) -> bytes:
    return path.read_bytes()


def test_a_writer_refuses_a_ledger_with_a_planted_trigger_and_changes_nothing(
    tmp_path: Path,
) -> None:
    """Fails if `Ledger()` opens a file with a foreign trigger for appending (tried by
    hand: the campaign then reports 2 damage runs the ledger no longer holds)."""
    path = tmp_path / "audit.sqlite"
    with Ledger(path) as ledger:
        ledger.append(record(0))
    execute(path, TRIGGER)
    before = _bytes(path)
    with pytest.raises(LedgerError, match="trigger 'vanish' on table 'runs' is not part of"):
        Ledger(path)
    assert _bytes(path) == before


def test_run_on_a_trigger_planted_ledger_exits_2_naming_it(tmp_path: Path) -> None:
    """Fails if `kaudit run` starts a campaign on a file holding a foreign trigger."""
    path = tmp_path / "audit.sqlite"
    with Ledger(path):
        pass
    execute(path, TRIGGER)
    args = ["run", "--suite", str(FIXTURES / "mini_suite"), "--k", "2", "--ledger", str(path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "trigger 'vanish'" in result.stderr
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    conn.close()


def test_an_append_that_did_not_land_as_the_head_stops_and_writes_nothing(
    tmp_path: Path,
) -> None:
    """Fails if `append` trusts the insert: a trigger planted while the writer had the
    file open deletes the damage row, and without the head check the next append links
    to the surviving row with a valid chain (tried by hand: verify then passes on 2 rows
    where 3 runs were written)."""
    path = tmp_path / "audit.sqlite"
    with Ledger(path) as ledger:
        ledger.append(record(0))
        execute(path, TRIGGER)
        with pytest.raises(LedgerError, match=r"did not land as the chain's head"):
            ledger.append(record(1, damage=True))
        assert ledger.head().records == 1
    execute(path, "DROP TRIGGER vanish")
    assert verify_ledger(path).records == 1


def test_head_counts_rows_not_index_entries(tmp_path: Path) -> None:
    """Fails if `Ledger.head` counts through the runs' unique index: an index swapped for
    a partial one would make `ledger head` (and the anchor signed from it) short."""
    from tests.ledger.test_tamper_matrix import _lying_index

    path = tmp_path / "audit.sqlite"
    with Ledger(path) as ledger:
        for i in range(4):
            ledger.append(record(i, damage=i == 1))
    _lying_index(path, None)  # type: ignore[arg-type]
    with Ledger(path, readonly=True) as ledger:
        assert ledger.head().records == 4
    with pytest.raises(LedgerError, match="missing from index sqlite_autoindex_runs_1"):
        verify_ledger(path)
