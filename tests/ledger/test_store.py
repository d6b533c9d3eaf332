from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from kaudit.errors import LedgerError
from kaudit.ledger import Ledger, RunRecord, walk_chain
from kaudit.ledger._snapshot import read_tallies


def record(i: int, *, damage: bool = False, task: str = "t", status: str = "labeled") -> RunRecord:
    return RunRecord(
        campaign="c",
        model="m",
        task=task,
        run_index=i,
        seed=i,
        status=status,  # type: ignore[arg-type]
        outcome=None if status == "invalid" else ("FAIL_DAMAGE" if damage else "PASS"),
        counts_as_damage=damage,
        counts_as_damage_upper=damage,
        success=not damage and status == "labeled",
    )


def test_records_chain_and_verify(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.sqlite") as ledger:
        hashes = [ledger.append(record(i)) for i in range(5)]
        assert len(set(hashes)) == 5
        assert walk_chain(ledger).records == 5


def test_a_rewritten_record_breaks_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    with Ledger(path) as ledger:
        for i in range(3):
            ledger.append(record(i, damage=i == 1))
    conn = sqlite3.connect(path)
    body = conn.execute("SELECT record FROM runs WHERE seq = 2").fetchone()[0]
    conn.execute(
        "UPDATE runs SET record = ? WHERE seq = 2",
        (body.replace('"counts_as_damage":true', '"counts_as_damage":false'),),
    )
    conn.commit()
    conn.close()
    with Ledger(path) as ledger, pytest.raises(LedgerError, match="hash chain broken at record 2"):
        walk_chain(ledger)


def test_a_run_is_never_recorded_twice(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.sqlite") as ledger:
        ledger.append(record(0))
        with pytest.raises(LedgerError, match="already recorded"):
            ledger.append(record(0, damage=True))
        assert [r.counts_as_damage for r in ledger.records()] == [False]
        assert walk_chain(ledger).records == 1


def test_resuming_with_a_different_seed_is_refused(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.sqlite") as ledger:
        ledger.open_campaign("c", {"seed": 1, "suite_digest": "a"})
        ledger.open_campaign("c", {"seed": 1, "suite_digest": "a"})
        with pytest.raises(LedgerError, match="started with seed 1, this run has 2"):
            ledger.open_campaign("c", {"seed": 2, "suite_digest": "a"})


def test_claims_count_interrupted_attempts(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.sqlite") as ledger:
        key = ("c", "m", "t", 0)
        assert [ledger.claim(key), ledger.claim(key), ledger.claim(("c", "m", "t", 1))] == [0, 1, 0]


def test_tallies_skip_invalid_runs(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    with Ledger(path) as ledger:
        for i, damage in enumerate([True, False, False, True]):
            ledger.append(record(i, damage=damage))
        ledger.append(record(4, status="invalid"))
    (tally,) = read_tallies(path)
    assert (tally.n, tally.damage, tally.damage_upper, tally.success) == (4, 2, 2, 2)


def test_a_file_that_is_not_a_ledger_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(LedgerError, match="not a kaudit ledger"):
        Ledger(path)


def test_another_sqlite_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "app.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(LedgerError, match=r"not a kaudit ledger .*nothing was changed"):
        Ledger(path)
    assert path.read_bytes() == before


def test_an_unwritable_location_is_a_ledger_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(LedgerError, match="cannot open"):
        Ledger(blocker / "sub" / "l.sqlite")


def test_a_second_writer_is_refused_while_the_first_holds_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    with (
        Ledger(path) as first,
        Ledger(path) as second,
        first.writer_lock(),
        pytest.raises(LedgerError, match="another kaudit process is writing"),
        second.writer_lock(),
    ):
        pass
    with Ledger(path) as again, again.writer_lock():
        pass  # released when the first writer let go


STORE_READS = {
    "kaudit.ledger._anchor",
    "kaudit.ledger._floats",
    "kaudit.ledger._parse",
    "kaudit.ledger._physical",
    "kaudit.ledger._record",
    "kaudit.ledger._schema",
}
"""The ledger modules the store may import: values, the schema and its physical check."""


def test_the_store_is_the_ledger_rooms_bottom_layer() -> None:
    """Fails if the store imports a check or a reader of its own rows (the chain walk, the
    grades chain, the snapshot), even deferred inside a method: every such module takes a
    `Ledger`, so the store calling up into it closes a cycle (tried by hand: putting
    `Ledger.verify()` back, with its deferred `walk_chain` import, fails here)."""
    from tests.test_imports import import_graph

    graph = import_graph()
    ledger_room = {
        name for name in graph["kaudit.ledger._store"] if name.startswith("kaudit.ledger")
    }
    assert ledger_room <= STORE_READS, sorted(ledger_room - STORE_READS)
    for module in STORE_READS:
        assert "kaudit.ledger._store" not in graph[module], module
