"""`kaudit.open`: one read-only snapshot, verified once, that every reader takes.

Every reader given the snapshot reads what the verification saw: records appended
meanwhile by a writer are in none of them, and nothing past the anchor is read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kaudit
from kaudit.errors import KauditError, LedgerError
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


def _appended(ledger: Path, runs: int) -> None:
    """`runs` more runs of the last cell, appended the way a continued campaign does."""
    with Ledger(ledger) as store:
        last = list(store.records())[-1]
        for index in range(runs):
            store.append(last.model_copy(update={"run_index": 50 + index, "seed": 50 + index}))


def test_records_after_the_anchor_are_refused_naming_the_first(ledger: Path) -> None:
    """Fails if `kaudit.open` given an anchor reads a ledger holding records after it
    (before, they were checked and silently "counted out", while a derived table could
    still be built from them), or names another record than the first past the anchor,
    or leaves out its hash."""
    from kaudit.ledger import PastAnchorError, ledger_head

    anchor = ledger_head(ledger)
    _appended(ledger, 2)
    with Ledger(ledger, readonly=True) as store:
        first = [row[13] for row in store.rows()][anchor.records]
    with pytest.raises(PastAnchorError) as refused:
        kaudit.open(ledger, head=anchor)
    assert (refused.value.position, refused.value.entry_hash) == (anchor.records + 1, first)
    assert f"record {anchor.records + 1} ({first[:12]}…)" in str(refused.value)
    assert "anchored_prefix=True" in str(refused.value)


def test_the_anchored_prefix_holds_only_what_the_anchor_pins(ledger: Path) -> None:
    """Fails if a snapshot opened with `anchored_prefix=True` lets a record after the
    anchor into its runs, cells, full records or stored documents (every derived table
    takes those), or does not say how many records the chain holds beyond the anchor."""
    from kaudit.ledger import ledger_head

    anchor = ledger_head(ledger)
    with kaudit.open(ledger) as clean:
        runs, cells = clean.runs(), clean.cells()
        records = [record.run_index for record in clean.full_records()]
    _appended(ledger, 2)
    with kaudit.open(ledger, head=anchor, anchored_prefix=True) as prefix:
        assert prefix.anchored_prefix
        assert (prefix.records, prefix.anchored_records) == (anchor.records + 2, anchor.records)
        assert (prefix.runs(), prefix.cells()) == (runs, cells)
        assert [record.run_index for record in prefix.full_records()] == records
        assert [data["run_index"] for data, _ in prefix.documents()] == records


def test_the_anchored_prefix_needs_an_anchor(ledger: Path) -> None:
    """Fails if `anchored_prefix=True` without `head` reads the whole ledger as if an
    anchor had pinned it."""
    with pytest.raises(KauditError, match="`anchored_prefix` needs `head`"):
        kaudit.open(ledger, anchored_prefix=True)
