"""The run viewer built by a forked process beside the verified read."""

from __future__ import annotations

import dataclasses
import multiprocessing
from pathlib import Path

import pytest

from kaudit.errors import LedgerError
from kaudit.ledger import Ledger
from kaudit.report import _viewer_build as build
from kaudit.report._read import read_report
from kaudit.report._viewer import unpacked_runs
from kaudit.report._viewer_build import ViewerBuild
from tests.conftest import FIXTURES
from tests.report.conftest import make_record, reference_ledger


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fork for any ledger, whatever threads the test runner keeps."""
    monkeypatch.setattr(build, "FORK_MIN_RECORDS", 1)
    monkeypatch.setattr(build, "can_fork", lambda: True)


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fork") / "audit.sqlite"
    return reference_ledger(
        path, ("reference", "scripted:delete_held"), 4, str(FIXTURES / "mini_suite")
    )


def test_the_forked_viewer_gives_the_page_built_in_process(
    ledger: Path, tmp_path: Path, forking: None
) -> None:
    """Bug caught: the second process reading other records than the verified read (an
    upto off by one, the wrong campaign) or a cell lost when its viewer is packed and sent
    back: the two pages would differ."""
    forked = read_report(ledger, viewer=True)
    assert forked.pending_viewer is not None and forked.pending_viewer.upto == forked.records
    in_process = read_report(ledger)
    assert in_process.pending_viewer is None
    one, two = tmp_path / "forked.html", tmp_path / "serial.html"
    forked.write_html(one)
    in_process.write_html(two)
    assert one.read_bytes() == two.read_bytes()
    assert len(unpacked_runs(one.read_text())) == forked.summary.runs == 8
    assert not multiprocessing.active_children()


def test_a_run_appended_after_the_fork_is_in_the_page_as_in_the_tables(
    ledger: Path, tmp_path: Path, forking: None
) -> None:
    """Bug caught: taking the forked viewer whatever it read, so that a run appended
    between the fork and the verified read is counted in the tables but missing from
    the run viewer."""
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(ledger.read_bytes())
    pending = ViewerBuild.start(copy, None)
    assert pending is not None
    with Ledger(copy) as store:
        store.append(make_record("late-task", 0, model="late-model", damage=True))
    report = dataclasses.replace(read_report(copy), pending_viewer=pending)
    page = report.write_html(tmp_path / "page.html").read_text()
    runs = unpacked_runs(page)
    assert len(runs) == report.summary.runs == 9
    assert "late-task" in page


def test_a_refused_read_stops_the_builder(tmp_path: Path, forking: None) -> None:
    """Bug caught: a broken chain raising out of the read while the forked builder keeps
    running (or waits forever on its pipe) behind the error."""
    copy = tmp_path / "broken.sqlite"
    with Ledger(copy) as store:
        for i in range(3):
            store.append(make_record("t", i))
    with Ledger(copy) as store:
        store._conn.execute("UPDATE runs SET record = replace(record, '\"t\"', '\"u\"')")
        store._conn.commit()
    with pytest.raises(LedgerError):
        read_report(copy, viewer=True)
    assert not multiprocessing.active_children()


def test_small_ledgers_and_threaded_processes_build_in_process(
    ledger: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bug caught: forking for a page that costs less than the process (the threshold
    ignored), or forking a process that runs other threads, whose locks the child would
    inherit held."""
    assert ViewerBuild.start(ledger, None) is None  # 8 records, under FORK_MIN_RECORDS
    monkeypatch.setattr(build, "FORK_MIN_RECORDS", 1)
    monkeypatch.setattr(build.threading, "active_count", lambda: 2)
    assert ViewerBuild.start(ledger, None) is None


def test_a_report_dropped_unwritten_stops_its_builder(
    ledger: Path, forking: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bug caught: a forked builder outliving the report it was started for (here one
    that would take a minute), blocked on its pipe until the interpreter exits."""
    import gc
    import time

    monkeypatch.setattr(build, "built_viewer", lambda *args: time.sleep(60))
    report = read_report(ledger, viewer=True)
    assert multiprocessing.active_children()
    del report
    gc.collect()
    assert not multiprocessing.active_children()


@pytest.mark.timeout(60)
def test_a_parent_that_ignores_sigterm_still_stops_its_builder(
    ledger: Path, forking: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bug caught: the child inheriting a parent's SIGTERM handler (a server's graceful
    shutdown) and ignoring `terminate()`, so that cancelling waits forever in join()."""
    import signal
    import time

    monkeypatch.setattr(build, "built_viewer", lambda *args: time.sleep(60))
    previous = signal.signal(signal.SIGTERM, lambda *args: None)
    try:
        report = read_report(ledger, viewer=True)
        assert report.pending_viewer is not None
        report.pending_viewer.cancel()
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert not multiprocessing.active_children()


def test_a_viewer_of_another_chain_is_refused(ledger: Path, forking: None) -> None:
    """Bug caught: matching the forked viewer to the verified read by record count alone,
    so that a file swapped for another chain of as many records during the read puts
    transcripts nobody verified beside verified numbers."""
    pending = ViewerBuild.start(ledger, None)
    assert pending is not None
    with Ledger(ledger, readonly=True) as store:
        head = store.head().head
        hashes = [str(row[-1]).encode() for row in store.rows()]
    assert pending.take(pending.upto, "0" * 64, hashes) is None
    again = ViewerBuild.start(ledger, None)
    assert again is not None
    assert again.take(again.upto, head, hashes) is not None


def test_an_unverified_page_shows_every_counted_run_of_a_gapped_chain(tmp_path: Path) -> None:
    """Bug caught: the viewer reading records 1 … count by seq, so that with a row
    deleted (the broken ledger --no-verify is for) the last counted runs are missing."""
    path = tmp_path / "gapped.sqlite"
    with Ledger(path) as store:
        for i in range(5):
            store.append(make_record("t", i, damage=i == 4))
    with Ledger(path) as store:
        store._conn.execute("DELETE FROM runs WHERE seq = 2")
    report = read_report(path, verify=False)
    page = report.write_html(tmp_path / "page.html").read_text()
    assert len(unpacked_runs(page)) == report.summary.runs == 4


def test_a_page_written_after_the_read_refuses_a_row_changed_since(
    ledger: Path, tmp_path: Path
) -> None:
    """Bug caught: the page's viewer of a report whose snapshot was closed read the rows
    again unchecked, pinned only by the stored hash of the last one, so a transcript
    edited in place between `read_report` and `write_html` (its stored hashes kept) was
    shown beside numbers verified from the original."""
    import shutil
    import sqlite3

    copy = tmp_path / "copy.sqlite"
    shutil.copyfile(ledger, copy)
    report = read_report(copy)
    assert report.source is None and report.pending_viewer is None
    conn = sqlite3.connect(copy)
    conn.execute("UPDATE runs SET record = replace(record, '\"dollars\":\"142.0\"', "
                 "'\"dollars\":\"0.0\"') WHERE seq = 2")  # fmt: skip
    conn.commit()
    conn.close()
    with pytest.raises(LedgerError, match="record 2 changed since the chain was verified"):
        report.write_html(tmp_path / "page.html")
    assert not (tmp_path / "page.html").exists()


def test_a_forked_viewer_of_a_row_other_than_the_verified_one_is_refused(
    ledger: Path, forking: None
) -> None:
    """Bug caught: matching the forked viewer to the verified read by its last record's
    stored hash alone, so that a row the builder read with a body other than the one the
    verified read hashed (edited in place, stored hashes kept) is shown."""
    with Ledger(ledger, readonly=True) as store:
        head = store.head().head
        hashes = [str(row[-1]).encode() for row in store.rows()]
    pending = ViewerBuild.start(ledger, None)
    assert pending is not None
    assert pending.take(pending.upto, head, [*hashes[:2], b"0" * 64, *hashes[3:]]) is None
