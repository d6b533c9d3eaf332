"""`kaudit.open`: one read-only snapshot, verified once, that every reader takes.

Every reader given the snapshot reads what the verification saw: records appended
meanwhile by a writer are in none of them, and nothing past the anchor is read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kaudit
from kaudit.errors import LedgerError
from kaudit.ledger import Ledger
from tests.ledger.conftest import execute, run_ledger


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    return run_ledger(tmp_path / "audit.sqlite", k=3)


def test_every_reader_given_a_snapshot_reads_what_it_verified(ledger: Path) -> None:
    """Fails if a reader given the snapshot reads the file again: a run appended by a
    writer after `kaudit.open` would then show up in the report, the gate, the export or
    the monitor's audit (tried by hand: `export_ledger` walking a new connection)."""
    with kaudit.open(ledger) as snapshot:
        before = kaudit.read(snapshot).to_json()
        with Ledger(ledger) as store:  # a writer appends while the snapshot is open
            last = list(store.records())[-1]
            store.append(last.model_copy(update={"run_index": 99, "seed": 99}))
        assert kaudit.read(snapshot).to_json() == before
        exported = kaudit.export(snapshot, "jsonl")
        assert exported.runs == snapshot.records == len(snapshot.runs())
        assert all(json.loads(line)["run_index"] != 99 for line in str(exported.text).splitlines())
        decided = kaudit.decide(snapshot, "propose")
        assert decided.to_json()["authority"] == "propose"
        pooled = kaudit.summarize([snapshot], bootstrap=10)
        assert sum(cell.tally.n for cell in pooled.pool.cells) == len(snapshot.runs())
    with kaudit.open(ledger) as fresh:
        assert fresh.records == snapshot.records + 1


def test_open_refuses_a_broken_file_once_for_every_reader(ledger: Path) -> None:
    """Fails if `kaudit.open` hands out a snapshot of a file with a foreign trigger, or
    if `lenient` loses the problem it found (the gate names it in its denial)."""
    execute(ledger, "CREATE TRIGGER t AFTER INSERT ON runs BEGIN SELECT 1; END")
    with pytest.raises(LedgerError, match="trigger 't' on table 'runs'"):
        kaudit.open(ledger)
    with kaudit.open(ledger, lenient=True) as snapshot:
        assert not snapshot.verified
        assert "trigger 't'" in str(snapshot.verify_error)
        assert len(snapshot.runs()) == 3  # read unverified, for the denial's other reasons
    assert not snapshot.is_open


def test_a_row_rewritten_after_the_check_is_refused_when_read_again(ledger: Path) -> None:
    """Fails if a reader that reads records again after `kaudit.open` (an export, the
    page's viewer) takes a row rewritten since the check, chain recomputed and all (tried
    by hand: reading the rows without comparing them to the verified hashes)."""
    from tests.ledger.conftest import rechain

    with kaudit.open(ledger) as snapshot:
        execute(ledger, "UPDATE runs SET record = replace(record, '\"seed\":', '\"seed\": ')")
        rechain(ledger)
        with pytest.raises(LedgerError, match="record 1 changed since the chain was verified"):
            kaudit.export(snapshot, "jsonl")


def test_the_snapshot_holds_cells_rules_and_stack_health(ledger: Path) -> None:
    """Fails if the snapshot's cells disagree with the report's, or its stopping rules or
    stack health are not the counted runs' (one read gives every reader the same)."""
    with kaudit.open(ledger) as snapshot:
        report = kaudit.read(snapshot)
        assert {(c.model, c.task, c.n, c.damage) for c in snapshot.cells()} == {
            (c.model, c.task, c.n, c.damage) for c in report.cells
        }
        assert snapshot.stopping_rules() == report.stopping_rules
        assert set(snapshot.stack_health()) <= {cell.key for cell in report.cells}
