"""Walking a ledger's records: in chunks, newest attempts only, never holding the file.

`Ledger.records` reads the keys first and the records a chunk at a time, each chunk its
own finished statement, so a slow consumer (`kaudit export ... | less`) holds no lock.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kaudit.ledger import Ledger, RunRecord, canonical
from kaudit.ledger._store import _CHUNK


def record(i: int, attempt: int = 0, status: str = "labeled") -> RunRecord:
    return RunRecord.model_validate(
        {"campaign": "c", "model": "m", "task": "t", "run_index": i, "seed": i,
         "status": status, "outcome": "PASS" if status == "labeled" else None,
         "attempt": attempt}
    )  # fmt: skip


def filled(path: Path, runs: int) -> None:
    with Ledger(path) as store:
        for i in range(runs):
            store.append(record(i, status="invalid" if i % 7 == 0 else "labeled"))
        for i in range(0, runs, 7):
            store.append(record(i, attempt=1))  # the retry supersedes the INVALID attempt


def test_a_walk_over_several_chunks_gives_each_runs_newest_attempt_in_order(
    tmp_path: Path,
) -> None:
    """Fails if a chunk boundary drops or repeats a record, or if superseded attempts
    come back (the keys query and the chunk reads disagreeing)."""
    path = tmp_path / "l.sqlite"
    runs = 2 * _CHUNK + 37
    filled(path, runs)
    with Ledger(path, readonly=True) as store:
        walked = [(r.run_index, r.attempt, r.status) for r in store.records()]
        every = list(store.records(all_attempts=True))
    assert sorted(i for i, _, _ in walked) == list(range(runs))
    assert all(status == "labeled" for _, _, status in walked)
    assert all(attempt == (1 if i % 7 == 0 else 0) for i, attempt, _ in walked)
    assert len(every) == runs + len(range(0, runs, 7))


def test_records_appended_during_a_walk_are_not_part_of_it(tmp_path: Path) -> None:
    """Fails if the walk re-queries its keys per chunk (it would pick up runs recorded
    after it began, and a report would count a moving set)."""
    path = tmp_path / "l.sqlite"
    filled(path, _CHUNK + 10)
    with Ledger(path) as store:
        walk = store.records()
        next(walk)
        store.append(record(10_000))
        assert 10_000 not in {r.run_index for r in walk}


def test_documents_walk_the_records_records_walks_as_their_stored_json(tmp_path: Path) -> None:
    """Fails if the HTML viewer's walk picks other rows than the report counts (a
    superseded INVALID attempt, a record past `upto`) or changes a value on the way."""
    path = tmp_path / "l.sqlite"
    filled(path, _CHUNK + 20)
    with Ledger(path, readonly=True) as store:
        for upto in (None, 300):
            records = [r.model_dump(mode="json") for r in store.records(upto=upto)]
            documents = list(store.documents(upto=upto))
            assert [data for data, _ in documents] == records
            assert [size for _, size in documents] == [len(canonical(r)) for r in
                                                       store.records(upto=upto)]  # fmt: skip


WRITER = """
import sys, time
from kaudit.ledger import Ledger
start = time.monotonic()
with Ledger(sys.argv[1]) as store:
    store.claim(("other", "m", "t", 0))
print(round(time.monotonic() - start, 1))
"""


def test_a_slow_read_only_walk_does_not_lock_a_campaign_out(tmp_path: Path) -> None:
    """Fails if the walk keeps one statement open between records (it then holds the
    file's shared lock, and a campaign opening the ledger waits its busy timeout and
    fails with 'database is locked')."""
    path = tmp_path / "l.sqlite"
    filled(path, 50)
    with Ledger(path, readonly=True) as store:
        walk = store.records()
        next(walk)  # the consumer is slow: the walk is paused mid-way
        done = subprocess.run(
            [sys.executable, "-c", WRITER, str(path)], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr[-500:]
        assert len(list(walk)) == 49
